// Package opencode reads OpenCode's session database (opencode.db) into
// the importer's records: one request per assistant message with token
// counts, one fold per compaction OpenCode ran.
//
// OpenCode (sst/opencode, 1.x; read in 1.18.33, December 2026) keeps its
// sessions in SQLite at $XDG_DATA_HOME/opencode/opencode.db (default
// ~/.local/share/opencode): tables `session` (id, parent_id, title,
// directory, time_created, …), `message` (id, session_id, time_created,
// data JSON) and `part` (id, message_id, session_id, data JSON). An
// assistant message's data holds providerID, modelID, summary (true for a
// compaction's summary call), finish, time.created (ms) and
// tokens {input, output, reasoning, cache {read, write}}: input is the
// uncached, unwritten input (OpenCode subtracts the cache counts from the
// provider's input) and output excludes reasoning
// (packages/opencode/src/session/index.ts, getUsage). A compaction is a user
// message holding a part {"type": "compaction", "auto", "overflow"}, answered
// by the summary message (packages/opencode/src/session/compaction.ts).
//
// The database may be in use by a running OpenCode (WAL mode): it is opened
// read-only, query-only, with a busy timeout, and every read is bounded
// (Limits) and ends with the context.
package ocdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"tollgate/app/importer"
	"tollgate/pricing"
)

// Harness is the name sessions from OpenCode are stored under.
const Harness = "opencode"

// File is the database's name in its folder.
const File = "opencode.db"

func init() {
	importer.Register(importer.Format{
		Name: Harness, Label: "OpenCode", Order: 50,
		Roots: func(getenv func(string) string, home string) []string {
			return []string{filepath.Dir(DefaultPath(getenv, home))}
		},
		Database: &importer.Database{File: File, Read: read, Sessions: sessions},
	})
}

// read is Read with the default limits, as the importer's Database reads.
func read(ctx context.Context, path string, changed func(session, stamp string) bool) ([]importer.DatabaseSession, error) {
	logs, err := Read(ctx, path, Limits{}, changed)
	if err != nil {
		return nil, err
	}
	out := make([]importer.DatabaseSession, len(logs))
	for i, l := range logs {
		out[i] = importer.DatabaseSession(l)
	}
	return out, nil
}

// sessions counts the database's sessions (its session table alone).
func sessions(ctx context.Context, path string) (int, error) {
	logs, err := Read(ctx, path, Limits{}, func(string, string) bool { return false })
	return len(logs), err
}

// Limits bound one read of a database.
type Limits struct {
	MaxSessions     int           // sessions read (the most recently updated first)
	MaxMessages     int           // messages per session
	MaxDataBytes    int           // one message's or part's data JSON
	BusyTimeout     time.Duration // how long to wait for a writer's lock
	Timeout         time.Duration // the whole read
	MaxSessionBytes int64         // all data JSON of one session
}

// DefaultLimits are generous for a person's history and small enough that
// a hostile file cannot take the importer's memory or time.
var DefaultLimits = Limits{
	MaxSessions:     10_000,
	MaxMessages:     50_000,
	MaxDataBytes:    1 << 20,
	BusyTimeout:     5 * time.Second,
	Timeout:         2 * time.Minute,
	MaxSessionBytes: 256 << 20,
}

// withDefaults is l with DefaultLimits' figure for each field left zero.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	return Limits{
		MaxSessions:     positiveOr(l.MaxSessions, d.MaxSessions),
		MaxMessages:     positiveOr(l.MaxMessages, d.MaxMessages),
		MaxDataBytes:    positiveOr(l.MaxDataBytes, d.MaxDataBytes),
		BusyTimeout:     positiveOr(l.BusyTimeout, d.BusyTimeout),
		Timeout:         positiveOr(l.Timeout, d.Timeout),
		MaxSessionBytes: positiveOr(l.MaxSessionBytes, d.MaxSessionBytes),
	}
}

// positiveOr is v when it is set (above zero), else def.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// DefaultPath is where OpenCode keeps its database: $XDG_DATA_HOME/opencode
// /opencode.db, else ~/.local/share/opencode/opencode.db. getenv is
// os.Getenv in production.
func DefaultPath(getenv func(string) string, home string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode", "opencode.db")
	}
	return filepath.Join(home, ".local", "share", "opencode", "opencode.db")
}

// Log is one OpenCode session as the importer sees it.
type Log struct {
	// Batch holds the session and its records, in message order (only the
	// session when Unchanged or Err).
	Batch importer.Batch
	// Stamp changes whenever the session's rows change (message count and
	// the last update time): an import that finds the same stamp has
	// nothing new.
	Stamp string
	// Unchanged says the caller's changed func answered false: the
	// session's messages were not read.
	Unchanged bool
	// Err is why this session's rows could not be read (a malformed or
	// oversized row, naming file, table and row): the other sessions are
	// still read, so one bad session never blocks the rest.
	Err error
}

// Read returns the sessions of the database at path, oldest first. Only
// the sessions for which changed(session id, stamp) is true have their
// messages read (nil: all), so an import that finds nothing new reads
// the session table alone. A session whose rows are malformed gets its
// Err; the read as a whole fails only when the file, its schema or the
// session table cannot be read, or ctx (bounded by lim.Timeout) ends.
func Read(ctx context.Context, path string, lim Limits, changed func(session, stamp string) bool) ([]Log, error) {
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	db, err := open(path, lim)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := checkSchema(ctx, db, path); err != nil {
		return nil, err
	}
	sessions, err := readSessions(ctx, db, path, lim)
	if err != nil {
		return nil, err
	}
	out := make([]Log, 0, len(sessions))
	for _, s := range sessions {
		id := importer.SessionID(Harness, s.id)
		only := Log{Batch: importer.Batch{Harness: Harness, Session: importer.Session{ID: id, Harness: Harness, Title: s.title}}, Stamp: s.stamp}
		if changed != nil && !changed(id, s.stamp) {
			only.Unchanged = true
			out = append(out, only)
			continue
		}
		msgs, err := readMessages(ctx, db, path, s.id, lim)
		var compactions map[string]Part
		if err == nil {
			compactions, err = readCompactions(ctx, db, path, s.id, lim)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err != nil {
			only.Err = err
			out = append(out, only)
			continue
		}
		out = append(out, Log{Batch: build(s, msgs, compactions), Stamp: s.stamp})
	}
	return out, nil
}

// open opens the file read-only and query-only: OpenCode may be writing it.
// Reading a WAL database needs its shared-memory index: when OpenCode is not
// running and the -wal/-shm files are gone, SQLite creates them beside the
// database (empty; OpenCode reuses them) — the one thing a read leaves. The
// database's own rows are never written.
func open(path string, lim Limits) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_query_only", "true")
	q.Set("_busy_timeout", strconv.FormatInt(lim.BusyTimeout.Milliseconds(), 10))
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// checkSchema says plainly when the file is no OpenCode database (or one
// from before OpenCode moved to SQLite: storage/*.json files).
func checkSchema(ctx context.Context, db *sql.DB, path string) error {
	for _, t := range []string{"session", "message", "part"} {
		var n int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, t).Scan(&n)
		if err != nil {
			return fmt.Errorf("%s: not a readable SQLite database: %w", path, err)
		}
		if n == 0 {
			return fmt.Errorf("%s: table %q is missing: not an OpenCode 1.x database (opencode.db)", path, t)
		}
	}
	return nil
}

type sessionRow struct {
	id, parent, title, dir string
	created                int64
	stamp                  string
}

func readSessions(ctx context.Context, db *sql.DB, path string, lim Limits) ([]sessionRow, error) {
	// The most recently updated sessions when there are more than the
	// limit; then oldest first, so sessions are numbered in the order they
	// happened.
	rows, err := db.QueryContext(ctx, `SELECT id, coalesce(parent_id, ''), substr(title, 1, 500), substr(directory, 1, 4096), time_created,
		(SELECT count(*) || ':' || coalesce(max(time_updated), 0) FROM message m WHERE m.session_id = s.id) || ':' || time_updated
		FROM session s ORDER BY time_updated DESC LIMIT ?`, lim.MaxSessions)
	if err != nil {
		return nil, fmt.Errorf("%s: table session: %w", path, err)
	}
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var s sessionRow
		if err := rows.Scan(&s.id, &s.parent, &s.title, &s.dir, &s.created, &s.stamp); err != nil {
			return nil, fmt.Errorf("%s: table session, row %d: %w", path, len(out)+1, err)
		}
		if s.id == "" || len(s.id) > 200 {
			return nil, fmt.Errorf("%s: table session, row %d: id %q is empty or too long", path, len(out)+1, truncate(s.id))
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: table session: %w", path, err)
	}
	// Oldest first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

type messageRow struct {
	id      string
	created int64
	data    Message
}

func readMessages(ctx context.Context, db *sql.DB, path, session string, lim Limits) ([]messageRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, time_created, length(data), CASE WHEN length(data) <= ? THEN data END
		FROM message WHERE session_id = ? ORDER BY time_created, id LIMIT ?`, lim.MaxDataBytes, session, lim.MaxMessages+1)
	if err != nil {
		return nil, fmt.Errorf("%s: table message: %w", path, err)
	}
	defer rows.Close()
	var out []messageRow
	var total int64
	for rows.Next() {
		var m messageRow
		var size int64
		var data []byte
		if err := rows.Scan(&m.id, &m.created, &size, &data); err != nil {
			return nil, fmt.Errorf("%s: table message, session %s, row %d: %w", path, session, len(out)+1, err)
		}
		if len(out) == lim.MaxMessages {
			return nil, fmt.Errorf("%s: table message, session %s: more than %d messages", path, session, lim.MaxMessages)
		}
		if size > int64(lim.MaxDataBytes) {
			return nil, fmt.Errorf("%s: table message, row %s: data is %d bytes (limit %d)", path, m.id, size, lim.MaxDataBytes)
		}
		if total += size; total > lim.MaxSessionBytes {
			return nil, fmt.Errorf("%s: table message, session %s: more than %d bytes of data", path, session, lim.MaxSessionBytes)
		}
		if m.data, err = DecodeMessage(data); err != nil {
			return nil, fmt.Errorf("%s: table message, row %s: data: %w", path, m.id, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: table message: %w", path, err)
	}
	return out, nil
}

// readCompactions returns the compaction parts of a session by message id.
func readCompactions(ctx context.Context, db *sql.DB, path, session string, lim Limits) (map[string]Part, error) {
	// The part table is large (every text and tool output); only the rows
	// whose JSON names the compaction type (OpenCode writes it with
	// JSON.stringify: no spaces) are read, and only small ones decoded.
	rows, err := db.QueryContext(ctx, `SELECT id, message_id, length(data), CASE WHEN length(data) <= ? THEN data END
		FROM part WHERE session_id = ? AND instr(data, '"type":"compaction"') > 0 LIMIT ?`, lim.MaxDataBytes, session, lim.MaxMessages)
	if err != nil {
		return nil, fmt.Errorf("%s: table part: %w", path, err)
	}
	defer rows.Close()
	out := map[string]Part{}
	for rows.Next() {
		var id, msg string
		var size int64
		var data []byte
		if err := rows.Scan(&id, &msg, &size, &data); err != nil {
			return nil, fmt.Errorf("%s: table part, session %s: %w", path, session, err)
		}
		if size > int64(lim.MaxDataBytes) {
			continue // a large text part that mentions the word, not a marker
		}
		p, err := DecodePart(data)
		if err != nil {
			return nil, fmt.Errorf("%s: table part, row %s: data: %w", path, id, err)
		}
		if p.Type == "compaction" {
			out[msg] = p
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: table part: %w", path, err)
	}
	return out, nil
}

// Message is the part of a message's data JSON the importer reads.
type Message struct {
	Role       string `json:"role"`
	ParentID   string `json:"parentID"`
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
	Summary    bool   `json:"-"`
	Finish     string `json:"finish"`
	Time       struct {
		Created   float64 `json:"created"`
		Completed float64 `json:"completed"`
	} `json:"time"`
	Tokens *Tokens `json:"tokens"`
}

// Tokens are an assistant message's counts, as OpenCode stores them.
type Tokens struct {
	Total     float64 `json:"total"`
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Reasoning float64 `json:"reasoning"`
	Cache     struct {
		Read  float64 `json:"read"`
		Write float64 `json:"write"`
	} `json:"cache"`
}

// Part is the part of a part's data JSON the importer reads.
type Part struct {
	Type     string `json:"type"`
	Auto     bool   `json:"auto"`
	Overflow bool   `json:"overflow"`
}

// maxTokens bounds one count: more than any context window by far, and
// small enough that sums stay exact.
const maxTokens = 1 << 40

// DecodeMessage decodes a message row's data. Counts must be whole,
// non-negative numbers below 2^40; `summary` is a boolean in 1.x (older
// versions stored an object there for user messages: it is ignored).
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	if len(b) == 0 {
		return m, errors.New("empty")
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, err
	}
	var s struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(b, &s); err == nil && string(s.Summary) == "true" {
		m.Summary = true
	}
	if m.Role != "user" && m.Role != "assistant" {
		return m, fmt.Errorf("role %q: want user or assistant", truncate(m.Role))
	}
	if m.Tokens != nil {
		for _, f := range []struct {
			name string
			v    float64
		}{{"tokens.total", m.Tokens.Total}, {"tokens.input", m.Tokens.Input}, {"tokens.output", m.Tokens.Output},
			{"tokens.reasoning", m.Tokens.Reasoning}, {"tokens.cache.read", m.Tokens.Cache.Read}, {"tokens.cache.write", m.Tokens.Cache.Write}} {
			if f.v < 0 || f.v > maxTokens || f.v != float64(int64(f.v)) {
				return m, fmt.Errorf("%s = %v: want a whole number of tokens", f.name, f.v)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"time.created", m.Time.Created}, {"time.completed", m.Time.Completed}} {
		if f.v < 0 || f.v > 1e15 || f.v != float64(int64(f.v)) {
			return m, fmt.Errorf("%s = %v: want milliseconds since 1970", f.name, f.v)
		}
	}
	if len(m.ProviderID) > 200 || len(m.ModelID) > 200 || len(m.ParentID) > 200 {
		return m, errors.New("providerID, modelID or parentID longer than 200 bytes")
	}
	return m, nil
}

// DecodePart decodes a part row's data.
func DecodePart(b []byte) (Part, error) {
	var p Part
	if len(b) == 0 {
		return p, errors.New("empty")
	}
	err := json.Unmarshal(b, &p)
	return p, err
}

// Usage is the token counts in tollgate's disjoint form: reasoning is
// billed as output.
func (t *Tokens) Usage() pricing.Usage {
	if t == nil {
		return pricing.Usage{}
	}
	return pricing.Usage{Input: int64(t.Input), CacheRead: int64(t.Cache.Read), CacheWrite: int64(t.Cache.Write),
		Output: int64(t.Output) + int64(t.Reasoning)}
}

// Context is the context size OpenCode compares with its threshold: total
// when the provider reported it, else the sum of the counts
// (packages/opencode/src/session/overflow.ts, isOverflow).
func (t *Tokens) Context() int64 {
	if t == nil {
		return 0
	}
	if t.Total > 0 {
		return int64(t.Total)
	}
	return int64(t.Input + t.Output + t.Cache.Read + t.Cache.Write)
}

// build turns a session's rows into its batch.
func build(s sessionRow, msgs []messageRow, compactions map[string]Part) importer.Batch {
	id := importer.SessionID(Harness, s.id)
	b := importer.Batch{Harness: Harness, Session: importer.Session{ID: id, Harness: Harness, Title: s.title}}
	position := 0
	var lastContext int64
	var pending *importer.Fold // a fold waiting for its first request after
	startedBy := ""
	for i, m := range msgs {
		d := m.data
		if d.Role == "user" {
			if p, ok := compactions[m.id]; ok {
				trigger := importer.TriggerManual
				if p.Auto {
					trigger = importer.TriggerAuto
				}
				f := &importer.Fold{ID: id + ":compaction:" + m.id, At: msTime(d.Time.Created, m.created), Kind: importer.KindSummary,
					Trigger: trigger, PreTokens: lastContext, Position: position}
				// The summary call answers the compaction message.
				for _, a := range msgs[i+1:] {
					if a.data.Role == "assistant" && a.data.ParentID == m.id && a.data.Summary && a.data.Tokens != nil {
						u := a.data.Tokens.Usage()
						f.Summary = &u
						f.CheckpointTokens = int64(a.data.Tokens.Output)
						break
					}
				}
				b.Records = append(b.Records, importer.Record{Fold: f})
				pending = f
				startedBy = importer.StartedByCompaction
				continue
			}
			if startedBy != importer.StartedByCompaction {
				startedBy = importer.StartedByPrompt
			}
			continue
		}
		if d.Tokens == nil || d.Tokens.Usage() == (pricing.Usage{}) {
			continue // not answered (an error or an abort before usage)
		}
		if b.Session.Provider == "" {
			b.Session.Provider, b.Session.Model = d.ProviderID, d.ModelID
		}
		q := &importer.Request{ID: m.id, At: msTime(d.Time.Created, m.created), Purpose: importer.PurposeConversation,
			Provider: d.ProviderID, Model: d.ModelID, Usage: d.Tokens.Usage(), Line: i + 1, StartedBy: startedBy}
		if d.Summary {
			q.Purpose = importer.PurposeCompaction
		} else {
			position++
			lastContext = d.Tokens.Context()
			if pending != nil {
				pending.SetActual(q)
				pending = nil
			}
		}
		b.Records = append(b.Records, importer.Record{Request: q})
		switch {
		case d.Summary:
			startedBy = importer.StartedByCompaction // the next request reads the summary
		case d.Finish == "tool-calls":
			startedBy = importer.StartedByToolResult
		default:
			startedBy = importer.StartedByPrompt
		}
	}
	return b
}

// msTime is a message's time: its data's time.created, else the row's.
func msTime(ms float64, row int64) time.Time {
	if ms > 0 {
		return time.UnixMilli(int64(ms)).UTC()
	}
	return time.UnixMilli(row).UTC()
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
