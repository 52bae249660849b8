package importer

import (
	"encoding/json"
	"strings"
	"time"
)

// A Claude Code trace (Options.Trace) is the structure of a main transcript
// that a fold predictor replays: what each request cost, what each message
// added, and which files the session read and wrote, with their text. It is
// built only when asked — the plain import skips these lines unread — and
// lives in memory only: nothing of it is stored (ARCHITECTURE.md,
// "Invariants": never prompt text).

// ClaudeTrace is one pass's main-thread structure, in line order.
type ClaudeTrace struct {
	Cwd     string // the session's working directory (last seen)
	Version string // Claude Code's version (last seen)
	Events  []TraceEvent
}

// Trace event kinds.
const (
	TraceRequest  = "request"  // a new billed main request (Request set)
	TraceUser     = "user"     // a user message: a prompt or tool results
	TraceBoundary = "boundary" // a compact_boundary (Fold set)
	TraceSummary  = "summary"  // the compact summary message after a boundary
)

// TraceEvent is one step of the main thread.
type TraceEvent struct {
	Kind string
	Line int
	At   time.Time
	// Request is the billed request (TraceRequest): the record's own
	// pointer, so its usage holds the final figures once the pass ends.
	Request *Request
	// Fold is the boundary's fold (TraceBoundary).
	Fold *Fold
	// Bytes is the message's size: for a request, the bytes of its
	// assistant content (text, thinking, tool inputs), summed over its
	// streamed lines; for a user message or a summary, its text's length.
	Bytes int
	// Meta marks a message Claude Code injected (isMeta).
	Meta bool
	// Skill names an invoked skill's text (a meta message "Base directory
	// for this skill: NAME"); Bytes is its length.
	Skill string
	// Plan is the length of a plan the session approved (ExitPlanMode).
	Plan int
	// Files are the message's tool results on files, in order.
	Files []FileOp
	// ReadBytes and ReadLines are the file text of its Read results
	// (toolUseResult.file.content): the calibration of numbered text.
	ReadBytes, ReadLines int
	// Results counts the message's tool results, Reads those of Read.
	Results, Reads int
}

// FileOp is one Read, Write, Edit or MultiEdit result.
type FileOp struct {
	Tool string // Read | Write | Edit | MultiEdit
	Path string
	// Content is the file's text as the tool saw it: a Read's
	// file.content, a Write's content, an Edit's originalFile (before the
	// edits). HasContent says it was there.
	Content    string
	HasContent bool
	// StartLine, NumLines and TotalLines describe a Read (a partial read
	// has StartLine > 1 or NumLines < TotalLines).
	StartLine, NumLines, TotalLines int
	Edits                           []Edit
}

// Partial says a Read saw only part of the file.
func (op FileOp) Partial() bool {
	return op.Tool == "Read" && (op.StartLine > 1 || op.NumLines < op.TotalLines)
}

// Edit is one old → new replacement of an Edit or MultiEdit.
type Edit struct {
	Old, New   string
	ReplaceAll bool
}

// Apply applies the edits to text as Claude Code's Edit tool does.
func (op FileOp) Apply(text string) string {
	for _, e := range op.Edits {
		if e.ReplaceAll {
			text = strings.ReplaceAll(text, e.Old, e.New)
		} else {
			text = strings.Replace(text, e.Old, e.New, 1)
		}
	}
	return text
}

// traceLine is what the trace decodes of a line (encoding/json: this path
// runs only when a predictor asked for it).
type traceLine struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	Timestamp        string          `json:"timestamp"`
	Cwd              string          `json:"cwd"`
	Version          string          `json:"version"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Message          *traceMessage   `json:"message"`
	ToolUseResult    json.RawMessage `json:"toolUseResult"`
}

type traceMessage struct {
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type traceBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

type traceToolUse struct {
	name  string
	input json.RawMessage
}

// tracer builds a ClaudeTrace line by line.
type tracer struct {
	tr       ClaudeTrace
	requests map[*Request]int        // request → its event
	toolUses map[string]traceToolUse // file and plan tools only
}

func newTracer() *tracer {
	return &tracer{requests: map[*Request]int{}, toolUses: map[string]traceToolUse{}}
}

// fileTools are the tools whose results change Claude Code's readFileState.
func fileTool(name string) bool {
	switch name {
	case "Read", "Write", "Edit", "MultiEdit", "ExitPlanMode":
		return true
	}
	return false
}

// line adds one line; req and fold are what the parser made of it.
func (t *tracer) line(b []byte, n int, req *Request, fold *Fold) {
	// Progress lines, file snapshots and queue operations (a third of a
	// transcript's bytes) say nothing the predictor needs.
	if typ, ok := topType(b); ok {
		switch string(typ) {
		case "user", "assistant":
		case "system":
			if fold == nil {
				return
			}
		default:
			return
		}
	}
	var l traceLine
	if json.Unmarshal(b, &l) != nil || l.IsSidechain {
		return
	}
	if l.Cwd != "" {
		t.tr.Cwd = l.Cwd
	}
	if l.Version != "" {
		t.tr.Version = l.Version
	}
	at, _ := parseTime(l.Timestamp)
	switch {
	case l.Type == "system" && l.Subtype == "compact_boundary" && fold != nil:
		t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceBoundary, Line: n, At: at, Fold: fold})
	case l.Type == "assistant" && req != nil && req.Purpose == PurposeConversation && l.Message != nil:
		i, ok := t.requests[req]
		if !ok {
			i = len(t.tr.Events)
			t.requests[req] = i
			t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceRequest, Line: n, At: at, Request: req})
		}
		var blocks []traceBlock
		if json.Unmarshal(l.Message.Content, &blocks) == nil {
			for _, bl := range blocks {
				t.tr.Events[i].Bytes += len(bl.Text) + len(bl.Thinking) + len(bl.Input) + len(bl.Name)
				if bl.Type == "tool_use" && fileTool(bl.Name) {
					t.toolUses[bl.ID] = traceToolUse{bl.Name, bl.Input}
				}
			}
		}
	case l.Type == "user" && l.Message != nil:
		ev := TraceEvent{Kind: TraceUser, Line: n, At: at, Meta: l.IsMeta}
		text, blocks := traceText(l.Message.Content)
		ev.Bytes = len(text)
		if l.IsCompactSummary {
			ev.Kind = TraceSummary
			t.tr.Events = append(t.tr.Events, ev)
			return
		}
		if l.IsMeta {
			if rest, ok := strings.CutPrefix(text, "Base directory for this skill:"); ok {
				name, _, _ := strings.Cut(rest, "\n")
				ev.Skill = strings.TrimSpace(name)
			}
		}
		results := 0
		reads := 0
		for _, bl := range blocks {
			if bl.Type != "tool_result" {
				continue
			}
			results++
			tu, ok := t.toolUses[bl.ToolUseID]
			if !ok {
				continue
			}
			if tu.name == "Read" {
				reads++
			}
			t.fileOp(&ev, tu, l.ToolUseResult)
		}
		ev.Results, ev.Reads = results, reads
		t.tr.Events = append(t.tr.Events, ev)
	}
}

// traceText is a message content's text (a string, or the text of its
// blocks and tool results) and its blocks.
func traceText(raw json.RawMessage) (string, []traceBlock) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []traceBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", nil
	}
	var sb strings.Builder
	for _, b := range blocks {
		sb.WriteString(b.Text)
		if b.Type == "tool_result" {
			t, _ := traceText(b.Content)
			sb.WriteString(t)
		}
	}
	return sb.String(), blocks
}

// fileOp turns a file tool's result into a FileOp on ev.
func (t *tracer) fileOp(ev *TraceEvent, tu traceToolUse, res json.RawMessage) {
	var in struct {
		FilePath   string `json:"file_path"`
		Content    string `json:"content"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
		Plan       string `json:"plan"`
		Edits      []struct {
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		} `json:"edits"`
	}
	if json.Unmarshal(tu.input, &in) != nil {
		return
	}
	if tu.name == "ExitPlanMode" {
		ev.Plan = len(in.Plan)
		return
	}
	var r struct {
		File *struct {
			Content    string `json:"content"`
			StartLine  int    `json:"startLine"`
			NumLines   int    `json:"numLines"`
			TotalLines int    `json:"totalLines"`
		} `json:"file"`
		Content      *string `json:"content"`
		OriginalFile *string `json:"originalFile"`
	}
	if in.FilePath == "" || len(res) == 0 || res[0] != '{' || json.Unmarshal(res, &r) != nil {
		return // an error result (a string): no state change
	}
	op := FileOp{Tool: tu.name, Path: in.FilePath}
	switch tu.name {
	case "Read":
		if r.File == nil {
			return
		}
		op.Content, op.HasContent = r.File.Content, true
		op.StartLine, op.NumLines, op.TotalLines = r.File.StartLine, r.File.NumLines, r.File.TotalLines
		ev.ReadBytes += len(r.File.Content)
		ev.ReadLines += r.File.NumLines
	case "Write":
		op.Content, op.HasContent = in.Content, true
		if r.Content != nil {
			op.Content = *r.Content
		}
	case "Edit", "MultiEdit":
		if r.OriginalFile != nil {
			op.Content, op.HasContent = *r.OriginalFile, *r.OriginalFile != ""
		}
		if tu.name == "Edit" {
			op.Edits = []Edit{{in.OldString, in.NewString, in.ReplaceAll}}
		}
		for _, e := range in.Edits {
			op.Edits = append(op.Edits, Edit{e.OldString, e.NewString, e.ReplaceAll})
		}
	}
	ev.Files = append(ev.Files, op)
}
