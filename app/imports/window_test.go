package imports

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tollgate/app/config"
	"tollgate/storage/sqlite"
)

// A worker paused between claiming job 0 and parsing it, while the others
// run ahead through more than the window's 64 files: the import must still
// end. Before the window's slot was taken ahead of the claim it hung for
// good (the writer waited for job 0, job 0 for a slot).
func TestSlowWorkerDoesNotStallTheWindow(t *testing.T) {
	db, settings, _ := importEnv(t)
	dir := filepath.Join(t.TempDir(), "projects", "-w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const files = maxGroupFiles + 16
	writeSmallSessions(t, dir, files)
	testHookClaimed = func(i int) {
		if i == 0 {
			time.Sleep(500 * time.Millisecond)
		}
	}
	defer func() { testHookClaimed = nil }()
	res := importWithin(t, db, settings, Sources([]string{filepath.Dir(dir)}, "claude-code"),
		"the import hung: a worker waiting for a window slot held the job the writer waits for")
	if res.Requests != files {
		t.Fatalf("stored %d requests of %d", res.Requests, files)
	}
}

// writeSmallSessions writes n one-request sessions into dir, named so
// they sort as they are numbered.
func writeSmallSessions(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		line := fmt.Sprintf(`{"type":"assistant","sessionId":"s%d","uuid":"u%d","timestamp":"2026-11-01T10:00:00Z","requestId":"req_%d",`+
			`"message":{"id":"msg_%d","model":"claude-sonnet-4-5","role":"assistant","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`+"\n", i, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", i)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// importWithin imports srcs, failing the test with hung when the import
// has not ended within 20 seconds.
func importWithin(t *testing.T, db *sqlite.DB, settings *config.Settings, srcs []Source, hung string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var res Result
	go func() {
		var err error
		res, err = Files(ctx, db, settings, srcs, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal(hung)
	}
	return res
}

// tollgate import of a folder that is a symlink walks where it leads
// (filepath.WalkDir alone would not enter it).
func TestWalkEntersASymlinkedFolder(t *testing.T) {
	real := smallCorpus(t, t.TempDir())
	link := filepath.Join(t.TempDir(), "projects")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	want, err := Walk(real, "claude-code")
	if err != nil || len(want) == 0 {
		t.Fatalf("walk of the folder: %d files, %v", len(want), err)
	}
	got, err := Walk(link, "claude-code")
	if err != nil || len(got) != len(want) {
		t.Fatalf("walk of the symlink: %d files (want %d), %v", len(got), len(want), err)
	}
}
