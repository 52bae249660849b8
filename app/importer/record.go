package importer

import (
	"encoding/json"
	"time"

	"tollgate/pricing"
)

// Purposes of a request (the storage package's vocabulary).
const (
	PurposeConversation = "conversation"
	PurposeCompaction   = "compaction"
	PurposeSubagent     = "subagent"
)

// Fold kinds and triggers.
const (
	KindSummary   = "summary"
	KindPrune     = "prune"
	TriggerAuto   = "auto"
	TriggerManual = "manual"
)

// Session is what a log says about its session. Empty fields say nothing.
type Session struct {
	ID              string `json:"id"`
	Harness         string `json:"harness"`
	Title           string `json:"title,omitempty"`
	Profile         string `json:"profile,omitempty"`
	Provider        string `json:"provider,omitempty"`
	Model           string `json:"model,omitempty"`
	ContextWindow   int64  `json:"contextWindow,omitempty"`
	ThresholdTokens int64  `json:"thresholdTokens,omitempty"`
	// LimitsAssumed: ContextWindow and ThresholdTokens are the harness's
	// defaults for the model, not read from the log
	// (storage.SessionMeta.LimitsAssumed).
	LimitsAssumed bool `json:"limitsAssumed,omitempty"`
}

// Request is one billed model call.
type Request struct {
	// ID identifies the request within its session, stably across
	// re-imports: Claude Code's message id (+ request id), a Codex
	// request's cumulative token count, a dsh message id.
	ID       string
	At       time.Time
	Purpose  string // conversation | compaction | subagent
	Profile  string
	Provider string
	Model    string
	Usage    pricing.Usage
	Line     int // 1-based line of its first appearance in the file
	// Thread is the conversation the request continues: "" for the main
	// one, the agent's file stem for a Claude Code subagent or summary
	// call. The cache-break ledger compares a request only with earlier
	// requests of its thread.
	Thread string
	// StartedBy is what the harness appended since the thread's previous
	// request, the most telling kind when several were (StartedBy…
	// constants); "" when the log does not say.
	StartedBy string
	// UUID is the log's own id of the response, when it has one (Claude
	// Code: the uuid of the message's last line, which its telemetry
	// sends as message.uuid): the key a live report of it shares.
	UUID string
}

// What started a request, most telling first: when several kinds of input
// came between two requests, the first of this list names the request.
const (
	StartedByThreadStart  = "thread-start"      // first request of a subagent or summary call
	StartedByCompaction   = "after-compaction"  // a compact summary replaced the history
	StartedByNotification = "task-notification" // a <task-notification> turn (a background task finished)
	StartedByPrompt       = "user-prompt"       // a typed or queued prompt
	StartedByAnswer       = "user-answer"       // the tool result of a question the model asked (AskUserQuestion)
	StartedByInterrupt    = "interrupt"         // "[Request interrupted by user…]"
	StartedByHook         = "hook-output"       // a hook's additional context (isMeta system reminder)
	StartedByMeta         = "meta"              // other harness-made user lines: slash-command output, caveats
	StartedByToolResult   = "tool-result"       // the tool loop continues
)

// Fold is one context rewrite a log shows.
type Fold struct {
	// ID is stable across re-imports and copies of the same log: derived
	// from the session and the rewrite's own id in the log (Claude Code's
	// line uuid, a dsh record id, a Codex line's time and position).
	ID        string
	At        time.Time
	Kind      string // summary | prune
	Trigger   string // auto | manual
	PreTokens int64  // context tokens before the rewrite
	// Summary is the summary call's usage when the same file shows it
	// (dsh, Codex). Claude Code's lives in another file; the store links
	// it by time, as it does for every compaction request.
	Summary *pricing.Usage
	// Position is the number of main-conversation requests of the file
	// (this import included) before the fold.
	Position int
	// ActualCold is the uncached part of the first main-conversation
	// request after the fold, when this file shows it; ActualRequest is
	// that request's ID.
	ActualCold    *int64
	ActualRequest string
	// CheckpointTokens is the summary's size when the log tells it (dsh),
	// or an estimate from its text at 4 characters per token (Claude Code,
	// Codex: CheckpointEstimated is then set). The text itself is never kept.
	CheckpointTokens    int64
	CheckpointEstimated bool
	// ShadowedTokens are the tokens a prune or replacement took out of the
	// model-visible context (dsh), and Units how many units it touched.
	ShadowedTokens int64
	Units          int
	// RetainedTokens is the tail a summary kept after its checkpoint (dsh).
	RetainedTokens int64
	// FromTokens is where (in tokens after the envelope) the first unit the
	// rewrite changed starts, when the log says (dsh prunes).
	FromTokens *int64
	Line       int
}

// SetActual gives the fold the billed cold tokens of q, the first
// main-conversation request after it: its uncached input
// (pricing.Usage.Uncached), the figure the prediction is checked against.
// Every format calls it, so every harness's actual means the same.
func (f *Fold) SetActual(q *Request) {
	c := q.Usage.Uncached()
	f.ActualCold, f.ActualRequest = &c, q.ID
}

// Plan is the JSON stored in rewrites.plan for an imported fold: token
// counts only.
func (f *Fold) Plan() string {
	p := map[string]any{"source": "import"}
	if f.CheckpointTokens > 0 {
		p["checkpointTokens"] = f.CheckpointTokens
		if f.CheckpointEstimated {
			p["checkpointEstimated"] = true
		}
	}
	if f.ShadowedTokens > 0 {
		p["shadowedTokens"] = f.ShadowedTokens
	}
	if f.Units > 0 {
		p["units"] = f.Units
	}
	if f.RetainedTokens > 0 {
		p["retainedTokens"] = f.RetainedTokens
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// Record is one request or one fold, in log order.
type Record struct {
	Request *Request
	Fold    *Fold
}

// Batch is what one pass over (the new part of) a file yields.
type Batch struct {
	Harness string
	Session Session
	Records []Record
	// Lines and Consumed count what this pass read: complete lines only,
	// a partly written last line is left for the next pass.
	Lines    int
	Consumed int64
}

// Requests counts the batch's requests.
func (b *Batch) Requests() int {
	n := 0
	for _, r := range b.Records {
		if r.Request != nil {
			n++
		}
	}
	return n
}

// Folds counts the batch's folds.
func (b *Batch) Folds() int {
	n := 0
	for _, r := range b.Records {
		if r.Fold != nil {
			n++
		}
	}
	return n
}
