package harness

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real Claude Code 2.1.332, with the telemetry settings `tollgate
// telemetry claude-code --install` writes, run against the fake provider:
// before any import, tollgate holds its session with the fake provider's
// token figures — every request the provider served, received over OTLP.
func TestClaudeCodeTelemetry(t *testing.T) {
	w := startWorld(t, true)
	e, p, work, environ, tg := w.e, w.p, w.work, w.environ, w.tg
	configDir := filepath.Join(w.home, ".claude-config")
	t.Logf("%s", e.runTollgate(t, environ, "telemetry --install", "telemetry", "claude-code", "--install", "--home", tg.Home))
	settings, _ := os.ReadFile(filepath.Join(configDir, "settings.json"))
	if !strings.Contains(string(settings), tg.URL+"/otlp") {
		t.Fatalf("settings.json: %s", settings)
	}
	claude := append(environ, "ANTHROPIC_BASE_URL="+p.URL, "ANTHROPIC_API_KEY=sk-ant-test-dummy", "OTEL_LOGS_EXPORT_INTERVAL=500")
	for _, args := range [][]string{{"-p", "hello there"}, {"-p", "-c", "and again"}} {
		if r := run(t, p, work, claude, e.claude, args...); r.code != 0 || r.reqs == 0 {
			t.Fatalf("claude: exit %d, %d requests", r.code, r.reqs)
		}
	}
	var want struct{ requests, cacheRead, cacheWrite, output int64 }
	for _, c := range p.Calls() {
		if c.API != "anthropic" {
			continue
		}
		want.requests++
		want.cacheRead += c.Cached
		want.cacheWrite += c.Prompt - c.Cached
		want.output += c.Output
	}
	type session struct {
		ID       string `json:"id"`
		Harness  string `json:"harness"`
		Requests int64  `json:"requests"`
		Tokens   struct {
			Input, CacheRead, CacheWrite, CacheWrite1h, Output int64
		} `json:"tokens"`
	}
	var list struct {
		Sessions []session `json:"sessions"`
	}
	wait := func(when string) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			tg.get(t, "/v1/sessions", &list)
			var got struct{ requests, cacheRead, cacheWrite, output int64 }
			for _, s := range list.Sessions {
				if s.Harness == "claude-code" && strings.HasPrefix(s.ID, "claude-code:") {
					got.requests += s.Requests
					got.cacheRead += s.Tokens.CacheRead
					got.cacheWrite += s.Tokens.CacheWrite
					got.output += s.Tokens.Output
				}
			}
			if got == want {
				t.Logf("%s: tollgate holds %+v (sessions %d)", when, got, len(list.Sessions))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: tollgate holds %+v, the fake provider served %+v; sessions %+v", when, got, want, list.Sessions)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	wait("received over OTLP, before any import")
	if want.cacheRead == 0 {
		t.Fatalf("the second turn read nothing from the cache: %+v", want)
	}
	// The transcripts imported afterwards add nothing: each request is one.
	transcripts, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", "*.jsonl"))
	t.Logf("transcripts: %v", transcripts)
	body, _ := json.Marshal(map[string]any{"paths": []string{filepath.Join(configDir, "projects")}, "harness": "claude-code"})
	req, _ := http.NewRequest(http.MethodPost, tg.URL+"/v1/import", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tg.Owner) // importing is the owner's
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Result struct {
			Files    []json.RawMessage `json:"files"`
			Requests int               `json:"requests"`
			Bytes    int64             `json:"bytes"`
			Failed   int               `json:"failed"`
		} `json:"result"`
	}
	json.NewDecoder(res.Body).Decode(&answer)
	imported := answer.Result
	res.Body.Close()
	if res.StatusCode != http.StatusOK || len(imported.Files) == 0 || imported.Bytes == 0 || imported.Failed != 0 || imported.Requests != 0 {
		t.Fatalf("import: %d %+v: want the transcript read and no new request", res.StatusCode, imported)
	}
	t.Logf("imported %d file(s), %d bytes, %d new requests", len(imported.Files), imported.Bytes, imported.Requests)
	wait("after importing the transcripts")
	if engines := tg.engines(t); !strings.Contains(engines.Integrations[0].Detail, "receiving telemetry") {
		t.Fatalf("integrations %+v", engines.Integrations)
	}
}
