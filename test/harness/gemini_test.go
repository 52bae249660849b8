package harness

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// geminiCLI is the pinned Gemini CLI's entry point (a bundled Node program:
// @google/gemini-cli ships no native code it needs).
func geminiCLI(t *testing.T) (env, string) {
	t.Helper()
	bin, mods := os.Getenv("TOLLGATE_BIN"), os.Getenv("TOLLGATE_HARNESS_MODULES")
	if bin == "" || mods == "" {
		t.Skip("set TOLLGATE_BIN and TOLLGATE_HARNESS_MODULES (make test-harness does) to run the real harnesses")
	}
	cli := filepath.Join(mods, "@google", "gemini-cli", "bundle", "gemini.js")
	for _, p := range []string{bin, cli} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("missing %s (run `make test-harness`, which installs it): %v", p, err)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("Gemini CLI needs node on PATH: %v", err)
	}
	return env{bin: bin}, cli
}

// The real Gemini CLI 0.61.0, in headless mode (gemini -p) against the fake
// Gemini endpoint, writes its session file; `tollgate import --harness
// gemini` reads it, and tollgate then holds exactly the token figures the
// endpoint sent — promptTokenCount split into cached and uncached input —
// and, where the cached count dropped (the endpoint forgot its cache
// between two turns, as an expired implicit cache does), a break in the
// ledger.
func TestGeminiCLIImport(t *testing.T) {
	e, cli := geminiCLI(t)
	p, err := StartGeminiProvider(testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	// GOOGLE_GEMINI_BASE_URL sends the SDK's requests to the fake; the API
	// key is then sent but never checked. The settings pick API-key auth
	// (with a base URL alone Gemini CLI selects "gateway" auth, which its
	// headless mode refuses as "Invalid auth method selected"), and turn
	// off its usage statistics and update check; the workspace is trusted
	// through the environment, as headless use requires.
	home, environ := sandbox(t, "GOOGLE_GEMINI_BASE_URL="+p.URL, "GEMINI_API_KEY=test-key-not-checked",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "NO_BROWSER=true")
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o755)
	tg := startTollgate(t, e, environ)

	start := time.Now()
	turn := func(args ...string) {
		t.Helper()
		args = append([]string{cli, "-m", "gemini-2.5-pro"}, args...)
		if r := run(t, p, work, environ, "node", args...); r.code != 0 || r.reqs == 0 {
			t.Fatalf("gemini: exit %d, %d requests", r.code, r.reqs)
		}
	}
	turn("-p", bigPrompt("one"))
	turn("-r", "latest", "-p", "and again")
	p.Evict() // the endpoint's cache expires: the next turn reads nothing from it
	turn("-r", "latest", "-p", "once more")
	t.Logf("three turns of the real Gemini CLI: %v", time.Since(start).Round(time.Millisecond))

	calls := p.Calls()
	var want struct{ requests, input, cacheRead, output int64 }
	for _, c := range calls {
		want.requests++
		want.input += c.Prompt - c.Cached
		want.cacheRead += c.Cached
		want.output += c.Output
	}
	if len(calls) != 3 || calls[1].Cached == 0 || calls[2].Cached != 0 {
		t.Fatalf("the endpoint served %d calls %+v: want three, the second cached, the third not", len(calls), calls)
	}
	files, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v (want one: the turns resumed it)", files)
	}
	t.Logf("Gemini CLI wrote %s", files[0])

	// No path: the default folders, with $HOME the sandbox's.
	imp := exec.Command(e.bin, "import", "--home", tg.Home, "--harness", "gemini")
	imp.Env = environ
	out, err := imp.CombinedOutput()
	t.Logf("$ tollgate import --harness gemini\n%s", out)
	if err != nil || !strings.Contains(string(out), "3 requests") {
		t.Fatalf("import: %v", err)
	}

	type session struct {
		ID       string `json:"id"`
		Harness  string `json:"harness"`
		Requests int64  `json:"requests"`
		Tokens   struct {
			Input, CacheRead, CacheWrite, CacheWrite1h, Output int64
		} `json:"tokens"`
		CostUSD float64 `json:"costUSD"`
	}
	var list struct {
		Sessions []session `json:"sessions"`
	}
	tg.get(t, "/v1/sessions", &list)
	var got *session
	for i := range list.Sessions {
		if list.Sessions[i].Harness == "gemini" {
			got = &list.Sessions[i]
		}
	}
	if got == nil || got.Requests != want.requests || got.Tokens.Input != want.input || got.Tokens.CacheRead != want.cacheRead ||
		got.Tokens.Output != want.output || got.Tokens.CacheWrite+got.Tokens.CacheWrite1h != 0 || !strings.HasPrefix(got.ID, "gemini:") || got.CostUSD <= 0 {
		t.Fatalf("tollgate holds %+v, the endpoint served %+v", got, want)
	}
	t.Logf("tollgate holds %+v", *got)

	var breaks struct {
		Breaks []struct {
			Seq                  int64  `json:"seq"`
			Model                string `json:"model"`
			Cause                string `json:"cause"`
			StartedBy            string `json:"startedBy"`
			ExpectedCachedTokens int64  `json:"expectedCachedTokens"`
			CacheReadTokens      int64  `json:"cacheReadTokens"`
			RebilledTokens       int64  `json:"rebilledTokens"`
		} `json:"breaks"`
	}
	tg.get(t, "/v1/sessions/"+url.PathEscape(got.ID)+"/breaks", &breaks)
	if len(breaks.Breaks) != 1 {
		t.Fatalf("breaks %+v: want the third turn's", breaks.Breaks)
	}
	b := breaks.Breaks[0]
	if b.Seq != 3 || b.CacheReadTokens != 0 || b.ExpectedCachedTokens != calls[1].Prompt || b.RebilledTokens != min(calls[1].Prompt, calls[2].Prompt) ||
		b.Model != "gemini-2.5-pro" || b.StartedBy != "user-prompt" || b.Cause != "prefix" {
		t.Fatalf("break %+v: want the third request, expecting the second's %d prompt tokens cached", b, calls[1].Prompt)
	}
	t.Logf("the ledger: %+v", b)
}
