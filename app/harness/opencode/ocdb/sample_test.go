package ocdb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"tollgate/app/importer"
	"tollgate/app/importer/importertest"
)

// The sample in ../testdata/sample is the opencode.db the real OpenCode
// 1.18.33 (`opencode serve` with `opencode run --attach`) wrote in
// test/harness's TestOpenCodePlugin (run with TOLLGATE_SAMPLE_DIR), its
// write-ahead log folded in after the server stopped: one session with a
// compaction tollgate allowed (OpenCode's session.summarize, which it
// marks auto:false) and one OpenCode ran on its own once tollgate had
// stopped (auto:true). Read reads a copy: opening a WAL database creates
// its -wal and -shm beside it, which must not appear in the repository.
func TestRealOpenCodeSample(t *testing.T) {
	src := filepath.Join("..", "testdata", "sample", File)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// What the database holds, counted with SQL of the test's own.
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	sessions := count(`SELECT count(*) FROM session`)
	answered := count(`SELECT count(*) FROM message WHERE json_extract(data, '$.role') = 'assistant' AND
		json_extract(data, '$.tokens.input') + json_extract(data, '$.tokens.output') + json_extract(data, '$.tokens.cache.read') + json_extract(data, '$.tokens.cache.write') > 0`)
	summaries := count(`SELECT count(*) FROM message WHERE json_extract(data, '$.role') = 'assistant' AND json_extract(data, '$.summary') = 1`)
	compactions := count(`SELECT count(*) FROM part WHERE json_extract(data, '$.type') = 'compaction'`)
	autos := count(`SELECT count(*) FROM part WHERE json_extract(data, '$.type') = 'compaction' AND json_extract(data, '$.auto') = 1`)
	db.Close()
	if sessions == 0 || answered == 0 || compactions == 0 {
		t.Fatalf("the sample: %d sessions, %d answered messages, %d compactions", sessions, answered, compactions)
	}

	logs, err := Read(context.Background(), path, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != sessions {
		t.Fatalf("%d sessions read, the database has %d", len(logs), sessions)
	}
	var requests, calls, folds, auto int
	for _, l := range logs {
		if l.Err != nil || l.Unchanged || l.Stamp == "" {
			t.Fatalf("session %s: %+v", l.Batch.Session.ID, l)
		}
		s := l.Batch.Session
		if s.Harness != Harness || len(s.ID) <= len(Harness)+1 || s.ID[:len(Harness)+1] != Harness+":" || s.Provider == "" || s.Model == "" {
			t.Fatalf("session %+v", s)
		}
		for _, r := range l.Batch.Records {
			if q := r.Request; q != nil {
				requests++
				if q.Purpose == importer.PurposeCompaction {
					calls++
				}
				if q.Usage.Prompt() == 0 || q.ID == "" || q.At.IsZero() {
					t.Fatalf("request %+v", q)
				}
			}
		}
		for _, f := range importertest.Folds(t, l.Batch.Records) {
			folds++
			if f.Trigger == importer.TriggerAuto {
				auto++
			}
			if f.Kind != importer.KindSummary || f.Summary == nil || f.CheckpointTokens <= 0 || f.PreTokens <= 0 {
				t.Errorf("fold %+v", f)
			}
			t.Logf("fold %s: %s, %d tokens before, summary call %+v, %d cold after (request %s)", f.ID, f.Trigger, f.PreTokens, *f.Summary, importertest.Cold(f), f.ActualRequest)
		}
		t.Logf("session %s: %d records, %d requests, %d folds", s.ID, len(l.Batch.Records), l.Batch.Requests(), l.Batch.Folds())
	}
	if requests != answered || calls != summaries || folds != compactions || auto != autos {
		t.Fatalf("read %d requests (%d summary calls), %d folds (%d auto); the database has %d answered messages (%d summaries), %d compactions (%d auto)",
			requests, calls, folds, auto, answered, summaries, compactions, autos)
	}
}
