package dsh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
)

func init() {
	importer.Register(importer.Format{
		Name: Name, Label: "dsh", Order: 30,
		Roots:       Roots,
		Detect:      detect,
		DetectOrder: 20,
		SessionLine: "header",
		NewParser:   func(o importer.Options) (importer.LineParser, error) { return newParser(o) },
	})
}

// Roots are where dsh keeps its session logs: $DSH_HOME/sessions, else
// ~/.local/share/dsh/sessions.
func Roots(getenv func(string) string, home string) []string {
	if v := getenv("DSH_HOME"); v != "" {
		return []string{filepath.Join(v, "sessions")}
	}
	return []string{filepath.Join(home, ".local", "share", "dsh", "sessions")}
}

// detect: only dsh writes zstd-framed logs (told by the name alone); a
// plain one starts with its "dsh.session" header.
func detect(path string, head []byte) bool {
	if importer.IsZstd(path) {
		return true
	}
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return bytes.Contains(first, []byte(`"dsh.session"`))
}

// Version is the dsh session log format version this package reads.
const Version = 1

// UnsupportedVersionError is a dsh log of a format version this tollgate
// does not know.
type UnsupportedVersionError struct {
	Version int64
}

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("dsh session log format version %d is not supported (this tollgate reads version %d): upgrade tollgate", e.Version, Version)
}

var (
	keyUsage      = []byte(`"usage"`)
	keyCompaction = []byte(`compaction/`)
	keyContext    = []byte(`request/context`)
	keySurface    = []byte(`surfaceOp`)
)

// state is carried between passes in the imports table: its JSON is the
// one the importer stored for dsh logs before this package, so a database
// goes on where it stopped. Keep the names and tags.
type state struct {
	Lines    int    `json:"lines"`
	Header   bool   `json:"header"`
	Session  string `json:"session,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Profile  string `json:"profile,omitempty"`
	Title    string `json:"title,omitempty"`
	Window   int64  `json:"window,omitempty"`
	Thresh   int64  `json:"threshold,omitempty"`
	Position int    `json:"position,omitempty"`
	// Started holds the kinds of input (start… bits) since the last
	// conversation request: user/message, tool/result, a summary.
	Started uint16 `json:"started,omitempty"`
}

var (
	prefixUser = []byte(`{"type":"user/message"`)
	prefixTool = []byte(`{"type":"tool/result"`)
)

type parser struct {
	st      state
	records []importer.Record
	index   map[string]int // request id → record index, this pass
	folds   map[string]int // fold record id (in the log) → record index, this pass
	waiting []int
}

func newParser(opts importer.Options) (*parser, error) {
	p := &parser{index: map[string]int{}, folds: map[string]int{}}
	if len(opts.State) > 0 {
		if err := json.Unmarshal(opts.State, &p.st); err != nil {
			return nil, err
		}
	}
	return p, nil
}

type line struct {
	typ, at, id, model, profile, provider, purpose, trigger, format, session, title, cause, op, kind string
	version                                                                                          int64
	hasVersion, hasUsage, hasCall                                                                    bool
	usage                                                                                            pricing.Usage
	window, threshold, pre, summarized, retained, checkpoint, units, shadowed                        int64
	from                                                                                             *int64
	callID, callModel                                                                                string
	callUsage                                                                                        pricing.Usage
	unitTokens, unitCount, replacement                                                               int64
}

func (p *parser) Line(b []byte, n int) error {
	switch {
	case !p.st.Header:
	case bytes.HasPrefix(b, prefixUser):
		p.st.Started |= importer.StartPrompt
		return nil
	case bytes.HasPrefix(b, prefixTool):
		p.st.Started |= importer.StartToolResult
		return nil
	}
	if p.st.Header && !bytes.Contains(b, keyUsage) && !bytes.Contains(b, keyCompaction) &&
		!bytes.Contains(b, keyContext) && !bytes.Contains(b, keySurface) {
		return nil
	}
	var l line
	s := jsonl.Scanner{B: b}
	s.Object(func(k []byte) {
		switch string(k) {
		case "type":
			l.typ = s.Str()
		case "at":
			l.at = s.Str()
		case "id":
			l.id = s.Str()
		case "model":
			l.model = s.Str()
		case "profile":
			l.profile = s.Str()
		case "provider":
			l.provider = s.Str()
		case "purpose":
			l.purpose = s.Str()
		case "trigger":
			l.trigger = s.Str()
		case "format":
			l.format = s.Str()
		case "session":
			l.session = s.Str()
		case "title":
			l.title = s.Str()
		case "cause":
			l.cause = s.Str()
		case "op":
			l.op = s.Str()
		case "kind":
			l.kind = s.Str()
		case "version":
			l.version = s.Count()
			l.hasVersion = true
		case "usage":
			l.hasUsage = true
			l.usage = usage(&s)
		case "contextWindow":
			l.window = s.Count()
		case "thresholdTokens":
			l.threshold = s.Count()
		case "preTokens":
			l.pre = s.Count()
		case "summarizedTokens":
			l.summarized = s.Count()
		case "retainedTokens":
			l.retained = s.Count()
		case "checkpointTokens":
			l.checkpoint = s.Count()
		case "shadowedTokens":
			l.shadowed = s.Count()
		case "fromTokens":
			v := s.Count()
			l.from = &v
		case "units":
			if s.Peek() == '[' {
				l.unitCount, l.unitTokens = units(&s)
			} else {
				l.units = s.Count()
			}
		case "replacement":
			if s.IsNull() {
				return
			}
			s.Object(func(k []byte) {
				if string(k) == "tokens" {
					l.replacement = s.Count()
				} else {
					s.Skip()
				}
			})
		case "call":
			if s.IsNull() {
				return
			}
			l.hasCall = true
			s.Object(func(k []byte) {
				switch string(k) {
				case "id":
					l.callID = s.Str()
				case "model":
					l.callModel = s.Str()
				case "usage":
					l.callUsage = usage(&s)
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
	if !p.st.Header {
		return p.header(&l)
	}
	switch l.typ {
	case "request/context":
		if l.window > 0 {
			p.st.Window = l.window
		}
		if l.threshold > 0 {
			p.st.Thresh = l.threshold
		}
	case "assistant/message":
		if !l.hasUsage {
			return nil
		}
		return p.message(&l, n)
	case "compaction/summary":
		return p.compaction(&l, n, importer.KindSummary)
	case "compaction/prune":
		return p.compaction(&l, n, importer.KindPrune)
	case "surfaceOp":
		return p.surfaceOp(&l, n)
	case "header":
		return errors.New("a second header line")
	}
	return nil
}

func (p *parser) header(l *line) error {
	if l.typ != "header" || l.format != "dsh.session" {
		return errors.New(`not a dsh session log: the first line must be the header {"type":"header","format":"dsh.session","version":1,…}`)
	}
	if !l.hasVersion {
		return errors.New("dsh session log header: version missing")
	}
	if l.version != Version {
		return &UnsupportedVersionError{Version: l.version}
	}
	if l.session == "" {
		return errors.New("dsh session log header: session missing")
	}
	p.st = state{Header: true, Session: l.session, Provider: l.provider, Model: l.model, Profile: l.profile,
		Title: l.title, Window: l.window, Thresh: l.threshold, Lines: p.st.Lines}
	return nil
}

func usage(s *jsonl.Scanner) pricing.Usage {
	var u pricing.Usage
	s.Object(func(k []byte) {
		switch string(k) {
		case "inputTokens":
			u.Input = s.Count()
		case "cacheReadTokens":
			u.CacheRead = s.Count()
		case "cacheWriteTokens":
			u.CacheWrite = s.Count()
		case "cacheWrite1hTokens":
			u.CacheWrite1h = s.Count()
		case "outputTokens":
			u.Output = s.Count()
		default:
			s.Skip()
		}
	})
	return u
}

// units reads [{"id","tokens"},…] and returns the count and the tokens.
func units(s *jsonl.Scanner) (count, tokens int64) {
	s.Elems("units", func() {
		count++
		s.Object(func(k []byte) {
			if string(k) == "tokens" {
				tokens += s.Count()
			} else {
				s.Skip()
			}
		})
	})
	if s.Err != nil {
		return count, tokens
	}
	return count, min(tokens, jsonl.MaxCount)
}

func trigger(t string) string {
	if t == importer.TriggerManual {
		return importer.TriggerManual
	}
	return importer.TriggerAuto
}

func (p *parser) message(l *line, n int) error {
	if l.id == "" {
		return errors.New("assistant/message without an id")
	}
	if i, ok := p.index[l.id]; ok {
		r := p.records[i].Request
		r.Usage = r.Usage.Max(l.usage)
		return nil
	}
	at, err := importer.ParseTime(l.at)
	if err != nil {
		return err
	}
	purpose := importer.PurposeConversation
	switch l.purpose {
	case "", importer.PurposeConversation:
	case importer.PurposeSubagent, importer.PurposeCompaction:
		purpose = l.purpose
	default:
		return fmt.Errorf("purpose %q: want conversation or subagent", l.purpose)
	}
	r := &importer.Request{ID: l.id, At: at, Purpose: purpose, Profile: l.profile, Provider: l.provider, Model: l.model, Usage: l.usage, Line: n}
	p.index[l.id] = len(p.records)
	p.records = append(p.records, importer.Record{Request: r})
	if purpose == importer.PurposeConversation {
		if k := p.st.Started; k != 0 {
			r.StartedBy = importer.StartedByName(k)
			p.st.Started = 0
		}
		if p.st.Model == "" {
			p.st.Model = l.model
		}
		p.st.Position++
		for _, fi := range p.waiting {
			p.records[fi].Fold.ActualRequest = l.id
		}
		p.waiting = p.waiting[:0]
	}
	return nil
}

func (p *parser) compaction(l *line, n int, kind string) error {
	if l.id == "" {
		return fmt.Errorf("%s without an id", l.typ)
	}
	at, err := importer.ParseTime(l.at)
	if err != nil {
		return err
	}
	if l.hasCall {
		id := l.callID
		if id == "" {
			id = l.id + "/call"
		}
		if _, dup := p.index[id]; !dup {
			p.index[id] = len(p.records)
			p.records = append(p.records, importer.Record{Request: &importer.Request{ID: id, At: at, Purpose: importer.PurposeCompaction, Model: l.callModel, Usage: l.callUsage, Line: n}})
		}
	}
	f := &importer.Fold{ID: importer.FoldID(importer.SessionID(Name, p.st.Session), l.id), At: at, Kind: kind, Trigger: trigger(l.trigger), PreTokens: l.pre,
		Position: p.st.Position, CheckpointTokens: l.checkpoint, RetainedTokens: l.retained, ShadowedTokens: l.shadowed,
		Units: int(min(l.units, 1<<31-1)), FromTokens: l.from, Line: n}
	if kind == importer.KindSummary && f.ShadowedTokens == 0 && l.summarized > l.checkpoint {
		f.ShadowedTokens = l.summarized - l.checkpoint
	}
	if l.hasCall {
		u := l.callUsage
		f.Summary = &u
	}
	if kind == importer.KindSummary {
		p.st.Started |= importer.StartCompaction
	}
	p.addFold(l.id, f)
	return nil
}

func (p *parser) addFold(logID string, f *importer.Fold) {
	p.folds[logID] = len(p.records)
	p.waiting = append(p.waiting, len(p.records))
	p.records = append(p.records, importer.Record{Fold: f})
}

func (p *parser) surfaceOp(l *line, n int) error {
	if l.op != "replace" {
		return nil
	}
	shadowed := max(l.unitTokens-l.replacement, 0)
	if l.cause != "" {
		if i, ok := p.folds[l.cause]; ok {
			f := p.records[i].Fold
			f.ShadowedTokens += shadowed
			f.Units += int(min(l.unitCount, 1<<31-1))
			if f.FromTokens == nil && l.from != nil {
				f.FromTokens = l.from
			}
		}
		return nil
	}
	if l.id == "" {
		return errors.New("surfaceOp without an id or a cause")
	}
	at, err := importer.ParseTime(l.at)
	if err != nil {
		return err
	}
	kind := importer.KindPrune
	if l.kind == importer.KindSummary {
		kind = importer.KindSummary
	}
	f := &importer.Fold{ID: importer.FoldID(importer.SessionID(Name, p.st.Session), l.id), At: at, Kind: kind, Trigger: trigger(l.trigger), PreTokens: l.pre,
		Position: p.st.Position, ShadowedTokens: shadowed, Units: int(min(l.unitCount, 1<<31-1)), FromTokens: l.from, Line: n}
	if kind == importer.KindSummary {
		f.CheckpointTokens = l.replacement
	}
	p.addFold(l.id, f)
	return nil
}

func (p *parser) Finish() (importer.Session, []importer.Record) {
	for _, rec := range p.records {
		if f := rec.Fold; f != nil && f.ActualRequest != "" {
			if i, ok := p.index[f.ActualRequest]; ok {
				f.SetActual(p.records[i].Request)
			}
		}
	}
	s := importer.Session{Harness: Name, Title: p.st.Title, Profile: p.st.Profile, Provider: p.st.Provider, Model: p.st.Model,
		ContextWindow: p.st.Window, ThresholdTokens: p.st.Thresh}
	if p.st.Session != "" {
		s.ID = importer.SessionID(Name, p.st.Session)
	}
	// Requests name no model, profile or provider of their own: the header's.
	for _, rec := range p.records {
		if r := rec.Request; r != nil {
			if r.Profile == "" {
				r.Profile = p.st.Profile
			}
			if r.Provider == "" {
				r.Provider = p.st.Provider
			}
			if r.Model == "" {
				r.Model = p.st.Model
			}
		}
	}
	return s, p.records
}

func (p *parser) State(lines int) (json.RawMessage, error) {
	p.st.Lines = lines
	return json.Marshal(p.st)
}
