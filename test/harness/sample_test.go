package harness

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3": folding OpenCode's WAL into a copy
)

// Samples of what the real harnesses write, kept on request: with
// TOLLGATE_SAMPLE_DIR set, a test that passes copies its harness's logs
// into $TOLLGATE_SAMPLE_DIR/<harness>/ (emptied first) before its
// temporary folders are removed; the app/harness/*/testdata/sample/ files
// were made so. Without the variable nothing is copied and the tests run
// as they always do. The copies are the harnesses' own bytes, never edited
// (an OpenCode database has its write-ahead log folded in: copyDB):
//
//   - claude-code/: the session's main transcript <uuid>.jsonl and its
//     <uuid>/subagents/ as laid out in the project folder
//     (TestClaudeCodePreCompactHook: a manual and an automatic compaction,
//     then, for the sample only, a turn whose model calls the Agent tool,
//     SubagentMarker, for a subagent's transcript);
//   - codex/: the rollout-*.jsonl (TestCodexPreCompactHook: a declined, an
//     allowed and an unguarded compaction);
//   - opencode/: opencode.db (TestOpenCodePlugin: an allowed and an
//     unguarded compaction), once `opencode serve` has stopped;
//   - reasonix/: the JSON-RPC frames of one `reasonix run` with its sidecar,
//     both ways (TestReasonixCompactionPrepare, a last run for the sample
//     only: reasonixTap).
//
// Claude Code's transcript names the hook's command, $TOLLGATE_BIN: the
// samples were made with the binary copied under /tmp, so that no path
// but the tests' temporary folders' is in them:
//
//	mkdir -p /tmp/tollgate-sample/bin && cp build/bin/tollgate /tmp/tollgate-sample/bin/
//	TOLLGATE_BIN=/tmp/tollgate-sample/bin/tollgate TOLLGATE_HARNESS_MODULES=$PWD/test/harness/node_modules \
//	  TOLLGATE_SAMPLE_DIR=/tmp/samples go test -count=1 -v -run 'TestClaudeCodePreCompactHook$|TestCodexPreCompactHook$|TestOpenCodePlugin$|TestReasonixCompactionPrepare$' ./test/harness/

// sampleDir is $TOLLGATE_SAMPLE_DIR/<harness>, "" when no sample is asked
// for.
func sampleDir(harness string) string {
	d := os.Getenv("TOLLGATE_SAMPLE_DIR")
	if d == "" {
		return ""
	}
	return filepath.Join(d, harness)
}

// keepSample arranges for save to copy the harness's logs into its
// sample folder (emptied first) when the test ends, if it passed. It must
// be called after the temporary folders it copies from were made: cleanups
// run last-registered first, so it runs before they are removed (and after
// anything registered later, such as a harness server's stop).
func keepSample(t *testing.T, harness string, save func(dst string) error) {
	t.Helper()
	dst := sampleDir(harness)
	if dst == "" {
		return
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sample of %s not kept: the test failed", harness)
			return
		}
		if err := os.RemoveAll(dst); err != nil {
			t.Errorf("sample of %s: %v", harness, err)
			return
		}
		if err := save(dst); err != nil {
			t.Errorf("sample of %s: %v", harness, err)
			return
		}
		t.Logf("kept the sample of %s in %s", harness, dst)
	})
}

// copyFile copies src to dst, making dst's folder.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyFiles copies each file named by glob patterns under from to the same
// path under to; a pattern that matches nothing is an error.
func copyFiles(from, to string, patterns ...string) error {
	for _, pat := range patterns {
		m, err := filepath.Glob(filepath.Join(from, pat))
		if err != nil {
			return err
		}
		if len(m) == 0 {
			return fmt.Errorf("nothing matches %s in %s", pat, from)
		}
		for _, src := range m {
			rel, err := filepath.Rel(from, src)
			if err != nil {
				return err
			}
			if err := copyFile(src, filepath.Join(to, rel)); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyDB copies a SQLite database in WAL mode (the file, its -wal if any)
// to dst and folds the write-ahead log into the copy (PRAGMA
// wal_checkpoint(TRUNCATE); closing the last connection then removes the
// copy's -wal and -shm), so dst alone holds every row. The original is not
// opened.
func copyDB(src, dst string) error {
	if err := copyFile(src, dst); err != nil {
		return err
	}
	if _, err := os.Stat(src + "-wal"); err == nil {
		if err := copyFile(src+"-wal", dst+"-wal"); err != nil {
			return err
		}
	}
	db, err := sql.Open("sqlite3", "file:"+dst)
	if err != nil {
		return err
	}
	var busy, logged, done int
	err = db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done)
	if err == nil && busy != 0 {
		err = fmt.Errorf("checkpoint of %s busy", dst)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, f := range []string{dst + "-wal", dst + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
