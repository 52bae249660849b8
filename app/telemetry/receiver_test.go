package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"tollgate/app"
	"tollgate/app/apptest"
	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
	"tollgate/storage"
	"tollgate/test/shareddata"
)

// The real capture of Claude Code 2.1.332 (shared/data/otel): one
// "hello there" turn, one api_request.
const (
	realSession = "claude-code:4897f198-fe19-43da-991d-b640a926e928"
	realUUID    = "5619d2cf-d3dd-479a-b4c0-da55d68fc653"
)

// otelData is ../shared/data/otel (the real capture), or skips.
func otelData(t testing.TB) string {
	t.Helper()
	return filepath.Join(shareddata.Dir(t), "otel")
}

func readShared(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(otelData(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// send POSTs a body to the service with its token.
func send(t testing.TB, svc *app.Service, path, contentType string, body []byte, header ...string) (int, []byte) {
	t.Helper()
	res, raw := clienttest.Do(t, http.MethodPost, svc.URL+path, svc.Token(), body, append([]string{"Content-Type", contentType}, header...)...)
	return res.StatusCode, raw
}

func getJSON(t testing.TB, svc *app.Service, path string, out any) int {
	t.Helper()
	res, raw := clienttest.Do(t, http.MethodGet, svc.URL+path, svc.Token(), nil)
	if res.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, raw)
		}
	}
	return res.StatusCode
}

func session(t testing.TB, svc *app.Service, id string) storage.Session {
	t.Helper()
	var s storage.Session
	if st := getJSON(t, svc, "/v1/sessions/"+id, &s); st != http.StatusOK {
		t.Fatalf("GET session %s: %d", id, st)
	}
	return s
}

func sessionCount(t testing.TB, svc *app.Service) int {
	t.Helper()
	var l storage.SessionList
	if st := getJSON(t, svc, "/v1/sessions", &l); st != http.StatusOK {
		t.Fatalf("GET sessions: %d", st)
	}
	return len(l.Sessions)
}

// apiRequest builds one claude_code.api_request record as Claude Code
// 2.1.332 sends it (counts as intValue), or as older versions did
// (strings) when asStrings.
func apiRequest(lr plog.LogRecord, sessionID, promptID string, seq int64, at time.Time, u [6]int64, asStrings bool) {
	lr.SetTimestamp(pcommonTime(at))
	lr.Body().SetStr("claude_code.api_request")
	a := lr.Attributes()
	a.PutStr("session.id", sessionID)
	a.PutStr("event.name", "api_request")
	a.PutInt("event.sequence", seq)
	a.PutStr("prompt.id", promptID)
	a.PutStr("model", "claude-sonnet-4-5")
	for i, k := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens"} {
		if asStrings {
			a.PutStr(k, fmt.Sprint(u[i]))
		} else {
			a.PutInt(k, u[i])
		}
	}
	a.PutDouble("cost_usd", 0.01)
	a.PutInt("duration_ms", 1200)
}

// export is an OTLP logs export of n api_request events of one session.
func export(sessionID string, n int, at time.Time, asStrings bool) plog.Logs {
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-code")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.anthropic.claude_code.events")
	for i := 0; i < n; i++ {
		apiRequest(sl.LogRecords().AppendEmpty(), sessionID, fmt.Sprintf("p-%d", i), int64(2*i), at.Add(time.Duration(i)*time.Second),
			[6]int64{int64(100 + i), 50, 20000, 3000, 2000, 1000}, asStrings)
	}
	return logs
}

func jsonBody(t testing.TB, logs plog.Logs) []byte {
	t.Helper()
	b, err := plogotlp.NewExportRequestFromLogs(logs).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func protoBody(t testing.TB, logs plog.Logs) []byte {
	t.Helper()
	b, err := plogotlp.NewExportRequestFromLogs(logs).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The real capture becomes the request Claude Code billed, priced as the
// API prices the same figures; the same export again (a retry, and in
// the other encoding) adds nothing.
func TestRealClaudeCodeExportIsRecordedOnce(t *testing.T) {
	logsJSON := readShared(t, "claude-code-2.1.332-logs.json")
	svc, _ := apptest.Start(t, "")
	st, body := send(t, svc, "/otlp/v1/logs", "application/json", logsJSON)
	if st != http.StatusOK {
		t.Fatalf("POST /otlp/v1/logs: %d %s", st, body)
	}
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("the answer is no OTLP JSON response: %v: %s", err, body)
	}
	s := session(t, svc, realSession)
	want := storage.Session{Requests: 1, Harness: "claude-code", Model: "claude-sonnet-4-5"}
	if s.Requests != want.Requests || s.Harness != want.Harness || s.Model != want.Model ||
		s.Tokens.Input != 21546 || s.Tokens.Output != 8 || s.Tokens.CacheRead != 0 || s.Tokens.CacheWrite != 0 {
		t.Fatalf("session %+v", s)
	}

	// Priced like POST /v1/sessions/{id}/requests with the same figures.
	var rec api.RecordedRequest
	code, raw := postJSON(t, svc, "/v1/sessions/api-twin/requests", api.RequestReport{
		RequestID: "r1", Provider: "anthropic", Model: "claude-sonnet-4-5", At: "2026-12-01T07:05:06.041Z",
		Usage: &api.UsageReport{Input: 21546, Output: 8},
	}, &rec)
	if code != http.StatusCreated {
		t.Fatalf("POST requests: %d %s", code, raw)
	}
	if s.CostUSD <= 0 || s.CostUSD != rec.CostUSD {
		t.Fatalf("OTLP priced %v, the API %v", s.CostUSD, rec.CostUSD)
	}

	// A retry, as protobuf: the same request.
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalJSON(logsJSON); err != nil {
		t.Fatal(err)
	}
	pb, _ := req.MarshalProto()
	if st, body := send(t, svc, "/otlp/v1/logs", "application/x-protobuf", pb); st != http.StatusOK {
		t.Fatalf("protobuf retry: %d %s", st, body)
	} else if pr := plogotlp.NewExportResponse(); pr.UnmarshalProto(body) != nil {
		t.Fatalf("the protobuf answer is no ExportLogsServiceResponse: %q", body)
	}
	if s := session(t, svc, realSession); s.Requests != 1 || s.Tokens.Input != 21546 {
		t.Fatalf("after a retry: %+v", s)
	}

	// The metrics export of the same run is accepted.
	if st, body := send(t, svc, "/otlp/v1/metrics", "application/json", readShared(t, "claude-code-2.1.332-metrics.json")); st != http.StatusOK {
		t.Fatalf("POST /otlp/v1/metrics: %d %s", st, body)
	}
}

func postJSON(t testing.TB, svc *app.Service, path string, v, out any) (int, []byte) {
	t.Helper()
	b, _ := json.Marshal(v)
	st, raw := send(t, svc, path, "application/json", b)
	if out != nil && st/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
	return st, raw
}

// Counts as strings (Claude Code before 2.1.332) and as numbers read the
// same; the 5-minute/1-hour split is kept; gzip is accepted.
func TestStringAndNumberCountsAndGzip(t *testing.T) {
	svc, _ := apptest.Start(t, "")
	now := time.Now().UTC().Truncate(time.Millisecond)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(protoBody(t, export("s-num", 3, now, false)))
	zw.Close()
	if st, body := send(t, svc, "/otlp/v1/logs", "application/x-protobuf", gz.Bytes(), "Content-Encoding", "gzip"); st != http.StatusOK {
		t.Fatalf("gzip protobuf: %d %s", st, body)
	}
	if st, body := send(t, svc, "/otlp/v1/logs", "application/json", jsonBody(t, export("s-str", 3, now, true))); st != http.StatusOK {
		t.Fatalf("string counts: %d %s", st, body)
	}
	a, b := session(t, svc, "claude-code:s-num"), session(t, svc, "claude-code:s-str")
	if a.Requests != 3 || a.Tokens != b.Tokens || a.CostUSD != b.CostUSD {
		t.Fatalf("numbers %+v\nstrings %+v", a, b)
	}
	// 3000 written, 2000 of them 5-minute and 1000 1-hour, per request.
	if a.Tokens.CacheWrite != 3*2000 || a.Tokens.CacheWrite1h != 3*1000 || a.Tokens.Input != 100+101+102 || a.Tokens.CacheRead != 3*20000 {
		t.Fatalf("tokens %+v", a.Tokens)
	}
}

// A malformed export is refused with the field to blame, and nothing of
// it is stored — not even the well-formed events beside the bad one.
func TestMalformedExportsStoreNothing(t *testing.T) {
	svc, _ := apptest.Start(t, "")
	now := time.Now().UTC()
	bad := func(mutate func(a plog.LogRecord)) []byte {
		logs := export("s-bad", 3, now, false)
		mutate(logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(2))
		return jsonBody(t, logs)
	}
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte{' '}, 40<<20))
	zw.Close()
	for _, c := range []struct {
		name, contentType string
		body              []byte
		header            []string
		status            int
		field             string
	}{
		{"not JSON", "application/json", []byte(`{"resourceLogs": [`), nil, 400, "body"},
		{"not protobuf", "application/x-protobuf", []byte{0xff, 0xff, 0xff, 0xff}, nil, 400, "body"},
		{"text tokens", "application/json", bad(func(l plog.LogRecord) { l.Attributes().PutStr("input_tokens", "many") }), nil, 400,
			"resourceLogs[0].scopeLogs[0].logRecords[2].attributes.input_tokens"},
		{"negative tokens", "application/json", bad(func(l plog.LogRecord) { l.Attributes().PutInt("output_tokens", -5) }), nil, 400,
			"resourceLogs[0].scopeLogs[0].logRecords[2].attributes.output_tokens"},
		{"fractional tokens", "application/json", bad(func(l plog.LogRecord) { l.Attributes().PutDouble("cache_read_tokens", 1.5) }), nil, 400,
			"resourceLogs[0].scopeLogs[0].logRecords[2].attributes.cache_read_tokens"},
		{"no session", "application/json", bad(func(l plog.LogRecord) { l.Attributes().Remove("session.id") }), nil, 400,
			"resourceLogs[0].scopeLogs[0].logRecords[2].attributes.session.id"},
		{"no input count", "application/json", bad(func(l plog.LogRecord) { l.Attributes().Remove("input_tokens") }), nil, 400,
			"resourceLogs[0].scopeLogs[0].logRecords[2].attributes.input_tokens"},
		{"year 9999", "application/json", bad(func(l plog.LogRecord) { l.SetTimestamp(pcommonTime(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))) }), nil, 400,
			"resourceLogs[0].scopeLogs[0].logRecords[2].timeUnixNano"},
		{"form", "application/x-www-form-urlencoded", []byte("a=b"), nil, 415, "Content-Type"},
		{"brotli", "application/json", []byte("{}"), []string{"Content-Encoding", "br"}, 415, "Content-Encoding"},
		{"bad gzip", "application/json", []byte("not gzip"), []string{"Content-Encoding", "gzip"}, 400, "Content-Encoding"},
		{"gzip bomb", "application/json", bomb.Bytes(), []string{"Content-Encoding", "gzip"}, 413, "body"},
		{"oversized", "application/json", bytes.Repeat([]byte(" "), 9<<20), nil, 413, ""},
	} {
		st, raw := send(t, svc, "/otlp/v1/logs", c.contentType, c.body, c.header...)
		var e api.ErrorBody
		json.Unmarshal(raw, &e)
		if st != c.status || e.Error.Field != c.field || e.Error.Message == "" {
			t.Errorf("%s: %d %s; want %d naming %q", c.name, st, raw, c.status, c.field)
		}
	}
	if n := sessionCount(t, svc); n != 0 {
		t.Fatalf("%d sessions stored from malformed exports", n)
	}
	// The same events, well formed, are stored whole.
	if st, body := send(t, svc, "/otlp/v1/logs", "application/json", jsonBody(t, export("s-bad", 3, now, false))); st != http.StatusOK {
		t.Fatalf("%d %s", st, body)
	}
	if s := session(t, svc, "claude-code:s-bad"); s.Requests != 3 {
		t.Fatalf("%+v", s)
	}
}

// The receiver is behind the API's token, like /v1.
func TestOTLPNeedsTheToken(t *testing.T) {
	svc, _ := apptest.Start(t, "")
	for _, auth := range []string{"", "Bearer wrong"} {
		req, _ := http.NewRequest(http.MethodPost, svc.URL+"/otlp/v1/logs", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("auth %q: %d", auth, res.StatusCode)
		}
	}
	if st, _ := send(t, svc, "/otlp/v1/traces", "application/json", []byte("{}")); st != http.StatusNotFound {
		t.Fatalf("traces: %d, want 404", st)
	}
	if res, _ := clienttest.Do(t, http.MethodGet, svc.URL+"/otlp/v1/logs", svc.Token(), nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET logs: %d, want 405", res.StatusCode)
	}
}

func pcommonTime(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }
