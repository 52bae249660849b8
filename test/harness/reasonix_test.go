package harness

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReasonixCompactionPrepare drives the real Reasonix (1.38.11) with
// tollgate's plugin installed through `reasonix plugin install`, against
// the fake OpenAI-style provider with a 16k window compacting at half of
// it, in ask mode with a scripted UI.
func TestReasonixCompactionPrepare(t *testing.T) {
	w := startWorld(t, false)
	e, p, home, work, environ, tg := w.e, w.p, w.home, w.work, w.environ, w.tg
	os.MkdirAll(filepath.Join(home, ".reasonix"), 0o700)
	// Reasonix reads provider keys only from its own .env.
	os.WriteFile(filepath.Join(home, ".reasonix", ".env"), []byte("FAKE_API_KEY=dummy\n"), 0o600)
	os.WriteFile(filepath.Join(work, "reasonix.toml"), []byte(`default_model = "fake"

[agent]
compact_ratio = 0.5

[[providers]]
name = "fake"
kind = "openai"
base_url = "`+p.URL+`/v1"
model = "fake-model"
api_key_env = "FAKE_API_KEY"
context_window = 16000
`), 0o644)

	// The plugin, written by tollgate and installed by Reasonix. A 12 s
	// intercept timeout keeps the timeout case short (the default is
	// Reasonix's 60 s ceiling).
	pluginDir := filepath.Join(home, "tollgate-plugin")
	for _, args := range [][]string{
		{e.bin, "ext", "reasonix", "--install", "--home", tg.Home, "--dir", pluginDir, "--timeout", "12s"},
		{e.reasonx, "plugin", "install", pluginDir, "--yes"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env, cmd.Dir = environ, work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if engines := tg.engines(t); !engines.Armed || engines.Integrations[1].Name != "reasonix" || !engines.Integrations[1].Verified {
		t.Fatalf("after plugin install: %+v", engines)
	}

	ui := startUI(t, tg)
	// Run 1 fills half the window; no compaction yet.
	r := run(t, p, work, environ, e.reasonx, "run", bigPrompt("one"))
	if r.code != 0 || r.compac != 0 {
		t.Fatalf("run 1: exit %d, %d compactions", r.code, r.compac)
	}

	// Run 2: compaction.prepare arrives; Not now blocks it, and the run
	// goes on with the full history (a convergence retry in the same run is
	// muted, not asked again).
	ui.setAnswer("not-now")
	r = run(t, p, work, environ, e.reasonx, "run", "-c", bigPrompt("two"))
	asked, _ := ui.snapshot()
	if r.code != 0 || r.compac != 0 || len(asked) != 1 || !strings.Contains(r.out, "ok.") {
		t.Fatalf("run 2 (Not now): exit %d, %d compaction requests, asked %d", r.code, r.compac, len(asked))
	}
	if a := asked[0]; !strings.HasPrefix(a.Session, "reasonix:") || a.Harness != "reasonix" || !strings.HasPrefix(a.Turn, "run-") || a.DeadlineSeconds != 9 || a.Quote == nil {
		t.Fatalf("asked %+v", a)
	}
	_, decided := ui.snapshot()
	if decided[0].Decision != "decline" || decided[0].Reason != "user" {
		t.Fatalf("decided %+v", decided)
	}
	for _, d := range decided[1:] {
		if d.Reason != "muted" {
			t.Fatalf("a later compaction in the declined run: %+v", d)
		}
	}
	nDecided := len(decided)

	// Run 3: a new run asks again; Allow once lets Reasonix summarize.
	ui.setAnswer("allow-once")
	r = run(t, p, work, environ, e.reasonx, "run", "-c", bigPrompt("three"))
	asked, _ = ui.snapshot()
	if r.code != 0 || r.compac < 1 || len(asked) < 2 || asked[1].Turn == asked[0].Turn {
		t.Fatalf("run 3 (Allow once): exit %d, %d compaction requests, asked %+v", r.code, r.compac, asked)
	}
	if d := ui.waitDecided(nDecided + 1); d[nDecided].Decision != "allow" {
		t.Fatalf("decided %+v", d)
	}

	// Run 4: nobody answers; tollgate declines at the deadline (timeout),
	// before Reasonix's own 12 s.
	ui.setAnswer("")
	before := len(asked)
	start := time.Now()
	r = run(t, p, work, environ, e.reasonx, "run", "-c", bigPrompt("four"))
	asked, decided = ui.snapshot()
	if r.code != 0 || r.compac != 0 || len(asked) != before+1 {
		t.Fatalf("run 4 (no answer): exit %d, %d compaction requests, asked %d", r.code, r.compac, len(asked)-before)
	}
	var timeout *decision
	for i := range decided {
		if decided[i].Reason == "timeout" {
			timeout = &decided[i]
		}
	}
	if timeout == nil || timeout.Decision != "decline" || time.Since(start) > 40*time.Second {
		t.Fatalf("no timeout decline: %+v (took %v)", decided, time.Since(start))
	}

	// The session, its usage and its folds are in the API.
	var list struct {
		Sessions []struct {
			ID, Harness, Provider, Model string
			Requests, Folds, Declined    int
			ContextWindow                int64
			ThresholdTokens              int64
		} `json:"sessions"`
	}
	tg.get(t, "/v1/sessions", &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("sessions %+v", list.Sessions)
	}
	s := list.Sessions[0]
	if s.Harness != "reasonix" || s.Requests < 4 || s.ContextWindow != 16000 || s.ThresholdTokens != 8000 || s.Declined < 2 || s.Provider != "fake" {
		t.Fatalf("session %+v", s)
	}
	// compaction.complete reported the allowed summaries as applied.
	var series struct {
		Folds []struct {
			Decision string
			Applied  *bool
		} `json:"folds"`
	}
	tg.get(t, "/v1/sessions/"+s.ID+"/series", &series)
	for _, f := range series.Folds {
		if (f.Decision == "allow") != (f.Applied != nil && *f.Applied) {
			t.Fatalf("folds %+v: every allowed summary landed, nothing declined did", series.Folds)
		}
	}

	// For the sample only (TOLLGATE_SAMPLE_DIR): one more run, through a
	// tap (reasonixTap), after everything above was checked.
	if sampleDir("reasonix") != "" {
		tap := reasonixTap(t, e, environ, home, pluginDir, work)
		keepSample(t, "reasonix", func(dst string) error {
			return copyFiles(tap, dst, "*.jsonl")
		})
		ui.setAnswer("allow-once")
		r = run(t, p, work, environ, e.reasonx, "run", "-c", bigPrompt("tap"))
		sent, _ := os.ReadFile(filepath.Join(tap, "reasonix-to-sidecar.jsonl"))
		if r.code != 0 || r.compac < 1 || !strings.Contains(string(sent), `"compaction.prepare"`) {
			t.Fatalf("the tapped run: exit %d, %d compaction requests, %d bytes sent to the sidecar", r.code, r.compac, len(sent))
		}
	}
}

// reasonixTap reinstalls tollgate's plugin (its manifest as written to
// pluginDir, `reasonix plugin install --replace`) with runtime.command a
// shell script that runs the same sidecar between two tees: what Reasonix
// writes to the sidecar's stdin goes to <tap>/reasonix-to-sidecar.jsonl and
// what the sidecar answers to <tap>/sidecar-to-reasonix.jsonl, byte for
// byte, one JSON-RPC frame a line. The plugin then no longer runs tollgate
// itself, so Status no longer verifies it: only a last run uses it. It
// returns the tap folder.
func reasonixTap(t *testing.T, e env, environ []string, home, pluginDir, work string) string {
	t.Helper()
	tap := filepath.Join(home, "reasonix-tap")
	tapped := filepath.Join(home, "tollgate-plugin-tapped")
	os.MkdirAll(tap, 0o755)
	os.MkdirAll(tapped, 0o755)
	b, err := os.ReadFile(filepath.Join(pluginDir, "reasonix-plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	rt, _ := m["runtime"].(map[string]any)
	command, _ := rt["command"].(string)
	if command == "" || strings.ContainsAny(command+tap, "'\n") {
		t.Fatalf("runtime %v", rt)
	}
	script := filepath.Join(tapped, "tap.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n"+
		"tee -a '"+filepath.Join(tap, "reasonix-to-sidecar.jsonl")+"' | '"+command+"' \"$@\" | tee -a '"+filepath.Join(tap, "sidecar-to-reasonix.jsonl")+"'\n"), 0o755)
	rt["command"] = script
	b, _ = json.MarshalIndent(m, "", "  ")
	os.WriteFile(filepath.Join(tapped, "reasonix-plugin.json"), b, 0o644)
	cmd := exec.Command(e.reasonx, "plugin", "install", tapped, "--yes", "--replace")
	cmd.Env, cmd.Dir = environ, work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reasonix plugin install (tapped): %v\n%s", err, out)
	}
	return tap
}
