package ocdb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/importer"
	"tollgate/pricing"
)

// schema is OpenCode 1.18.33's tables as its migrations leave them (the
// columns the importer reads and the NOT NULL ones around them).
const schema = "CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL, " +
	"`directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL);" +
	"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);" +
	"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);"

type fixture struct {
	t  testing.TB
	db *sql.DB
	n  int
}

func newFixture(t testing.TB, path string) *fixture {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db}
}

func (f *fixture) exec(q string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(q, args...); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) session(id string, at int64) {
	f.exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'p', 's', '/w', 'a title', '1.18.33', ?, ?)", id, at, at)
}

// message adds a message and returns its id; ids ascend like OpenCode's.
func (f *fixture) message(session string, at int64, data string) string {
	f.n++
	id := fmt.Sprintf("msg_%04d", f.n)
	f.exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)", id, session, at, at, data)
	return id
}

func (f *fixture) part(session, msg, data string) {
	f.n++
	f.exec("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, 0, 0, ?)", fmt.Sprintf("prt_%04d", f.n), msg, session, data)
}

func assistant(parent string, at int64, finish string, input, output, reasoning, read, write int, summary bool) string {
	return fmt.Sprintf(`{"role":"assistant","parentID":%q,"providerID":"fake","modelID":"m1","summary":%v,"finish":%q,"time":{"created":%d,"completed":%d},`+
		`"tokens":{"input":%d,"output":%d,"reasoning":%d,"cache":{"read":%d,"write":%d}}}`, parent, summary, finish, at, at+1, input, output, reasoning, read, write)
}

// writeSession writes a session with a tool loop, an automatic compaction
// and the request after it, as OpenCode 1.18 stores them.
func writeSession(f *fixture, sid string) {
	f.session(sid, 1_780_000_000_000)
	u1 := f.message(sid, 1_780_000_000_001, `{"role":"user","time":{"created":1780000000001},"agent":"build","model":{"providerID":"fake","modelID":"m1"}}`)
	f.part(sid, u1, `{"type":"text","text":"fix the bug (not a \"compaction\")"}`)
	f.message(sid, 1_780_000_000_010, assistant(u1, 1_780_000_000_010, "tool-calls", 3000, 40, 10, 0, 0, false))
	f.message(sid, 1_780_000_000_020, assistant(u1, 1_780_000_000_020, "stop", 200, 50, 0, 3000, 0, false))
	c := f.message(sid, 1_780_000_000_030, `{"role":"user","time":{"created":1780000000030}}`)
	f.part(sid, c, `{"type":"compaction","auto":true,"overflow":false}`)
	f.message(sid, 1_780_000_000_040, assistant(c, 1_780_000_000_040, "stop", 100, 400, 0, 3200, 0, true))
	u2 := f.message(sid, 1_780_000_000_050, `{"role":"user","time":{"created":1780000000050}}`)
	f.part(sid, u2, `{"type":"text","synthetic":true,"text":"Continue if you have next steps"}`)
	f.message(sid, 1_780_000_000_060, assistant(u2, 1_780_000_000_060, "stop", 900, 30, 0, 0, 0, false))
	// An aborted answer without usage is no request.
	f.message(sid, 1_780_000_000_070, `{"role":"assistant","parentID":"x","providerID":"fake","modelID":"m1","time":{"created":1780000000070},"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}`)
}

func TestReadSessionRequestsAndFold(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	f := newFixture(t, path)
	writeSession(f, "ses_one")

	logs, err := Read(context.Background(), path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 {
		t.Fatalf("%d sessions", len(logs))
	}
	b := logs[0].Batch
	if b.Session.ID != "opencode:ses_one" || b.Session.Harness != Harness || b.Session.Title != "a title" || b.Session.Model != "m1" {
		t.Fatalf("session %+v", b.Session)
	}
	if b.Requests() != 4 || b.Folds() != 1 {
		t.Fatalf("%d requests, %d folds: %+v", b.Requests(), b.Folds(), b.Records)
	}
	var reqs []*importer.Request
	var fold *importer.Fold
	for _, r := range b.Records {
		if r.Request != nil {
			reqs = append(reqs, r.Request)
		} else {
			fold = r.Fold
		}
	}
	// Reasoning is billed as output; input stays disjoint from the cache.
	if got := reqs[0].Usage; got != (pricing.Usage{Input: 3000, Output: 50}) {
		t.Fatalf("first usage %+v", got)
	}
	if reqs[1].StartedBy != importer.StartedByToolResult || reqs[0].StartedBy != importer.StartedByPrompt {
		t.Fatalf("started by %q, %q", reqs[0].StartedBy, reqs[1].StartedBy)
	}
	if reqs[2].Purpose != importer.PurposeCompaction || reqs[3].Purpose != importer.PurposeConversation || reqs[3].StartedBy != importer.StartedByCompaction {
		t.Fatalf("purposes %+v %+v", reqs[2], reqs[3])
	}
	if fold.Trigger != importer.TriggerAuto || fold.Kind != importer.KindSummary || fold.Position != 2 || fold.PreTokens != 3250 {
		t.Fatalf("fold %+v", fold)
	}
	if fold.Summary == nil || *fold.Summary != (pricing.Usage{Input: 100, CacheRead: 3200, Output: 400}) || fold.CheckpointTokens != 400 {
		t.Fatalf("fold summary %+v checkpoint %d", fold.Summary, fold.CheckpointTokens)
	}
	if fold.ActualCold == nil || *fold.ActualCold != 900 || fold.ActualRequest != reqs[3].ID {
		t.Fatalf("fold actual %v %q", fold.ActualCold, fold.ActualRequest)
	}
	if fold.ID != "opencode:ses_one:compaction:"+"msg_0005" {
		t.Fatalf("fold id %q", fold.ID)
	}

	// Read again: the same ids and stamp (an import of it adds nothing).
	again, err := Read(context.Background(), path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Stamp != logs[0].Stamp || again[0].Batch.Records[0].Request.ID != reqs[0].ID {
		t.Fatal("a second read differs")
	}
	// A new message changes the stamp.
	f.message("ses_one", 1_780_000_000_080, assistant("x", 1_780_000_000_080, "stop", 5, 5, 0, 0, 0, false))
	grown, err := Read(context.Background(), path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if grown[0].Stamp == logs[0].Stamp || grown[0].Batch.Requests() != 5 {
		t.Fatalf("after a new message: stamp %q requests %d", grown[0].Stamp, grown[0].Batch.Requests())
	}
}

func TestReadIsQueryOnlyAndReadsBesideAnOpenWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	f := newFixture(t, path)
	writeSession(f, "ses_w")
	// Another connection (OpenCode) holds an open write transaction: the
	// WAL lets the reader see the last commit.
	tx, err := f.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_uncommitted', 'p', 's', '/', 't', 'v', 1, 1)"); err != nil {
		t.Fatal(err)
	}
	logs, err := Read(context.Background(), path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 {
		t.Fatalf("read %d sessions beside an open transaction", len(logs))
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The reader is query-only: the file it opened cannot be changed
	// through it.
	db, err := open(path, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DELETE FROM message"); err == nil {
		t.Fatal("the importer's connection could write")
	}
}

func TestReadErrorsNameFileTableAndRow(t *testing.T) {
	cases := []struct {
		name string
		data string
		lim  Limits
		want []string
	}{
		{"not json", `{"role":`, Limits{}, []string{"table message, row msg_0001", "data"}},
		{"negative tokens", `{"role":"assistant","tokens":{"input":-5}}`, Limits{}, []string{"row msg_0001", "tokens.input"}},
		{"fraction", `{"role":"assistant","tokens":{"cache":{"read":1.5}}}`, Limits{}, []string{"tokens.cache.read"}},
		{"role", `{"role":"system"}`, Limits{}, []string{"role \"system\""}},
		{"too big", `{"role":"user","pad":"` + strings.Repeat("x", 300) + `"}`, Limits{MaxDataBytes: 100}, []string{"row msg_0001", "limit 100"}},
		{"too many", `{"role":"user"}`, Limits{MaxMessages: 1}, []string{"session ses_bad", "more than 1 messages"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "opencode.db")
			f := newFixture(t, path)
			f.session("ses_bad", 1_780_000_000_000)
			f.message("ses_bad", 1, c.data)
			if c.name == "too many" {
				f.message("ses_bad", 2, c.data)
			}
			// A good session beside the bad one is still read.
			f.session("ses_good", 1_780_000_000_001)
			f.message("ses_good", 3, `{"role":"user"}`)
			logs, err := Read(context.Background(), path, c.lim, nil)
			if err != nil {
				t.Fatalf("one bad session failed the whole read: %v", err)
			}
			var bad, good *Log
			for i := range logs {
				switch logs[i].Batch.Session.ID {
				case importer.SessionID(Harness, "ses_bad"):
					bad = &logs[i]
				case importer.SessionID(Harness, "ses_good"):
					good = &logs[i]
				}
			}
			if bad == nil || good == nil || bad.Err == nil || good.Err != nil {
				t.Fatalf("bad %+v good %+v", bad, good)
			}
			for _, w := range append(c.want, path) {
				if !strings.Contains(bad.Err.Error(), w) {
					t.Fatalf("error %q does not name %q", bad.Err, w)
				}
			}
			// Unchanged sessions are not read at all: the bad rows go unseen.
			again, err := Read(context.Background(), path, c.lim, func(string, string) bool { return false })
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range again {
				if !l.Unchanged || l.Err != nil || len(l.Batch.Records) != 0 || l.Stamp == "" {
					t.Fatalf("unchanged session read: %+v", l)
				}
			}
		})
	}
}

func TestReadRefusesWhatIsNoOpenCodeDatabase(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite3", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE session (id text)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Read(context.Background(), other, Limits{}, nil); err == nil || !strings.Contains(err.Error(), `table "message" is missing`) {
		t.Fatalf("other schema: %v", err)
	}
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("hello, not sqlite"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(context.Background(), text, Limits{}, nil); err == nil || !strings.Contains(err.Error(), "notes.db") {
		t.Fatalf("text file: %v", err)
	}
	if _, err := Read(context.Background(), dir, Limits{}, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("folder: %v", err)
	}
}

func TestReadLimitsSessionsToTheMostRecent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	f := newFixture(t, path)
	for i := range 5 {
		f.session(fmt.Sprintf("ses_%d", i), int64(1_780_000_000_000+i))
	}
	logs, err := Read(context.Background(), path, Limits{MaxSessions: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 2 || logs[0].Batch.Session.ID != "opencode:ses_3" || logs[1].Batch.Session.ID != "opencode:ses_4" {
		t.Fatalf("got %d: %+v", len(logs), logs)
	}
}

func TestDefaultPath(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if got := DefaultPath(get, "/home/u"); got != "/home/u/.local/share/opencode/opencode.db" {
		t.Fatal(got)
	}
	env["XDG_DATA_HOME"] = "/data"
	if got := DefaultPath(get, "/home/u"); got != "/data/opencode/opencode.db" {
		t.Fatal(got)
	}
}

// The decoders read data a file supplies: no input panics, and what
// decodes keeps its bounds.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(assistant("p", 1, "stop", 1, 2, 3, 4, 5, true)))
	f.Add([]byte(`{"role":"user","summary":{"title":"x"}}`))
	f.Add([]byte(`{"role":"assistant","tokens":{"total":1e300}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		u := m.Tokens.Usage()
		if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || m.Tokens.Context() < 0 {
			t.Fatalf("negative usage %+v from %q", u, b)
		}
		if m.Role != "user" && m.Role != "assistant" {
			t.Fatalf("role %q accepted", m.Role)
		}
	})
}

func FuzzDecodePart(f *testing.F) {
	f.Add([]byte(`{"type":"compaction","auto":true,"overflow":false}`))
	f.Add([]byte(`{"type":"text","text":"compaction"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePart(b)
		if err == nil && p.Type == "compaction" && !bytes.Contains(b, []byte("compaction")) && !bytes.Contains(b, []byte(`\u`)) {
			t.Fatalf("compaction part from %q", b)
		}
	})
}

// BenchmarkRead reads a session of 2,000 messages (1,000 requests, one
// compaction) from a WAL database, as an import of a long session does.
func BenchmarkRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "opencode.db")
	f := newFixture(b, path)
	f.session("ses_b", 1)
	tx, err := f.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		at := int64(1_780_000_000_000 + i*10)
		tx.Exec("INSERT INTO message VALUES (?, 'ses_b', ?, ?, ?)", fmt.Sprintf("msg_%06du", i), at, at, `{"role":"user","time":{"created":1}}`)
		tx.Exec("INSERT INTO part VALUES (?, ?, 'ses_b', 0, 0, ?)", fmt.Sprintf("prt_%06d", i), fmt.Sprintf("msg_%06du", i), `{"type":"text","text":"`+strings.Repeat("word ", 200)+`"}`)
		tx.Exec("INSERT INTO message VALUES (?, 'ses_b', ?, ?, ?)", fmt.Sprintf("msg_%06da", i), at+1, at+1, assistant("p", at+1, "stop", 100+i, 20, 0, 5000+i*50, 0, false))
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		logs, err := Read(context.Background(), path, Limits{}, nil)
		if err != nil || logs[0].Batch.Requests() != 1000 {
			b.Fatalf("%v", err)
		}
	}
}
