package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
)

// Harness is the name Gemini CLI's sessions are stored and imported under.
const Harness = "gemini"

// Provider names the API the requests went to, for the price table.
const Provider = "google"

func init() {
	importer.Register(importer.Format{
		Name: Harness, Label: "Gemini CLI", Order: 40,
		Roots:       Roots,
		IsLog:       isChat,
		Detect:      Detect,
		DetectOrder: 10,
		Subagent:    isSubagent,
		SessionLine: "sessionId",
		NewParser:   func(o importer.Options) (importer.LineParser, error) { return newParser(o) },
	})
}

// Roots is where Gemini CLI keeps its sessions: <GEMINI_CLI_HOME, else
// the home folder>/.gemini/tmp (GEMINI_CLI_HOME stands for the home).
func Roots(getenv func(string) string, home string) []string {
	if v := getenv("GEMINI_CLI_HOME"); v != "" {
		home = v
	}
	return []string{filepath.Join(home, ".gemini", "tmp")}
}

// isChat: Gemini CLI keeps sessions in <project>/chats/session-*.jsonl
// and a subagent's in <project>/chats/<parent session>/<id>.jsonl; its tmp
// folder holds other files too.
func isChat(path string) bool {
	if !strings.HasSuffix(path, ".jsonl") {
		return false
	}
	dir := filepath.Dir(path)
	return filepath.Base(dir) == "chats" || filepath.Base(filepath.Dir(dir)) == "chats"
}

// isSubagent: a subagent's session lives in a folder named after its
// parent session, inside chats.
func isSubagent(path string) bool {
	return strings.HasSuffix(path, ".jsonl") && filepath.Base(filepath.Dir(filepath.Dir(path))) == "chats"
}

// recentIDs is how many message ids of requests already read a pass
// remembers for the next: Gemini CLI writes a message again only while it
// is the last one (its tokens, then its tool calls, arrive after it), so a
// repeat is always of one of the last few.
const recentIDs = 32

// MaxIDBytes bounds a message or session id: longer ones are not ids
// (Gemini CLI writes UUIDs and 32-hex-digit ids).
const MaxIDBytes = 128

type state struct {
	Lines int `json:"lines"`
	// Session is the sessionId of the file's first metadata line; Model
	// the model of its last reply.
	Session string `json:"session,omitempty"`
	Model   string `json:"model,omitempty"`
	// Recent are the ids of the last requests read (oldest first).
	Recent []string `json:"recent,omitempty"`
	// Started is what came since the last request (importer.StartedBy…).
	Started string `json:"started,omitempty"`
	// Requests counts the requests read, for a subagent's thread start
	// and a fold's position.
	Requests int `json:"requests,omitempty"`
	// Context is the last request's prompt and output: a fold's preTokens.
	Context int64 `json:"context,omitempty"`
	// Snapshot is the id of the history's <state_snapshot> message, Masked
	// the <tool_output_masked> notes the last history set held.
	Snapshot string `json:"snapshot,omitempty"`
	Masked   int    `json:"masked,omitempty"`
}

type parser struct {
	st      state
	parent  string // a subagent file's parent session (its folder's name)
	records []importer.Record
}

func newParser(o importer.Options) (*parser, error) {
	p := &parser{}
	if len(o.State) > 0 {
		if err := json.Unmarshal(o.State, &p.st); err != nil {
			return nil, err
		}
	}
	p.parent = SubagentParent(o.Path)
	return p, nil
}

// SubagentParent is the parent session id of a subagent's file,
// chats/<parent session id>/<session id>.jsonl, or "" for a session's own
// file (chats/session-*.jsonl): a subagent is a thread of its parent's
// session, not a session of its own.
func SubagentParent(path string) string {
	if dir := filepath.Base(filepath.Dir(path)); dir != "chats" && dir != "." && dir != "/" &&
		filepath.Base(filepath.Dir(filepath.Dir(path))) == "chats" && validID(dir) {
		return dir
	}
	return ""
}

// line is one JSON object of the file, the fields tollgate reads.
type line struct {
	SessionID  *string
	hasProject bool
	ID         *string
	Timestamp  string
	Type       string
	Model      string
	Tokens     *tokens
	toolCalls  bool // a non-empty toolCalls array
}

// tokens are kept raw: a count must be a JSON integer, not a string or a
// fraction that a looser decoder would accept.
type tokens struct {
	Input, Output, Cached, Thoughts, Tool []byte
}

var (
	prefixSet      = []byte(`{"$set"`)
	prefixMessages = []byte(`{"$set":{"messages":`)
	prefixRewind   = []byte(`{"$rewindTo"`)
	tagSnapshot    = []byte(`<state_snapshot>`)
	tagMasked      = []byte(`<tool_output_masked>`)
)

// Line reads one line of a session file. The line is walked in place
// (jsonl.Scanner): the content of prompts, replies and tool results is
// skipped, never decoded.
func (p *parser) Line(b []byte, n int) error {
	if bytes.HasPrefix(b, prefixSet) || bytes.HasPrefix(b, prefixRewind) {
		s := jsonl.Scanner{B: b}
		s.Skip()
		s.End()
		if s.Err != nil {
			return fmt.Errorf("line %d: a history edit ($set, $rewindTo) that is not valid JSON: %v", n, s.Err)
		}
		if bytes.HasPrefix(b, prefixMessages) {
			return p.history(b, n)
		}
		return nil // metadata edits, rewinds: no model call, no change of the sent history
	}
	var l line
	field := ""
	s := jsonl.Scanner{B: b}
	str := func() *string { v := s.Str(); return &v }
	s.Object(func(key []byte) {
		field = string(key)
		switch field {
		case "sessionId":
			l.SessionID = str()
		case "projectHash":
			l.hasProject = true
			s.Skip()
		case "id":
			l.ID = str()
		case "timestamp":
			l.Timestamp = s.Str()
		case "type":
			l.Type = s.Str()
		case "model":
			if !s.IsNull() {
				l.Model = s.Str()
			}
		case "tokens":
			if s.IsNull() {
				return
			}
			l.Tokens = &tokens{}
			s.Object(func(k []byte) {
				start := s.I
				s.Skip()
				raw := bytes.TrimSpace(b[start:min(s.I, len(b))])
				switch string(k) {
				case "input":
					l.Tokens.Input = raw
				case "output":
					l.Tokens.Output = raw
				case "cached":
					l.Tokens.Cached = raw
				case "thoughts":
					l.Tokens.Thoughts = raw
				case "tool":
					l.Tokens.Tool = raw
				}
			})
		case "toolCalls":
			start := s.I
			s.Skip()
			raw := bytes.TrimSpace(b[start:min(s.I, len(b))])
			l.toolCalls = len(raw) > 2 && raw[0] == '[' && bytes.IndexFunc(raw[1:len(raw)-1], func(r rune) bool { return r > ' ' }) >= 0
		default:
			s.Skip()
		}
	})
	s.End()
	if s.Err != nil {
		if field != "" {
			return fmt.Errorf("line %d: not a Gemini CLI session record: %s: %v", n, clip(field), s.Err)
		}
		return fmt.Errorf("line %d: not a Gemini CLI session record: %v", n, s.Err)
	}
	switch {
	case l.ID != nil:
		return p.message(&l, n)
	case l.SessionID != nil && l.hasProject:
		return p.metadata(&l, n)
	}
	return fmt.Errorf(`line %d: not a Gemini CLI session record: no "id" (a message) nor "sessionId" and "projectHash" (the session's metadata)`, n)
}

func (p *parser) metadata(l *line, n int) error {
	if !validID(*l.SessionID) {
		return fmt.Errorf("line %d: sessionId %q is not an id", n, clip(*l.SessionID))
	}
	if p.st.Session == "" {
		p.st.Session = *l.SessionID
	}
	// A resumed session writes its metadata again with the same id; a
	// different one would mix two sessions' requests in one.
	if *l.SessionID != p.st.Session {
		return fmt.Errorf("line %d: sessionId %q differs from the file's %q", n, clip(*l.SessionID), p.st.Session)
	}
	return nil
}

func (p *parser) message(l *line, n int) error {
	id := *l.ID
	if !validID(id) {
		return fmt.Errorf("line %d: id %q is not a message id", n, clip(id))
	}
	switch l.Type {
	case "user":
		p.started(importer.StartedByPrompt)
		return nil
	case "gemini":
	default:
		return nil // info, warning, error: shown to the user, not sent
	}
	if l.Model != "" {
		p.st.Model = clip(l.Model)
	}
	// A message with tool calls: their results go back with the next
	// request (a prompt typed meanwhile says more, and wins).
	calls := l.toolCalls
	if slices.Contains(p.st.Recent, id) {
		if calls {
			p.started(importer.StartedByToolResult)
		}
		return nil // a request already read, written again
	}
	if l.Tokens == nil {
		return nil // no usage yet: the message is written again when it comes
	}
	u, err := l.Tokens.usage(n)
	if err != nil {
		return err
	}
	if u == (pricing.Usage{}) {
		return nil // a message no response's usage reached
	}
	at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		return fmt.Errorf("line %d: timestamp %q is not RFC 3339", n, clip(l.Timestamp))
	}
	if p.st.Session == "" {
		return fmt.Errorf("line %d: a message before the session's metadata line", n)
	}
	started := p.st.Started
	if p.st.Requests == 0 && p.parent != "" {
		started = importer.StartedByThreadStart // the subagent's task, whatever it is made of
	}
	req := &importer.Request{ID: id, At: at.UTC(), Purpose: importer.PurposeConversation, Provider: Provider, Model: p.st.Model,
		Usage: u, Line: n, StartedBy: started}
	if p.parent != "" {
		req.Purpose, req.Thread = importer.PurposeSubagent, p.st.Session
	}
	p.records = append(p.records, importer.Record{Request: req})
	p.st.Recent = append(p.st.Recent, id)
	if len(p.st.Recent) > recentIDs {
		p.st.Recent = p.st.Recent[len(p.st.Recent)-recentIDs:]
	}
	p.st.Started = ""
	if calls {
		p.st.Started = importer.StartedByToolResult
	}
	p.st.Requests++
	p.st.Context = u.Prompt() + u.Output
	return nil
}

// startedOrder ranks what can start a request, most telling first (the
// importer's StartedBy… order).
var startedOrder = []string{importer.StartedByCompaction, importer.StartedByPrompt, importer.StartedByToolResult}

// started records input for the next request unless more telling input
// came already.
func (p *parser) started(kind string) {
	if cur := slices.Index(startedOrder, p.st.Started); cur < 0 || slices.Index(startedOrder, kind) < cur {
		p.st.Started = kind
	}
}

// historyMessage is what a history set's messages say about a rewrite.
type historyMessage struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
}

// history reads a {"$set":{"messages":[…]}} line: the history Gemini CLI
// sends from now on. A new <state_snapshot> message is a compression, more
// <tool_output_masked> notes than the last set held are a masking.
func (p *parser) history(b []byte, n int) error {
	masked := bytes.Count(b, tagMasked)
	if !bytes.Contains(b, tagSnapshot) && masked <= p.st.Masked {
		p.st.Masked = masked
		return nil
	}
	var set struct {
		Set struct {
			Messages []historyMessage `json:"messages"`
		} `json:"$set"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return fmt.Errorf("line %d: $set.messages: %v", n, err)
	}
	if p.st.Session == "" {
		return fmt.Errorf("line %d: a history set before the session's metadata line", n)
	}
	for i, m := range set.Set.Messages {
		if m.Type != "user" || !bytes.Contains(m.Content, tagSnapshot) || m.ID == p.st.Snapshot {
			continue
		}
		if !validID(m.ID) {
			return fmt.Errorf("line %d: $set.messages[%d].id %q is not a message id", n, i, clip(m.ID))
		}
		at, err := time.Parse(time.RFC3339Nano, m.Timestamp)
		if err != nil {
			return fmt.Errorf("line %d: $set.messages[%d].timestamp %q is not RFC 3339", n, i, clip(m.Timestamp))
		}
		p.st.Snapshot = m.ID
		p.fold(&importer.Fold{ID: foldID(p.sessionID(), m.ID), At: at.UTC(), Kind: importer.KindSummary,
			CheckpointTokens: int64(len(m.Content)+3) / 4, CheckpointEstimated: true, Line: n})
		break // one compression per history set
	}
	if masked > p.st.Masked && len(set.Set.Messages) > 0 {
		// The set has no time of its own: the masking happened after the
		// last message it holds, which with the count names it.
		var at time.Time
		last := ""
		for _, m := range set.Set.Messages {
			if t, err := time.Parse(time.RFC3339Nano, m.Timestamp); err == nil && t.After(at) {
				at = t.UTC()
			}
			last = m.ID
		}
		if at.IsZero() {
			return fmt.Errorf("line %d: $set.messages: no message with an RFC 3339 timestamp to place the masking at", n)
		}
		p.fold(&importer.Fold{ID: foldID(p.sessionID(), fmt.Sprintf("masked %s %d", clip(last), masked)), At: at,
			Kind: importer.KindPrune, Units: masked - p.st.Masked, Line: n})
	}
	p.st.Masked = masked
	return nil
}

// fold records a rewrite of the main conversation's history.
func (p *parser) fold(f *importer.Fold) {
	if p.parent != "" {
		return // a subagent's history is its own thread's; folds are the main one's
	}
	f.Trigger, f.PreTokens, f.Position = importer.TriggerAuto, p.st.Context, p.st.Requests
	p.records = append(p.records, importer.Record{Fold: f})
	p.started(importer.StartedByCompaction)
}

// sessionID is the stored session's id.
func (p *parser) sessionID() string {
	if p.parent != "" {
		return importer.SessionID(Harness, p.parent)
	}
	return importer.SessionID(Harness, p.st.Session)
}

// foldID derives a rewrite id from the session and the fold's own id in
// the file, so the same fold imported from a copy of the file is one row
// (the importer's rule for every format).
func foldID(session, local string) string {
	h := sha256.Sum256([]byte(session + "\x00" + local))
	return "r_imp_" + hex.EncodeToString(h[:10])
}

// usage maps a message's tokens to pricing.Usage, refusing counts that
// are not whole, not in range, or a cached part larger than the prompt.
func (t *tokens) usage(n int) (pricing.Usage, error) {
	var v [5]int64
	for i, f := range []struct {
		name string
		raw  []byte
	}{{"input", t.Input}, {"output", t.Output}, {"cached", t.Cached}, {"thoughts", t.Thoughts}, {"tool", t.Tool}} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue // thoughts and tool are optional; a missing count is 0
		}
		x, err := strconv.ParseInt(string(f.raw), 10, 64)
		if err != nil || x < 0 || x > pricing.MaxUsageTokens {
			return pricing.Usage{}, fmt.Errorf("line %d: tokens.%s %s is not a token count (a whole number from 0 to %d)", n, f.name, clip(string(f.raw)), int64(pricing.MaxUsageTokens))
		}
		v[i] = x
	}
	input, output, cached, thoughts, tool := v[0], v[1], v[2], v[3], v[4]
	if cached > input {
		return pricing.Usage{}, fmt.Errorf("line %d: tokens.cached %d exceeds tokens.input %d, which includes it", n, cached, input)
	}
	return pricing.Usage{Input: input - cached + tool, CacheRead: cached, Output: output + thoughts}.Clamped(), nil
}

// Finish returns the pass's session and requests.
func (p *parser) Finish() (importer.Session, []importer.Record) {
	var s importer.Session
	if p.parent != "" || p.st.Session != "" {
		s.ID = p.sessionID()
	}
	if s.ID != "" {
		s.Harness, s.Provider = Harness, Provider
		if p.parent == "" {
			s.Model = p.st.Model
		}
	}
	return s, p.records
}

// State is carried to the next pass.
func (p *parser) State(lines int) (json.RawMessage, error) {
	p.st.Lines = lines
	return json.Marshal(p.st)
}

// validID accepts the ids Gemini CLI writes (UUIDs, hex digests, its
// sanitized file-name parts): printable, no path separators, bounded.
func validID(s string) bool {
	if s == "" || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '/' || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

// clip bounds a value quoted in an error or kept as a name.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Detect reports whether a log is a Gemini CLI session file: its first
// line is the metadata record ("sessionId" and "projectHash"), or it is
// named session-*.jsonl in a chats folder. Claude Code's lines carry a
// "sessionId" too, but never a "projectHash".
func Detect(path string, head []byte) bool {
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if bytes.Contains(first, []byte(`"projectHash"`)) && bytes.Contains(first, []byte(`"sessionId"`)) {
		return true
	}
	base := filepath.Base(path)
	return strings.HasPrefix(base, "session-") && strings.HasSuffix(base, ".jsonl") && filepath.Base(filepath.Dir(path)) == "chats"
}
