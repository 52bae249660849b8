package imports

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/harness/claudecode/ccfold"
	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/claudecode/testcorpus"
	"tollgate/app/importer"
)

// The predictions an import stores are the ones the PreCompact hook makes
// from the files on disk (ccfold.EarlierSessions): the same earlier
// sessions learned from — which the import decides from its own notes of
// which transcripts have a fold, read once — and the same figures. Both
// ways an import learns whether a transcript has a fold are covered:
// sessions that fit the pass's first read, and longer ones.
func TestImportPredictsAsTheHookWould(t *testing.T) {
	for _, c := range []struct {
		name    string
		session int64
	}{{"short sessions", 1000 << 10}, {"long sessions", 1536 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			if _, err := testcorpus.ClaudeCode(dir, testcorpus.Options{Bytes: 5 * c.session, SessionBytes: c.session, Seed: 11}); err != nil {
				t.Fatal(err)
			}
			projects := filepath.Join(dir, "projects")
			var mains []string
			traces := map[string]*cclog.Trace{}
			filepath.WalkDir(projects, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && cclog.Role(p) == importer.PurposeConversation {
					mains = append(mains, p)
				}
				return nil
			})
			for _, p := range mains {
				tr, err := ccfold.ReadTrace(p)
				if err != nil || len(tr.Events) == 0 {
					t.Fatalf("%s: %v", p, err)
				}
				traces[p] = tr
				// Written last at its last line, as Claude Code leaves it: the
				// hook picks the latest transcripts by modification time.
				last := tr.Events[len(tr.Events)-1].At
				if err := os.Chtimes(p, last, last); err != nil {
					t.Fatal(err)
				}
			}
			db, settings, _ := importEnv(t)
			if _, err := Files(ctx, db, settings, []Source{{Path: projects, Harness: cclog.Name}}, nil); err != nil {
				t.Fatal(err)
			}
			compared, learned := 0, 0
			for _, p := range mains {
				tr := traces[p]
				want := map[string]ccfold.Prediction{}
				alone := map[string]ccfold.Prediction{}
				for _, f := range ccfold.Replay(tr, ccfold.EarlierSessions(p, ccfold.Start(tr)), ccfold.Env{}) {
					want[f.Fold.ID] = f.Prediction
				}
				for _, f := range ccfold.Replay(tr, ccfold.NewHistory(), ccfold.Env{}) {
					alone[f.Fold.ID] = f.Prediction
				}
				id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
				s, err := db.Series(ctx, "claude-code:"+id)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				if len(s.Folds) != len(want) {
					t.Fatalf("%s: %d folds stored, the hook predicts %d", p, len(s.Folds), len(want))
				}
				for _, f := range s.Folds {
					w, ok := want[f.Rewrite]
					if !ok || f.PredictedColdTokens == nil || f.PredictedColdBand == nil {
						t.Fatalf("%s: fold %s: stored %+v, hook %+v (%v)", p, f.Rewrite, f, w, ok)
					}
					if *f.PredictedColdTokens != w.Cold || f.PredictedColdBand.Low != w.Low || f.PredictedColdBand.High != w.High {
						t.Errorf("%s: fold %s: stored %d [%d, %d], the hook predicts %d [%d, %d]", filepath.Base(p), f.Rewrite,
							*f.PredictedColdTokens, f.PredictedColdBand.Low, f.PredictedColdBand.High, w.Cold, w.Low, w.High)
					}
					compared++
					if a := alone[f.Rewrite]; a.Cold != w.Cold || a.Low != w.Low || a.High != w.High {
						learned++
					}
				}
			}
			// Else the test could not tell which sessions were learned from.
			if compared == 0 || learned == 0 {
				t.Fatalf("%d folds compared, %d of them predicted differently without the earlier sessions", compared, learned)
			}
			t.Logf("%d folds, %d of them learn from earlier sessions", compared, learned)
		})
	}
}
