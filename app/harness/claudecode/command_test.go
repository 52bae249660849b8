package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/guard/client/clienttest"
)

// ---- against a running tollgate ----

// runHook runs the command hook with stdin, as `tollgate hook claude-code
// --home H --timeout S` does (app/cli parses those flags).
func runHook(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	opts := Options{Timeout: DefaultTimeout}
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--home":
			opts.Home = args[i+1]
		case "--timeout":
			s, err := strconv.Atoi(args[i+1])
			if err != nil {
				t.Fatal(err)
			}
			opts.Timeout = time.Duration(s) * time.Second
		default:
			t.Fatalf("runHook: flag %s", args[i])
		}
	}
	var out, errb bytes.Buffer
	RunCommand(context.Background(), strings.NewReader(stdin), &out, &errb, opts)
	return 0, out.String(), errb.String()
}

func hookJSON(session, transcript, prompt, trigger string) string {
	b, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": transcript, "cwd": "/w", "prompt_id": prompt,
		"hook_event_name": "PreCompact", "trigger": trigger, "custom_instructions": nil})
	return string(b)
}

func writeTranscript(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "11111111-2222-3333-4444-555555555555.jsonl")
	if err := os.WriteFile(path, []byte(testTranscript(time.Now().Add(-10*time.Minute))), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestClaudeHookAutoModeAllowsAndRecords(t *testing.T) {
	svc, dir := StartService.Start(t, "auto")
	transcript := writeTranscript(t)
	code, out, errs := runHook(t, hookJSON("sess-a", transcript, "prompt-1", "auto"), "--home", dir, "--timeout", "60")
	if blocked, shown := answer(t, out); code != 0 || blocked || shown != "tollgate allowed the compaction (mode: auto)." {
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
	runHook(t, hookJSON("sess-a", transcript, "prompt-2", "auto"), "--home", dir)
	c.Get(context.Background(), "/v1/sessions/claude-code:sess-a/series", &series)
	if series.Session.Requests != 5 {
		t.Fatalf("requests %d after a second hook, want 5", series.Session.Requests)
	}
	// PostCompact: the allowed compaction landed; its outcome is recorded.
	post := strings.Replace(hookJSON("sess-a", transcript, "prompt-1", "auto"), `"PreCompact"`, `"PostCompact"`, 1)
	if code, out, errs := runHook(t, post, "--home", dir); code != 0 || out != "" {
		t.Fatalf("PostCompact: exit %d stdout %q stderr %s", code, out, errs)
	}
	c.Get(context.Background(), "/v1/sessions/claude-code:sess-a/series", &series)
	if f := series.Folds[0]; f.Applied == nil || !*f.Applied || series.Folds[1].Applied != nil {
		t.Fatalf("outcome not reported on the prompt's fold: %+v", series.Folds)
	}
	m, err := home.ReadMarker(dir, Name)
	if err != nil || m.LastDecision != "allow (auto)" {
		t.Fatalf("marker %+v %v", m, err)
	}
}

func TestClaudeHookAskModeBlocksMutesAndAsksAgainNextPrompt(t *testing.T) {
	svc, dir := StartService.Start(t, "ask")
	transcript := writeTranscript(t)

	// Nobody to ask: declined at once (fail closed on silence).
	code, out, _ := runHook(t, hookJSON("sess-b", transcript, "p1", "auto"), "--home", dir)
	if code != 0 || !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "no tollgate window") {
		t.Fatalf("exit %d stdout %q", code, out)
	}
	// A manual /compact is allowed without asking.
	if _, out, _ := runHook(t, hookJSON("sess-b", transcript, "p1b", "manual"), "--home", dir); blockedOut(t, out) {
		t.Fatalf("manual compaction blocked: %q", out)
	}

	owner, err := home.ReadOwnerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := clienttest.StartAnswerer(t, svc.URL, owner, api.ChoiceNotNow) // answering is the owner's
	code, out, _ = runHook(t, hookJSON("sess-b", transcript, "p2", "auto"), "--home", dir, "--timeout", "60")
	if code != 0 || !strings.Contains(out, "you chose Not now") {
		t.Fatalf("not now: exit %d stdout %q", code, out)
	}
	asked := a.Asked()
	if len(asked) != 1 || asked[0].Session != "claude-code:sess-b" || asked[0].Turn != "p2" || asked[0].DeadlineSeconds != 55 || asked[0].Quote == nil {
		t.Fatalf("asked %+v", asked)
	}
	// The same prompt again: muted, not asked.
	_, out, _ = runHook(t, hookJSON("sess-b", transcript, "p2", "auto"), "--home", dir)
	if !strings.Contains(out, "declined earlier in this prompt") || len(a.Asked()) != 1 {
		t.Fatalf("muted: %q, asked %d", out, len(a.Asked()))
	}
	// The next prompt asks again; this time allowed.
	a.SetChoice(api.ChoiceAllowOnce)
	if _, out, _ := runHook(t, hookJSON("sess-b", transcript, "p3", "auto"), "--home", dir); blockedOut(t, out) || len(a.Asked()) != 2 {
		t.Fatalf("allow once: %q asked %d", out, len(a.Asked()))
	}
	_ = svc
}

func TestClaudeHookFailsOpen(t *testing.T) {
	dir := t.TempDir() // nothing running here
	t.Setenv("TOLLGATE_URL", "")
	code, out, errs := runHook(t, hookJSON("s", "/nonexistent.jsonl", "p", "auto"), "--home", dir)
	if blocked, shown := answer(t, out); code != 0 || blocked || shown != "tollgate is not running: the compaction runs unguarded." || !strings.Contains(errs, "not running") {
		t.Fatalf("not running: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, errs = runHook(t, `{"session_id":`, "--home", dir)
	if blocked, shown := answer(t, out); code != 0 || blocked || !strings.Contains(shown, "could not read the hook's input") || !strings.Contains(errs, "malformed") {
		t.Fatalf("malformed: exit %d stdout %q stderr %q", code, out, errs)
	}
}

func TestClaudeHTTPHook(t *testing.T) {
	svc, _ := StartService.Start(t, "ask")
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
	if code, body := post(hookJSON("sess-h", transcript, "p1", "auto")); code != 200 || !strings.Contains(body, `"decision":"block"`) {
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
	install := InstallOptions{Settings: path, Timeout: 240 * time.Second}
	if res, err := Install(install); err != nil || !res.Changed || res.Backup != path+".tollgate-backup" {
		t.Fatalf("install: %+v %v", res, err)
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
	if res, err := Install(install); err != nil || res.Changed {
		t.Fatalf("second install: %+v %v", res, err)
	}
	// The installed hook points at this (test) binary: verified and armed.
	self, _ := os.Executable()
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	in := Status(home.Probe{Home: t.TempDir(), Self: self, Getenv: os.Getenv})
	if !in.Installed || !in.Verified {
		t.Fatalf("integration %+v", in)
	}
	in = Status(home.Probe{Home: t.TempDir(), Self: "/bin/sh", Getenv: os.Getenv})
	if !in.Installed || in.Verified || !strings.Contains(in.Detail, "not this tollgate") {
		t.Fatalf("foreign binary %+v", in)
	}
	// Uninstall removes only tollgate's entry.
	if res, err := Uninstall(path); err != nil || res.Removed != 2 {
		t.Fatalf("uninstall: %+v %v", res, err)
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
	if _, err := Install(InstallOptions{Settings: path, Timeout: InstallTimeout}); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Fatalf("%v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"hooks":` {
		t.Fatal("a broken settings file was overwritten")
	}
}

// Installing the hook, then the telemetry, then removing the telemetry
// keeps every earlier settings.json: the user's own from before tollgate
// stays in settings.json.tollgate-backup, each later change goes to the
// next numbered backup. The telemetry block holds the harness token, so
// the file and its later backups are readable by their owner only.
func TestSettingsBackupsKeepTheUsersOwnAndTheTokenPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	own := `{"model":"opus"}` + "\n"
	if err := os.WriteFile(path, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Install(InstallOptions{Settings: path, Timeout: 240 * time.Second})
	if err != nil || res.Backup != path+".tollgate-backup" {
		t.Fatalf("install: %+v %v", res, err)
	}
	withHook, _ := os.ReadFile(path)
	backup, err := InstallTelemetry(path, TelemetryEnv("http://127.0.0.1:1", "secret-token", "http/json"))
	if err != nil || backup != path+".tollgate-backup.1" {
		t.Fatalf("telemetry: %q %v", backup, err)
	}
	if _, backup, err = UninstallTelemetry(path); err != nil || backup != path+".tollgate-backup.2" {
		t.Fatalf("uninstall telemetry: %q %v", backup, err)
	}
	for name, want := range map[string]string{".tollgate-backup": own, ".tollgate-backup.1": string(withHook)} {
		if b, _ := os.ReadFile(path + name); string(b) != want {
			t.Errorf("%s holds %q, want %q", name, b, want)
		}
	}
	for name, want := range map[string]os.FileMode{"": 0o600, ".tollgate-backup": 0o644, ".tollgate-backup.1": 0o600, ".tollgate-backup.2": 0o600} {
		if fi, err := os.Stat(path + name); err != nil || fi.Mode().Perm() != want {
			t.Errorf("settings.json%s: mode %v (%v), want %v", name, fi.Mode().Perm(), err, want)
		}
	}
}

// Past maxBackups, the last numbered backup is written over: the user's
// own and the others stay.
func TestSettingsBackupsAreBounded(t *testing.T) {
	base := filepath.Join(t.TempDir(), "s.json.tollgate-backup")
	for n := 0; n < maxBackups+2; n++ {
		if _, err := writeBackup(base, []byte{byte(n)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(base); len(b) != 1 || b[0] != 0 {
		t.Fatalf("the first backup was written over: %v", b)
	}
	matches, _ := filepath.Glob(base + "*")
	if len(matches) != maxBackups {
		t.Fatalf("%d backups, want %d", len(matches), maxBackups)
	}
}

// answer reads the hook's stdout as Claude Code does: whether it blocks
// the compaction, and the message Claude Code shows its user
// (systemMessage), which every answer carries.
func answer(t *testing.T, out string) (blocked bool, shown string) {
	t.Helper()
	var a struct{ Decision, Reason, SystemMessage string }
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("hook stdout %q is not one JSON answer: %v", out, err)
	}
	if a.SystemMessage == "" {
		t.Fatalf("hook stdout %q says nothing to show the user", out)
	}
	return a.Decision == "block", a.SystemMessage
}

func blockedOut(t *testing.T, out string) bool {
	t.Helper()
	blocked, _ := answer(t, out)
	return blocked
}
