package cclog

import (
	"strings"
	"time"
	"unsafe"

	"tollgate/app/harness/claudecode/cctool"
	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
)

// A Claude Code trace (Options.Trace) is the structure of a main transcript
// that a fold predictor replays: what each request cost, what each message
// added, and which files the session read and wrote, with their text. It is
// built only when asked — the plain import skips these lines unread — and
// lives in memory only: nothing of it is stored (ARCHITECTURE.md,
// "Invariants": never prompt text).

// Trace is one pass's main-thread structure, in line order.
type Trace struct {
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
	Request *importer.Request
	// Fold is the boundary's fold (TraceBoundary).
	Fold *importer.Fold
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
	// edits), decoded when it is used (Text). HasContent says it was there.
	Content    Text
	HasContent bool
	// StartLine, NumLines and TotalLines describe a Read (a partial read
	// has StartLine > 1 or NumLines < TotalLines).
	StartLine, NumLines, TotalLines int
	Edits                           []Edit
}

// Text is a file's text as a transcript line held it: measured as it is
// read, decoded only when used (a predictor restores a few files, and
// applies edits only to those).
type Text = jsonl.Text

// TextOf is a decoded text as a Text.
func TextOf(s string) Text { return jsonl.TextOf(s) }

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

// traceToolUse is a file or plan tool's use, its input decoded once when
// the model asked (ok: it decoded).
type traceToolUse struct {
	name string
	in   cctool.Input
	ok   bool
}

func newToolUse(name string, input []byte) traceToolUse {
	in, ok := cctool.DecodeInput(input)
	return traceToolUse{name, in, ok}
}

// testTraceLine, set by tests only, sees every line the tracer sees
// (TestTraceMatchesReference feeds the reference tracer with it).
var testTraceLine func(b []byte, n int, top []byte, typed bool, req *importer.Request, fold *importer.Fold)

// tracer builds a Trace line by line.
type tracer struct {
	tr       Trace
	requests map[*importer.Request]int // request → its event
	toolUses map[string]traceToolUse   // file and plan tools only
	// texts are each file's text as a result last held it: the next
	// result's text (the file read again, or before its next edit) is
	// measured against it (cctool.ReadResult).
	texts map[string]Text
}

func newTracer() *tracer {
	return &tracer{requests: map[*importer.Request]int{}, toolUses: map[string]traceToolUse{}, texts: map[string]Text{}}
}

// fileToolBytes says the tool (named in the line) is one whose results
// change Claude Code's readFileState (or approve a plan).
func fileToolBytes(name []byte) bool {
	switch string(name) {
	case "Read", "Write", "Edit", "MultiEdit", "ExitPlanMode":
		return true
	}
	return false
}

// line adds one line; req and fold are what the parser made of it. It
// walks the line with the importer's scanner, measuring text without
// copying it; only a file tool's result is decoded (cctool), its file
// texts measured and kept escaped (Text) for the predictor to decode if
// it uses them.
//
// A line's message content and toolUseResult are read where they stand
// when the line has already said what they are (a user line names its
// type among its first fields; an assistant line is the parser's
// request): one walk, where finding each value's end and then walking it
// again would read the largest values of a transcript twice.
// Otherwise (fields in another order) their extent is kept and they are
// read after the walk. Either way the trace is the same: FuzzClaudeTrace
// and TestTraceMatchesReference hold it to refTracer, the two-walk reading.
//
// top and typed are the line's topType (the parser read it already).
func (t *tracer) line(b []byte, n int, top []byte, typed bool, req *importer.Request, fold *importer.Fold) {
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
		typ, subtype, timestamp, cwd, version []byte // in the line (or decoded)
		sidechain, meta, compactSummary       bool
		content                               []byte // the message content's extent (nil: none)
		user                                  userMeasure
		asst                                  assistantMeasure
		res                                   lineResult
	)
	asUser := typed && string(top) == "user"
	asAssistant := (!typed || string(top) == "assistant") && req != nil && req.Purpose == importer.PurposeConversation
	s := jsonl.Scanner{B: b}
	s.Object(func(k []byte) {
		switch string(k) {
		case "type":
			typ = s.StrBytes()
		case "subtype":
			subtype = s.StrBytes()
		case "timestamp":
			timestamp = s.StrBytes()
		case "cwd":
			cwd = s.StrBytes()
		case "version":
			version = s.StrBytes()
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
				if string(k) != "content" {
					s.Skip()
					return
				}
				s.Ws()
				start := s.I
				user.done, asst.done = false, false
				switch {
				case asUser:
					user = userInPlace(&s, meta)
				case asAssistant:
					asst = assistantInPlace(&s)
				default:
					s.Skip()
				}
				content = b[start:s.I]
			})
		case "toolUseResult":
			s.Ws()
			start := s.I
			res = lineResult{}
			if path, need := t.resultPath(user.uses); s.Peek() == '{' && user.done && need {
				sub := s
				r, ok := cctool.ReadResult(&sub, t.texts[path])
				if ok {
					s.I = sub.I
				} else {
					s.Skip() // as the value found whole would fail: passed over
				}
				res.r, res.ok, res.decoded = r, ok, true
			} else {
				s.Skip()
			}
			res.raw = b[start:s.I]
		default:
			s.Skip()
		}
	})
	s.End()
	if s.Err != nil || sidechain {
		return
	}
	if len(cwd) > 0 && string(cwd) != t.tr.Cwd {
		t.tr.Cwd = string(cwd)
	}
	if len(version) > 0 && string(version) != t.tr.Version {
		t.tr.Version = string(version)
	}
	switch {
	case string(typ) == "system" && string(subtype) == "compact_boundary" && fold != nil:
		t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceBoundary, Line: n, At: lineTime(timestamp), Fold: fold})
	case string(typ) == "assistant" && req != nil && req.Purpose == importer.PurposeConversation && content != nil:
		i, ok := t.requests[req]
		if !ok {
			i = len(t.tr.Events)
			t.requests[req] = i
			t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceRequest, Line: n, At: lineTime(timestamp), Request: req})
		}
		if !asst.done {
			cs := jsonl.Scanner{B: content}
			asst, _ = measureAssistant(&cs)
		}
		for _, u := range asst.uses {
			t.toolUses[u.id] = u.use
		}
		t.tr.Events[i].Bytes += asst.n
	case string(typ) == "user" && content != nil:
		ev := TraceEvent{Kind: TraceUser, Line: n, At: lineTime(timestamp), Meta: meta}
		if !user.done || user.meta != meta {
			user = userContent(content, meta)
		}
		ev.Bytes = user.n
		if compactSummary {
			ev.Kind = TraceSummary
			t.tr.Events = append(t.tr.Events, ev)
			return
		}
		if meta {
			if rest, ok := strings.CutPrefix(user.text, "Base directory for this skill:"); ok {
				name, _, _ := strings.Cut(rest, "\n")
				ev.Skill = strings.TrimSpace(name)
			}
		}
		ev.Results = len(user.uses)
		for _, id := range user.uses {
			tu, ok := t.toolUses[id]
			if !ok {
				continue
			}
			if tu.name == "Read" {
				ev.Reads++
			}
			t.fileOp(&ev, tu, &res)
		}
		t.tr.Events = append(t.tr.Events, ev)
	}
}

// lineTime is a line's timestamp (zero when absent or unreadable).
func lineTime(b []byte) time.Time {
	if len(b) == 0 {
		return time.Time{}
	}
	// time.Parse keeps nothing of its input: the line's bytes serve.
	at, _ := importer.ParseTime(unsafe.String(&b[0], len(b)))
	return at
}

// resultPath says a tool result of the line is a file tool's whose result
// the trace reads, and names the first such file.
func (t *tracer) resultPath(uses []string) (string, bool) {
	for _, id := range uses {
		if tu, ok := t.toolUses[id]; ok && tu.ok && tu.name != "ExitPlanMode" && tu.in.FilePath != "" {
			return tu.in.FilePath, true
		}
	}
	return "", false
}

// lineResult is a line's toolUseResult: its extent, and what it decodes
// to, decoded once when a file op first asks.
type lineResult struct {
	raw     []byte
	r       cctool.Result
	ok      bool
	decoded bool
}

func (l *lineResult) get() (cctool.Result, bool) {
	if !l.decoded {
		l.r, l.ok = cctool.DecodeResult(l.raw)
		l.decoded = true
	}
	return l.r, l.ok
}

// assistantMeasure is what an assistant message's content says: its size
// (text, thinking, tool names and inputs) and its file tools' uses, in
// order, registered when the line counts.
type assistantMeasure struct {
	n    int
	uses []pendingUse
	done bool // read in place
}

type pendingUse struct {
	id  string
	use traceToolUse
}

// assistantInPlace measures the content where s stands, then passes it.
func assistantInPlace(s *jsonl.Scanner) assistantMeasure {
	sub := *s
	m, walked := measureAssistant(&sub)
	if walked && sub.Err == nil {
		s.I = sub.I
	} else {
		s.Skip() // not an array (measured 0), or it does not read
	}
	m.done = true
	return m
}

// measureAssistant measures an assistant message's content: 0 when it is
// not an array of blocks (walked is false: nothing was read) or does not
// read (the uses of the blocks read before the error still count, as they
// always did).
func measureAssistant(s *jsonl.Scanner) (m assistantMeasure, walked bool) {
	if s.Peek() != '[' {
		return m, false
	}
	content := s.B
	eachElem(s, func() {
		var typ, id, name []byte
		var input []byte
		s.Object(func(k []byte) {
			switch string(k) {
			case "type":
				typ = s.StrBytes()
			case "id":
				id = s.StrBytes()
			case "name":
				name = s.StrBytes()
			case "text", "thinking":
				if s.Peek() == '"' {
					m.n += s.StrLen()
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
		m.n += len(input) + len(name)
		if string(typ) == "tool_use" && fileToolBytes(name) && s.Err == nil {
			m.uses = append(m.uses, pendingUse{string(id), newToolUse(string(name), input)})
		}
	})
	if s.Err != nil {
		m.n = 0
	}
	return m, true
}

// userMeasure is what a user message's content says: its text's size (a
// string, or its text blocks and tool results' text), its tool results'
// ids, and (meta) its text, for the skill it names.
type userMeasure struct {
	n    int
	text string
	uses []string
	meta bool // measured as a meta message's
	done bool // read in place
}

// userInPlace measures the content where s stands, then passes it.
func userInPlace(s *jsonl.Scanner, meta bool) userMeasure {
	sub := *s
	m, walked := measureUser(&sub, meta)
	if walked && sub.Err == nil {
		s.I = sub.I
	} else {
		m = userMeasure{meta: meta}
		s.Skip()
	}
	m.done = true
	return m
}

// userContent measures a user message's content found whole.
func userContent(content []byte, meta bool) userMeasure {
	s := jsonl.Scanner{B: content}
	m, walked := measureUser(&s, meta)
	if !walked || s.Err != nil {
		return userMeasure{meta: meta}
	}
	return m
}

// measureUser measures a user message's content where s stands; walked
// is false when it is neither a string nor an array.
func measureUser(s *jsonl.Scanner, meta bool) (m userMeasure, walked bool) {
	m.meta = meta
	var sb strings.Builder
	str := func() {
		if meta {
			v := s.Str()
			sb.WriteString(v)
			m.n += len(v)
		} else {
			m.n += s.StrLen()
		}
	}
	switch s.Peek() {
	case '"':
		str()
	case '[':
		eachElem(s, func() {
			var typ, id []byte
			s.Object(func(k []byte) {
				switch string(k) {
				case "type":
					typ = s.StrBytes()
				case "tool_use_id":
					id = s.StrBytes()
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
						eachElem(s, func() {
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
			if string(typ) == "tool_result" {
				m.uses = append(m.uses, string(id))
			}
		})
	default:
		return m, false
	}
	m.text = sb.String()
	return m, true
}

// eachElem walks an array, calling elem for every element that is an
// object (others are skipped).
func eachElem(s *jsonl.Scanner, elem func()) {
	s.Elems("an array", func() {
		if s.Peek() == '{' {
			elem()
		} else {
			s.Skip()
		}
	})
}

// fileOp turns a file tool's result into a FileOp on ev. The input and
// the result are decoded by cctool, which reads only the fields the
// predictor needs (encoding/json here would be three fifths of an import's
// tracing time); fileOpReference in the tests is that decoder, and the
// two are held to the same ops.
func (t *tracer) fileOp(ev *TraceEvent, tu traceToolUse, res *lineResult) {
	if !tu.ok {
		return
	}
	in := tu.in
	if tu.name == "ExitPlanMode" {
		ev.Plan = in.PlanLen
		return
	}
	if in.FilePath == "" || len(res.raw) == 0 || res.raw[0] != '{' {
		return // an error result (a string): no state change
	}
	r, ok := res.get()
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
		ev.ReadBytes += r.FileContent.Len()
		ev.ReadLines += r.NumLines
	case "Write":
		op.Content, op.HasContent = in.Content, true
		if r.HasContent {
			op.Content = r.Content
		}
	case "Edit", "MultiEdit":
		if r.HasOriginal {
			op.Content, op.HasContent = r.OriginalFile, r.OriginalFile.Len() != 0
		}
		if tu.name == "Edit" {
			op.Edits = []Edit{{in.OldString, in.NewString, in.ReplaceAll}}
		}
		for _, e := range in.Edits {
			op.Edits = append(op.Edits, Edit{e.Old, e.New, e.ReplaceAll})
		}
	}
	if op.HasContent && t.texts != nil {
		t.texts[op.Path] = op.Content
	}
	ev.Files = append(ev.Files, op)
}
