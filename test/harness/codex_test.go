package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// codexBin is the pinned Codex CLI's native binary (the alias package
// @openai/codex-linux-x64 = @openai/codex@0.171.0-linux-x64).
func codexBin(t *testing.T) (env, string) {
	t.Helper()
	bin := os.Getenv("TOLLGATE_BIN")
	mods := os.Getenv("TOLLGATE_HARNESS_MODULES")
	if bin == "" || mods == "" {
		t.Skip("set TOLLGATE_BIN and TOLLGATE_HARNESS_MODULES (make test-harness does) to run the real harnesses")
	}
	codex := filepath.Join(mods, "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	for _, p := range []string{bin, codex} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("missing %s (run `make test-harness`, which installs it): %v", p, err)
		}
	}
	return env{bin: bin}, codex
}

// codexConfig points Codex at the fake provider as an OpenAI Responses
// provider (name "OpenAI": Codex then compacts remotely, as it does for
// OpenAI users, with a compaction_trigger request) without WebSockets, and
// makes it compact early: a 20,000-token window, compaction from 14,000.
func codexConfig(providerURL string) string {
	return fmt.Sprintf(`model = "gpt-5.2-codex"
model_provider = "fake"
model_context_window = 20000
model_auto_compact_token_limit = 14000

[model_providers.fake]
name = "OpenAI"
base_url = "%s/v1"
env_key = "FAKE_OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = false
`, providerURL)
}

// TestCodexPreCompactHook drives the real Codex CLI (0.171.0, `codex exec`)
// with tollgate's hooks installed by `tollgate hook codex --install`,
// against the fake Responses API, in ask mode with a scripted UI: Not now
// stops the compaction (no compaction request reaches the provider) and
// ends the turn; the next turn asks again and Allow once lets it through;
// with tollgate stopped, Codex compacts as shipped.
func TestCodexPreCompactHook(t *testing.T) {
	e, codex := codexBin(t)
	p := fakeProvider(t, StartProvider)
	home, environ := sandbox(t)
	codexHome := filepath.Join(home, ".codex")
	work := filepath.Join(home, "work")
	os.MkdirAll(codexHome, 0o700)
	os.MkdirAll(work, 0o755)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(p.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	environ = append(environ, "CODEX_HOME="+codexHome, "FAKE_OPENAI_API_KEY=sk-test-dummy")
	tg := startTollgate(t, e, environ)
	// TOLLGATE_SAMPLE_DIR (sample_test.go): the session's rollout.
	keepSample(t, "codex", func(dst string) error {
		rollouts, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
		if len(rollouts) != 1 {
			return fmt.Errorf("rollouts %v", rollouts)
		}
		return copyFile(rollouts[0], filepath.Join(dst, filepath.Base(rollouts[0])))
	})

	e.runTollgate(t, environ, "install", "hook", "codex", "--install", "--home", tg.Home, "--timeout", "60")
	var engines engineStatus
	codexIntegration := func() (int, bool) {
		engines = tg.engines(t)
		for i, in := range engines.Integrations {
			if in.Name == "codex" {
				return i, true
			}
		}
		return 0, false
	}
	if i, ok := codexIntegration(); !ok || !engines.Armed || !engines.Integrations[i].Verified || !strings.Contains(engines.Integrations[i].Note, "ends the current Codex turn") {
		t.Fatalf("after --install: %+v", engines)
	}

	ui := startUI(t, tg)
	exec := func(args ...string) result {
		return run(t, p, work, environ, codex, append([]string{"exec", "--skip-git-repo-check"}, args...)...)
	}
	// Two turns below the threshold: no compaction, no question.
	for i, r := range []result{exec(bigPrompt("first")), exec("resume", "--last", bigPrompt("second"))} {
		if r.code != 0 || !strings.Contains(r.out, "ok.") || r.compac != 0 {
			t.Fatalf("turn %d: exit %d, %d compactions", i+1, r.code, r.compac)
		}
	}
	if asked, _ := ui.snapshot(); len(asked) != 0 {
		t.Fatalf("asked below the threshold: %+v", asked)
	}
	rollouts, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts %v", rollouts)
	}
	stem := strings.TrimSuffix(filepath.Base(rollouts[0]), ".jsonl")
	sessionID := "codex:" + stem[len(stem)-36:]

	// The third turn crosses the threshold: Codex runs PreCompact before
	// sampling. Not now: no compaction request reaches the provider and
	// Codex ends the turn.
	ui.setAnswer("not-now")
	declined := exec("resume", "--last", bigPrompt("third"))
	asked, _ := ui.snapshot()
	// The deadline is what is left of the hook's 60 s after reading and
	// recording, less 5 s: never more than 55, never nothing.
	if len(asked) != 1 || asked[0].Session != sessionID || asked[0].Trigger != "pressure" || asked[0].Quote == nil || asked[0].Quote.ColdTokens <= 0 ||
		asked[0].DeadlineSeconds <= 0 || asked[0].DeadlineSeconds > 55 {
		t.Fatalf("PreCompact not asked as expected: %+v", asked)
	}
	if declined.compac != 0 || declined.reqs != 0 || declined.code == 0 || !strings.Contains(declined.out, "PreCompact Stopped") {
		t.Fatalf("Not now: exit %d, %d requests (%d compactions); want the turn stopped before any request", declined.code, declined.reqs, declined.compac)
	}
	if d := ui.waitDecided(1); len(d) != 1 || d[0].Decision != "decline" || d[0].Reason != "user" {
		t.Fatalf("decisions %+v", d)
	}

	// The next turn: Codex proposes the compaction again; Allow once.
	ui.setAnswer("allow-once")
	allowed := exec("resume", "--last", "next")
	if allowed.code != 0 || allowed.compac != 1 || !strings.Contains(allowed.out, "ok.") {
		t.Fatalf("Allow once: exit %d, %d compaction requests", allowed.code, allowed.compac)
	}
	asked, _ = ui.snapshot()
	if len(asked) != 2 || asked[1].Turn == asked[0].Turn {
		t.Fatalf("the next turn was not asked on its own turn: %+v", asked)
	}
	if d := ui.waitDecided(2); len(d) != 2 || d[1].Decision != "allow" || d[1].Reason != "user" {
		t.Fatalf("decisions %+v", d)
	}

	// The usage so far and the quoted prices are in tollgate.
	var series struct {
		Session struct {
			Harness  string  `json:"harness"`
			Requests int     `json:"requests"`
			Declined int     `json:"declined"`
			CostUSD  float64 `json:"costUSD"`
		} `json:"session"`
		ContextWindow   int64 `json:"contextWindow"`
		ThresholdTokens int64 `json:"thresholdTokens"`
		Folds           []struct {
			Decision, Reason, Trigger, Turn, Source string
			CostUSD                                 float64 `json:"costUSD"`
			Applied                                 *bool
		} `json:"folds"`
	}
	tg.get(t, "/v1/sessions/"+sessionID+"/series", &series)
	if series.Session.Harness != "codex" || series.Session.Requests < 2 || series.ContextWindow != 19000 || series.ThresholdTokens != 14000 || series.Session.Declined != 1 {
		t.Fatalf("session %+v window %d threshold %d", series.Session, series.ContextWindow, series.ThresholdTokens)
	}
	var got []string
	for _, f := range series.Folds {
		if f.CostUSD <= 0 {
			t.Fatalf("fold without a quoted price: %+v", f)
		}
		got = append(got, f.Decision+"/"+f.Reason+"/"+applied(f.Applied))
	}
	// The PostCompact hook reported that the allowed compaction landed.
	if strings.Join(got, " ") != "decline/user/? allow/user/true" {
		t.Fatalf("folds %v", got)
	}
	if i, _ := codexIntegration(); !strings.HasPrefix(engines.Integrations[i].LastDecision, "allow (user)") {
		t.Fatalf("last decision %q", engines.Integrations[i].LastDecision)
	}
	calls := p.Calls()
	for i, c := range calls {
		if c.Compaction && i+1 < len(calls) {
			t.Logf("allowed compaction: quoted %d cold tokens in the next request; billed: compaction call %d prompt (%d cached), next request %d prompt (%d cached: %d cold)",
				asked[1].Quote.ColdTokens, c.Prompt, c.Cached, calls[i+1].Prompt, calls[i+1].Cached, calls[i+1].Prompt-calls[i+1].Cached)
			break
		}
	}
	t.Logf("recorded %d requests, session cost $%.4f", series.Session.Requests, series.Session.CostUSD)

	// tollgate stopped: the hook allows at once and Codex compacts as shipped.
	if !interrupt(tg.cmd, 10*time.Second) {
		t.Fatal("tollgate did not stop")
	}
	unguarded := exec("resume", "--last", bigPrompt("fifth"))
	if unguarded.code != 0 || unguarded.compac != 1 || !strings.Contains(unguarded.out, "ok.") {
		t.Fatalf("tollgate stopped: exit %d, %d compactions (want Codex to compact unguarded)", unguarded.code, unguarded.compac)
	}
}
