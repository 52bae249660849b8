package imports

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/ccfold"
	"tollgate/app/harness/claudecode/cclog"
	"tollgate/test/shareddata"
)

// BenchmarkImportRealTranscripts imports the real Claude Code transcripts
// of the shared data (main transcripts with their folds, subagents, summary
// calls) into a fresh database per iteration: parsing, tracing for the fold
// predictions, pricing, the ledger, storing. It is the profile target of
// the import (`go test -run '^$' -bench ImportRealTranscripts -cpuprofile
// cpu.prof ./app/imports/`); `make bench-import` measures the same work on
// a 295 MB corpus beside ccusage.
func BenchmarkImportRealTranscripts(b *testing.B) {
	data := filepath.Join(shareddata.Dir(b), "claude-code")
	files, err := Walk(data, "claude-code")
	if err != nil || len(files) == 0 {
		b.Fatalf("%d files: %v", len(files), err)
	}
	var size int64
	for _, f := range files {
		size += f.Size
	}
	ctx := context.Background()
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		db, settings, _ := openHome(b)
		b.StartTimer()
		res, err := Files(ctx, db, settings, []Source{{Path: data, Harness: cclog.Name}}, nil)
		b.StopTimer()
		if err != nil || res.Folds == 0 || res.Requests == 0 {
			b.Fatalf("%d requests, %d folds: %v", res.Requests, res.Folds, err)
		}
		db.Close()
		b.StartTimer()
	}
}

// The import's cache of histories (ccfold.HistoryCache) gives every
// session the history replaying its earlier transcripts gives, the second
// time from the cache too, and a session learning into its copy leaves
// the cached one as it was.
func TestHistoryCacheMatchesReplay(t *testing.T) {
	data := filepath.Join(shareddata.Dir(t), "claude-code")
	dir := t.TempDir()
	mains, _ := filepath.Glob(filepath.Join(data, "*.jsonl"))
	var paths []string
	for i, m := range mains {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(m))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		// written in the order the sessions ran, as Claude Code would
		mod := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	cache := newTraceCache(claudePredictor(t), traceCacheBytes)
	learned := 0
	for round := range 2 {
		for _, p := range paths {
			tr, err := ccfold.ReadTrace(p)
			if err != nil {
				t.Fatal(err)
			}
			want := ccfold.EarlierSessions(p, ccfold.Start(tr))
			h := ccfold.EarlierSessionsFrom(p, ccfold.Start(tr), ccfold.Cached(cache))
			if !reflect.DeepEqual(h, want) {
				t.Fatalf("round %d, %s: the cached history differs from the replayed one", round, filepath.Base(p))
			}
			if !reflect.DeepEqual(want, ccfold.NewHistory()) {
				learned++
			}
			ccfold.Replay(tr, h, ccfold.Env{}) // the session learns into its copy
		}
	}
	if learned == 0 {
		t.Fatal("no session learned from an earlier one: the test checks nothing")
	}
	if len(cache.histories) == 0 {
		t.Fatal("nothing was cached")
	}
}
