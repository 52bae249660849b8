package importer

import (
	"encoding/json"
	"strings"
	"time"

	"tollgate/app/importer/cctool"
	"tollgate/app/importer/jsonl"
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
		} else if i := strings.Index(text, e.Old); i >= 0 {
			// strings.Replace(text, old, new, 1), without the count of
			// every match it makes first (a whole file's scan per edit).
			text = text[:i] + e.New + text[i+len(e.Old):]
		}
	}
	return text
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

// line adds one line; req and fold are what the parser made of it. It
// walks the line with the importer's scanner, measuring text without
// copying it; only a file tool's result is decoded (encoding/json), as the
// predictor needs the file's text.
//
// top and typed are the line's topType (the parser read it already).
func (t *tracer) line(b []byte, n int, top []byte, typed bool, req *Request, fold *Fold) {
	// Progress lines, file snapshots and queue operations (a third of a
	// transcript's bytes) say nothing the predictor needs.
	if typed {
		switch string(top) {
		case "user", "assistant":
		case "system":
			if fold == nil {
				return
			}
		default:
			return
		}
	}
	var (
		typ, subtype, timestamp, cwd, version string
		sidechain, meta, compactSummary       bool
		content, result                       []byte // raw message.content and toolUseResult
	)
	s := jsonl.Scanner{B: b}
	raw := func() []byte {
		s.Ws()
		start := s.I
		s.Skip()
		return b[start:s.I]
	}
	s.Object(func(k []byte) {
		switch string(k) {
		case "type":
			typ = s.Str()
		case "subtype":
			subtype = s.Str()
		case "timestamp":
			timestamp = s.Str()
		case "cwd":
			cwd = s.Str()
		case "version":
			version = s.Str()
		case "isSidechain":
			sidechain = s.Boolean()
		case "isMeta":
			meta = s.Boolean()
		case "isCompactSummary":
			compactSummary = s.Boolean()
		case "message":
			if s.Peek() != '{' {
				s.Skip()
				return
			}
			s.Object(func(k []byte) {
				if string(k) == "content" {
					content = raw()
				} else {
					s.Skip()
				}
			})
		case "toolUseResult":
			result = raw()
		default:
			s.Skip()
		}
	})
	s.End()
	if s.Err != nil || sidechain {
		return
	}
	if cwd != "" {
		t.tr.Cwd = cwd
	}
	if version != "" {
		t.tr.Version = version
	}
	at, _ := parseTime(timestamp)
	switch {
	case typ == "system" && subtype == "compact_boundary" && fold != nil:
		t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceBoundary, Line: n, At: at, Fold: fold})
	case typ == "assistant" && req != nil && req.Purpose == PurposeConversation && content != nil:
		i, ok := t.requests[req]
		if !ok {
			i = len(t.tr.Events)
			t.requests[req] = i
			t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceRequest, Line: n, At: at, Request: req})
		}
		t.tr.Events[i].Bytes += t.assistantBlocks(content)
	case typ == "user" && content != nil:
		ev := TraceEvent{Kind: TraceUser, Line: n, At: at, Meta: meta}
		var uses []string
		var text string
		ev.Bytes, text, uses = userContent(content, meta)
		if compactSummary {
			ev.Kind = TraceSummary
			t.tr.Events = append(t.tr.Events, ev)
			return
		}
		if meta {
			if rest, ok := strings.CutPrefix(text, "Base directory for this skill:"); ok {
				name, _, _ := strings.Cut(rest, "\n")
				ev.Skill = strings.TrimSpace(name)
			}
		}
		ev.Results = len(uses)
		for _, id := range uses {
			tu, ok := t.toolUses[id]
			if !ok {
				continue
			}
			if tu.name == "Read" {
				ev.Reads++
			}
			t.fileOp(&ev, tu, result)
		}
		t.tr.Events = append(t.tr.Events, ev)
	}
}

// assistantBlocks measures an assistant message's content (text, thinking,
// tool names and inputs) and remembers its file tools' inputs.
func (t *tracer) assistantBlocks(content []byte) int {
	s := jsonl.Scanner{B: content}
	if s.Peek() != '[' {
		return 0
	}
	n := 0
	eachElem(&s, func() {
		var typ, id, name string
		var input []byte
		s.Object(func(k []byte) {
			switch string(k) {
			case "type":
				typ = s.Str()
			case "id":
				id = s.Str()
			case "name":
				name = s.Str()
			case "text", "thinking":
				if s.Peek() == '"' {
					n += s.StrLen()
				} else {
					s.Skip()
				}
			case "input":
				s.Ws()
				start := s.I
				s.Skip()
				input = content[start:s.I]
			default:
				s.Skip()
			}
		})
		n += len(input) + len(name)
		if typ == "tool_use" && fileTool(name) && s.Err == nil {
			t.toolUses[id] = traceToolUse{name, append(json.RawMessage(nil), input...)}
		}
	})
	if s.Err != nil {
		return 0
	}
	return n
}

// userContent measures a user message's text (a string, or its text blocks
// and tool results' text) and lists its tool results' ids; a meta
// message's text is returned too (for the skill it names).
func userContent(content []byte, meta bool) (n int, text string, uses []string) {
	s := jsonl.Scanner{B: content}
	var sb strings.Builder
	str := func() {
		if meta {
			v := s.Str()
			sb.WriteString(v)
			n += len(v)
		} else {
			n += s.StrLen()
		}
	}
	switch s.Peek() {
	case '"':
		str()
	case '[':
		eachElem(&s, func() {
			var typ, id string
			s.Object(func(k []byte) {
				switch string(k) {
				case "type":
					typ = s.Str()
				case "tool_use_id":
					id = s.Str()
				case "text":
					if s.Peek() == '"' {
						str()
					} else {
						s.Skip()
					}
				case "content":
					switch s.Peek() {
					case '"':
						str()
					case '[':
						eachElem(&s, func() {
							s.Object(func(k []byte) {
								if string(k) == "text" && s.Peek() == '"' {
									str()
								} else {
									s.Skip()
								}
							})
						})
					default:
						s.Skip()
					}
				default:
					s.Skip()
				}
			})
			if typ == "tool_result" {
				uses = append(uses, id)
			}
		})
	default:
		return 0, "", nil
	}
	if s.Err != nil {
		return 0, "", nil
	}
	return n, sb.String(), uses
}

// eachElem walks an array, calling elem for every element that is an
// object (others are skipped).
func eachElem(s *jsonl.Scanner, elem func()) {
	if !s.Expect('[') {
		return
	}
	if s.Peek() == ']' {
		s.I++
		return
	}
	for s.Err == nil {
		if s.Peek() == '{' {
			elem()
		} else {
			s.Skip()
		}
		switch s.Peek() {
		case ',':
			s.I++
		case ']':
			s.I++
			return
		default:
			s.Fail("want ',' or ']' in an array")
		}
	}
}

// fileOp turns a file tool's result into a FileOp on ev. The input and
// the result are decoded by app/importer/cctool, which reads only the
// fields the predictor needs (encoding/json here was three fifths of an
// import's tracing time, issue 17's profile); fileOpReference in the tests
// is that decoder, and the two are held to the same ops.
func (t *tracer) fileOp(ev *TraceEvent, tu traceToolUse, res json.RawMessage) {
	in, ok := cctool.DecodeInput(tu.input)
	if !ok {
		return
	}
	if tu.name == "ExitPlanMode" {
		ev.Plan = in.PlanLen
		return
	}
	if in.FilePath == "" || len(res) == 0 || res[0] != '{' {
		return // an error result (a string): no state change
	}
	r, ok := cctool.DecodeResult(res)
	if !ok {
		return
	}
	op := FileOp{Tool: tu.name, Path: in.FilePath}
	switch tu.name {
	case "Read":
		if !r.HasFile {
			return
		}
		op.Content, op.HasContent = r.FileContent, true
		op.StartLine, op.NumLines, op.TotalLines = r.StartLine, r.NumLines, r.TotalLines
		ev.ReadBytes += len(r.FileContent)
		ev.ReadLines += r.NumLines
	case "Write":
		op.Content, op.HasContent = in.Content, true
		if r.HasContent {
			op.Content = r.Content
		}
	case "Edit", "MultiEdit":
		if r.HasOriginal {
			op.Content, op.HasContent = r.OriginalFile, r.OriginalFile != ""
		}
		if tu.name == "Edit" {
			op.Edits = []Edit{{in.OldString, in.NewString, in.ReplaceAll}}
		}
		for _, e := range in.Edits {
			op.Edits = append(op.Edits, Edit{e.Old, e.New, e.ReplaceAll})
		}
	}
	ev.Files = append(ev.Files, op)
}
