package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"tollgate/app/harness/claudecode/ccfold"
	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/hookio"
	"tollgate/app/home"
	"tollgate/app/importer"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// Name is the integration's name, as the Integrations page and the
// sessions' harness show it.
const Name = "claude-code"

// hookInput is what Claude Code sends a PreCompact hook on stdin.
type hookInput struct {
	SessionID          string  `json:"session_id"`
	TranscriptPath     string  `json:"transcript_path"`
	Cwd                string  `json:"cwd"`
	PromptID           string  `json:"prompt_id"`
	HookEventName      string  `json:"hook_event_name"`
	Trigger            string  `json:"trigger"`
	CustomInstructions *string `json:"custom_instructions"`
	// CompactSummary is PostCompact's summary text: only its length is read.
	CompactSummary *string `json:"compact_summary"`
}

// Event is the hook's event and session (hookio.CompactInput).
func (in *hookInput) Event() (name, session string) { return in.HookEventName, in.SessionID }

// Claude Code hook events tollgate handles: PreCompact asks; PostCompact
// reports that the allowed compaction landed (the rewrite's outcome).
const (
	claudePreCompact  = hookio.PreCompact
	claudePostCompact = hookio.PostCompact
)

// decodeClaudeHookInput decodes and checks a PreCompact hook's input.
// Errors name the field.
func decodeClaudeHookInput(b []byte) (hookInput, error) {
	var in hookInput
	if err := hookio.DecodeCompact(b, "Claude Code's PreCompact hook JSON", &in); err != nil {
		return in, err
	}
	switch {
	case in.Trigger != "auto" && in.Trigger != "manual":
		return in, fmt.Errorf("trigger: %q is neither auto nor manual", in.Trigger)
	case len(in.PromptID) > 256:
		return in, errors.New("prompt_id: longer than 256 bytes")
	}
	return in, nil
}

// Options tune one hook decision.
type Options = hookio.Options

// hookDeadlineMargin is kept between tollgate's deadline and the hook's own
// timeout, so the hook always answers before Claude Code gives up on it.
const hookDeadlineMargin = 5 * time.Second

// defaultClaudeHookTimeout is Claude Code's own default for command hooks,
// and what --install writes.
const (
	defaultClaudeHookTimeout = 600 * time.Second
	installClaudeHookTimeout = 300 * time.Second
)

// claudeVerdict is the hook's answer.
type claudeVerdict struct {
	Block  bool
	Reason string // shown by Claude Code when blocked
	// Message is what Claude Code shows the user on its own screen
	// (systemMessage): what tollgate decided and why.
	Message string
	Note    string // for stderr / the log
	Rewrite,
	Decision,
	Why string
}

// decideClaudePreCompact decides one PreCompact event through tollgate.
func decideClaudePreCompact(ctx context.Context, c *client.Client, in hookInput, opts Options) claudeVerdict {
	opts = opts.WithDefaults(defaultClaudeHookTimeout)
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	var tr transcript
	if in.TranscriptPath != "" {
		var err error
		tr, err = readTranscript(ctx, in.TranscriptPath)
		if err != nil {
			// Without the transcript the compaction cannot be priced: ask
			// anyway (the surface is then empty), and say so.
			log.Warn("reading the Claude Code transcript", "path", in.TranscriptPath, "err", err)
		}
	}
	window, threshold := cclog.AutoCompact(tr.Model, opts.Getenv)
	version := claudeVersion(opts.Getenv)

	pid := os.Getpid()
	if p, err := strconv.Atoi(opts.Getenv("CLAUDE_PID")); err == nil && p > 0 {
		pid = p
	}
	if err := c.Register(ctx, client.Engine{Harness: Name, Version: version, Profile: opts.Profile, PID: pid}); err != nil {
		return claudeVerdict{Note: "tollgate unreachable (" + err.Error() + "): allowing the compaction unguarded", Decision: api.Allow, Why: api.ReasonUnguarded}
	}
	defer c.Close()

	session := importer.SessionID(Name, in.SessionID)
	recordUsage(ctx, c, session, in.TranscriptPath, tr, opts.Profile, window, threshold, log)

	pred := predictFold(in, tr, opts)
	req := claudeRewriteRequest(in, tr, opts, window, threshold, pred)
	askCtx, cancel := context.WithTimeout(ctx, max(opts.Timeout-2*time.Second, time.Second))
	defer cancel()
	d := c.AskRewrite(askCtx, session, req)
	v := claudeVerdict{Rewrite: d.Rewrite, Decision: d.Decision, Why: d.Reason, Message: hookio.Allowed(d)}
	if d.Decision == api.Decline {
		v.Block = true
		v.Reason = claudeBlockReason(d, in.Trigger)
		v.Message = v.Reason
	}
	v.Note = "tollgate: " + d.Decision + " (" + d.Reason + ")"
	if d.Message != "" {
		v.Note += ": " + d.Message
	}
	if opts.Home != "" {
		home.WriteMarker(opts.Home, Name, home.Marker{At: opts.Now().UTC(), LastDecision: d.Decision + " (" + d.Reason + ")", Version: version})
	}
	return v
}

// reportClaudeCompaction handles PostCompact: the compaction this prompt
// was allowed has landed, so its rewrite's outcome is applied (the next
// recorded request then yields the actual cold tokens beside the
// prediction).
func reportClaudeCompaction(ctx context.Context, c *client.Client, in hookInput) error {
	// The last fold of this prompt, else the last of the session.
	return hookio.ReportLanded(ctx, c, importer.SessionID(Name, in.SessionID), func(f, taken *api.Fold) bool {
		return taken == nil || f.Turn == in.PromptID || taken.Turn != in.PromptID
	})
}

// claudeOutput is the hook's JSON answer to Claude Code: the decision and
// its reason when declined, and always the message Claude Code shows on
// its screen (systemMessage: "Display a message to the user (all hooks)",
// Claude Code 2.1.332's hook documentation).
func claudeOutput(v claudeVerdict) []byte {
	out := map[string]string{}
	if v.Block {
		out["decision"], out["reason"] = "block", v.Reason
	}
	if v.Message != "" {
		out["systemMessage"] = v.Message
	}
	b, _ := json.Marshal(out)
	return append(b, '\n')
}

func claudeBlockReason(d api.Decision, trigger string) string {
	msg := hookio.Declined(d, "this prompt", "; set mode: auto to allow compactions without asking")
	if trigger == "auto" {
		msg += " The conversation continues with its full history."
	}
	return msg
}

// claudeVersion reads Claude Code's version from AI_AGENT
// ("claude-code_2-1-332_harness"), which it sets for its hooks.
func claudeVersion(getenv func(string) string) string {
	a := getenv("AI_AGENT")
	rest, ok := strings.CutPrefix(a, "claude-code_")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "_")
	return strings.ReplaceAll(v, "-", ".")
}

// claudeInstructionTokens estimates Claude Code's compaction instruction
// (the prompt it appends to the conversation for the summary call: ~8.9k
// characters in 2.1.x).
const claudeInstructionTokens = 2200

// predictFold runs the fold predictor on the transcript cut at the boundary
// (the PreCompact moment), with the session's files where they exist and
// what the project's earlier sessions taught.
func predictFold(in hookInput, tr transcript, opts Options) ccfold.Prediction {
	env := ccfold.Env{Files: ccfold.OSFiles{}, Getenv: opts.Getenv}
	if home, err := os.UserHomeDir(); err == nil {
		env.Home = home
	}
	trace := tr.Trace
	if trace == nil {
		trace = &cclog.Trace{}
	}
	if trace.Cwd == "" {
		c := *trace
		c.Cwd = in.Cwd
		trace = &c
	}
	before := ccfold.Start(trace)
	if before.IsZero() {
		before = opts.Now()
	}
	return ccfold.Predict(trace, ccfold.EarlierSessions(in.TranscriptPath, before), env, in.Trigger, opts.Now())
}

// coldPrediction is the prediction as the rewrite request carries it: the
// band, the parts (files with their count), how long ago the cache expired.
func coldPrediction(p ccfold.Prediction) *api.ColdPrediction {
	c := &api.ColdPrediction{Low: p.Low, High: p.High, CacheExpiredSeconds: p.Call.Expired().Seconds()}
	for _, x := range p.Parts {
		part := api.ColdPart{Name: x.Name, Tokens: x.Tokens}
		if x.Name == "files" {
			part.Count = len(p.Files)
		}
		if x.Tokens > 0 || x.Name == "summary" {
			c.Parts = append(c.Parts, part)
		}
	}
	return c
}

// claudeRewriteRequest builds the ask from the transcript and the fold
// prediction: the checkpoint is the predicted summary, and what Claude Code
// re-attaches after it (restored files, plan and skills, CLAUDE.md and hook
// output) is restored, so the gate's cold figure is the predicted one.
func claudeRewriteRequest(in hookInput, tr transcript, opts Options, window, threshold int64, pred ccfold.Prediction) api.RewriteRequest {
	trigger := api.TriggerPressure
	if in.Trigger == "manual" {
		trigger = api.TriggerManual
	}
	envelope, surface := tr.surface()
	instruction := int64(claudeInstructionTokens)
	if in.CustomInstructions != nil {
		instruction += int64(len(*in.CustomInstructions)+3) / 4
	}
	same := true
	plan := pricing.Plan{}
	if len(surface) > 0 {
		summary := pred.Part("summary").Tokens
		plan.Summarize = &pricing.SummaryPlan{Start: surface[0].ID, End: surface[len(surface)-1].ID,
			EstimatedTokens: summary, RestoredTokens: max(pred.Cold-summary, 0), InstructionTokens: instruction, SameFamily: &same}
	}
	idle := 0.0
	if !tr.LastAt.IsZero() {
		idle = max(opts.Now().Sub(tr.LastAt).Seconds(), 0)
	}
	deadline := max(opts.Timeout-hookDeadlineMargin, time.Second)
	return api.RewriteRequest{
		Profile: opts.Profile, Turn: in.PromptID, Trigger: trigger,
		DeadlineSeconds: deadline.Seconds(), IdleSeconds: idle,
		ContextWindow: window, ThresholdTokens: threshold,
		EnvelopeTokens: envelope, Surface: surface, Plan: plan,
		Prediction: coldPrediction(pred),
	}
}

// recordUsage records every request of the transcript and of its
// subagents' transcripts (<session>/subagents/*.jsonl: subagents and, in
// Claude Code versions that write one, the compaction call), as the
// importer reads them, so a later `tollgate import` stores nothing twice.
// tollgate stores each id once, so earlier hooks' records are not counted
// twice either.
func recordUsage(ctx context.Context, c *client.Client, session, path string, tr transcript, profile string, window, threshold int64, log *slog.Logger) {
	reqs := requestsOf(tr.Records, nil)
	for _, sub := range cclog.Subagents(path) {
		if st, err := readTranscript(ctx, sub); err == nil {
			reqs = requestsOf(st.Records, reqs)
		}
	}
	if len(reqs) == 0 {
		return
	}
	// One sender, in transcript order: the ledger judges each request
	// against the previous one of its thread by the order they are stored.
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for _, r := range reqs {
		r.Harness, r.Profile, r.Provider = Name, profile, "anthropic"
		r.ContextWindow, r.ThresholdTokens = window, threshold
		if _, err := c.RecordRequest(ctx, session, r); err != nil {
			log.Warn("recording Claude Code usage", "session", session, "err", err)
			return // tollgate is gone or refuses: the rest would fare no better
		}
	}
}

// requestsOf appends the records' requests as API reports (folds are left
// to `tollgate import`).
func requestsOf(recs []importer.Record, out []client.Request) []client.Request {
	for _, rec := range recs {
		if q := rec.Request; q != nil {
			out = append(out, hookio.Report(q))
		}
	}
	return out
}
