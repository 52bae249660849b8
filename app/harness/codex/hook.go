package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/pelletier/go-toml/v2"

	"tollgate/app/harness/hookio"
	"tollgate/app/home"
	"tollgate/app/importer"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// Name is the integration's name, as the Integrations page and the
// sessions' harness show it.
const Name = "codex"

// Codex hook events tollgate handles.
const (
	codexPreCompact  = hookio.PreCompact
	codexPostCompact = hookio.PostCompact
)

// hookInput is what Codex sends a compaction hook on stdin
// (codex-rs/hooks/schema/generated/pre-compact.command.input.schema.json;
// PostCompact's is the same shape).
type hookInput struct {
	SessionID      string  `json:"session_id"`
	TurnID         string  `json:"turn_id"`
	TranscriptPath *string `json:"transcript_path"`
	Cwd            string  `json:"cwd"`
	HookEventName  string  `json:"hook_event_name"`
	Model          string  `json:"model"`
	Trigger        string  `json:"trigger"`
	AgentID        string  `json:"agent_id"`
	AgentType      string  `json:"agent_type"`
}

// Event is the hook's event and session (hookio.CompactInput).
func (in *hookInput) Event() (name, session string) { return in.HookEventName, in.SessionID }

// decodeHookInput decodes and checks a compaction hook's input. Errors name
// the field.
func decodeHookInput(b []byte) (hookInput, error) {
	var in hookInput
	if err := hookio.DecodeCompact(b, "Codex's PreCompact hook JSON", &in); err != nil {
		return in, err
	}
	switch {
	case len(in.TurnID) > 256:
		return in, errors.New("turn_id: longer than 256 bytes")
	case len(in.Model) > 256:
		return in, errors.New("model: longer than 256 bytes")
	case in.Trigger != "auto" && in.Trigger != "manual":
		return in, fmt.Errorf("trigger: %q is neither auto nor manual", in.Trigger)
	case in.TranscriptPath != nil && *in.TranscriptPath != "" && !filepath.IsAbs(*in.TranscriptPath):
		return in, fmt.Errorf("transcript_path: %q is not an absolute path", *in.TranscriptPath)
	}
	return in, nil
}

// Options tune one hook decision.
type Options = hookio.Options

// hookDeadlineMargin is kept between tollgate's deadline and the hook's own
// timeout, so the hook always answers before Codex gives up on it.
// hookAnswerMargin is kept between the hook's own wait for the answer and
// its timeout: the engine's unregistering (up to 2 s, client.Close) and
// printing the verdict come after.
const (
	hookDeadlineMargin = 5 * time.Second
	hookAnswerMargin   = 3 * time.Second
)

// Recording the usage gets at most a third of what is left of the hook's
// time, and never more than recordMax, nor so much that the question would
// get less than minQuestion: the question is what the hook is for.
const (
	recordShare = 3
	recordMax   = 20 * time.Second
	minQuestion = 10 * time.Second
)

// budget is the hook's time. Codex kills the hook at its timeout counted
// from its start, so every step (reading the rollout, recording, the
// question) spends from this one budget, not from a timeout of its own.
type budget struct {
	end time.Time
	now func() time.Time
}

// left is what remains of the hook's time.
func (b budget) left() time.Duration { return b.end.Sub(b.now()) }

// verdict is the hook's answer.
type verdict struct {
	Stop          bool
	StopReason    string // shown by Codex when the turn stops
	Note          string // for stderr
	Decision, Why string
}

// RunCommand is the command hook (`tollgate hook codex`): it reads Codex's
// hook JSON from stdin, asks tollgate, and prints
// {"continue":false,"stopReason":"…"} on stdout when the compaction is
// declined. Notes go to stderr. It never fails the hook: tollgate not
// running or malformed input allows the compaction.
func RunCommand(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, opts Options) {
	opts = opts.WithDefaults(DefaultTimeout)
	// Codex's timeout runs from here: reading stdin already spends from it.
	start := opts.Now()
	var in hookInput
	if !hookio.Input(stdin, stderr, "Codex hook input", func(b []byte) (err error) { in, err = decodeHookInput(b); return err }) {
		return
	}
	c, log, ok := hookio.Dial(opts.Home, stderr)
	if !ok {
		return
	}
	opts.Log = log
	if in.HookEventName == codexPostCompact {
		left := budget{end: start.Add(opts.Timeout), now: opts.Now}.left()
		ctx, cancel := context.WithTimeout(ctx, max(min(10*time.Second, left-hookAnswerMargin), time.Second))
		defer cancel()
		if err := reportCompaction(ctx, c, in); err != nil {
			fmt.Fprintln(stderr, "tollgate: reporting the compaction's outcome:", err)
		}
		return
	}
	v := decidePreCompact(ctx, c, in, opts, start)
	if v.Note != "" {
		fmt.Fprintln(stderr, v.Note)
	}
	if v.Stop {
		out, _ := json.Marshal(map[string]any{"continue": false, "stopReason": v.StopReason})
		fmt.Fprintln(stdout, string(out))
	}
}

// decidePreCompact decides one PreCompact event through tollgate; start
// is when the hook started, from which Codex counts its timeout.
func decidePreCompact(ctx context.Context, c *client.Client, in hookInput, opts Options, start time.Time) verdict {
	opts = opts.WithDefaults(DefaultTimeout)
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	b := budget{end: start.Add(opts.Timeout), now: opts.Now}
	// Nothing below may outlast the hook: Codex would kill it mid-question.
	ctx, cancelAll := context.WithTimeout(ctx, max(b.left()-hookAnswerMargin, time.Second))
	defer cancelAll()
	var ro rollout
	if path := transcriptPath(in); path != "" {
		// A rollout too long to read in a third of the time is asked about
		// unpriced rather than leaving the question no time.
		readCtx, cancel := context.WithTimeout(ctx, max(b.left()/recordShare, time.Second))
		var err error
		ro, err = readRollout(readCtx, path)
		cancel()
		if err != nil {
			// Without the rollout the compaction cannot be priced: ask
			// anyway (the surface is then empty), and say so.
			log.Warn("reading the Codex rollout", "path", path, "err", err)
		}
	}
	if ro.Model == "" {
		ro.Model = in.Model
	}
	window, threshold := autoCompact(ro.Session.ContextWindow, opts.Getenv)

	if err := c.Register(ctx, client.Engine{Harness: Name, Version: ro.Version(), Profile: opts.Profile, PID: os.Getpid()}); err != nil {
		return verdict{Note: "tollgate unreachable (" + err.Error() + "): allowing the compaction unguarded", Decision: api.Allow, Why: api.ReasonUnguarded}
	}
	defer c.Close()

	session := importer.SessionID(Name, in.SessionID)
	// Usage not recorded now (skipped, or cut short) is not lost: the
	// ids are the cumulative token counts, so the next hook run, tollgate's
	// follower of ~/.codex/sessions or `tollgate import` records it once.
	if spend := min(b.left()/recordShare, recordMax, b.left()-hookDeadlineMargin-minQuestion); spend > 0 {
		recordUsage(ctx, c, session, ro, opts.Profile, window, threshold, b.now().Add(spend), b.now, log)
	} else {
		log.Warn("not recording the Codex usage now: too little of the hook's time is left for the question", "left", b.left().Round(time.Second))
	}

	left := b.left()
	req := rewriteRequest(in, &ro, opts, window, threshold, max(left-hookDeadlineMargin, time.Second))
	askCtx, cancel := context.WithTimeout(ctx, max(left-hookAnswerMargin, time.Second))
	defer cancel()
	d := c.AskRewrite(askCtx, session, req)
	v := verdict{Decision: d.Decision, Why: d.Reason}
	if d.Decision == api.Decline {
		v.Stop = true
		v.StopReason = stopReason(d)
	}
	v.Note = "tollgate: " + d.Decision + " (" + d.Reason + ")"
	if d.Message != "" {
		v.Note += ": " + d.Message
	}
	if opts.Home != "" {
		home.WriteMarker(opts.Home, Name, home.Marker{At: opts.Now().UTC(), LastDecision: d.Decision + " (" + d.Reason + ")", Version: ro.Version()})
	}
	return v
}

func transcriptPath(in hookInput) string {
	if in.TranscriptPath == nil {
		return ""
	}
	return *in.TranscriptPath
}

// stopReason is what Codex shows when tollgate stops the turn: what
// happened, what it would have cost, and how to go on.
func stopReason(d api.Decision) string {
	msg := hookio.Declined(d, "this turn", "")
	return msg + " Codex ends this turn here; the conversation keeps its full history. To go on, send your next message " +
		"(Codex proposes the compaction again and tollgate asks again), run /compact yourself, " +
		"or set tollgate's mode to auto to allow compactions without asking."
}

// codexCompactionInstructionTokens is what a compaction adds to the
// history it summarizes: Codex's local compaction prompt
// (codex-rs/core/templates/compact/prompt.md, ~1.2k characters); the remote
// compaction (Responses API, OpenAI providers) adds only a
// {"type":"compaction_trigger"} item, so this is the larger of the two.
const codexCompactionInstructionTokens = 300

// rewriteRequest builds the ask from the rollout: the whole conversation
// since the last fold is summarized; what Codex carries over besides the
// summary (the user messages, up to its cap) is restored. What no request
// has sent yet (this turn's prompt) rides with the compaction call's
// instruction: the call sends it uncached after the cached history, as the
// provider bills it, and the next request sends it either way.
// deadline is how long the question may wait: what is left of the hook's
// time, less a margin.
func rewriteRequest(in hookInput, ro *rollout, opts Options, window, threshold int64, deadline time.Duration) api.RewriteRequest {
	trigger := api.TriggerPressure
	if in.Trigger == "manual" {
		trigger = api.TriggerManual
	}
	envelope, surface, pending := ro.surface()
	plan := pricing.Plan{}
	same := true
	if len(surface) > 0 {
		plan.Summarize = &pricing.SummaryPlan{Start: surface[0].ID, End: surface[len(surface)-1].ID,
			RestoredTokens: ro.keptTokens(), InstructionTokens: codexCompactionInstructionTokens + pending, SameFamily: &same}
	}
	idle := 0.0
	if !ro.LastAt.IsZero() {
		idle = max(opts.Now().Sub(ro.LastAt).Seconds(), 0)
	}
	return api.RewriteRequest{
		Profile: opts.Profile, Turn: in.TurnID, Trigger: trigger,
		DeadlineSeconds: deadline.Seconds(), IdleSeconds: idle,
		ContextWindow: window, ThresholdTokens: threshold,
		EnvelopeTokens: envelope, Surface: surface, Plan: plan,
	}
}

// recordUsage records every request of the rollout as the importer reads
// it, in order (the ledger judges each request against the previous one of
// its thread by the order they are stored), until the time given to it
// ends. tollgate stores each id once, so earlier hooks' records are not
// counted twice.
func recordUsage(ctx context.Context, c *client.Client, session string, ro rollout, profile string, window, threshold int64,
	until time.Time, now func() time.Time, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, until.Sub(now()))
	defer cancel()
	for i, rec := range ro.Records {
		q := rec.Request
		if q == nil {
			continue
		}
		if !now().Before(until) {
			left := 0
			for _, r := range ro.Records[i:] {
				if r.Request != nil {
					left++
				}
			}
			log.Warn("recording Codex usage cut short to leave the question its time; the rest is recorded later", "session", session, "unrecorded", left)
			return
		}
		r := hookio.Report(q)
		r.Harness, r.Title, r.Profile = Name, ro.Session.Title, profile
		r.ContextWindow, r.ThresholdTokens = window, threshold
		if _, err := c.RecordRequest(ctx, session, r); err != nil {
			log.Warn("recording Codex usage", "session", session, "err", err)
			return // tollgate is gone or refuses: the rest would fare no better
		}
	}
}

// reportCompaction handles PostCompact: the compaction this turn was
// allowed has landed, so its rewrite's outcome is applied.
func reportCompaction(ctx context.Context, c *client.Client, in hookInput) error {
	// The last allowed, unreported fold of this turn: PostCompact follows
	// the PreCompact of the same turn_id, so a fold of another turn (one
	// whose compaction never came, say Codex was killed) is not this one
	// and stays unreported. Only input without a turn_id falls back to the
	// last such fold of the session.
	return hookio.ReportLanded(ctx, c, importer.SessionID(Name, in.SessionID), func(f, _ *api.Fold) bool {
		return in.TurnID == "" || f.Turn == in.TurnID
	})
}

// autoCompact is the context window and the auto-compaction threshold
// Codex works with: the window its token_count events report (already the
// usable share of the model's), and config.toml's
// model_auto_compact_token_limit, else 90 % of the window (Codex's default
// for models without their own limit).
func autoCompact(window int64, getenv func(string) string) (int64, int64) {
	var cfg struct {
		Window int64 `toml:"model_context_window"`
		Limit  int64 `toml:"model_auto_compact_token_limit"`
	}
	if dir, err := Dir(getenv); err == nil {
		if b, err := readBounded(filepath.Join(dir, "config.toml")); err == nil {
			toml.Unmarshal(b, &cfg) // a config Codex cannot read either: no figures
		}
	}
	if window <= 0 {
		window = max(cfg.Window, 0)
	}
	threshold := cfg.Limit
	if threshold <= 0 || (window > 0 && threshold > window) {
		threshold = window * 9 / 10
	}
	return window, threshold
}
