package imports

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/harness/opencode/ocdb"
	"tollgate/pricing"
)

// openCodeSchema is OpenCode 1.18.33's session, message and part tables
// (the columns the importer reads and the NOT NULL ones around them).
const openCodeSchema = "CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL, " +
	"`directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL);" +
	"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);" +
	"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);"

// writeOpenCodeDB writes two sessions: one with a tool loop, a manual
// compaction and a request after it; one with a single answer.
func writeOpenCodeDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(openCodeSchema)
	at := int64(1_780_000_000_000)
	n := 0
	msg := func(session, data string) string {
		n++
		id := fmt.Sprintf("msg_%04d", n)
		exec("INSERT INTO message VALUES (?, ?, ?, ?, ?)", id, session, at+int64(n), at+int64(n), data)
		return id
	}
	answer := func(session, parent, finish string, summary bool, in, out, read, write int) {
		msg(session, fmt.Sprintf(`{"role":"assistant","parentID":%q,"providerID":"anthropic","modelID":"claude-sonnet-4-5","summary":%v,"finish":%q,`+
			`"time":{"created":%d},"tokens":{"input":%d,"output":%d,"reasoning":0,"cache":{"read":%d,"write":%d}}}`, parent, summary, finish, at+int64(n)+1, in, out, read, write))
	}
	for _, s := range []string{"ses_a", "ses_b"} {
		exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'p', 's', '/w', ?, '1.18.33', ?, ?)", s, "title "+s, at, at)
	}
	u := msg("ses_a", `{"role":"user","time":{"created":1780000000001}}`)
	answer("ses_a", u, "tool-calls", false, 2000, 50, 0, 8000)
	answer("ses_a", u, "stop", false, 300, 60, 10000, 0)
	c := msg("ses_a", `{"role":"user","time":{"created":1780000000010}}`)
	exec("INSERT INTO part VALUES ('prt_1', ?, 'ses_a', 0, 0, ?)", c, `{"type":"compaction","auto":false}`)
	answer("ses_a", c, "stop", true, 400, 700, 10000, 0)
	u2 := msg("ses_a", `{"role":"user","time":{"created":1780000000020}}`)
	answer("ses_a", u2, "stop", false, 1500, 20, 0, 0)
	u3 := msg("ses_b", `{"role":"user","time":{"created":1780000000030}}`)
	answer("ses_b", u3, "stop", false, 5000, 100, 0, 0)
	return db
}

func TestImportOpenCodeDatabaseTwice(t *testing.T) {
	db, settings, _ := importEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "opencode.db")
	oc := writeOpenCodeDB(t, path)

	// A folder means its opencode.db; the harness is told or named.
	res, err := Files(ctx, db, settings, []Source{{Path: dir, Harness: ocdb.Harness}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 5 || res.Folds != 1 || len(res.Sessions) != 2 {
		t.Fatalf("first import: %+v", res)
	}
	s, err := db.Series(ctx, "opencode:ses_a")
	if err != nil {
		t.Fatal(err)
	}
	want := pricing.Usage{Input: 2000 + 300 + 400 + 1500, CacheRead: 10000 + 10000, CacheWrite: 8000, Output: 50 + 60 + 700 + 20}
	if s.Session.Requests != 4 || s.Session.Tokens != want || s.Session.Harness != ocdb.Harness || s.Session.Title != "title ses_a" {
		t.Fatalf("session %+v, want tokens %+v", s.Session, want)
	}
	if len(s.Folds) != 1 || s.Folds[0].PreTokens != 10360 || s.Folds[0].Source != "import" || s.Folds[0].Kind != "summary" {
		t.Fatalf("folds %+v", s.Folds)
	}
	if a := s.Folds[0].ActualColdTokens; a == nil || *a != 1500 {
		t.Fatalf("actual cold %v", a)
	}

	// Walk (what --watch looks at) sees the database and its log.
	found, err := Walk(dir, ocdb.Harness)
	if err != nil || len(found) != 1 || found[0].Path != path {
		t.Fatalf("walk: %+v %v", found, err)
	}
	if wal, err := os.Stat(path + "-wal"); err != nil || found[0].Size <= wal.Size() {
		t.Fatalf("walk size %d does not count the WAL (%v)", found[0].Size, err)
	}
	if none, err := Walk(filepath.Join(dir, "nothing-here"), ocdb.Harness); err != nil || len(none) != 0 {
		t.Fatalf("walk of a folder without OpenCode: %+v %v", none, err)
	}

	// Again: nothing new, by the file name alone.
	again, err := Files(ctx, db, settings, []Source{{Path: path}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Requests != 0 || again.Folds != 0 {
		t.Fatalf("second import added %+v", again)
	}
	for _, f := range again.Files {
		if !f.Unchanged {
			t.Fatalf("%s not unchanged", f.Path)
		}
	}

	// OpenCode answers once more in ses_b: only that session is read again,
	// and only the new request is added.
	if _, err := oc.Exec(`INSERT INTO message VALUES ('msg_0100', 'ses_b', 1780000000100, 1780000000100,
		'{"role":"assistant","parentID":"x","providerID":"anthropic","modelID":"claude-sonnet-4-5","finish":"stop","time":{"created":1780000000100},"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":5000,"write":0}}}')`); err != nil {
		t.Fatal(err)
	}
	third, err := Files(ctx, db, settings, []Source{{Path: path, Harness: ocdb.Harness}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if third.Requests != 1 || len(third.Sessions) != 1 || third.Sessions[0] != "opencode:ses_b" {
		t.Fatalf("third import: %+v", third)
	}
}

func TestImportOpenCodeErrorsAndMissing(t *testing.T) {
	db, settings, _ := importEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	// The default location of a machine without OpenCode: nothing, no error.
	res, err := Files(ctx, db, settings, []Source{{Path: filepath.Join(dir, "none"), Harness: ocdb.Harness}}, nil)
	if err != nil || len(res.Files) != 0 {
		t.Fatalf("missing folder: %+v %v", res, err)
	}
	// A named database that is missing, or is not OpenCode's, fails and names it.
	if _, err := Files(ctx, db, settings, []Source{{Path: filepath.Join(dir, "gone.db"), Harness: ocdb.Harness}}, nil); err == nil || !strings.Contains(err.Error(), "gone.db") {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "opencode.db")
	if err := os.WriteFile(bad, []byte("not sqlite at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err = Files(ctx, db, settings, []Source{{Path: bad}}, nil)
	if err == nil || !strings.Contains(err.Error(), bad) || res.Failed != 1 || res.Requests != 0 {
		t.Fatalf("not a database: %+v %v", res, err)
	}
	up, err := Files(ctx, db, settings, []Source{{Name: "opencode.db", Reader: strings.NewReader("SQLite format 3\x00"), Harness: ocdb.Harness}}, nil)
	if err == nil || !strings.Contains(err.Error(), "import it by path") || up.Failed != 1 {
		t.Fatalf("upload: %+v %v", up, err)
	}
	if !ValidHarness(ocdb.Harness) {
		t.Fatal("opencode is not a valid --harness")
	}
}
