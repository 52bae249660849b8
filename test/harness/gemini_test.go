package harness

import (
	"encoding/json"
	"fmt"
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

// geminiWorld is a sandboxed HOME whose Gemini CLI talks to the fake Gemini
// endpoint, with a PreCompress hook installed, and a running tollgate.
type geminiWorld struct {
	e          env
	cli        string
	p          *Provider
	home, work string
	environ    []string
	tg         *tollgate
	hookLog    string // what the PreCompress hook received, one JSON a call
}

// startGeminiWorld writes ~/.gemini/settings.json: API-key auth (with
// GOOGLE_GEMINI_BASE_URL alone Gemini CLI selects "gateway" auth, which its
// headless mode refuses as "Invalid auth method selected"; the base URL
// still applies and the key is sent but never checked), no usage
// statistics or update check, extra (e.g. a compression threshold), and a
// PreCompress hook that logs each call and answers with everything a hook
// can say to stop a compression: decision "block", continue false. The
// workspace is trusted through the environment, as headless use requires.
func startGeminiWorld(t *testing.T, extra map[string]any) geminiWorld {
	t.Helper()
	e, cli := geminiCLI(t)
	p := fakeProvider(t, StartGeminiProvider)
	home, environ := sandbox(t, "GOOGLE_GEMINI_BASE_URL="+p.URL, "GEMINI_API_KEY=test-key-not-checked",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "NO_BROWSER=true")
	w := geminiWorld{e: e, cli: cli, p: p, home: home, work: filepath.Join(home, "work"), environ: environ,
		hookLog: filepath.Join(home, "precompress.log")}
	script := filepath.Join(home, "precompress.sh")
	hook := "#!/bin/sh\ncat >> '" + w.hookLog + "'\necho >> '" + w.hookLog + "'\n" +
		`echo '{"decision":"block","reason":"tollgate test: not now","continue":false,"stopReason":"tollgate test: stop"}'` + "\n"
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"disableAutoUpdate": true},
		"hooks": map[string]any{"PreCompress": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": script, "name": "tollgate-test"}}}}},
	}
	for k, v := range extra {
		settings[k] = v
	}
	b, _ := json.Marshal(settings)
	for _, err := range []error{os.MkdirAll(filepath.Join(home, ".gemini"), 0o755), os.MkdirAll(w.work, 0o755),
		os.WriteFile(script, []byte(hook), 0o755), os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o644)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	w.tg = startTollgate(t, e, environ)
	return w
}

// turn runs one headless turn (gemini -p), resuming the latest session
// unless it is the first.
func (w geminiWorld) turn(t *testing.T, first bool, prompt string) result {
	t.Helper()
	args := []string{w.cli, "-m", "gemini-2.5-pro"}
	if !first {
		args = append(args, "-r", "latest")
	}
	r := run(t, w.p, w.work, w.environ, "node", append(args, "-p", prompt)...)
	if r.code != 0 || r.reqs == 0 {
		t.Fatalf("gemini: exit %d, %d requests", r.code, r.reqs)
	}
	return r
}

// hookCalls reads what the PreCompress hook received.
func (w geminiWorld) hookCalls(t *testing.T) []map[string]any {
	t.Helper()
	b, _ := os.ReadFile(w.hookLog)
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// importGemini runs `tollgate import --harness gemini` with no path: the
// default folders, $HOME the sandbox's.
func (w geminiWorld) importGemini(t *testing.T) string {
	t.Helper()
	out := w.e.runTollgate(t, w.environ, "import", "import", "--home", w.tg.Home, "--harness", "gemini")
	t.Logf("$ tollgate import --harness gemini\n%s", out)
	return string(out)
}

type geminiSession struct {
	ID       string `json:"id"`
	Harness  string `json:"harness"`
	Requests int64  `json:"requests"`
	Folds    int64  `json:"folds"`
	Tokens   struct {
		Input, CacheRead, CacheWrite, CacheWrite1h, Output int64
	} `json:"tokens"`
	CostUSD float64 `json:"costUSD"`
}

type geminiBreak struct {
	Seq                  int64   `json:"seq"`
	Model                string  `json:"model"`
	Cause                string  `json:"cause"`
	StartedBy            string  `json:"startedBy"`
	ExpectedCachedTokens int64   `json:"expectedCachedTokens"`
	CacheReadTokens      int64   `json:"cacheReadTokens"`
	RebilledTokens       int64   `json:"rebilledTokens"`
	Rewrite              *string `json:"rewrite"`
}

// stored reads the one Gemini session tollgate holds and its breaks.
func (w geminiWorld) stored(t *testing.T) (geminiSession, []geminiBreak) {
	t.Helper()
	var list struct {
		Sessions []geminiSession `json:"sessions"`
	}
	w.tg.get(t, "/v1/sessions", &list)
	var got []geminiSession
	for _, s := range list.Sessions {
		if s.Harness == "gemini" {
			got = append(got, s)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0].ID, "gemini:") {
		t.Fatalf("Gemini sessions %+v: want one", got)
	}
	var breaks struct {
		Breaks []geminiBreak `json:"breaks"`
	}
	w.tg.get(t, "/v1/sessions/"+url.PathEscape(got[0].ID)+"/breaks", &breaks)
	return got[0], breaks.Breaks
}

// The real Gemini CLI 0.61.0, in headless mode (gemini -p) against the fake
// Gemini endpoint, writes its session file; `tollgate import --harness
// gemini` reads it, and tollgate then holds exactly the token figures the
// endpoint sent — promptTokenCount split into cached and uncached input —
// and, where the cached count dropped (the endpoint forgot its cache
// between two turns, as an expired implicit cache does), a break in the
// ledger. The PreCompress hook fires on every turn though nothing is
// compressed: it cannot tell that a compaction is coming.
func TestGeminiCLIImport(t *testing.T) {
	w := startGeminiWorld(t, nil)
	start := time.Now()
	w.turn(t, true, bigPrompt("one"))
	w.turn(t, false, "and again")
	w.p.Evict() // the endpoint's cache expires: the next turn reads nothing from it
	w.turn(t, false, "once more")
	t.Logf("three turns of the real Gemini CLI: %v", time.Since(start).Round(time.Millisecond))

	calls := w.p.Calls()
	var want struct{ requests, input, cacheRead, output int64 }
	for _, c := range calls {
		want.requests++
		want.input += c.Prompt - c.Cached
		want.cacheRead += c.Cached
		want.output += c.Output
	}
	if len(calls) != 3 || calls[1].Cached == 0 || calls[2].Cached != 0 || w.p.Compactions() != 0 {
		t.Fatalf("the endpoint served %d calls %+v: want three, the second cached, the third not, no compaction", len(calls), calls)
	}
	if hooks := w.hookCalls(t); len(hooks) != 3 || hooks[0]["hook_event_name"] != "PreCompress" || hooks[0]["trigger"] != "auto" {
		t.Fatalf("PreCompress calls %v: want one a turn, trigger auto, though nothing was compressed", hooks)
	}
	// Gemini CLI names a session's file by the minute it writes it
	// (session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl): a turn resumed in the next
	// minute goes to a file of its own, with the same id. The turns resumed
	// one session when every file ends in the same id.
	files, _ := filepath.Glob(filepath.Join(w.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	if len(files) == 0 {
		t.Fatal("Gemini CLI wrote no session file")
	}
	fileID := func(path string) string {
		stem := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		return stem[strings.LastIndexByte(stem, '-')+1:]
	}
	for _, f := range files {
		if fileID(f) != fileID(files[0]) {
			t.Fatalf("session files: %v (want one session: the turns resumed it)", files)
		}
	}
	t.Logf("Gemini CLI wrote %v", files)
	if out := w.importGemini(t); !strings.Contains(out, "3 requests, 0 updated, 0 folds") {
		t.Fatalf("import: %s", out)
	}

	got, breaks := w.stored(t)
	if got.Requests != want.requests || got.Tokens.Input != want.input || got.Tokens.CacheRead != want.cacheRead ||
		got.Tokens.Output != want.output || got.Tokens.CacheWrite+got.Tokens.CacheWrite1h != 0 || got.CostUSD <= 0 {
		t.Fatalf("tollgate holds %+v, the endpoint served %+v", got, want)
	}
	t.Logf("tollgate holds %+v", got)
	if len(breaks) != 1 {
		t.Fatalf("breaks %+v: want the third turn's", breaks)
	}
	b := breaks[0]
	if b.Seq != 3 || b.CacheReadTokens != 0 || b.ExpectedCachedTokens != calls[1].Prompt || b.RebilledTokens != min(calls[1].Prompt, calls[2].Prompt) ||
		b.Model != "gemini-2.5-pro" || b.StartedBy != "user-prompt" || b.Cause != "prefix" || b.Rewrite != nil {
		t.Fatalf("break %+v: want the third request, expecting the second's %d prompt tokens cached", b, calls[1].Prompt)
	}
	t.Logf("the ledger: %+v", b)
}

// Gemini CLI compresses its history whatever its PreCompress hook answers
// (here "block", continue false): the hook is advisory. With a compression
// threshold of 0.1 % of the window (Gemini CLI measures its history, system
// prompt aside) the third turn compresses, after a long second prompt that
// the compression takes out of the cached prefix: the
// endpoint serves the compression's summary calls, the turn goes on, and
// the session file shows the new history. The import reads that as a fold,
// and the cache break of the next request as caused by it; the summary
// calls are not in the file (Gemini CLI does not record them), so the
// import has the conversation's requests only.
func TestGeminiCLICompressionIgnoresItsHook(t *testing.T) {
	w := startGeminiWorld(t, map[string]any{"model": map[string]any{"compressionThreshold": 0.001}})
	w.turn(t, true, "hello")
	if r := w.turn(t, false, bigPrompt("one")); r.compac != 0 {
		t.Fatalf("the second turn compressed already (%d summary calls)", r.compac)
	}
	// The compression replaces the cached "one" with its summary; the new
	// prompt after it is cold, and so is everything after the change.
	r := w.turn(t, false, bigPrompt("two"))
	if r.compac == 0 || w.p.Compactions() != r.compac {
		t.Fatalf("the third turn made %d requests, %d of them compactions: want a compression", r.reqs, r.compac)
	}
	hooks := w.hookCalls(t)
	if len(hooks) != 3 {
		t.Fatalf("PreCompress calls %v: want one a turn", hooks)
	}
	t.Logf("PreCompress answered block/continue:false on %d turns; the endpoint still served %d summary calls", len(hooks), r.compac)

	var conversation []Call
	for _, c := range w.p.Calls() {
		if !c.Compaction {
			conversation = append(conversation, c)
		}
	}
	if out := w.importGemini(t); !strings.Contains(out, "3 requests, 0 updated, 1 folds") {
		t.Fatalf("import: %s (want the three conversation requests and the compression)", out)
	}
	got, breaks := w.stored(t)
	var cached int64
	for _, c := range conversation {
		cached += c.Cached
	}
	if got.Requests != 3 || got.Folds != 1 || got.Tokens.CacheRead != cached {
		t.Fatalf("tollgate holds %+v; the conversation calls were %+v", got, conversation)
	}
	if len(breaks) != 1 || breaks[0].Seq != 3 || breaks[0].Cause != "rewrite" || breaks[0].Rewrite == nil ||
		breaks[0].StartedBy != "after-compaction" || breaks[0].CacheReadTokens != conversation[2].Cached {
		t.Fatalf("breaks %+v: want the third request's, caused by the compression (calls %v)", breaks, summarize(conversation))
	}
	t.Logf("the ledger: %+v", breaks[0])
}

func summarize(calls []Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("prompt %d cached %d output %d", c.Prompt, c.Cached, c.Output))
	}
	return out
}
