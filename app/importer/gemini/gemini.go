// Package gemini reads Gemini CLI's session files into the importer's
// records: a line format registered with importer.Register under the
// harness name "gemini".
//
// Gemini CLI (npm @google/gemini-cli; read at 0.61.0 and in
// google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts
// and chatRecordingTypes.ts, 2026-12-01) appends one JSON object a line to
// ~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl
// (a subagent's to chats/<parent session id>/<session id>.jsonl):
//
//   - a metadata line {"sessionId","projectHash","startTime","lastUpdated",
//     "kind"} starts the file, and again each time the session is resumed;
//   - a message line {"id","timestamp","type":"user"|"gemini"|"info"|…,
//     "content",…}; a "gemini" message carries "model" and "tokens":
//     {input, output, cached, thoughts, tool, total}, the usageMetadata of
//     the API response (promptTokenCount, candidatesTokenCount,
//     cachedContentTokenCount, thoughtsTokenCount, toolUsePromptTokenCount,
//     totalTokenCount). A message is written again whole when it changes
//     (its tokens arrive, a tool call is added): the same id on a later
//     line is the same request;
//   - {"$set":{…}} updates metadata, and {"$set":{"messages":[…]}} writes
//     the whole history anew (after a resume, a rollback, a compression);
//     {"$rewindTo": id} drops messages from the history. Neither is a model
//     call: they are passed over. A request the user later rewound was
//     still billed, so it stays.
//
// Versions before the JSON Lines format wrote one pretty-printed
// session-*.json document; Gemini CLI converts such a file to .jsonl when
// it resumes it. Those files are not JSON Lines and are not read.
//
// Usage: promptTokenCount includes the cached tokens and Gemini bills them
// at its cache price (https://ai.google.dev/gemini-api/docs/pricing, read
// 2026-12-01), so input = input − cached; the tool-use prompt is input too;
// thoughts are billed as output. Writes are not billed (implicit caching
// has no write price), so CacheWrite stays 0.
package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"tollgate/app/importer"
	"tollgate/pricing"
)

// Harness is the name Gemini CLI's sessions are stored and imported under.
const Harness = "gemini"

// Provider names the API the requests went to, for the price table.
const Provider = "google"

func init() {
	importer.Register(Harness, func(o importer.Options) (importer.LineParser, error) { return newParser(o) })
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
	// Session is the sessionId of the file's first metadata line; Kind its
	// "kind" (main | subagent).
	Session string `json:"session,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Model   string `json:"model,omitempty"`
	// Recent are the ids of the last requests read (oldest first).
	Recent []string `json:"recent,omitempty"`
	// Started is what came since the last request (importer.StartedBy…).
	Started string `json:"started,omitempty"`
	// Requests counts the requests read, for a subagent's thread start.
	Requests int `json:"requests,omitempty"`
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
	// chats/<parent session id>/<session id>.jsonl is a subagent's file.
	if dir := filepath.Base(filepath.Dir(o.Path)); dir != "chats" && dir != "." && dir != "/" &&
		filepath.Base(filepath.Dir(filepath.Dir(o.Path))) == "chats" && validID(dir) {
		p.parent = dir
	}
	return p, nil
}

// line is one JSON object of the file, the fields tollgate reads.
type line struct {
	SessionID   *string         `json:"sessionId"`
	ProjectHash *string         `json:"projectHash"`
	Kind        string          `json:"kind"`
	ID          *string         `json:"id"`
	Timestamp   string          `json:"timestamp"`
	Type        string          `json:"type"`
	Model       string          `json:"model"`
	Tokens      *tokens         `json:"tokens"`
	ToolCalls   json.RawMessage `json:"toolCalls"`
}

// tokens are kept raw: a count must be a JSON integer, not a string or a
// fraction that a looser decoder would accept.
type tokens struct {
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
	Cached   json.RawMessage `json:"cached"`
	Thoughts json.RawMessage `json:"thoughts"`
	Tool     json.RawMessage `json:"tool"`
}

var (
	prefixSet    = []byte(`{"$set"`)
	prefixRewind = []byte(`{"$rewindTo"`)
)

// Line reads one line of a session file.
func (p *parser) Line(b []byte, n int) error {
	if bytes.HasPrefix(b, prefixSet) || bytes.HasPrefix(b, prefixRewind) {
		if !json.Valid(b) {
			return fmt.Errorf("line %d: a history edit ($set, $rewindTo) that is not valid JSON", n)
		}
		return nil // history and metadata edits: no model call
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return fmt.Errorf("line %d: not a Gemini CLI session record: %v", n, err)
	}
	switch {
	case l.ID != nil:
		return p.message(&l, n)
	case l.SessionID != nil && l.ProjectHash != nil:
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
		p.st.Kind = l.Kind
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
		p.st.Started = importer.StartedByPrompt
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
	calls := len(l.ToolCalls) > 0 && !bytes.Equal(l.ToolCalls, []byte("null")) && !bytes.Equal(l.ToolCalls, []byte("[]"))
	if slices.Contains(p.st.Recent, id) {
		if calls && p.st.Started == "" {
			p.st.Started = importer.StartedByToolResult
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
	if started == "" && p.st.Requests == 0 && p.parent != "" {
		started = importer.StartedByThreadStart
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
	return nil
}

// usage maps a message's tokens to pricing.Usage, refusing counts that
// are not whole, not in range, or a cached part larger than the prompt.
func (t *tokens) usage(n int) (pricing.Usage, error) {
	var v [5]int64
	for i, f := range []struct {
		name string
		raw  json.RawMessage
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
	switch {
	case p.parent != "":
		s.ID = Harness + ":" + p.parent
	case p.st.Session != "":
		s.ID = Harness + ":" + p.st.Session
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
