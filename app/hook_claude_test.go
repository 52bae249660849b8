package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client"
)

// ---- fixtures ----

// ccAssistant is one assistant transcript line.
func ccAssistant(msgID, reqID string, at time.Time, input, cacheRead, cacheWrite, output int64, sidechain bool) string {
	b, _ := json.Marshal(map[string]any{
		"type": "assistant", "timestamp": at.UTC().Format(time.RFC3339Nano), "requestId": reqID, "isSidechain": sidechain,
		"message": map[string]any{"id": msgID, "model": "claude-sonnet-4-5", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "ok"}},
			"usage":   map[string]any{"input_tokens": input, "cache_read_input_tokens": cacheRead, "cache_creation_input_tokens": cacheWrite, "output_tokens": output}},
	})
	return string(b)
}

func ccUser(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	return string(b)
}

// testTranscript: one fold, then three requests (the first streamed in two
// lines), a subagent request, a synthetic notice and a pending prompt.
func testTranscript(t0 time.Time) string {
	lines := []string{
		ccUser("first prompt"),
		ccAssistant("msg_0", "req_0", t0, 10, 0, 20000, 300, false),
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":20300}}`,
		`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"` + strings.Repeat("s", 4000) + `"}}`,
		ccAssistant("msg_1", "req_1", t0.Add(time.Minute), 5, 9000, 3000, 1, false),
		ccAssistant("msg_1", "req_1", t0.Add(time.Minute), 5, 9000, 3000, 200, false), // the same message, final figures
		ccUser("a tool result"),
		ccAssistant("msg_s", "req_s", t0.Add(90*time.Second), 100, 0, 500, 50, true),
		ccAssistant("msg_2", "req_2", t0.Add(2*time.Minute), 5, 12000, 2500, 100, false),
		`{"type":"assistant","message":{"id":"msg_syn","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}`,
		`not json at all`,
		ccAssistant("msg_3", "req_3", t0.Add(3*time.Minute), 5, 14000, 1000, 80, false),
		ccUser(strings.Repeat("p", 800)),
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestParseClaudeTranscript(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tr, err := parseClaudeTranscript(strings.NewReader(testTranscript(t0)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range tr.Requests {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, ","); got != "msg_0:req_0,msg_1:req_1,msg_s:req_s,msg_2:req_2,msg_3:req_3" {
		t.Fatalf("requests %s (streamed lines deduplicated, synthetic skipped)", got)
	}
	if r := tr.Requests[1]; r.Usage.Output != 200 || r.Usage.CacheRead != 9000 {
		t.Fatalf("streamed message keeps its final figures: %+v", r.Usage)
	}
	if !tr.Requests[2].Sidechain || tr.Folds != 1 || len(tr.Since) != 3 {
		t.Fatalf("sidechain %v folds %d since %v", tr.Requests[2].Sidechain, tr.Folds, tr.Since)
	}
	if tr.checkpointTokens() < 1000 || !tr.LastAt.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("checkpoint %d, lastAt %v", tr.checkpointTokens(), tr.LastAt)
	}
	envelope, units := tr.surface()
	// The envelope is the cached prefix of the first request after the fold.
	if envelope != 9000 {
		t.Fatalf("envelope %d, want 9000", envelope)
	}
	want := []struct {
		id     string
		tokens int64
		bp     bool
	}{{"msg_1:req_1", 3005, true}, {"msg_2:req_2", 14505 - 12005, true}, {"msg_3:req_3", 15005 - 14505, true}}
	if len(units) != 4 {
		t.Fatalf("units %+v", units)
	}
	for i, w := range want {
		if units[i].ID != w.id || units[i].Tokens != w.tokens || units[i].Breakpoint != w.bp {
			t.Fatalf("unit %d: %+v, want %+v", i, units[i], w)
		}
	}
	// The last output plus the pending prompt (content bytes / 4).
	if u := units[3]; u.ID != "pending" || u.Tokens < 80+200 || u.Breakpoint {
		t.Fatalf("pending unit %+v", u)
	}
}

func TestParseClaudeTranscriptWithoutFoldUsesTheSmallestCacheRead(t *testing.T) {
	t0 := time.Now()
	text := strings.Join([]string{
		ccAssistant("a", "1", t0, 100, 0, 8000, 10, false),
		ccAssistant("b", "2", t0, 100, 6000, 2500, 10, false),
		ccAssistant("c", "3", t0, 100, 8500, 1000, 10, false),
	}, "\n")
	tr, _ := parseClaudeTranscript(strings.NewReader(text))
	envelope, units := tr.surface()
	if envelope != 6000 || len(units) != 4 || units[0].Tokens != 8100-6000 {
		t.Fatalf("envelope %d units %+v", envelope, units)
	}
}

func TestDecodeClaudeHookInput(t *testing.T) {
	good := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p1","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`
	if in, err := decodeClaudeHookInput([]byte(good)); err != nil || in.SessionID != "s1" || in.PromptID != "p1" || in.CustomInstructions != nil {
		t.Fatalf("%+v %v", in, err)
	}
	for _, c := range []struct{ body, field string }{
		{``, "empty"},
		{`nope`, "not JSON"},
		{`{"session_id":1,"hook_event_name":"PreCompact","trigger":"auto"}`, "session_id"},
		{`{"session_id":"s","hook_event_name":"Stop","trigger":"auto"}`, "hook_event_name"},
		{`{"session_id":"s","hook_event_name":"PostCompact","trigger":"auto","compact_summary":[]}`, "compact_summary"},
		{`{"hook_event_name":"PreCompact","trigger":"auto"}`, "session_id"},
		{`{"session_id":"s","hook_event_name":"PreCompact","trigger":"sometimes"}`, "trigger"},
		{`{"session_id":"s","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":7}`, "custom_instructions"},
	} {
		_, err := decodeClaudeHookInput([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: err %v, want one naming %s", c.body, err, c.field)
		}
	}
}

func TestClaudeWindow(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if w, th := claudeWindow("claude-sonnet-4-5", get); w != 200000 || th != 167000 {
		t.Fatalf("default %d %d", w, th)
	}
	if w, _ := claudeWindow("claude-sonnet-4-5[1m]", get); w != 1000000 {
		t.Fatalf("1m %d", w)
	}
	env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"], env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = "100000", "10"
	if w, th := claudeWindow("x", get); w != 100000 || th != 10000 {
		t.Fatalf("override %d %d", w, th)
	}
	env["AI_AGENT"] = "claude-code_2-1-332_harness"
	if v := claudeVersion(get); v != "2.1.332" {
		t.Fatalf("version %q", v)
	}
}

func TestSecondsToDuration(t *testing.T) {
	got := strings.Join(secondsToDuration([]string{"--timeout", "300", "--timeout=20", "--x", "5"}, "timeout"), " ")
	if got != "--timeout 300s --timeout=20s --x 5" {
		t.Fatal(got)
	}
}

// ---- against a running tollgate ----

// runHook runs `tollgate hook claude-code` with stdin.
func runHook(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := RunHook(append([]string{"claude-code"}, args...), IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func hookInput(session, transcript, prompt, trigger string) string {
	b, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": transcript, "cwd": "/w", "prompt_id": prompt,
		"hook_event_name": "PreCompact", "trigger": trigger, "custom_instructions": nil})
	return string(b)
}

// answerer answers every question from an SSE subscriber with answers=1.
type answerer struct {
	mu      sync.Mutex
	choice  string
	pending []api.RewritePending
	stop    context.CancelFunc
	ready   chan struct{}
}

func startAnswerer(t *testing.T, info APIInfo, choice string) *answerer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &answerer{choice: choice, stop: cancel, ready: make(chan struct{})}
	req, _ := http.NewRequestWithContext(ctx, "GET", info.URL+"/v1/events?answers=1", nil)
	req.Header.Set("Authorization", "Bearer "+info.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(client.Endpoint{URL: info.URL, Token: info.Token}, nil)
	go func() {
		defer res.Body.Close()
		close(a.ready)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok && event == "rewrite.pending" {
				var p api.RewritePending
				json.Unmarshal([]byte(d), &p)
				a.mu.Lock()
				a.pending = append(a.pending, p)
				choice := a.choice
				a.mu.Unlock()
				if choice != "" {
					go c.Answer(context.Background(), p.Rewrite, choice)
				}
			}
		}
	}()
	<-a.ready
	t.Cleanup(cancel)
	// The subscription counts once the server has registered it.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var h struct {
			Status string `json:"status"`
		}
		if c.Get(context.Background(), "/v1/health", &h) == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	return a
}

func (a *answerer) asked() []api.RewritePending {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]api.RewritePending(nil), a.pending...)
}

func writeTranscript(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "11111111-2222-3333-4444-555555555555.jsonl")
	if err := os.WriteFile(path, []byte(testTranscript(time.Now().Add(-10*time.Minute))), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func startModeService(t *testing.T, mode string) (*Service, string) {
	t.Helper()
	home := t.TempDir()
	svc, err := Start(context.Background(), StartOptions{Home: home, Flags: Flags{Listen: "127.0.0.1:0", Mode: mode}, Version: "test", Assets: uiAssets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Close(ctx)
	})
	return svc, home
}

func TestClaudeHookAutoModeAllowsAndRecords(t *testing.T) {
	svc, home := startModeService(t, "auto")
	transcript := writeTranscript(t)
	code, out, errs := runHook(t, hookInput("sess-a", transcript, "prompt-1", "auto"), "--home", home, "--timeout", "60")
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q (stderr %s)", code, out, errs)
	}
	c := client.New(client.Endpoint{URL: svc.URL, Token: svc.Token()}, nil)
	var series api.Series
	if err := c.Get(context.Background(), "/v1/sessions/claude-code:sess-a/series", &series); err != nil {
		t.Fatal(err)
	}
	if series.Session.Harness != "claude-code" || series.Session.Requests != 5 || series.ContextWindow != 200000 {
		t.Fatalf("session %+v", series.Session)
	}
	if len(series.Folds) != 1 || series.Folds[0].Decision != "allow" || series.Folds[0].Reason != "auto" || series.Folds[0].Turn != "prompt-1" || series.Folds[0].Trigger != "pressure" {
		t.Fatalf("folds %+v", series.Folds)
	}
	// A second hook run records nothing twice.
	runHook(t, hookInput("sess-a", transcript, "prompt-2", "auto"), "--home", home)
	c.Get(context.Background(), "/v1/sessions/claude-code:sess-a/series", &series)
	if series.Session.Requests != 5 {
		t.Fatalf("requests %d after a second hook, want 5", series.Session.Requests)
	}
	// PostCompact: the allowed compaction landed; its outcome is recorded.
	post := strings.Replace(hookInput("sess-a", transcript, "prompt-1", "auto"), `"PreCompact"`, `"PostCompact"`, 1)
	if code, out, errs := runHook(t, post, "--home", home); code != 0 || out != "" {
		t.Fatalf("PostCompact: exit %d stdout %q stderr %s", code, out, errs)
	}
	c.Get(context.Background(), "/v1/sessions/claude-code:sess-a/series", &series)
	if f := series.Folds[0]; f.Applied == nil || !*f.Applied || series.Folds[1].Applied != nil {
		t.Fatalf("outcome not reported on the prompt's fold: %+v", series.Folds)
	}
	m, err := readIntegrationMarker(home, IntegrationClaudeCode)
	if err != nil || m.LastDecision != "allow (auto)" {
		t.Fatalf("marker %+v %v", m, err)
	}
}

func TestClaudeHookAskModeBlocksMutesAndAsksAgainNextPrompt(t *testing.T) {
	svc, home := startModeService(t, "ask")
	transcript := writeTranscript(t)

	// Nobody to ask: declined at once (fail closed on silence).
	code, out, _ := runHook(t, hookInput("sess-b", transcript, "p1", "auto"), "--home", home)
	if code != 0 || !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "no tollgate window") {
		t.Fatalf("exit %d stdout %q", code, out)
	}
	// A manual /compact is allowed without asking.
	if _, out, _ := runHook(t, hookInput("sess-b", transcript, "p1b", "manual"), "--home", home); out != "" {
		t.Fatalf("manual compaction blocked: %q", out)
	}

	info, _ := ReadAPIInfo(home)
	a := startAnswerer(t, info, api.ChoiceNotNow)
	code, out, _ = runHook(t, hookInput("sess-b", transcript, "p2", "auto"), "--home", home, "--timeout", "60")
	if code != 0 || !strings.Contains(out, "you chose Not now") {
		t.Fatalf("not now: exit %d stdout %q", code, out)
	}
	asked := a.asked()
	if len(asked) != 1 || asked[0].Session != "claude-code:sess-b" || asked[0].Turn != "p2" || asked[0].DeadlineSeconds != 55 || asked[0].Quote == nil {
		t.Fatalf("asked %+v", asked)
	}
	// The same prompt again: muted, not asked.
	_, out, _ = runHook(t, hookInput("sess-b", transcript, "p2", "auto"), "--home", home)
	if !strings.Contains(out, "declined earlier in this prompt") || len(a.asked()) != 1 {
		t.Fatalf("muted: %q, asked %d", out, len(a.asked()))
	}
	// The next prompt asks again; this time allowed.
	a.mu.Lock()
	a.choice = api.ChoiceAllowOnce
	a.mu.Unlock()
	if _, out, _ := runHook(t, hookInput("sess-b", transcript, "p3", "auto"), "--home", home); out != "" || len(a.asked()) != 2 {
		t.Fatalf("allow once: %q asked %d", out, len(a.asked()))
	}
	_ = svc
}

func TestClaudeHookFailsOpen(t *testing.T) {
	home := t.TempDir() // nothing running here
	t.Setenv("TOLLGATE_URL", "")
	code, out, errs := runHook(t, hookInput("s", "/nonexistent.jsonl", "p", "auto"), "--home", home)
	if code != 0 || out != "" || !strings.Contains(errs, "not running") {
		t.Fatalf("not running: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, errs = runHook(t, `{"session_id":`, "--home", home)
	if code != 0 || out != "" || !strings.Contains(errs, "malformed") {
		t.Fatalf("malformed: exit %d stdout %q stderr %q", code, out, errs)
	}
}

func TestClaudeHTTPHook(t *testing.T) {
	svc, _ := startModeService(t, "ask")
	transcript := writeTranscript(t)
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", svc.URL+"/v1/hooks/claude-code?timeout=30", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+svc.Token())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		return res.StatusCode, b.String()
	}
	if code, body := post(hookInput("sess-h", transcript, "p1", "auto")); code != 200 || !strings.Contains(body, `"decision":"block"`) {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := post(`{"broken`); code != 200 || strings.TrimSpace(body) != "{}" {
		t.Fatalf("malformed: %d %s", code, body)
	}
	// Without the token: 401, like every /v1 route.
	res, err := http.Post(svc.URL+"/v1/hooks/claude-code", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("no token: %d", res.StatusCode)
	}
}

func TestClaudeInstallUninstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	other := `{"model":"opus","hooks":{"PreCompact":[{"matcher":"manual","hooks":[{"type":"command","command":"/usr/local/bin/save-notes"}]}],"Stop":[{"hooks":[{"type":"command","command":"x"}]}]},"permissions":{"allow":["Bash(ls)"]}}`
	os.WriteFile(path, []byte(other), 0o644)
	var out, errb bytes.Buffer
	stdio := IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	if code := RunHook([]string{"claude-code", "--install", "--settings", path, "--timeout", "240"}, stdio); code != 0 {
		t.Fatalf("install: %d %s", code, errb.String())
	}
	if b, _ := os.ReadFile(path + ".tollgate-backup"); string(b) != other {
		t.Fatalf("backup %q", b)
	}
	settings, err := readClaudeSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	hooks := findTollgateClaudeHooks(settings)
	if len(hooks) != 1 || hooks[0].Timeout != 240 || !strings.Contains(hooks[0].Command, "hook claude-code --timeout 240") {
		t.Fatalf("hooks %+v", hooks)
	}
	if settings["model"] != "opus" || len(preCompactGroups(settings)) != 2 || len(hookGroups(settings, "PostCompact")) != 1 {
		t.Fatalf("other settings lost: %v", settings)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	// Idempotent.
	out.Reset()
	RunHook([]string{"claude-code", "--install", "--settings", path, "--timeout", "240"}, stdio)
	if !strings.Contains(out.String(), "already installed") {
		t.Fatalf("second install: %s", out.String())
	}
	// The installed hook points at this (test) binary: verified and armed.
	self, _ := os.Executable()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	in := integrationsFor(integrationEnv{home: t.TempDir(), self: self, getenv: os.Getenv})[0]
	if !in.Installed || !in.Verified {
		t.Fatalf("integration %+v", in)
	}
	in = integrationsFor(integrationEnv{home: t.TempDir(), self: "/bin/sh", getenv: os.Getenv})[0]
	if !in.Installed || in.Verified || !strings.Contains(in.Detail, "not this tollgate") {
		t.Fatalf("foreign binary %+v", in)
	}
	// Uninstall removes only tollgate's entry.
	if code := RunHook([]string{"claude-code", "--uninstall", "--settings", path}, stdio); code != 0 {
		t.Fatal(errb.String())
	}
	settings, _ = readClaudeSettings(path)
	b, _ := json.Marshal(settings)
	var want, got any
	json.Unmarshal([]byte(other), &want)
	json.Unmarshal(b, &got)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("after uninstall\n%s\nwant\n%s", b, other)
	}
}

func TestClaudeInstallRefusesBrokenSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte(`{"hooks":`), 0o600)
	var out, errb bytes.Buffer
	if code := RunHook([]string{"claude-code", "--install", "--settings", path}, IO{Stdout: &out, Stderr: &errb}); code != 1 || !strings.Contains(errb.String(), "does not parse") {
		t.Fatalf("%d %s", code, errb.String())
	}
	if b, _ := os.ReadFile(path); string(b) != `{"hooks":` {
		t.Fatal("a broken settings file was overwritten")
	}
}

func FuzzDecodeClaudeHookInput(f *testing.F) {
	f.Add([]byte(`{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p1","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`))
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"keep the plan"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeClaudeHookInput(b)
		if err == nil && (in.SessionID == "" || in.HookEventName != claudePreCompact && in.HookEventName != claudePostCompact) {
			t.Fatalf("accepted %q as %+v", b, in)
		}
	})
}

func FuzzParseClaudeTranscript(f *testing.F) {
	f.Add([]byte(testTranscript(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-5,"cache_read_input_tokens":9}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := parseClaudeTranscript(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		envelope, units := tr.surface()
		if envelope < 0 {
			t.Fatalf("envelope %d", envelope)
		}
		seen := map[string]bool{}
		for _, u := range units {
			if u.Tokens <= 0 || seen[u.ID] {
				t.Fatalf("unit %+v (duplicate %v)", u, seen[u.ID])
			}
			seen[u.ID] = true
		}
	})
}
