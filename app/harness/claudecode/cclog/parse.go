package cclog

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
)

var (
	keyUsage         = []byte(`"usage"`)
	keyCompact       = []byte(`compact_boundary`)
	keyCompactSumary = []byte(`isCompactSummary`)
	keyUserContent   = []byte(`"role":"user","content":`)
	keyIsMeta        = []byte(`"isMeta":true`)
	keyIsSummary     = []byte(`"isCompactSummary":true`)
	keyHook          = []byte(`hook`)
)

// The first bytes of a user message's content that say what it is.
var (
	prefixToolUseID     = []byte(`[{"tool_use_id"`)
	prefixToolResult    = []byte(`[{"type":"tool_result"`)
	prefixNotification  = []byte(`"<task-notification>`)
	prefixInterrupt     = []byte(`"[Request interrupted`)
	prefixInterruptText = []byte(`[{"type":"text","text":"[Request interrupted`)
	prefixCommand       = []byte(`"<command-`)
	prefixLocalCommand  = []byte(`"<local-command-`)
	prefixCaveat        = []byte(`"Caveat:`)
	// A person's answer to the model's question (AskUserQuestion) or plan
	// (ExitPlanMode) is a tool result Claude Code words so.
	markAnswered = []byte(`"content":"User has answered your questions`)
	markApproved = []byte(`"content":"User has approved your plan`)
)

// answerWindow is how far into a tool result's first block its content's
// start is looked for: past the tool_use_id and type, never into the text.
const answerWindow = 120

// userKind classifies a user line by its flags and the first bytes of its
// content; it never scans a tool result. 0: not a user message it knows.
func userKind(b []byte) uint16 {
	i := bytes.Index(b, keyUserContent)
	if i < 0 {
		return 0
	}
	c := b[i+len(keyUserContent):]
	switch {
	case bytes.HasPrefix(c, prefixToolUseID), bytes.HasPrefix(c, prefixToolResult):
		if w := c[:min(len(c), answerWindow)]; bytes.Contains(w, markAnswered) || bytes.Contains(w, markApproved) {
			return importer.StartAnswer
		}
		return importer.StartToolResult
	case bytes.HasPrefix(c, prefixNotification):
		return importer.StartNotification
	case bytes.HasPrefix(c, prefixInterrupt), bytes.HasPrefix(c, prefixInterruptText):
		return importer.StartInterrupt
	}
	switch {
	case bytes.Contains(b, keyIsSummary):
		return importer.StartCompaction
	case bytes.Contains(b, keyIsMeta):
		if bytes.Contains(b, keyHook) {
			return importer.StartHook
		}
		return importer.StartMeta
	case bytes.HasPrefix(c, prefixCommand), bytes.HasPrefix(c, prefixLocalCommand), bytes.HasPrefix(c, prefixCaveat):
		return importer.StartMeta
	}
	return importer.StartPrompt
}

type claudeState struct {
	Lines    int    `json:"lines"`
	Session  string `json:"session,omitempty"`
	Title    string `json:"title,omitempty"`
	Model    string `json:"model,omitempty"`
	Position int    `json:"position,omitempty"`
	// LastKey is the last message of the previous pass: its snapshots may
	// continue in this one and must not count as a new request.
	LastKey string `json:"lastKey,omitempty"`
	// FoldOpen says the last fold still waits for its compact summary line.
	FoldOpen bool `json:"foldOpen,omitempty"`
	// Started holds the kinds of input (start… bits) seen since the
	// thread's last request; Requests counts the file's requests.
	Started  uint16 `json:"started,omitempty"`
	Requests int    `json:"requests,omitempty"`
}

type claudeParser struct {
	st      claudeState
	role    string
	path    string
	records []importer.Record
	index   map[string]int // message key → record index, this pass
	// folds of this pass waiting for the first main request after them
	waiting  []int
	lastFold int // record index of the last fold, -1 if none this pass
	lastKey  string
	// live (Options.Live) measures the main thread's content after its last
	// request in pending.
	live    bool
	pending int64
	thread  string // the file's thread: "" for a main transcript
	// trace (Options.Trace) builds the main thread's structure for a fold
	// predictor; lineReq and lineFold are what the current line made.
	trace    *tracer
	lineReq  *importer.Request
	lineFold *importer.Fold
	// lineType and lineTyped are the line's topType when parseLine read
	// it (lineTypeRead), so the tracer does not read it again.
	lineType                []byte
	lineTyped, lineTypeRead bool
}

func (p *claudeParser) PendingBytes() int64 { return p.pending }

func newClaudeParser(opts importer.Options) (*claudeParser, error) {
	p := &claudeParser{role: Role(opts.Path), path: opts.Path, index: map[string]int{}, lastFold: -1, live: opts.Live}
	if opts.Trace && p.role == importer.PurposeConversation {
		p.trace = newTracer()
	}
	if len(opts.State) > 0 {
		if err := json.Unmarshal(opts.State, &p.st); err != nil {
			return nil, err
		}
	}
	if p.st.Session == "" {
		p.st.Session = sessionFromPath(opts.Path, p.role)
	}
	p.lastKey = p.st.LastKey
	if p.role != importer.PurposeConversation {
		p.thread = strings.TrimSuffix(filepath.Base(opts.Path), ".jsonl")
	}
	return p, nil
}

// claudeSessionFromPath finds the session uuid in the path, if any.
func sessionFromPath(path, role string) string {
	if role == importer.PurposeConversation {
		stem := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		if importer.IsUUID(stem) {
			return stem
		}
		return ""
	}
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "subagents" {
		if s := filepath.Base(filepath.Dir(dir)); importer.IsUUID(s) {
			return s
		}
	}
	return ""
}

// ccLine is what one line says, decoded in place.
type ccLine struct {
	typ, subtype, timestamp, sessionID, requestID, uuid, cwd string
	msgID, model                                             string
	sidechain, compactSummary, hasUsage                      bool
	usage                                                    pricing.Usage
	trigger                                                  string
	preTokens                                                int64
	summaryChars                                             int
	contentBytes                                             int64 // raw size of message.content (live only)
	hasContent                                               bool
}

func (p *claudeParser) Line(b []byte, n int) error {
	p.lineReq, p.lineFold, p.lineTypeRead = nil, nil, false
	err := p.parseLine(b, n)
	if err == nil && p.trace != nil {
		// The trace reads every line, the ones the parser skips unread too;
		// it never fails a pass.
		if !p.lineTypeRead {
			p.lineType, p.lineTyped = topType(b)
		}
		p.trace.line(b, n, p.lineType, p.lineTyped, p.lineReq, p.lineFold)
		if testTraceLine != nil {
			testTraceLine(b, n, p.lineType, p.lineTyped, p.lineReq, p.lineFold)
		}
	}
	return err
}

func (p *claudeParser) parseLine(b []byte, n int) error {
	needMeta := p.st.Session == "" || (p.role == importer.PurposeConversation && p.st.Title == "")
	hasUsage := true
	noted := false
	if !needMeta && !p.live { // a live read measures every line's content
		// Most lines say their type among the short fields they start
		// with (user, progress, file-history-snapshot): those are skipped
		// without looking further. An assistant line names its type only
		// after its message, so the search below decides for it.
		typ, ok := topType(b)
		p.lineType, p.lineTyped, p.lineTypeRead = typ, ok, true
		switch {
		case !ok:
			hasUsage = containsNearEnd(b, keyUsage)
			if !hasUsage && !bytes.Contains(b, keyCompact) && !(p.st.FoldOpen && bytes.Contains(b, keyCompactSumary)) &&
				!bytes.Contains(b, keyUserContent) {
				return nil
			}
		case string(typ) == "assistant":
		case string(typ) == "system":
			if !bytes.Contains(b, keyCompact) {
				return nil
			}
		case string(typ) == "user":
			p.noteUser(b)
			noted = true
			if !p.st.FoldOpen || !bytes.Contains(b, keyCompactSumary) {
				return nil
			}
		default:
			return nil
		}
	}
	var l ccLine
	s := jsonl.Scanner{B: b}
	s.Object(func(k []byte) {
		switch string(k) {
		case "type":
			l.typ = s.Str()
		case "subtype":
			l.subtype = s.Str()
		case "timestamp":
			l.timestamp = s.Str()
		case "sessionId":
			l.sessionID = s.Str()
		case "requestId":
			l.requestID = s.Str()
		case "uuid":
			l.uuid = s.Str()
		case "cwd":
			if needMeta {
				l.cwd = s.Str()
			} else {
				s.Skip()
			}
		case "isSidechain":
			l.sidechain = s.Boolean()
		case "isCompactSummary":
			l.compactSummary = s.Boolean()
		case "message":
			if s.Peek() != '{' {
				s.Skip()
				return
			}
			p.message(&s, &l, hasUsage)
		case "compactMetadata":
			if s.IsNull() {
				return
			}
			s.Object(func(k []byte) {
				switch string(k) {
				case "trigger":
					l.trigger = s.Str()
				case "preTokens":
					l.preTokens = s.Count()
				default:
					s.Skip()
				}
			})
		default:
			s.Skip()
		}
	})
	s.End()
	if s.Err != nil {
		return s.Err
	}
	if p.st.Session == "" && l.sessionID != "" {
		p.st.Session = l.sessionID
	}
	if p.role == importer.PurposeConversation && p.st.Title == "" && l.cwd != "" {
		p.st.Title = filepath.Base(filepath.FromSlash(strings.ReplaceAll(l.cwd, `\`, "/")))
	}
	if p.live && p.role == importer.PurposeConversation && !l.sidechain {
		p.measure(&l)
	}
	// A subagent's own file flags every line isSidechain; in a main
	// transcript the flag marks an old-style inline subagent's lines.
	inline := l.sidechain && p.role == importer.PurposeConversation
	if l.typ == "user" && !noted && !inline {
		p.noteUser(b)
	}
	var err error
	switch {
	case l.typ == "assistant" && l.hasUsage:
		err = p.assistant(&l, n)
	case l.typ == "system" && l.subtype == "compact_boundary":
		err = p.boundary(&l, n)
	case l.typ == "user" && l.compactSummary && p.st.FoldOpen:
		p.st.FoldOpen = false
		if p.lastFold >= 0 && l.summaryChars > 0 {
			f := p.records[p.lastFold].Fold
			f.CheckpointTokens = int64((l.summaryChars + 3) / 4)
			f.CheckpointEstimated = true
		}
	}
	return err
}

// noteUser adds a user line's kind to what started the thread's next
// request.
func (p *claudeParser) noteUser(b []byte) { p.st.Started |= userKind(b) }

// startedBy names what started the thread's new request and starts
// collecting for the next one.
func (p *claudeParser) startedBy() string {
	first := p.st.Requests == 0
	p.st.Requests++
	k := p.st.Started
	p.st.Started = 0
	switch {
	case first && p.role != importer.PurposeConversation:
		return importer.StartedByThreadStart
	case k == 0:
		return ""
	}
	return importer.StartedByName(k)
}

// measure keeps the size of the main thread's content since its last
// request: a boundary or a billed request starts it again, and any other
// user or assistant message adds its content.
func (p *claudeParser) measure(l *ccLine) {
	switch {
	case l.typ == "system" && l.subtype == "compact_boundary":
		p.pending = 0
	case l.typ == "assistant" && l.hasUsage:
		if l.model != "<synthetic>" {
			p.pending = 0
		}
	case (l.typ == "user" || l.typ == "assistant") && l.hasContent:
		p.pending += l.contentBytes
	}
}

// FoldKey is what a compact_boundary line holds.
const FoldKey = `"compact_boundary"`

// HasFoldKey says b holds FoldKey (bytes.Contains), searched from the
// key's rare tail: bytes.Index looks for a key's first byte, and a quote
// is every tenth byte of a transcript (a quarter of ccfold.HasFold's time
// went to those false starts; from "_boundary" it reads at memory speed).
func HasFoldKey(b []byte) bool {
	const head = len(`"compact`)
	for from := head; from <= len(b); {
		i := bytes.Index(b[from:], foldKeyTail)
		if i < 0 {
			return false
		}
		at := from + i
		if string(b[at-head:at]) == FoldKey[:head] {
			return true
		}
		from = at + 1
	}
	return false
}

var foldKeyTail = []byte(FoldKey[len(`"compact`):])

// containsNearEnd is bytes.Contains(b, key), looking at b's last kilobyte
// first: an assistant line's usage comes after its content, near the
// line's end, and the search from the start read the whole content.
func containsNearEnd(b, key []byte) bool {
	const tail = 1 << 10
	if len(b) <= tail {
		return bytes.Contains(b, key)
	}
	return bytes.Contains(b[len(b)-tail:], key) || bytes.Contains(b[:len(b)-tail+len(key)-1], key)
}

// topType reads the top-level "type" of a line when it comes before any
// nested value, within the first few fields; ok is false otherwise.
func topType(b []byte) (typ []byte, ok bool) {
	s := jsonl.Scanner{B: b}
	if !s.Expect('{') {
		return nil, false
	}
	for n := 0; n < 16; n++ {
		key, _ := s.StringBytes()
		if !s.Expect(':') {
			return nil, false
		}
		switch s.Peek() {
		case '"':
			if string(key) != "type" {
				// Only the type's value is looked at: the others are
				// passed without the search for an escape (topType reads
				// the first fields of every line).
				s.StringBytes()
				break
			}
			v, esc := s.StringRaw()
			if s.Err == nil && !esc {
				return v, true
			}
		case '{', '[', 0:
			return nil, false
		default:
			s.Skip()
		}
		if s.Err != nil || s.Peek() != ',' {
			return nil, false
		}
		s.I++
	}
	return nil, false
}

// message decodes the fields of message the parser needs.
func (p *claudeParser) message(s *jsonl.Scanner, l *ccLine, hasUsage bool) {
	s.Object(func(k []byte) {
		switch string(k) {
		case "id":
			l.msgID = s.Str()
		case "model":
			l.model = s.Str()
		case "usage":
			if s.IsNull() {
				return
			}
			l.hasUsage = true
			l.usage = claudeUsage(s)
		case "content":
			start := s.I
			if p.st.FoldOpen {
				l.summaryChars = contentChars(s)
			} else {
				s.Skip()
			}
			l.contentBytes, l.hasContent = int64(s.I-start), true
		default:
			s.Skip()
		}
	})
}

// contentChars measures the text of a message's content: a string, or an
// array of blocks with "text".
func contentChars(s *jsonl.Scanner) int {
	switch s.Peek() {
	case '"':
		return s.StrLen()
	case '[':
	default:
		s.Skip()
		return 0
	}
	n := 0
	s.Elems("content", func() {
		if s.Peek() != '{' {
			s.Skip()
			return
		}
		s.Object(func(k []byte) {
			if string(k) == "text" && s.Peek() == '"' {
				n += s.StrLen()
			} else {
				s.Skip()
			}
		})
	})
	return n
}

// claudeUsage normalises an Anthropic usage object to disjoint counts.
func claudeUsage(s *jsonl.Scanner) pricing.Usage {
	var u pricing.Usage
	var creation, w5, w1 int64
	split := false
	s.Object(func(k []byte) {
		switch string(k) {
		case "input_tokens":
			u.Input = s.Count()
		case "cache_read_input_tokens":
			u.CacheRead = s.Count()
		case "cache_creation_input_tokens":
			creation = s.Count()
		case "output_tokens":
			u.Output = s.Count()
		case "cache_creation":
			if s.IsNull() {
				return
			}
			s.Object(func(k []byte) {
				switch string(k) {
				case "ephemeral_5m_input_tokens":
					w5 = s.Count()
					split = true
				case "ephemeral_1h_input_tokens":
					w1 = s.Count()
					split = true
				default:
					s.Skip()
				}
			})
		default:
			s.Skip()
		}
	})
	if split {
		u.CacheWrite, u.CacheWrite1h = w5, w1
		if rest := creation - w5 - w1; rest > 0 {
			u.CacheWrite += rest // untyped remainder: 5-minute
		}
	} else {
		u.CacheWrite = creation
	}
	return u
}

func (p *claudeParser) at(l *ccLine) (time.Time, error) {
	return importer.ParseTime(l.timestamp)
}

func (p *claudeParser) assistant(l *ccLine, n int) error {
	if l.model == "<synthetic>" {
		return nil
	}
	key := l.msgID
	if key == "" {
		key = "uuid:" + l.uuid
	}
	if l.requestID != "" {
		key += ":" + l.requestID
	}
	if i, ok := p.index[key]; ok {
		r := p.records[i].Request
		r.Usage = r.Usage.Max(l.usage)
		if l.uuid != "" {
			r.UUID = l.uuid
		}
		p.lineReq = r
		return nil
	}
	at, err := p.at(l)
	if err != nil {
		return err
	}
	purpose := p.role
	if purpose == importer.PurposeConversation && l.sidechain {
		purpose = importer.PurposeSubagent
	}
	r := &importer.Request{ID: key, At: at, Purpose: purpose, Provider: "anthropic", Model: l.model, Usage: l.usage, Line: n, Thread: p.thread, UUID: l.uuid}
	p.lineReq = r
	p.index[key] = len(p.records)
	p.records = append(p.records, importer.Record{Request: r})
	continued := key == p.lastKey
	p.lastKey = key
	switch {
	case l.sidechain && p.role == importer.PurposeConversation:
		r.Thread = "sidechain" // an old transcript's inline subagent
	case !continued:
		r.StartedBy = p.startedBy()
	}
	if purpose != importer.PurposeConversation || continued {
		return nil
	}
	if p.st.Model == "" {
		p.st.Model = l.model
	}
	p.st.Position++
	for _, fi := range p.waiting {
		f := p.records[fi].Fold
		f.ActualRequest = key
	}
	p.waiting = p.waiting[:0]
	return nil
}

func (p *claudeParser) boundary(l *ccLine, n int) error {
	at, err := p.at(l)
	if err != nil {
		return err
	}
	trigger := l.trigger
	if trigger != importer.TriggerManual {
		trigger = importer.TriggerAuto
	}
	id := l.uuid
	if id == "" {
		id = "line:" + strconv.Itoa(n)
	}
	f := &importer.Fold{ID: importer.FoldID(p.st.Session, id), At: at, Kind: importer.KindSummary, Trigger: trigger, PreTokens: l.preTokens, Position: p.st.Position, Line: n}
	p.lastFold = len(p.records)
	p.records = append(p.records, importer.Record{Fold: f})
	p.lineFold = f
	if p.role == importer.PurposeConversation && !l.sidechain {
		p.waiting = append(p.waiting, p.lastFold)
		p.st.Started |= importer.StartCompaction
	}
	p.st.FoldOpen = true
	return nil
}

func (p *claudeParser) Finish() (importer.Session, []importer.Record) {
	// Actual cold tokens from the final figures of each fold's next request.
	for _, rec := range p.records {
		if f := rec.Fold; f != nil && f.ActualRequest != "" {
			if i, ok := p.index[f.ActualRequest]; ok {
				f.SetActual(p.records[i].Request)
			}
		}
	}
	s := importer.Session{ID: importer.SessionID(Name, p.st.Session), Harness: Name, Provider: "anthropic"}
	if p.st.Session == "" {
		s.ID = ""
	}
	if p.role == importer.PurposeConversation {
		s.Title = p.st.Title
		s.Model = p.st.Model
		if p.st.Model != "" {
			// The transcript does not say what Claude Code's settings make
			// of the model's window: the defaults, marked as such.
			s.ContextWindow, s.ThresholdTokens = AutoCompact(p.st.Model, nil)
			s.LimitsAssumed = true
		}
	}
	return s, p.records
}

// Window is the context window of a Claude model as Claude Code runs
// it: 200k, or 1M for the "[1m]" variants (0 for no model).
func Window(model string) int64 {
	if model == "" {
		return 0
	}
	if strings.HasSuffix(model, "[1m]") {
		return 1_000_000
	}
	return 200_000
}

// AutoCompact is Claude Code's auto-compact rule (its
// services/compact/autoCompact.ts): the model's window, at most
// CLAUDE_CODE_AUTO_COMPACT_WINDOW; the effective window is that less the
// summary's output reserve (20k); the threshold is the effective window
// less a 13k buffer, or CLAUDE_AUTOCOMPACT_PCT_OVERRIDE percent of the
// effective window when that is lower (never higher). getenv may be nil:
// an import sees no environment. 200k → 167,000.
func AutoCompact(model string, getenv func(string) string) (window, threshold int64) {
	window = Window(model)
	if window == 0 {
		window = 200_000
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(getenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW")), 10, 64); err == nil && v > 0 {
		window = min(window, v)
	}
	const outputReserve, buffer = 20_000, 13_000
	effective := window - outputReserve
	threshold = effective - buffer
	if pct, err := strconv.ParseFloat(strings.TrimSpace(getenv("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")), 64); err == nil && pct > 0 && pct <= 100 {
		threshold = min(int64(math.Floor(float64(effective)*pct/100)), threshold)
	}
	return window, max(threshold, 0)
}

func (p *claudeParser) State(lines int) (json.RawMessage, error) {
	p.st.Lines = lines
	p.st.LastKey = p.lastKey
	return json.Marshal(p.st)
}
