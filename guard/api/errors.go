package api

import (
	"encoding/json"
	"net/http"
)

// ErrorBody is the body of every 4xx and 5xx answer:
// {"error":{"code","message","field"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong; Field names the part of the request
// (a JSON path such as "surface[3].tokens") when one is to blame.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Error codes, one per status the API answers with.
var codeForStatus = map[int]string{
	http.StatusBadRequest:            "bad_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusServiceUnavailable:    "unavailable",
}

// WriteError writes the error body with the code that goes with status
// ("internal" for the rest); a non-empty field prefixes the message. Every
// route answers errors with it — the guard's and the app's alike — so there
// is one error shape.
func WriteError(w http.ResponseWriter, status int, field, message string) {
	code := codeForStatus[status]
	if code == "" {
		code = "internal"
	}
	if field != "" {
		message = field + ": " + message
	}
	WriteJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: message, Field: field}})
}

// WriteJSON writes v as the answer, never cached.
func WriteJSON(w http.ResponseWriter, status int, v any) {
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
