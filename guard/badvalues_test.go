package guard

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"tollgate/guard/client/clienttest"
)

// A time far from now is refused at the door, naming "at": year 10000 in
// UTC parses, but every read that writes it as JSON would fail.
func TestRequestTimesOutsideTheWindowAre400(t *testing.T) {
	g := newGate(t, ModeAuto)
	for _, at := range []string{"9999-12-31T23:59:59-14:00", "1969-12-31T23:59:59Z", time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)} {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		code := g.call("POST", "/v1/sessions/s/requests", `{"requestId":"a","usage":{"inputTokens":1},"at":"`+at+`"}`, &e)
		if code != 400 || e.Error.Field != "at" || !strings.Contains(e.Error.Message, at) {
			t.Errorf("at %s: %d %+v, want 400 naming at", at, code, e.Error)
		}
	}
	if code := g.call("POST", "/v1/sessions/s/requests", `{"requestId":"b","usage":{"inputTokens":1},"at":"`+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)+`"}`, nil); code != 201 {
		t.Fatalf("an hour ago: %d", code)
	}
}

// A bad row already stored (from an older tollgate, or written around the
// doors) is left out or zeroed and logged: the list, the session, its
// series and both exports still answer, and the JSON export is valid.
func TestReadsSurviveABadStoredRow(t *testing.T) {
	g := newGate(t, ModeAuto)
	now := time.Now().UTC()
	for i, id := range []string{"r1", "r2", "r3"} {
		body := map[string]any{"requestId": id, "usage": map[string]any{"inputTokens": 1000, "outputTokens": 10}, "at": now.Add(time.Duration(i-3) * time.Minute).Format(time.RFC3339)}
		if code := g.call("POST", "/v1/sessions/s1/requests", body, nil); code != 201 {
			t.Fatalf("recording %s: %d", id, code)
		}
	}
	g.call("POST", "/v1/sessions/s2/requests", map[string]any{"requestId": "x", "usage": map[string]any{"inputTokens": 5}}, nil)
	// Poison s1 around the doors: one request in year 10000 UTC, one with
	// an infinite cost, and the session's totals with both.
	year10000 := time.Date(10000, 1, 1, 13, 59, 59, 0, time.UTC).UnixMilli()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"UPDATE requests SET at = ? WHERE request_id = 'r2'", []any{year10000}},
		{"UPDATE requests SET cost_usd = ?, cost_input = ? WHERE request_id = 'r3'", []any{math.Inf(1), math.Inf(1)}},
		{"UPDATE sessions SET last_at = ?, cost_usd = ? WHERE id = 's1'", []any{year10000, math.Inf(1)}},
	} {
		if _, err := g.store.SQL().Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path string) (int, []byte) {
		res, b := clienttest.Do(t, "GET", g.ts.URL+path, testToken, nil)
		return res.StatusCode, b
	}
	for _, path := range []string{"/v1/sessions", "/v1/sessions/s1", "/v1/sessions/s1/series", "/v1/export", "/v1/sessions/s1/export", "/v1/spend?by=day", "/v1/export?format=csv"} {
		code, body := get(path)
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
			continue
		}
		if !strings.Contains(path, "csv") && !json.Valid(body) {
			t.Errorf("GET %s: invalid JSON %s", path, body)
		}
	}
	_, body := get("/v1/sessions")
	if !strings.Contains(string(body), `"s1"`) || !strings.Contains(string(body), `"s2"`) {
		t.Errorf("the list lost a session: %s", body)
	}
	var series struct {
		Points []struct{ Seq int64 } `json:"points"`
	}
	_, body = get("/v1/sessions/s1/series")
	json.Unmarshal(body, &series)
	if len(series.Points) != 1 {
		t.Errorf("series points %+v: want the one good request", series.Points)
	}
	_, body = get("/v1/export?format=csv")
	if strings.Contains(string(body), "r2") || strings.Contains(string(body), "r3") || !strings.Contains(string(body), "r1") {
		t.Errorf("CSV export: want r1 only of s1: %s", body)
	}
}

// A deadline of 1e308 seconds, which would overflow into the past, is a 400.
func TestHugeDeadlineIsA400(t *testing.T) {
	g := newGate(t, ModeAuto)
	for _, d := range []any{1e308, 86401, -1} {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		if code := g.call("POST", "/v1/sessions/s/rewrites", rewriteBody(20, "1", map[string]any{"deadlineSeconds": d}), &e); code != 400 || e.Error.Field != "deadlineSeconds" {
			t.Errorf("deadlineSeconds %v: %d %+v", d, code, e.Error)
		}
	}
	if code, d := g.ask("s", rewriteBody(20, "1", map[string]any{"deadlineSeconds": 86400})); code != 200 {
		t.Fatalf("a day: %d %+v", code, d)
	}
}
