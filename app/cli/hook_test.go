package cli

import (
	"context"
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
// and exits 0.
func TestHookClaudeCodeMalformedInputAllows(t *testing.T) {
	var out, errb strings.Builder
	err := Hook(context.Background(), []string{"claude-code", "--home", t.TempDir()}, IO{Stdin: strings.NewReader(`{"session_id":`), Stdout: &out, Stderr: &errb})
	if code := Exit(err, &errb); code != 0 || out.String() != "" || !strings.Contains(errb.String(), "malformed") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out.String(), errb.String())
	}
}
