package opencode

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, // c` + "\n" + `}`:          `{"a": 1}`,
		`{"a": "x//y", /* z */ "b": [1,2,],}`: `{"a": "x//y",   "b": [1,2]}`,
		`{"a": "q\"//"}`:                      `{"a": "q\"//"}`,
	} {
		if got := string(StripJSONC([]byte(in))); got != want {
			t.Errorf("StripJSONC(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzStripJSONC: OpenCode's config is outside input. No input panics, and
// plain JSON (which has no comments or trailing commas) keeps its meaning.
func FuzzStripJSONC(f *testing.F) {
	f.Add([]byte(`{"plugin": ["file:///x/integrations/opencode/index.js",], // c` + "\n" + `}`))
	f.Add([]byte(`{"a": "/* not a comment */", "b": "\\" // still a string"}`))
	f.Add([]byte(`/* unterminated`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := StripJSONC(b)
		if !json.Valid(b) {
			return
		}
		decode := func(b []byte) (any, error) {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber() // numbers as written: 1E700 is valid JSON, not a float64
			var v any
			return v, d.Decode(&v)
		}
		want, _ := decode(b)
		if got, err := decode(out); err != nil || !reflect.DeepEqual(want, got) {
			t.Fatalf("%q became %q (%v)", b, out, err)
		}
	})
}
