package guard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzEndpoints are every route that decodes a body from outside.
var fuzzEndpoints = []struct{ method, path string }{
	{"POST", "/v1/sessions/fz/requests"},
	{"POST", "/v1/sessions/fz/rewrites"},
	{"POST", "/v1/engines"},
	{"PUT", "/v1/mode"},
	{"POST", "/v1/rewrites/r_fz/answer"},
	{"POST", "/v1/rewrites/r_fz/outcome"},
	{"PUT", "/v1/settings"},
	{"POST", "/v1/reprice"},
}

// FuzzAPIBodies: no body crashes the server or makes it answer 5xx, and
// every 4xx carries a JSON error with a code and a message.
func FuzzAPIBodies(f *testing.F) {
	seeds := []string{
		`{"requestId":"a","usage":{"inputTokens":1,"cacheReadTokens":2,"outputTokens":3},"turn":17,"at":"2026-11-30T10:00:00Z"}`,
		`{"requestId":"a","usage":{"inputTokens":-1}}`,
		`{"trigger":"pressure","envelopeTokens":100,"surface":[{"id":"a","tokens":50},{"id":"b","tokens":70}],"plan":{"prune":[{"id":"b","tokensAfter":5}],"summarize":{"start":"a","end":"a"}},"wait":0}`,
		`{"trigger":"manual","envelopeTokens":1,"surface":[],"plan":{}}`,
		`{"harness":"dsh","pid":1}`,
		`{"scope":"session","session":"fz","mode":"auto"}`,
		`{"choice":"allow-once"}`,
		`{"applied":true,"error":"x"}`,
		`{"askTimeout":"1s"}`,
		`{"session":"fz"}`,
		`{"turn":1e400}`, `[]`, `null`, `"`, `{"usage":{"inputTokens":1e30}}`, "\x00\xff",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	g := newGate(f, ModeAuto)
	h := g.srv.TrustedHandler()
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(ep.method, "http://wails"+ep.path, bytes.NewReader(body)))
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented {
			t.Fatalf("%s %s %q: %d %s", ep.method, ep.path, body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 {
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %s %q: %d with body %q, want a JSON error", ep.method, ep.path, body, rec.Code, rec.Body.String())
			}
			if rec.Code == 400 && !strings.Contains(e.Error.Message, ":") {
				t.Fatalf("400 without a field: %q", e.Error.Message)
			}
		}
	})
}
