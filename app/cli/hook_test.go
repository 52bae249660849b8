package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecondsToDuration(t *testing.T) {
	got := strings.Join(secondsToDuration([]string{"--timeout", "300", "--timeout=20", "--x", "5"}, "timeout"), " ")
	if got != "--timeout 300s --timeout=20s --x 5" {
		t.Fatal(got)
	}
}

// Reasonix caps an intercept's timeout at 60 s: a longer one is a usage
// error, and nothing is written.
func TestExtReasonixInstallRefusesATimeoutOverTheCeiling(t *testing.T) {
	var out, errb strings.Builder
	dir := t.TempDir()
	err := Ext(context.Background(), []string{"reasonix", "--install", "--dir", dir + "/plugin", "--timeout", "90s"}, IO{Stdout: &out, Stderr: &errb}, "")
	if code := Exit(err, &errb); code != 2 || !strings.Contains(errb.String(), "60s") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// The hook never fails Claude Code: malformed input allows the compaction
// (no decision, only the message Claude Code shows) and exits 0.
func TestHookClaudeCodeMalformedInputAllows(t *testing.T) {
	var out, errb strings.Builder
	err := Hook(context.Background(), []string{"claude-code", "--home", t.TempDir()}, IO{Stdin: strings.NewReader(`{"session_id":`), Stdout: &out, Stderr: &errb})
	if code := Exit(err, &errb); code != 0 || strings.Contains(out.String(), "decision") || !strings.Contains(out.String(), `"systemMessage":"tollgate could not read`) ||
		!strings.Contains(errb.String(), "malformed") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
}

// `tollgate hook codex`: malformed input allows (exit 0, no output);
// --install writes hooks.json and the trust into --codex-home, a second run
// says it is there already, --uninstall removes it; an unparseable
// hooks.json is an error naming the file and line, and changes nothing.
func TestHookCodexVerb(t *testing.T) {
	var out, errb strings.Builder
	io := func(stdin string) IO {
		out.Reset()
		errb.Reset()
		return IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	}
	err := Hook(context.Background(), []string{"codex", "--home", t.TempDir()}, io(`{"session_id":`))
	if code := Exit(err, &errb); code != 0 || out.String() != "" || !strings.Contains(errb.String(), "malformed") {
		t.Fatalf("malformed: exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
	codexHome := t.TempDir()
	install := []string{"codex", "--install", "--codex-home", codexHome, "--timeout", "120"}
	if err := Hook(context.Background(), install, io("")); err != nil || !strings.Contains(out.String(), "(timeout 120s) and trusted them") {
		t.Fatalf("install: %v %q", err, out.String())
	}
	if err := Hook(context.Background(), install, io("")); err != nil || !strings.Contains(out.String(), "already installed") {
		t.Fatalf("second install: %v %q", err, out.String())
	}
	if err := Hook(context.Background(), []string{"codex", "--uninstall", "--codex-home", codexHome}, io("")); err != nil || !strings.Contains(out.String(), "Removed") {
		t.Fatalf("uninstall: %v %q", err, out.String())
	}
	broken := "{\n\"hooks\": [,\n"
	os.WriteFile(filepath.Join(codexHome, "hooks.json"), []byte(broken), 0o600)
	err = Hook(context.Background(), install, io(""))
	if code := Exit(err, &errb); code == 0 || !strings.Contains(errb.String(), "hooks.json:2") {
		t.Fatalf("broken hooks.json: exit %d stderr %q", code, errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(codexHome, "hooks.json")); string(b) != broken {
		t.Fatalf("changed: %q", b)
	}
}

// `tollgate hook opencode`: --install writes the shim and the plugin into
// --config-dir, a second run says it is there already, --uninstall removes
// them; neither flag (there is no hook to run) is a usage error.
func TestHookOpenCodeVerb(t *testing.T) {
	var out, errb strings.Builder
	io := func() IO {
		out.Reset()
		errb.Reset()
		return IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	}
	if code := Exit(Hook(context.Background(), []string{"opencode"}, io()), &errb); code != 2 || !strings.Contains(errb.String(), "--install or --uninstall") {
		t.Fatalf("no flag: exit %d stderr %q", code, errb.String())
	}
	cfg := t.TempDir()
	install := []string{"opencode", "--install", "--config-dir", cfg, "--home", "/srv/tollgate"}
	if err := Hook(context.Background(), install, io()); err != nil || !strings.Contains(out.String(), "Installed tollgate's OpenCode plugin") {
		t.Fatalf("install: %v %q", err, out.String())
	}
	shim, err := os.ReadFile(filepath.Join(cfg, "plugins", "tollgate.js"))
	if err != nil || !strings.Contains(string(shim), `home: "/srv/tollgate"`) {
		t.Fatalf("shim %q %v", shim, err)
	}
	if err := Hook(context.Background(), install, io()); err != nil || !strings.Contains(out.String(), "already installed") {
		t.Fatalf("second install: %v %q", err, out.String())
	}
	if err := Hook(context.Background(), []string{"opencode", "--uninstall", "--config-dir", cfg}, io()); err != nil || !strings.Contains(out.String(), "Removed") {
		t.Fatalf("uninstall: %v %q", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(cfg, "plugins", "tollgate")); !os.IsNotExist(err) {
		t.Fatalf("plugin folder left: %v", err)
	}
}
