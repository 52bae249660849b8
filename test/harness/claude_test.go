package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeCodePreCompactHook drives the real Claude Code (2.1.332) with
// tollgate's PreCompact hook installed by `tollgate hook claude-code
// --install`, against the fake Anthropic provider, in ask mode with a
// scripted UI answering the dialog.
func TestClaudeCodePreCompactHook(t *testing.T) {
	w := startWorld(t, true)
	e, p, work, environ, tg := w.e, w.p, w.work, w.environ, w.tg
	configDir := filepath.Join(w.home, ".claude-config")
	// TOLLGATE_SAMPLE_DIR (sample_test.go): the session's transcripts.
	keepSample(t, "claude-code", func(dst string) error {
		main, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", "*.jsonl"))
		if len(main) != 1 {
			return fmt.Errorf("transcripts %v", main)
		}
		stem := strings.TrimSuffix(filepath.Base(main[0]), ".jsonl")
		return copyFiles(filepath.Dir(main[0]), dst, stem+".jsonl", filepath.Join(stem, "subagents", "*"))
	})

	// Install the hook the way a user does; tollgate (which runs with the
	// same HOME) sees it installed, verified, and armed.
	e.runTollgate(t, environ, "install", "hook", "claude-code", "--install", "--home", tg.Home, "--timeout", "60")
	engines := tg.engines(t)
	if !engines.Armed || engines.Integrations[0].Name != "claude-code" || !engines.Integrations[0].Verified {
		t.Fatalf("after --install: %+v", engines)
	}

	ui := startUI(t, tg)
	claude := append(environ, "ANTHROPIC_BASE_URL="+p.URL, "ANTHROPIC_API_KEY=sk-ant-test-dummy")
	auto := append(append([]string(nil), claude...), "CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=10")

	r := run(t, p, work, claude, e.claude, "-p", bigPrompt("first"))
	if r.code != 0 || !strings.Contains(r.out, "ok.") {
		t.Fatalf("first turn: exit %d", r.code)
	}
	transcripts, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", "*.jsonl"))
	if len(transcripts) != 1 {
		t.Fatalf("transcripts %v", transcripts)
	}
	transcript := transcripts[0]
	sessionID := "claude-code:" + strings.TrimSuffix(filepath.Base(transcript), ".jsonl")

	// A manual /compact: allowed without asking (the profile does not guard
	// manual compactions), and compacted.
	ui.setAnswer("not-now")
	r = run(t, p, work, claude, e.claude, "-p", "-c", "/compact")
	if r.code != 0 || r.compac != 1 || countBoundaries(t, transcript) != 1 {
		t.Fatalf("manual /compact: exit %d, %d compactions, %d boundaries", r.code, r.compac, countBoundaries(t, transcript))
	}
	if asked, decided := ui.snapshot(); len(asked) != 0 || len(decided) != 1 || decided[0].Reason != "manual" {
		t.Fatalf("manual: asked %+v decided %+v", asked, decided)
	}
	// Claude Code shows the hook's systemMessage with the compaction's
	// output (and keeps that output in the transcript): the user reads
	// what tollgate did on Claude Code's own screen.
	if b, err := os.ReadFile(transcript); err != nil || !strings.Contains(string(b), "tollgate allowed the compaction (a manual compaction, allowed without asking).") {
		t.Fatalf("Claude Code did not show tollgate's message after /compact (err %v)", err)
	}

	// Turns until the reported usage crosses the (lowered) auto-compact
	// threshold and Claude Code fires an automatic PreCompact: Not now.
	declined, asked := untilAsked(t, p, work, auto, e, ui)
	if len(asked) != 1 || asked[0].Trigger != "pressure" || asked[0].Session != sessionID || asked[0].Quote == nil || asked[0].DeadlineSeconds != 55 {
		t.Fatalf("automatic PreCompact not asked as expected: %+v", asked)
	}
	if declined.code != 0 || declined.compac != 0 || countBoundaries(t, transcript) != 1 || !strings.Contains(declined.out, "ok.") {
		t.Fatalf("Not now: exit %d, %d compaction requests, %d boundaries (want 0 new: the turn goes on uncompacted)", declined.code, declined.compac, countBoundaries(t, transcript))
	}
	if d := ui.waitDecided(2); d[1].Decision != "decline" || d[1].Reason != "user" {
		t.Fatalf("decisions %+v", d)
	}

	// The next prompt asks again: Allow once compacts.
	ui.setAnswer("allow-once")
	allowed := run(t, p, work, auto, e.claude, "-p", "-c", "next")
	if allowed.code != 0 || allowed.compac != 1 || countBoundaries(t, transcript) != 2 {
		t.Fatalf("Allow once: exit %d, %d compaction requests, %d boundaries", allowed.code, allowed.compac, countBoundaries(t, transcript))
	}
	asked, _ = ui.snapshot()
	if len(asked) != 2 || asked[1].Turn == asked[0].Turn {
		t.Fatalf("the second prompt was not asked on its own turn: %+v", asked)
	}
	if d := ui.waitDecided(3); d[2].Decision != "allow" || d[2].Reason != "user" {
		t.Fatalf("decisions %+v", d)
	}
	checkPredictedCold(t, p, asked[1], transcript)

	// The session, its folds and the decisions are in the API.
	var series struct {
		Session struct {
			ID       string `json:"id"`
			Harness  string `json:"harness"`
			Requests int    `json:"requests"`
			Declined int    `json:"declined"`
		} `json:"session"`
		ContextWindow int64 `json:"contextWindow"`
		Folds         []struct {
			Decision, Reason, Trigger, Turn, Source string
			Applied                                 *bool
		} `json:"folds"`
	}
	tg.get(t, "/v1/sessions/"+sessionID+"/series", &series)
	if series.Session.Harness != "claude-code" || series.Session.Requests < 3 || series.ContextWindow != 100000 || series.Session.Declined != 1 {
		t.Fatalf("session %+v window %d", series.Session, series.ContextWindow)
	}
	var got []string
	for _, f := range series.Folds {
		got = append(got, f.Decision+"/"+f.Reason+"/"+f.Trigger+"/"+applied(f.Applied))
	}
	// The PostCompact hook reported the outcome of each compaction that ran.
	if strings.Join(got, " ") != "allow/manual/manual/true decline/user/pressure/? allow/user/pressure/true" {
		t.Fatalf("folds %v", got)
	}
	engines = tg.engines(t)
	if !strings.HasPrefix(engines.Integrations[0].LastDecision, "allow (user)") {
		t.Fatalf("last decision %q", engines.Integrations[0].LastDecision)
	}

	// --uninstall removes it; tollgate is no longer armed.
	e.runTollgate(t, environ, "uninstall", "hook", "claude-code", "--uninstall")
	engines = tg.engines(t)
	if engines.Armed || engines.Integrations[0].Installed {
		t.Fatalf("after --uninstall: %+v", engines)
	}

	// For the sample only (TOLLGATE_SAMPLE_DIR), a last turn in which the
	// model calls the Agent tool, so the session has a subagent's
	// transcript too: nothing above has seen it.
	if sampleDir("claude-code") != "" {
		r := run(t, p, work, claude, e.claude, "-p", "-c", SubagentMarker+" Ask a subagent to reply.")
		subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "subagents", "*.jsonl"))
		if r.code != 0 || r.reqs != 3 || len(subs) == 0 {
			t.Fatalf("the subagent turn: exit %d, %d requests (want 3: the call, the subagent's, the answer), subagent transcripts %v", r.code, r.reqs, subs)
		}
	}
}

// TestClaudeCodeHTTPHook: the same decision served as Claude Code's HTTP
// hook (`--install --http`), with the token from $TOLLGATE_TOKEN.
func TestClaudeCodeHTTPHook(t *testing.T) {
	w := startWorld(t, true)
	e, p, work, environ, tg := w.e, w.p, w.work, w.environ, w.tg
	e.runTollgate(t, environ, "install --http", "hook", "claude-code", "--install", "--http", "--home", tg.Home, "--timeout", "60")
	if engines := tg.engines(t); !engines.Armed || !strings.Contains(engines.Integrations[0].Detail, "HTTP hook") {
		t.Fatalf("after --install --http: %+v", engines)
	}
	ui := startUI(t, tg)
	ui.setAnswer("not-now")
	claude := append(environ, "ANTHROPIC_BASE_URL="+p.URL, "ANTHROPIC_API_KEY=sk-ant-test-dummy", "TOLLGATE_TOKEN="+tg.Token,
		"CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=10")
	run(t, p, work, claude, e.claude, "-p", bigPrompt("http"))
	r, asked := untilAsked(t, p, work, claude, e, ui)
	if len(asked) != 1 || asked[0].Trigger != "pressure" || asked[0].DeadlineSeconds != 55 {
		t.Fatalf("asked %+v", asked)
	}
	if r.code != 0 || r.compac != 0 {
		t.Fatalf("Not now over HTTP: exit %d, %d compaction requests", r.code, r.compac)
	}
	if d := ui.waitDecided(1); d[0].Decision != "decline" || d[0].Reason != "user" {
		t.Fatalf("decided %+v", d)
	}
}

// untilAsked runs Claude Code's next turns (-c "next") in environ, at most
// three, until the turn in which its PreCompact hook asks the scripted UI;
// it returns the last turn run and what the UI has been asked.
func untilAsked(t *testing.T, p *Provider, work string, environ []string, e env, ui *ui) (result, []pending) {
	t.Helper()
	var r result
	for i := 0; i < 3; i++ {
		r = run(t, p, work, environ, e.claude, "-p", "-c", "next")
		if asked, _ := ui.snapshot(); len(asked) > 0 {
			break
		}
	}
	asked, _ := ui.snapshot()
	return r, asked
}

// checkPredictedCold compares the hook's prediction for an allowed
// compaction with what the real Claude Code re-sent after it: the first
// main request after the summary call, whose uncached part the fake
// provider (a cache keyed on the longest shared prefix, 4 bytes a token)
// reports. The fake's summary is a line, so the comparison that means
// something is of the rest — what the predictor measures from the session
// (restored files, the base): within a factor of 1.5 (measured: +32 %, the
// base from the first request counts startup-only content Claude Code
// 2.1.332 does not re-send).
func checkPredictedCold(t *testing.T, p *Provider, q pending, transcript string) {
	t.Helper()
	if q.Prediction == nil || q.Quote == nil || len(q.Prediction.Parts) == 0 {
		t.Fatalf("the question carries no prediction: %+v", q)
	}
	var sum, summary int64
	var parts []string
	for _, x := range q.Prediction.Parts {
		sum += x.Tokens
		if x.Name == "summary" {
			summary = x.Tokens
		}
		parts = append(parts, fmt.Sprintf("%s %d", x.Name, x.Tokens))
	}
	// The gate's cold figure is the prediction's, plus what the profile's
	// cache granularity leaves uncached of the envelope (< 64 tokens).
	if q.Quote.ColdTokens < sum || q.Quote.ColdTokens >= sum+64 || sum < q.Prediction.Low || sum > q.Prediction.High {
		t.Fatalf("quote cold %d, prediction %d [%d, %d]", q.Quote.ColdTokens, sum, q.Prediction.Low, q.Prediction.High)
	}
	calls := p.Calls()
	last := -1
	for i, c := range calls {
		if c.Compaction {
			last = i
		}
	}
	var next *Call
	for i := last + 1; last >= 0 && i < len(calls); i++ {
		if !calls[i].Compaction && bytes.Contains(calls[i].Body, []byte("Primary Request")) {
			next = &calls[i]
			break
		}
	}
	if next == nil {
		t.Fatal("no request after the compaction carries its summary")
	}
	actual := next.Prompt - next.Cached
	// The summary as Claude Code re-sent it: the last isCompactSummary line.
	var sent int64
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			IsCompactSummary bool `json:"isCompactSummary"`
			Message          struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &l) == nil && l.IsCompactSummary {
			sent = int64(len(l.Message.Content)) / 4
		}
	}
	rest, predictedRest := actual-sent, sum-summary
	t.Logf("predicted %d [%d, %d] (%s); Claude Code re-sent %d of %d tokens uncached, its summary %d: the rest %d predicted, %d re-sent (%+.1f %%)",
		sum, q.Prediction.Low, q.Prediction.High, strings.Join(parts, ", "), actual, next.Prompt, sent, predictedRest, rest,
		float64(predictedRest-rest)/float64(rest)*100)
	if sent == 0 || rest <= 0 || float64(predictedRest) < float64(rest)/1.5 || float64(predictedRest) > float64(rest)*1.5 {
		t.Errorf("the predicted rest %d is not within a factor of 1.5 of the %d re-sent", predictedRest, rest)
	}
}
