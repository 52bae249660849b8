package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// readBody reads the whole body, answering 413 for the limit and 400 for a
// broken read. It reports whether the handler may go on.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "body is over the limit of "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
		} else {
			writeError(w, http.StatusBadRequest, "reading body: "+err.Error())
		}
		return nil, false
	}
	if !utf8.Valid(body) {
		// encoding/json would turn each bad byte into U+FFFD, so two
		// different request ids could become one and merge.
		writeFieldError(w, invalidUTF8Field(body), "not valid UTF-8 (JSON text is UTF-8)")
		return nil, false
	}
	return body, true
}

// invalidUTF8Field names the top-level key whose value (or the key itself)
// holds invalid UTF-8, else "(body)".
func invalidUTF8Field(body []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return "(body)"
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "(body)"
	}
	for dec.More() {
		start := dec.InputOffset()
		key, err := dec.Token()
		if err != nil || !utf8.Valid(body[start:dec.InputOffset()]) {
			return "(body)" // the key itself is not UTF-8
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return "(body)"
		}
		if !utf8.Valid(body[start:dec.InputOffset()]) {
			if k, ok := key.(string); ok {
				return k
			}
			return "(body)"
		}
	}
	return "(body)"
}

// decodeJSON decodes a small body into v. Unknown fields are ignored (a
// newer client may send more); a wrong type answers 400 naming the field.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := readBody(w, r)
	if !ok {
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeError(w, http.StatusBadRequest, "the body is empty: want a JSON object")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		field, msg := describeJSONError(err)
		writeFieldError(w, field, msg)
		return false
	}
	return true
}

// describeJSONError turns encoding/json's errors into (field, message).
func describeJSONError(err error) (string, string) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(body)"
		}
		return field, "want " + jsonType(te.Type.String()) + ", got " + te.Value
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "(body)", "not valid JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + se.Error()
	}
	return "(body)", err.Error()
}

func jsonType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map"), strings.Contains(goType, "."):
		return "an object"
	}
	return goType
}
