package guard

import (
	"errors"
	"net/http"

	"tollgate/guard/api"
)

// writeError and writeFieldError answer with api.WriteError, the one error
// writer of every route.
func writeError(w http.ResponseWriter, status int, message string) {
	api.WriteError(w, status, "", message)
}

func writeFieldError(w http.ResponseWriter, field, message string) {
	api.WriteError(w, http.StatusBadRequest, field, message)
}

func writeJSON(w http.ResponseWriter, status int, v any) { api.WriteJSON(w, status, v) }

// IsTooLarge reports whether a read failed on the route's body limit (the
// answer is then 413).
func IsTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
