// Package hookio reads what a harness hands a command hook on stdin: a
// bounded read and a JSON decode whose errors name the field. The command
// hooks (claudecode, codex) share it so that both bound and word their
// input errors alike; each still checks its own fields.
package hookio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxInput bounds what a hook reads from stdin (harnesses send a few
// hundred bytes).
const MaxInput = 1 << 20

// Read reads a hook's whole input, at most MaxInput bytes.
func Read(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err == nil && len(b) > MaxInput {
		err = fmt.Errorf("input longer than %d bytes", MaxInput)
	}
	return b, err
}

// Decode decodes b into v. what names the expected input in the error for
// an empty one ("Codex's PreCompact hook JSON"); a field of the wrong type
// is named.
func Decode(b []byte, what string, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("empty input: expected %s on stdin", what)
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type.Kind(), te.Value)
		}
		return fmt.Errorf("input is not JSON: %w", err)
	}
	return nil
}
