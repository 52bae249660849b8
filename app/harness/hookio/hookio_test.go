package hookio

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestReadIsBounded(t *testing.T) {
	if b, err := Read(strings.NewReader(`{"a":1}`)); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := Read(strings.NewReader(strings.Repeat(" ", MaxInput+1))); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeNamesWhatIsWrong(t *testing.T) {
	var v struct {
		SessionID string `json:"session_id"`
	}
	for in, want := range map[string]string{
		"  \n":               `empty input: expected X's hook JSON on stdin`,
		`{"session_id": 7}`:  "session_id: want a string, got a JSON number",
		`{"session_id": "a"`: "input is not JSON",
	} {
		if err := Decode([]byte(in), "X's hook JSON", &v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", in, err, want)
		}
	}
	if err := Decode([]byte(`{"session_id":"s"}`), "X", &v); err != nil || v.SessionID != "s" {
		t.Fatalf("%+v %v", v, err)
	}
}

// A hook that cannot read or decode its input allows the compaction and
// says why on stderr, naming the input.
func TestInputFailsOpenWithANote(t *testing.T) {
	var stderr strings.Builder
	decoded := false
	if Input(strings.NewReader(`{"x": 1}`), &stderr, "Codex hook input", func([]byte) error { decoded = true; return nil }); !decoded || stderr.Len() != 0 {
		t.Fatalf("good input: decoded %v, stderr %q", decoded, stderr.String())
	}
	ok := Input(strings.NewReader(`{`), &stderr, "Codex hook input", func(b []byte) error { var v struct{}; return Decode(b, "x", &v) })
	if ok || !strings.Contains(stderr.String(), "malformed Codex hook input: input is not JSON") || !strings.Contains(stderr.String(), "allowing the compaction") {
		t.Fatalf("bad input: %v, stderr %q", ok, stderr.String())
	}
}

// EditHandlers keeps what is not a handler list, drops a group whose
// handlers all went, and puts replacements where the handlers stood.
func TestEditHandlers(t *testing.T) {
	groups := []any{
		map[string]any{"matcher": "auto", "hooks": []any{map[string]any{"command": "tollgate"}}},
		"not a group",
		map[string]any{"hooks": []any{map[string]any{"command": "mine"}, map[string]any{"command": "tollgate"}}},
		map[string]any{"hooks": []any{}},
	}
	got := EditHandlers(groups, func(h any) (any, bool) {
		if h.(map[string]any)["command"] == "tollgate" {
			return nil, false
		}
		return map[string]any{"command": "mine!"}, true
	})
	want := `["not a group",{"hooks":[{"command":"mine!"}]},{"hooks":null}]`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
