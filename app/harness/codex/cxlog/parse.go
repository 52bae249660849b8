// Package cxlog reads Codex rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): one
// {"timestamp","type","payload"} object per line.
//
//   - session_meta gives the session id ("codex:" + payload.id), the
//     provider (payload.model_provider) and the working folder (the title);
//     turn_context gives the model of the requests that follow.
//   - event_msg token_count carries info.last_token_usage, the figures of
//     one request, whose input_tokens INCLUDE cached_input_tokens (OpenAI's
//     convention): input = input_tokens − cached_input_tokens. Codex repeats
//     a token_count without a new request; a repeat has the same
//     info.total_token_usage and is dropped. The request id is the
//     cumulative total_tokens, which only grows.
//   - compacted (a rollout item) and event_msg context_compacted mark a
//     fold; the two lines of one compaction are one fold. A local
//     compaction (compacted.message holds the summary) is a model call of
//     its own: the token_count just before it is that summary call (purpose
//     compaction). A remote one (replacement_history) shows no call.
//   - The fold's preTokens is the context of the last conversation request
//     before it (input + output), its checkpoint is estimated from the
//     summary's length at 4 characters a token; the trigger is not logged
//     and is recorded as auto.
//   - What started a request (Request.StartedBy) is what came since the
//     previous one: event_msg user_message (a prompt), a
//     function_call_output or custom_tool_call_output (a tool result), a
//     compaction — read from the first bytes of those lines only.
package cxlog

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
)

var (
	keyTokenCount  = []byte(`token_count`)
	keyCompacted   = []byte(`compacted"`)
	keySessionMeta = []byte(`"session_meta"`)
	keyTurnContext = []byte(`"turn_context"`)
	keyPayloadType = []byte(`"payload":{"type":"`)
)

// codexInputKind classifies a line that is input to the next request by
// its payload type, looked for among the line's first bytes; 0 otherwise.
func codexInputKind(b []byte) uint16 {
	head := b[:min(len(b), 160)]
	i := bytes.Index(head, keyPayloadType)
	if i < 0 {
		return 0
	}
	t := b[i+len(keyPayloadType):]
	switch {
	case bytes.HasPrefix(t, []byte(`user_message"`)):
		return importer.StartPrompt
	case bytes.HasPrefix(t, []byte(`function_call_output"`)), bytes.HasPrefix(t, []byte(`custom_tool_call_output"`)):
		return importer.StartToolResult
	}
	return 0
}

type codexTotal struct {
	Input, Cached, Output, Total int64
}

type codexReq struct {
	ID      string        `json:"id"`
	At      time.Time     `json:"at"`
	Model   string        `json:"model,omitempty"`
	Usage   pricing.Usage `json:"usage"`
	Line    int           `json:"line"`
	PrevPre int64         `json:"prevPre"`
}

type codexState struct {
	Lines     int         `json:"lines"`
	Session   string      `json:"session,omitempty"`
	Provider  string      `json:"provider,omitempty"`
	Model     string      `json:"model,omitempty"`
	First     string      `json:"firstModel,omitempty"`
	Title     string      `json:"title,omitempty"`
	Window    int64       `json:"window,omitempty"`
	LastTotal *codexTotal `json:"lastTotal,omitempty"`
	Pre       int64       `json:"pre,omitempty"`
	Position  int         `json:"position,omitempty"`
	// Last is the last conversation request since the last fold: a local
	// compaction turns it into the summary call.
	Last *codexReq `json:"last,omitempty"`
	// FoldOpen: a fold with no request after it yet; a context_compacted
	// event then belongs to it.
	FoldOpen bool `json:"foldOpen,omitempty"`
	// Started holds the kinds of input (start… bits) since the last request.
	Started uint16 `json:"started,omitempty"`
}

type codexParser struct {
	st      codexState
	records []importer.Record
	lastIdx int // record index of st.Last when it is in this pass, else -1
	waiting []int
}

func newCodexParser(opts importer.Options) (*codexParser, error) {
	p := &codexParser{lastIdx: -1}
	if len(opts.State) > 0 {
		if err := json.Unmarshal(opts.State, &p.st); err != nil {
			return nil, err
		}
	}
	if p.st.Session == "" {
		// rollout-2025-12-08T00-37-46-<uuid>.jsonl
		stem := strings.TrimSuffix(filepath.Base(opts.Path), ".jsonl")
		if len(stem) >= 36 && importer.IsUUID(stem[len(stem)-36:]) {
			p.st.Session = stem[len(stem)-36:]
		}
	}
	return p, nil
}

type cxLine struct {
	timestamp, typ, ptype   string
	id, provider, cwd       string
	model                   string
	hasInfo                 bool
	total, last             codexTotal
	hasTotal                bool
	window                  int64
	message                 int
	replacement, hasMessage bool
}

func (p *codexParser) Line(b []byte, n int) error {
	if k := codexInputKind(b); k != 0 {
		p.st.Started |= k
		return nil
	}
	if !bytes.Contains(b, keyTokenCount) && !bytes.Contains(b, keyCompacted) &&
		!bytes.Contains(b, keySessionMeta) && !bytes.Contains(b, keyTurnContext) {
		return nil
	}
	var l cxLine
	s := jsonl.Scanner{B: b}
	s.Object(func(k []byte) {
		switch string(k) {
		case "timestamp":
			l.timestamp = s.Str()
		case "type":
			l.typ = s.Str()
		case "payload":
			if s.Peek() != '{' {
				s.Skip()
				return
			}
			s.Object(func(k []byte) {
				switch string(k) {
				case "type":
					l.ptype = s.Str()
				case "id":
					if s.Peek() == '"' {
						l.id = s.Str()
					} else {
						s.Skip()
					}
				case "model_provider":
					l.provider = s.Str()
				case "cwd":
					l.cwd = s.Str()
				case "model":
					if s.Peek() == '"' {
						l.model = s.Str()
					} else {
						s.Skip()
					}
				case "message":
					if s.Peek() == '"' {
						l.message = s.StrLen()
						l.hasMessage = true
					} else {
						s.Skip()
					}
				case "replacement_history":
					l.replacement = !s.IsNull()
					if l.replacement {
						s.Skip()
					}
				case "info":
					if s.IsNull() {
						return
					}
					l.hasInfo = true
					s.Object(func(k []byte) {
						switch string(k) {
						case "total_token_usage":
							if !s.IsNull() {
								l.total = codexUsage(&s)
								l.hasTotal = true
							}
						case "last_token_usage":
							if !s.IsNull() {
								l.last = codexUsage(&s)
							}
						case "model_context_window":
							l.window = s.Count()
						default:
							s.Skip()
						}
					})
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
	switch {
	case l.typ == "session_meta":
		if l.id != "" {
			p.st.Session = l.id
		}
		if l.provider != "" {
			p.st.Provider = l.provider
		}
		if l.cwd != "" {
			p.st.Title = filepath.Base(filepath.FromSlash(strings.ReplaceAll(l.cwd, `\`, "/")))
		}
	case l.typ == "turn_context":
		if l.model != "" {
			p.st.Model = l.model
		}
	case l.typ == "event_msg" && l.ptype == "token_count" && l.hasInfo:
		return p.tokenCount(&l, n)
	case l.typ == "compacted":
		return p.fold(&l, n, true)
	case l.typ == "event_msg" && l.ptype == "context_compacted":
		if p.st.FoldOpen {
			return nil // the compacted item of the same compaction came first
		}
		return p.fold(&l, n, false)
	}
	return nil
}

func codexUsage(s *jsonl.Scanner) codexTotal {
	var t codexTotal
	s.Object(func(k []byte) {
		switch string(k) {
		case "input_tokens":
			t.Input = s.Count()
		case "cached_input_tokens":
			t.Cached = s.Count()
		case "output_tokens":
			t.Output = s.Count()
		case "total_tokens":
			t.Total = s.Count()
		default:
			s.Skip()
		}
	})
	return t
}

func (p *codexParser) tokenCount(l *cxLine, n int) error {
	if l.window > 0 {
		p.st.Window = l.window
	}
	if l.hasTotal {
		if p.st.LastTotal != nil && *p.st.LastTotal == l.total {
			return nil // a repeat: no new request
		}
		t := l.total
		p.st.LastTotal = &t
	}
	if l.last == (codexTotal{}) {
		return nil
	}
	at, err := importer.ParseTime(l.timestamp)
	if err != nil {
		return err
	}
	id := "line:" + strconv.Itoa(n)
	if l.hasTotal && l.total.Total > 0 {
		id = "t" + strconv.FormatInt(l.total.Total, 10)
	}
	cached := min(l.last.Cached, l.last.Input)
	u := pricing.Usage{Input: l.last.Input - cached, CacheRead: cached, Output: l.last.Output}
	model := p.st.Model
	if p.st.First == "" && model != "" {
		p.st.First = model
	}
	r := &importer.Request{ID: id, At: at, Purpose: importer.PurposeConversation, Provider: p.provider(), Model: model, Usage: u, Line: n}
	if k := p.st.Started; k != 0 {
		r.StartedBy = importer.StartedByName(k)
		p.st.Started = 0
	}
	p.lastIdx = len(p.records)
	p.records = append(p.records, importer.Record{Request: r})
	p.st.Last = &codexReq{ID: id, At: at, Model: model, Usage: u, Line: n, PrevPre: p.st.Pre}
	p.st.Pre = l.last.Input + l.last.Output
	p.st.Position++
	p.st.FoldOpen = false
	for _, fi := range p.waiting {
		p.records[fi].Fold.SetActual(r)
	}
	p.waiting = p.waiting[:0]
	return nil
}

func (p *codexParser) provider() string {
	if p.st.Provider == "" {
		return "openai"
	}
	return p.st.Provider
}

func (p *codexParser) fold(l *cxLine, n int, item bool) error {
	at, err := importer.ParseTime(l.timestamp)
	if err != nil {
		return err
	}
	pre := p.st.Pre
	f := &importer.Fold{ID: importer.FoldID(p.st.Session, "line:"+strconv.Itoa(n)+"@"+l.timestamp), At: at, Kind: importer.KindSummary, Trigger: importer.TriggerAuto, Line: n}
	if item && l.hasMessage && l.message > 0 && !l.replacement {
		f.CheckpointTokens = int64((l.message + 3) / 4)
		f.CheckpointEstimated = true
		// A local compaction: the request just before is its summary call.
		if last := p.st.Last; last != nil {
			u := last.Usage
			f.Summary = &u
			pre = last.PrevPre
			p.st.Position--
			if p.lastIdx >= 0 {
				p.records[p.lastIdx].Request.Purpose = importer.PurposeCompaction
			} else {
				p.records = append(p.records, importer.Record{Request: &importer.Request{ID: last.ID, At: last.At, Purpose: importer.PurposeCompaction,
					Provider: p.provider(), Model: last.Model, Usage: u, Line: last.Line}})
			}
			p.st.Pre = last.PrevPre
		}
	}
	f.PreTokens = pre
	f.Position = p.st.Position
	p.st.Last = nil
	p.lastIdx = -1
	p.waiting = append(p.waiting, len(p.records))
	p.records = append(p.records, importer.Record{Fold: f})
	p.st.FoldOpen = true
	p.st.Started |= importer.StartCompaction
	return nil
}

func (p *codexParser) Finish() (importer.Session, []importer.Record) {
	s := importer.Session{Harness: Name, Provider: p.provider(), Title: p.st.Title, Model: p.st.First, ContextWindow: p.st.Window}
	if p.st.Session != "" {
		s.ID = importer.SessionID(Name, p.st.Session)
	}
	return s, p.records
}

func (p *codexParser) State(lines int) (json.RawMessage, error) {
	p.st.Lines = lines
	return json.Marshal(p.st)
}
