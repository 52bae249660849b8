package guard

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"tollgate/guard/client/clienttest"
)

// A cookie names its port and so does its value: a cookie minted by a
// tollgate on another port (same tokens) is refused.
func TestCookieIsBoundToItsPort(t *testing.T) {
	mk := func(port string) *Server {
		s, err := NewServer(context.Background(), Options{Token: func() string { return testToken }, OwnerToken: func() string { return testOwnerToken },
			BaseURL: "http://127.0.0.1:" + port, Settings: newTestSettings("ask"), Store: openTestStore(t), Pricer: testPricer{}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := mk("47631"), mk("47632")
	c := a.auth.cookieValue("c0ffee")
	if !a.auth.validCookie(c) {
		t.Fatal("a cookie is refused by its own port")
	}
	if b.auth.validCookie(c) {
		t.Fatal("a cookie minted for port 47631 is accepted on 47632")
	}
}

// CSV injection: a text cell that starts with =, +, -, @ is written with a
// leading apostrophe, so a spreadsheet shows it instead of running it.
func TestCSVExportNeutralisesFormulas(t *testing.T) {
	g := newGate(t, ModeAuto)
	for _, id := range []string{"=HYPERLINK(\"http://evil\")", "+1", "-2+3", "@SUM(A1)", "\tx", "plain"} {
		if code := g.call("POST", "/v1/sessions/s1/requests", map[string]any{"requestId": id, "model": "=cmd|' /C calc'!A0", "usage": map[string]any{"inputTokens": 1}}, nil); code != 201 {
			t.Fatalf("recording %q: %d", id, code)
		}
	}
	_, raw := clienttest.Do(t, "GET", g.ts.URL+"/v1/export?format=csv", testToken, nil)
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, row := range rows[1:] {
		for i, cell := range row {
			if cell != "" && strings.ContainsRune("=+@\t\r", rune(cell[0])) || (cell != "" && cell[0] == '-' && i < 9) {
				t.Errorf("cell %d %q is a live formula", i, cell)
			}
		}
		if strings.HasPrefix(row[1], "'") {
			seen++
		}
		if row[8] != "'=cmd|' /C calc'!A0" {
			t.Errorf("model cell %q", row[8])
		}
	}
	if seen != 5 {
		t.Fatalf("%d request ids neutralised, want 5:\n%s", seen, raw)
	}
}

// A request id that is not valid UTF-8 is a 400 naming requestId: decoded
// as is, it would turn into U+FFFD and merge two different ids into one.
func TestInvalidUTF8IsA400(t *testing.T) {
	g := newGate(t, ModeAuto)
	for _, tc := range []struct {
		path  string
		body  []byte
		field string
	}{
		{"/v1/sessions/s1/requests", []byte("{\"requestId\":\"a\xff\",\"usage\":{\"inputTokens\":1}}"), "requestId"},
		{"/v1/sessions/s1/requests", []byte("{\"requestId\":\"b\",\"title\":\"\xfe\",\"usage\":{}}"), "title"},
		{"/v1/sessions/s%FF/requests", []byte(`{"requestId":"c","usage":{}}`), "session"},
		{"/v1/sessions/s%FF/rewrites", []byte(`{}`), "session"},
	} {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		if code := g.call("POST", tc.path, string(tc.body), &e); code != 400 || e.Error.Field != tc.field {
			t.Errorf("%s %q: %d %+v, want 400 naming %s", tc.path, tc.body, code, e.Error, tc.field)
		}
	}
	g.nothingStored(t)
}

// FuzzInvalidUTF8Field: whatever the body, the field named is "(body)" or
// a top-level key of it, valid UTF-8.
func FuzzInvalidUTF8Field(f *testing.F) {
	f.Add([]byte("{\"requestId\":\"a\xff\"}"))
	f.Add([]byte("{\"a\":{\"b\":\"\xfe\"},\"c\":1}"))
	f.Add([]byte("{\"\xff\":1}"))
	f.Add([]byte("[\"\xff\"]"))
	f.Fuzz(func(t *testing.T, body []byte) {
		field := invalidUTF8Field(body)
		if field == "(body)" {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			t.Fatalf("field %q named in a body that is not an object: %q", field, body)
		}
		if _, ok := top[field]; !ok {
			t.Fatalf("field %q is not a key of %q", field, body)
		}
	})
}
