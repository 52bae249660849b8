package guard

import (
	"encoding/json"
	"errors"
	"net/http"
)

// apiError is the body of every 4xx and 5xx: {"error":{"code","message"}}.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Error codes, one per status family the API uses.
const (
	codeBadRequest      = "bad_request"
	codeUnauthorized    = "unauthorized"
	codeForbidden       = "forbidden"
	codeNotFound        = "not_found"
	codeConflict        = "conflict"
	codeTooLarge        = "too_large"
	codeMethod          = "method_not_allowed"
	codeInternal        = "internal"
	codeUnavailable     = "unavailable"
	codeUnsupportedType = "unsupported_media_type"
)

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]apiError{"error": {Code: code, Message: message}})
}

func writeFieldError(w http.ResponseWriter, field, message string) {
	writeJSON(w, http.StatusBadRequest, map[string]apiError{"error": {Code: codeBadRequest, Message: field + ": " + message, Field: field}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"encoding response"}}`, http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// isTooLarge reports whether err came from http.MaxBytesReader.
func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
