package claudecode

import (
	"bufio"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
	"tollgate/pricing"
)

// cutAtBoundaries writes, for each compact_boundary of a real transcript,
// the transcript as the PreCompact hook saw it (every line before the
// boundary) into its own folder, and returns the files with the fold each
// precedes.
func cutAtBoundaries(t *testing.T, src string) (paths []string, folds []*importer.Fold) {
	t.Helper()
	full, err := readTranscript(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range full.Records {
		if rec.Fold != nil {
			folds = append(folds, rec.Fold)
		}
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var lines []string
	k := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"compact_boundary"`) && k < len(folds) {
			dir := filepath.Join(t.TempDir(), "project")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.Base(src))
			if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
			k++
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return paths, folds
}

// The hook on the real transcripts, cut at each boundary, the session's
// files absent (they were on another machine): the gate's quote re-reads
// the predicted cold tokens, within 10 % of the bill or inside the band.
func TestHookPredictsRealFolds(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "data", "claude-code"))
	srcs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(srcs) == 0 {
		t.Skipf("no shared data at %s", dir)
	}
	billed := 0
	for _, src := range srcs {
		paths, folds := cutAtBoundaries(t, src)
		for k, p := range paths {
			fold := folds[k]
			tr, err := readTranscript(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			in := hookInput{SessionID: "s", TranscriptPath: p, HookEventName: claudePreCompact, Trigger: fold.Trigger}
			opts := Options{Now: func() time.Time { return fold.At }, Getenv: func(string) string { return "" }, Timeout: time.Minute}
			window, threshold := cclog.AutoCompact(tr.Model, opts.Getenv)
			pred := predictFold(in, tr, opts)
			req := claudeRewriteRequest(in, tr, opts, window, threshold, pred)
			if threshold != 167_000 || req.ThresholdTokens != threshold {
				t.Errorf("threshold %d", req.ThresholdTokens)
			}
			s := req.Plan.Summarize
			if s == nil || s.EstimatedTokens+s.RestoredTokens != pred.Cold || req.Prediction == nil || req.Prediction.Low != pred.Low {
				t.Fatalf("plan %+v prediction %+v, predicted %d", s, req.Prediction, pred.Cold)
			}
			model := pricing.CacheModel{Kind: pricing.Breakpoint, Granularity: 1, MinimumPrefix: 1024, TTLSeconds: 3600, EstimatedSummaryTokens: 4000,
				Prices: pricing.Prices{PricePerMTokens: 5, CacheHitPricePerMTokens: 0.5, CacheWritePricePerMTokens: 6.25, CacheWrite1hPricePerMTokens: 10, OutputPricePerMTokens: 25}}
			q, err := pricing.NewQuote(req.ToQuoteRequest(model, fold.At))
			if err != nil {
				t.Fatal(err)
			}
			if q.ColdTokens != pred.Cold {
				t.Errorf("the gate's cold figure %d, the prediction %d", q.ColdTokens, pred.Cold)
			}
			if fold.ActualCold == nil {
				t.Logf("%s fold %d (%s): predicted %d [%d, %d], no billed request after it", filepath.Base(src), k+1, fold.Trigger, pred.Cold, pred.Low, pred.High)
				continue
			}
			billed++
			actual := *fold.ActualCold
			e := float64(pred.Cold-actual) / float64(actual) * 100
			t.Logf("%s fold %d (%s): predicted %d [%d, %d], actual %d, error %+.1f %%", filepath.Base(src), k+1, fold.Trigger, pred.Cold, pred.Low, pred.High, actual, e)
			if math.Abs(e) > 10 && (actual < pred.Low || actual > pred.High || pred.High > 2*pred.Low) {
				t.Errorf("%s fold %d: %+.1f %% and outside the band", src, k+1, e)
			}
		}
	}
	if billed == 0 {
		t.Fatal("no billed fold")
	}
}

// The project's earlier sessions teach the hook: a transcript beside this
// one (older) gives the summary size and the cached prefix of this Claude
// Code version.
func TestHookLearnsFromEarlierSessions(t *testing.T) {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "data", "claude-code"))
	older := filepath.Join(dir, "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	later := filepath.Join(dir, "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
	if _, err := os.Stat(later); err != nil {
		t.Skipf("no shared data at %s", dir)
	}
	paths, folds := cutAtBoundaries(t, later)
	cutPath := paths[0]
	b, err := os.ReadFile(older)
	if err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(filepath.Dir(cutPath), filepath.Base(older))
	if err := os.WriteFile(sibling, b, 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(sibling, past, past); err != nil {
		t.Fatal(err)
	}
	tr, err := readTranscript(context.Background(), cutPath)
	if err != nil {
		t.Fatal(err)
	}
	in := hookInput{SessionID: "s", TranscriptPath: cutPath, HookEventName: claudePreCompact, Trigger: "auto"}
	pred := predictFold(in, tr, Options{Now: func() time.Time { return folds[0].At }, Getenv: func(string) string { return "" }})
	if s := pred.Part("summary"); !strings.Contains(s.Note, "other projects") || s.Tokens != 3642 {
		t.Errorf("summary %+v, want the earlier session's 3,642", s)
	}
	if pred.Prefix != 21460 {
		t.Errorf("prefix %d, want the earlier session's 21,460", pred.Prefix)
	}
	actual := *folds[0].ActualCold
	e := float64(pred.Cold-actual) / float64(actual) * 100
	t.Logf("with the earlier session: predicted %d [%d, %d], actual %d, error %+.1f %%", pred.Cold, pred.Low, pred.High, actual, e)
	if math.Abs(e) > 10 {
		t.Errorf("error %+.1f %%", e)
	}
}

// Idle past the cache's TTL, the request says how long ago it expired (the
// dialog leads with it); within it, nothing.
func TestHookSaysWhenTheCacheExpired(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tr, err := parseTestTranscript(testTranscript(t0))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Trace == nil || len(tr.Trace.Events) == 0 {
		t.Fatal("no trace")
	}
	in := hookInput{SessionID: "s", HookEventName: claudePreCompact, Trigger: "auto"}
	last := t0.Add(3 * time.Minute) // the last main request
	for _, c := range []struct {
		idle    time.Duration
		expired float64
	}{{2 * time.Minute, 0}, {14 * time.Minute, 9 * 60}} {
		opts := Options{Now: func() time.Time { return last.Add(c.idle) }, Getenv: func(string) string { return "" }, Timeout: time.Minute}
		window, threshold := cclog.AutoCompact(tr.Model, opts.Getenv)
		req := claudeRewriteRequest(in, tr, opts, window, threshold, predictFold(in, tr, opts))
		if req.Prediction == nil || req.Prediction.CacheExpiredSeconds != c.expired || req.IdleSeconds != c.idle.Seconds() {
			t.Errorf("idle %s: prediction %+v idle %v, want expired %v", c.idle, req.Prediction, req.IdleSeconds, c.expired)
		}
	}
}
