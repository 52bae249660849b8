package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"tollgate/app/importer"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// The Claude Code integration (DESIGN §8): a PreCompact hook, run as a
// command (`tollgate hook claude-code`, stdin → stdout) or served as an HTTP
// hook (POST /v1/hooks/claude-code). Either way one PreCompact event is
// decided like this:
//
//  1. register an engine (harness "claude-code") for the life of the hook;
//  2. record the transcript's usage so far with the importer's parser
//     (app/importer: ids "<message id>:<request id>", so a later
//     `tollgate import` of the same transcript stores nothing twice),
//     subagents' transcripts included;
//  3. price the compaction: Claude Code summarizes the whole conversation
//     since the last compact_boundary, so the surface is that conversation,
//     one unit per request (the tokens its prompt added, each ending at a
//     cache breakpoint, as Claude Code marks every request's end) plus the
//     input still pending; the envelope is the cached prefix of the first
//     request after the last fold, else the smallest non-zero cache read;
//     the checkpoint is estimated (the last summary's size, else the
//     profile's estimatedSummaryTokens);
//  4. ask (session "claude-code:<session_id>", turn = prompt_id, deadline =
//     the hook's timeout less a margin);
//  5. a decline prints {"decision":"block","reason":"…"} on stdout, exit 0
//     (verified with Claude Code 2.1.332: a block stops manual and automatic
//     compaction, and an automatic turn then goes on with its full history).
//
// tollgate not running, malformed input, or any fault of ours → allow, say
// why on stderr, exit 0: a guard fault never blocks the engine.

// claudeHookInput is what Claude Code sends a PreCompact hook on stdin.
type claudeHookInput struct {
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

// Claude Code hook events tollgate handles: PreCompact asks; PostCompact
// reports that the allowed compaction landed (the rewrite's outcome).
const (
	claudePreCompact  = "PreCompact"
	claudePostCompact = "PostCompact"
)

// maxHookInput bounds what a hook reads from stdin (Claude Code sends a few
// hundred bytes).
const maxHookInput = 1 << 20

// decodeClaudeHookInput decodes and checks a PreCompact hook's input.
// Errors name the field.
func decodeClaudeHookInput(b []byte) (claudeHookInput, error) {
	var in claudeHookInput
	if len(bytes.TrimSpace(b)) == 0 {
		return in, errors.New("empty input: expected Claude Code's PreCompact hook JSON on stdin")
	}
	if err := json.Unmarshal(b, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return in, fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type.Kind(), te.Value)
		}
		return in, fmt.Errorf("input is not JSON: %w", err)
	}
	switch {
	case in.HookEventName != claudePreCompact && in.HookEventName != claudePostCompact:
		return in, fmt.Errorf("hook_event_name: %q is neither PreCompact nor PostCompact (install the hook under those only)", in.HookEventName)
	case strings.TrimSpace(in.SessionID) == "":
		return in, errors.New("session_id: missing")
	case len(in.SessionID) > 256:
		return in, errors.New("session_id: longer than 256 bytes")
	case in.Trigger != "auto" && in.Trigger != "manual":
		return in, fmt.Errorf("trigger: %q is neither auto nor manual", in.Trigger)
	case len(in.PromptID) > 256:
		return in, errors.New("prompt_id: longer than 256 bytes")
	}
	return in, nil
}

// claudeHookOptions tune one decision.
type claudeHookOptions struct {
	Home    string        // tollgate home, for the Integrations page's marker ("" = none)
	Profile string        // pricing profile ("" = by provider and model)
	Timeout time.Duration // the hook's timeout in Claude Code's settings
	Getenv  func(string) string
	Now     func() time.Time
	Log     *slog.Logger
}

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
	Note   string // for stderr / the log
	Rewrite,
	Decision,
	Why string
}

// decideClaudePreCompact decides one PreCompact event through tollgate.
func decideClaudePreCompact(ctx context.Context, c *client.Client, in claudeHookInput, opts claudeHookOptions) claudeVerdict {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultClaudeHookTimeout
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	var tr claudeTranscript
	if in.TranscriptPath != "" {
		var err error
		tr, err = readClaudeTranscript(in.TranscriptPath)
		if err != nil {
			// Without the transcript the compaction cannot be priced: ask
			// anyway (the surface is then empty), and say so.
			log.Warn("reading the Claude Code transcript", "path", in.TranscriptPath, "err", err)
		}
	}
	window, threshold := claudeWindow(tr.Model, opts.Getenv)
	version := claudeVersion(opts.Getenv)

	pid := os.Getpid()
	if p, err := strconv.Atoi(opts.Getenv("CLAUDE_PID")); err == nil && p > 0 {
		pid = p
	}
	if err := c.Register(ctx, client.Engine{Harness: IntegrationClaudeCode, Version: version, Profile: opts.Profile, PID: pid}); err != nil {
		return claudeVerdict{Note: "tollgate unreachable (" + err.Error() + "): allowing the compaction unguarded", Decision: api.Allow, Why: api.ReasonUnguarded}
	}
	defer c.Close()

	session := "claude-code:" + in.SessionID
	recordClaudeUsage(ctx, c, session, in.TranscriptPath, tr, opts.Profile, window, threshold, log)

	req := claudeRewriteRequest(in, tr, opts, window, threshold)
	askCtx, cancel := context.WithTimeout(ctx, max(opts.Timeout-2*time.Second, time.Second))
	defer cancel()
	d := c.AskRewrite(askCtx, session, req)
	v := claudeVerdict{Rewrite: d.Rewrite, Decision: d.Decision, Why: d.Reason}
	if d.Decision == api.Decline {
		v.Block = true
		v.Reason = claudeBlockReason(d, in.Trigger)
	}
	v.Note = "tollgate: " + d.Decision + " (" + d.Reason + ")"
	if d.Message != "" {
		v.Note += ": " + d.Message
	}
	if opts.Home != "" {
		writeIntegrationMarker(opts.Home, IntegrationClaudeCode, integrationMarker{At: opts.Now().UTC(), LastDecision: d.Decision + " (" + d.Reason + ")", Version: version})
	}
	return v
}

// reportClaudeCompaction handles PostCompact: the compaction this prompt
// was allowed has landed, so its rewrite's outcome is applied (the next
// recorded request then yields the actual cold tokens beside the
// prediction).
func reportClaudeCompaction(ctx context.Context, c *client.Client, in claudeHookInput) error {
	session := "claude-code:" + in.SessionID
	var series api.Series
	if err := c.Get(ctx, "/v1/sessions/"+url.PathEscape(session)+"/series", &series); err != nil {
		return err
	}
	pick := -1
	for i, f := range series.Folds {
		if f.Source != "api" || f.Decision != api.Allow || f.Applied != nil {
			continue
		}
		if pick < 0 || f.Turn == in.PromptID || series.Folds[pick].Turn != in.PromptID {
			pick = i
		}
	}
	if pick < 0 {
		return nil // compacted unasked (tollgate was not running), or already reported
	}
	return c.Outcome(ctx, series.Folds[pick].Rewrite, true, "")
}

func claudeBlockReason(d api.Decision, trigger string) string {
	var why string
	switch d.Reason {
	case api.ReasonUser:
		why = "you chose Not now"
	case api.ReasonTimeout:
		why = "nobody answered before the hook's deadline"
	case api.ReasonMuted:
		why = "declined earlier in this prompt"
	case api.ReasonNoQuestionProvider:
		why = "nobody can answer (no tollgate window or browser UI is open); set mode: auto to allow compactions without asking"
	default:
		why = d.Reason
		if d.Message != "" {
			why += ": " + d.Message
		}
	}
	msg := "tollgate declined the compaction (" + why + ")."
	if d.Quote != nil && d.Quote.ColdTokens > 0 {
		msg += fmt.Sprintf(" It would re-read %d tokens uncached (break premium $%.4f).", d.Quote.ColdTokens, d.Quote.CostUSD.BreakPremium)
	}
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

// claudeWindow is Claude Code's context window and auto-compact threshold:
// CLAUDE_CODE_AUTO_COMPACT_WINDOW (else 1M for a "[1m]" model, else 200k),
// and CLAUDE_AUTOCOMPACT_PCT_OVERRIDE percent of it, else the window less
// Claude Code's output reserve (20k) and auto-compact buffer (13k). An
// approximation: Claude Code does not tell its hooks.
func claudeWindow(model string, getenv func(string) string) (int64, int64) {
	window := int64(200_000)
	if strings.Contains(strings.ToLower(model), "[1m]") {
		window = 1_000_000
	}
	if v, err := strconv.ParseInt(getenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW"), 10, 64); err == nil && v > 0 {
		window = v
	}
	threshold := window - 33_000
	if pct, err := strconv.ParseFloat(getenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"), 64); err == nil && pct > 0 && pct <= 100 {
		threshold = int64(float64(window) * pct / 100)
	}
	return window, max(threshold, 0)
}

// claudeInstructionTokens estimates Claude Code's compaction instruction
// (the prompt it appends to the conversation for the summary call).
const claudeInstructionTokens = 1200

// claudeRewriteRequest builds the ask from the transcript.
func claudeRewriteRequest(in claudeHookInput, tr claudeTranscript, opts claudeHookOptions, window, threshold int64) api.RewriteRequest {
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
		plan.Summarize = &pricing.SummaryPlan{Start: surface[0].ID, End: surface[len(surface)-1].ID,
			EstimatedTokens: tr.checkpointTokens(), InstructionTokens: instruction, SameFamily: &same}
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
	}
}

// recordClaudeUsage records every request of the transcript and of its
// subagents' transcripts (<session>/subagents/*.jsonl: subagents and, in
// Claude Code versions that write one, the compaction call), read with the
// importer's Claude Code parser, so the ids, purposes and figures are the
// importer's and a later `tollgate import` stores nothing twice. tollgate
// stores each id once, so earlier hooks' records are not counted twice
// either. When the importer cannot read the transcript, the hook's own
// parse is recorded.
func recordClaudeUsage(ctx context.Context, c *client.Client, session, transcript string, tr claudeTranscript, profile string, window, threshold int64, log *slog.Logger) {
	reqs, err := importedClaudeRequests(transcript)
	if err != nil {
		log.Warn("reading the transcript with the importer; recording the hook's own parse", "err", err)
		reqs = reqs[:0]
		for _, r := range tr.Requests {
			purpose := api.PurposeConversation
			if r.Sidechain {
				purpose = api.PurposeSubagent
			}
			reqs = append(reqs, client.Request{RequestID: r.ID, Model: r.Model, Purpose: purpose, At: r.At,
				Usage: client.Usage{InputTokens: r.Usage.Input, CacheReadTokens: r.Usage.CacheRead, CacheWriteTokens: r.Usage.CacheWrite,
					CacheWrite1hTokens: r.Usage.CacheWrite1h, OutputTokens: r.Usage.Output}})
		}
	}
	if len(reqs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	jobs := make(chan client.Request)
	var wg sync.WaitGroup
	var once sync.Once
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				r.Harness, r.Profile, r.Provider = IntegrationClaudeCode, profile, "anthropic"
				r.ContextWindow, r.ThresholdTokens = window, threshold
				if _, err := c.RecordRequest(ctx, session, r); err != nil {
					once.Do(func() { log.Warn("recording Claude Code usage", "session", session, "err", err) })
				}
			}
		}()
	}
	for _, r := range reqs {
		select {
		case jobs <- r:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(jobs)
	wg.Wait()
}

// importedClaudeRequests reads a transcript and its subagents' with the
// importer (folds are left to `tollgate import`).
func importedClaudeRequests(transcript string) ([]client.Request, error) {
	if transcript == "" {
		return nil, nil
	}
	files := []string{transcript}
	sub, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "subagents", "*.jsonl"))
	files = append(files, sub...)
	var out []client.Request
	for i, path := range files {
		f, err := os.Open(path)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue
		}
		res, err := importer.Parse(f, importer.Options{Harness: importer.ClaudeCode, Path: path, AtEOF: true})
		f.Close()
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue // a subagent file being written: its requests come with the next hook
		}
		for _, rec := range res.Records {
			if q := rec.Request; q != nil {
				out = append(out, client.Request{RequestID: q.ID, Model: q.Model, Purpose: q.Purpose, At: q.At,
					Usage: client.Usage{InputTokens: q.Usage.Input, CacheReadTokens: q.Usage.CacheRead, CacheWriteTokens: q.Usage.CacheWrite,
						CacheWrite1hTokens: q.Usage.CacheWrite1h, OutputTokens: q.Usage.Output}})
			}
		}
	}
	return out, nil
}

// ---- the transcript ----

// claudeUsage is one request's usage, disjoint (Anthropic's input_tokens
// already exclude the cache).
type claudeUsage struct {
	Input, CacheRead, CacheWrite, CacheWrite1h, Output int64
}

// clamped bounds every count to 0…2^40 (what tollgate accepts), so a
// corrupt line cannot make a negative or absurd unit.
func (u claudeUsage) clamped() claudeUsage {
	c := func(v int64) int64 { return min(max(v, 0), 1<<40) }
	return claudeUsage{c(u.Input), c(u.CacheRead), c(u.CacheWrite), c(u.CacheWrite1h), c(u.Output)}
}

func (u claudeUsage) prompt() int64 { return u.Input + u.CacheRead + u.CacheWrite + u.CacheWrite1h }

func (u claudeUsage) max(v claudeUsage) claudeUsage {
	return claudeUsage{max(u.Input, v.Input), max(u.CacheRead, v.CacheRead), max(u.CacheWrite, v.CacheWrite), max(u.CacheWrite1h, v.CacheWrite1h), max(u.Output, v.Output)}
}

// claudeRequest is one billed model call of a transcript.
type claudeRequest struct {
	ID        string // "<message id>:<request id>", as the importer names it
	At        time.Time
	Model     string
	Usage     claudeUsage
	Sidechain bool
	Line      int
}

// claudeTranscript is what the hook needs from a Claude Code transcript.
type claudeTranscript struct {
	Requests []claudeRequest // every request, in order (main and sidechain)
	// Since are the indexes into Requests of the main conversation's
	// requests after the last compact_boundary.
	Since []int
	// Folds counts compact_boundary lines; FirstAfterFold says whether
	// Since[0] is the first request after a fold.
	Folds int
	// PendingBytes is the message content written after the last main
	// request (the prompt and tool results not yet sent).
	PendingBytes int64
	// SummaryBytes is the size of the last compact summary's text.
	SummaryBytes int64
	Model        string
	LastAt       time.Time
}

// ccLine is the part of a transcript line the hook reads.
type ccLine struct {
	Type             string `json:"type"`
	Subtype          string `json:"subtype"`
	Timestamp        string `json:"timestamp"`
	RequestID        string `json:"requestId"`
	IsSidechain      bool   `json:"isSidechain"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	Message          *struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *struct {
			InputTokens              int64 `json:"input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			OutputTokens             int64 `json:"output_tokens"`
			CacheCreation            *struct {
				Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
				Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
			} `json:"cache_creation"`
		} `json:"usage"`
	} `json:"message"`
}

// maxTranscriptLine bounds one transcript line (a pasted image can make
// one long; longer lines are skipped, counted as pending content).
const maxTranscriptLine = 64 << 20

func readClaudeTranscript(path string) (claudeTranscript, error) {
	f, err := os.Open(path)
	if err != nil {
		return claudeTranscript{}, err
	}
	defer f.Close()
	return parseClaudeTranscript(f)
}

// parseClaudeTranscript reads a transcript. A line that does not parse is
// skipped (Claude Code may be writing the last one), never fatal.
func parseClaudeTranscript(r io.Reader) (claudeTranscript, error) {
	var tr claudeTranscript
	index := map[string]int{} // request id → index in tr.Requests
	br := bufio.NewReaderSize(r, 1<<16)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: collect the rest of it.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= maxTranscriptLine {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			for errors.Is(err, bufio.ErrBufferFull) { // too long: skip the rest
				_, err = br.ReadSlice('\n')
			}
			line = buf
		}
		if len(line) > 0 {
			n++
			tr.line(line, n, index)
		}
		if err == io.EOF {
			return tr, nil
		}
		if err != nil {
			return tr, fmt.Errorf("reading line %d: %w", n+1, err)
		}
	}
}

var (
	keyUsage   = []byte(`"usage"`)
	keyCompact = []byte(`compact_boundary`)
	keyMessage = []byte(`"message"`)
)

func (tr *claudeTranscript) line(b []byte, n int, index map[string]int) {
	if !bytes.Contains(b, keyMessage) && !bytes.Contains(b, keyCompact) {
		return
	}
	var l ccLine
	if len(b) > maxTranscriptLine || json.Unmarshal(b, &l) != nil {
		return
	}
	switch {
	case l.Type == "system" && l.Subtype == "compact_boundary":
		tr.Folds++
		tr.Since = tr.Since[:0]
		tr.PendingBytes = 0
		return
	case l.Type == "assistant" && l.Message != nil && l.Message.Usage != nil && bytes.Contains(b, keyUsage):
		if l.Message.Model == "<synthetic>" || l.Message.ID == "" {
			return
		}
		u := l.Message.Usage
		usage := claudeUsage{Input: u.InputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens, Output: u.OutputTokens}
		if u.CacheCreation != nil && u.CacheCreation.Ephemeral5m+u.CacheCreation.Ephemeral1h == u.CacheCreationInputTokens {
			usage.CacheWrite, usage.CacheWrite1h = u.CacheCreation.Ephemeral5m, u.CacheCreation.Ephemeral1h
		}
		usage = usage.clamped()
		id := l.Message.ID
		if l.RequestID != "" {
			id += ":" + l.RequestID
		}
		at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
		if i, ok := index[id]; ok { // another content block of the same message
			tr.Requests[i].Usage = tr.Requests[i].Usage.max(usage)
			return
		}
		index[id] = len(tr.Requests)
		tr.Requests = append(tr.Requests, claudeRequest{ID: id, At: at, Model: l.Message.Model, Usage: usage, Sidechain: l.IsSidechain, Line: n})
		if !l.IsSidechain {
			tr.Since = append(tr.Since, len(tr.Requests)-1)
			tr.PendingBytes = 0
			tr.Model = l.Message.Model
			if !at.IsZero() {
				tr.LastAt = at
			}
		}
	case (l.Type == "user" || l.Type == "assistant") && l.Message != nil && !l.IsSidechain:
		tr.PendingBytes += int64(len(l.Message.Content))
		if l.IsCompactSummary {
			tr.SummaryBytes = int64(len(l.Message.Content))
		}
	}
}

// checkpointTokens estimates the checkpoint from the last summary (4 bytes
// a token); 0 lets the profile's estimatedSummaryTokens decide.
func (tr *claudeTranscript) checkpointTokens() int64 {
	return (tr.SummaryBytes + 3) / 4
}

// surface turns the conversation since the last fold into units: one per
// main request (the tokens its prompt added to the previous one's, ending at
// a cache breakpoint), then the last output and the pending input.
func (tr *claudeTranscript) surface() (int64, []pricing.Unit) {
	var envelope int64
	if len(tr.Since) > 0 {
		first := tr.Requests[tr.Since[0]].Usage
		if tr.Folds > 0 && first.CacheRead > 0 {
			envelope = first.CacheRead
		} else {
			for _, i := range tr.Since {
				if cr := tr.Requests[i].Usage.CacheRead; cr > 0 && (envelope == 0 || cr < envelope) {
					envelope = cr
				}
			}
		}
		envelope = min(envelope, first.prompt())
	}
	units := make([]pricing.Unit, 0, len(tr.Since)+1)
	covered := envelope
	for _, i := range tr.Since {
		r := tr.Requests[i]
		p := r.Usage.prompt()
		if p <= covered {
			continue // nothing new (or content cleared): no unit
		}
		units = append(units, pricing.Unit{ID: r.ID, Tokens: p - covered, Kind: "turn", Breakpoint: true})
		covered = p
	}
	var last int64
	if len(tr.Since) > 0 {
		last = tr.Requests[tr.Since[len(tr.Since)-1]].Usage.Output
	}
	if pending := last + (tr.PendingBytes+3)/4; pending > 0 {
		units = append(units, pricing.Unit{ID: "pending", Tokens: pending, Kind: "pending"})
	}
	return envelope, units
}

// ---- the command ----

// RunHook is `tollgate hook HARNESS`: a harness's hook entry point.
func RunHook(args []string, stdio IO) int {
	if len(args) == 0 {
		fmt.Fprintln(stdio.Stderr, "usage: tollgate hook claude-code [--install|--uninstall] [flags]")
		return 2
	}
	switch args[0] {
	case "claude-code", "claude":
		return runClaudeHook(args[1:], stdio)
	case "codex":
		fmt.Fprintln(stdio.Stderr, "tollgate: Codex stays import-only:", codexVerdict)
		return 0
	}
	fmt.Fprintf(stdio.Stderr, "tollgate hook: unknown harness %q (want claude-code)\n", args[0])
	return 2
}

func runClaudeHook(args []string, stdio IO) int {
	fset := flag.NewFlagSet("hook claude-code", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common CommonFlags
	common.Register(fset, false)
	timeout := fset.Duration("timeout", defaultClaudeHookTimeout, "the hook's `timeout` in Claude Code's settings (tollgate's deadline is 5 s less); a bare number is seconds")
	profile := fset.String("profile", "", "pricing `PROFILE` for Claude Code sessions (default: by provider and model)")
	install := fset.Bool("install", false, "merge the PreCompact hook into Claude Code's settings.json (with a backup) and exit")
	uninstall := fset.Bool("uninstall", false, "remove tollgate's PreCompact hook from Claude Code's settings.json and exit")
	httpHook := fset.Bool("http", false, "with --install: install the HTTP hook (POST /v1/hooks/claude-code on the running tollgate) instead of the command")
	settings := fset.String("settings", "", "Claude Code settings `FILE` for --install/--uninstall (default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate hook claude-code [--home DIR] [--timeout 300s] [--profile NAME]
       tollgate hook claude-code --install [--http] [--timeout 300s] [--settings FILE]
       tollgate hook claude-code --uninstall [--settings FILE]

Claude Code's PreCompact hook: reads the hook's JSON on stdin, asks tollgate,
and prints {"decision":"block","reason":"…"} when the compaction is declined.
tollgate not running or malformed input → the compaction is allowed.`)
		fset.PrintDefaults()
	}
	args = secondsToDuration(args, "timeout")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *install || *uninstall {
		path := *settings
		if path == "" {
			dir, err := claudeConfigDir(os.Getenv)
			if err != nil {
				fmt.Fprintln(stdio.Stderr, "tollgate:", err)
				return 1
			}
			path = filepath.Join(dir, "settings.json")
		}
		if *uninstall {
			return runClaudeUninstall(path, stdio)
		}
		t := installClaudeHookTimeout
		fset.Visit(func(f *flag.Flag) {
			if f.Name == "timeout" {
				t = *timeout
			}
		})
		return runClaudeInstall(path, common.Home, *profile, t, *httpHook, stdio)
	}

	b, err := io.ReadAll(io.LimitReader(stdio.Stdin, maxHookInput+1))
	if err == nil && len(b) > maxHookInput {
		err = fmt.Errorf("input longer than %d bytes", maxHookInput)
	}
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: reading the hook input:", err, "— allowing the compaction")
		return 0
	}
	in, err := decodeClaudeHookInput(b)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: malformed PreCompact hook input:", err, "— allowing the compaction")
		return 0
	}
	home, _ := ResolveHome(common.Home)
	ep, err := client.Discover(home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate is not running (", err, ") — allowing the compaction unguarded")
		return 0
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if in.HookEventName == claudePostCompact {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := reportClaudeCompaction(ctx, client.New(ep, log), in); err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate: reporting the compaction's outcome:", err)
		}
		return 0
	}
	v := decideClaudePreCompact(context.Background(), client.New(ep, log), in, claudeHookOptions{Home: home, Profile: *profile, Timeout: *timeout, Log: log})
	if v.Note != "" {
		fmt.Fprintln(stdio.Stderr, v.Note)
	}
	if v.Block {
		out, _ := json.Marshal(map[string]string{"decision": "block", "reason": v.Reason})
		fmt.Fprintln(stdio.Stdout, string(out))
	}
	return 0
}

// secondsToDuration lets --NAME take a bare number of seconds (Claude
// Code's settings count hook timeouts in seconds).
func secondsToDuration(args []string, name string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := strings.TrimLeft(out[i], "-")
		if a == name && i+1 < len(out) {
			if _, err := strconv.ParseFloat(out[i+1], 64); err == nil {
				out[i+1] += "s"
			}
			i++
		} else if v, ok := strings.CutPrefix(a, name+"="); ok && strings.HasPrefix(out[i], "-") {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				out[i] += "s"
			}
		}
	}
	return out
}

// ---- the HTTP hook ----

// ClaudeHookRoute is the authenticated route of the HTTP variant of the
// hook: Claude Code POSTs the PreCompact JSON there (`"type": "http"`,
// with `Authorization: Bearer $TOLLGATE_TOKEN`); the answer is the same
// JSON the command prints ({} to allow). ?timeout=SECONDS is the hook's
// timeout, as --install writes it.
const ClaudeHookRoute = "POST /v1/hooks/claude-code"

// ClaudeHookHandler serves ClaudeHookRoute for the tollgate at endpoint
// (asked over loopback, like any harness, so the rules are the same).
func ClaudeHookHandler(home string, endpoint func() client.Endpoint, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b, err := io.ReadAll(io.LimitReader(r.Body, maxHookInput+1))
		if err == nil && len(b) > maxHookInput {
			err = fmt.Errorf("body longer than %d bytes", maxHookInput)
		}
		var in claudeHookInput
		if err == nil {
			in, err = decodeClaudeHookInput(b)
		}
		if err != nil {
			// Malformed input allows the compaction, as the command does.
			log.Warn("Claude Code HTTP hook: malformed input; allowing the compaction", "err", err)
			io.WriteString(w, "{}\n")
			return
		}
		timeout := defaultClaudeHookTimeout
		if s, err := strconv.ParseFloat(r.URL.Query().Get("timeout"), 64); err == nil && s > 0 {
			timeout = time.Duration(s * float64(time.Second))
		}
		c := client.New(endpoint(), log)
		if in.HookEventName == claudePostCompact {
			if err := reportClaudeCompaction(r.Context(), c, in); err != nil {
				log.Warn("Claude Code HTTP hook: reporting the compaction's outcome", "err", err)
			}
			io.WriteString(w, "{}\n")
			return
		}
		v := decideClaudePreCompact(r.Context(), c, in, claudeHookOptions{Home: home, Timeout: timeout, Profile: r.URL.Query().Get("profile"),
			Getenv: func(string) string { return "" }, Log: log})
		if !v.Block {
			io.WriteString(w, "{}\n")
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"decision": "block", "reason": v.Reason})
	})
}

// ---- installing into Claude Code's settings ----

// claudeHookEntry is one hook of a settings.json matcher group.
type claudeHookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	URL     string `json:"url,omitempty"`
	Timeout int    `json:"timeout,omitempty"`
}

// readClaudeSettings reads a settings.json as a generic object, so every
// key tollgate does not know survives a rewrite.
func readClaudeSettings(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return settings, nil
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", path, err)
	}
	return settings, nil
}

// isTollgateClaudeHook says whether a hook object is tollgate's own.
func isTollgateClaudeHook(h map[string]any) bool {
	cmd, _ := h["command"].(string)
	u, _ := h["url"].(string)
	return strings.Contains(cmd, " hook claude-code") || strings.Contains(u, "/v1/hooks/claude-code")
}

// claudeHookEvents are the settings keys tollgate installs under.
var claudeHookEvents = []string{claudePreCompact, claudePostCompact}

// preCompactGroups returns settings.hooks.PreCompact (nil when absent or not a list).
func preCompactGroups(settings map[string]any) []any {
	return hookGroups(settings, claudePreCompact)
}

func hookGroups(settings map[string]any, event string) []any {
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	return groups
}

// findTollgateClaudeHooks lists tollgate's PreCompact hooks in settings
// (the one that guards; the PostCompact one only reports).
func findTollgateClaudeHooks(settings map[string]any) []claudeHookEntry {
	var out []claudeHookEntry
	for _, g := range preCompactGroups(settings) {
		group, _ := g.(map[string]any)
		list, _ := group["hooks"].([]any)
		for _, h := range list {
			hook, _ := h.(map[string]any)
			if hook == nil || !isTollgateClaudeHook(hook) {
				continue
			}
			e := claudeHookEntry{}
			e.Type, _ = hook["type"].(string)
			e.Command, _ = hook["command"].(string)
			e.URL, _ = hook["url"].(string)
			if t, ok := hook["timeout"].(float64); ok {
				e.Timeout = int(t)
			}
			out = append(out, e)
		}
	}
	return out
}

// withoutTollgateClaudeHooks removes tollgate's PreCompact and PostCompact
// hooks (and the groups and keys they leave empty), keeping everything else.
func withoutTollgateClaudeHooks(settings map[string]any) (map[string]any, int) {
	hooks, _ := settings["hooks"].(map[string]any)
	removed := 0
	for _, event := range claudeHookEvents {
		groups, ok := hooks[event].([]any)
		if !ok {
			continue
		}
		var kept []any
		for _, g := range groups {
			group, _ := g.(map[string]any)
			list, ok := group["hooks"].([]any)
			if !ok {
				kept = append(kept, g)
				continue
			}
			var rest []any
			for _, h := range list {
				if hook, _ := h.(map[string]any); hook != nil && isTollgateClaudeHook(hook) {
					removed++
					continue
				}
				rest = append(rest, h)
			}
			if len(rest) == 0 && len(list) > 0 {
				continue
			}
			group["hooks"] = rest
			kept = append(kept, group)
		}
		if len(kept) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = kept
		}
	}
	if hooks != nil && len(hooks) == 0 {
		delete(settings, "hooks")
	}
	return settings, removed
}

// shellQuote quotes a word for the shell Claude Code runs hook commands in.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// claudeHookCommand is the command line --install writes.
func claudeHookCommand(exe, home, profile string, timeout time.Duration) string {
	cmd := shellQuote(exe) + " hook claude-code --timeout " + strconv.Itoa(int(timeout/time.Second))
	if home != "" {
		if abs, err := filepath.Abs(home); err == nil {
			cmd += " --home " + shellQuote(abs)
		}
	}
	if profile != "" {
		cmd += " --profile " + shellQuote(profile)
	}
	return cmd
}

// installClaudeHook returns settings with tollgate's hook under PreCompact
// and PostCompact (replacing earlier ones of tollgate's), and whether
// anything changed.
func installClaudeHook(settings map[string]any, hook map[string]any) (map[string]any, bool) {
	before, _ := json.Marshal(settings)
	settings, _ = withoutTollgateClaudeHooks(settings)
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		settings["hooks"] = hooks
	}
	for _, event := range claudeHookEvents {
		groups, _ := hooks[event].([]any)
		hooks[event] = append(groups, map[string]any{"matcher": "", "hooks": []any{hook}})
	}
	after, _ := json.Marshal(settings)
	return settings, !bytes.Equal(before, after)
}

// writeSettingsFile writes settings atomically, keeping the old file as
// PATH.tollgate-backup (once per change) and its mode.
func writeSettingsFile(path string, settings map[string]any) (backup string, err error) {
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return "", err
	}
	b = append(b, '\n')
	mode := os.FileMode(0o600)
	if old, err := os.ReadFile(path); err == nil {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		backup = path + ".tollgate-backup"
		if err := os.WriteFile(backup, old, mode); err != nil {
			return "", fmt.Errorf("writing the backup %s: %w", backup, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings.*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return backup, os.Rename(tmp.Name(), path)
}

func runClaudeInstall(path, home, profile string, timeout time.Duration, httpHook bool, stdio IO) int {
	settings, err := readClaudeSettings(path)
	if errors.Is(err, os.ErrNotExist) {
		settings, err = map[string]any{}, nil
	}
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err, "— fix or move it, then run --install again")
		return 1
	}
	secs := int(timeout / time.Second)
	var hook map[string]any
	if httpHook {
		dir, err := ResolveHome(home)
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate:", err)
			return 1
		}
		info, err := LiveInstance(dir)
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate:", err, "(the HTTP hook needs the running tollgate's address)")
			return 1
		}
		u := info.URL + "/v1/hooks/claude-code?timeout=" + strconv.Itoa(secs)
		if profile != "" {
			u += "&profile=" + profile
		}
		hook = map[string]any{"type": "http", "url": u, "timeout": secs,
			"headers": map[string]any{"Authorization": "Bearer $TOLLGATE_TOKEN"}, "allowedEnvVars": []any{"TOLLGATE_TOKEN"}}
	} else {
		exe, err := os.Executable()
		if err == nil {
			exe, err = filepath.EvalSymlinks(exe)
		}
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate: finding this binary:", err)
			return 1
		}
		hook = map[string]any{"type": "command", "command": claudeHookCommand(exe, home, profile, timeout), "timeout": secs}
	}
	settings, changed := installClaudeHook(settings, hook)
	if !changed {
		fmt.Fprintf(stdio.Stdout, "tollgate's PreCompact hook is already installed in %s\n", path)
		return 0
	}
	backup, err := writeSettingsFile(path, settings)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: writing", path+":", err)
		return 1
	}
	fmt.Fprintf(stdio.Stdout, "Installed tollgate's PreCompact hook in %s (timeout %ds)\n", path, secs)
	if backup != "" {
		fmt.Fprintf(stdio.Stdout, "The previous settings are in %s\n", backup)
	}
	if httpHook {
		fmt.Fprintln(stdio.Stdout, "The HTTP hook sends $TOLLGATE_TOKEN: export it (`tollgate token`) where Claude Code runs.")
	}
	fmt.Fprintln(stdio.Stdout, "Claude Code reads it at the next start; `/hooks` lists it.")
	return 0
}

func runClaudeUninstall(path string, stdio IO) int {
	settings, err := readClaudeSettings(path)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdio.Stdout, "%s does not exist: nothing to remove\n", path)
		return 0
	}
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	settings, removed := withoutTollgateClaudeHooks(settings)
	if removed == 0 {
		fmt.Fprintf(stdio.Stdout, "tollgate's PreCompact hook is not in %s: nothing to remove\n", path)
		return 0
	}
	backup, err := writeSettingsFile(path, settings)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: writing", path+":", err)
		return 1
	}
	fmt.Fprintf(stdio.Stdout, "Removed tollgate's PreCompact hook from %s (previous settings in %s)\n", path, backup)
	return 0
}
