package ccfold

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
	"tollgate/test/shareddata"
)

// sharedData is the real Claude Code transcripts; tests that need them
// skip without.
func sharedData(t testing.TB) string { return filepath.Join(shareddata.Dir(t), "claude-code") }

// loadTrace parses a transcript with the trace, as the hook and price do.
func loadTrace(t testing.TB, path string) *importer.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := importer.Parse(f, importer.Options{Harness: cclog.Name, Path: path, AtEOF: true, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if cclog.TraceOf(res) == nil {
		t.Fatal("no trace")
	}
	return res
}

// realSessions are the shared transcripts in time order (a fold learns only
// from folds before it).
func realSessions(t testing.TB) []*importer.Result {
	dir := sharedData(t)
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var out []*importer.Result
	for _, p := range paths {
		out = append(out, loadTrace(t, p))
	}
	first := func(r *importer.Result) time.Time {
		for _, e := range cclog.TraceOf(r).Events {
			if !e.At.IsZero() {
				return e.At
			}
		}
		return time.Time{}
	}
	sort.SliceStable(out, func(i, j int) bool { return first(out[i]).Before(first(out[j])) })
	return out
}

// cut is the trace as the PreCompact hook sees it before fold k: every
// event before its boundary.
func cut(tr *cclog.Trace, k int) (*cclog.Trace, *importer.Fold) {
	n := 0
	for i, e := range tr.Events {
		if e.Kind != cclog.TraceBoundary {
			continue
		}
		if n == k {
			c := *tr
			c.Events = tr.Events[:i]
			return &c, e.Fold
		}
		n++
	}
	return nil, nil
}

// diskOf puts the session's files on "disk" as they were at the end of
// the cut trace: the text the transcript shows, the mtime of the last
// write (files only read: an hour before the session).
func diskOf(tr *cclog.Trace) memFiles {
	m := memFiles{}
	t0 := tr.Events[0].At.Add(-time.Hour)
	for _, e := range tr.Events {
		for _, op := range e.Files {
			f, seen := m[op.Path]
			switch {
			case op.Tool == "Read" && !op.Partial() && !seen:
				m[op.Path] = memFile{op.Content.String(), t0}
			case op.Tool == "Write":
				m[op.Path] = memFile{op.Content.String(), e.At}
			case op.Tool == "Edit" || op.Tool == "MultiEdit":
				text := f.text
				if op.HasContent {
					text = op.Content.String()
				}
				if op.HasContent || seen {
					m[op.Path] = memFile{op.Apply(text), e.At}
				}
			}
		}
	}
	return m
}

// The hook's moment on every real billed fold: the transcript cut at the
// boundary, nothing learned from other sessions, files absent and on disk.
// The predictor's targets: within 10 %, or inside a band with high ≤ 2 × low.
func TestRealFoldsAtTheHook(t *testing.T) {
	for _, res := range realSessions(t) {
		for k := 0; ; k++ {
			tr, fold := cut(cclog.TraceOf(res), k)
			if tr == nil {
				break
			}
			if fold.ActualCold == nil {
				continue // no billed request after it
			}
			actual := *fold.ActualCold
			for _, disk := range []bool{false, true} {
				env := Env{}
				if disk {
					env.Files = diskOf(tr)
				}
				p := Predict(tr, nil, env, fold.Trigger, fold.At)
				e := float64(p.Cold-actual) / float64(actual) * 100
				t.Logf("%s fold %d (%s, files on disk %v): predicted %d [%d, %d], actual %d, error %+.1f %%",
					res.Session.ID, k+1, fold.Trigger, disk, p.Cold, p.Low, p.High, actual, e)
				inBand := actual >= p.Low && actual <= p.High && p.High <= 2*p.Low
				if math.Abs(e) > 10 && !inBand {
					t.Errorf("%s fold %d: predicted %d [%d, %d], billed %d: %+.1f %% and outside the band", res.Session.ID, k+1, p.Cold, p.Low, p.High, actual, e)
				}
				if p.Threshold != 167_000 || fold.PreTokens < p.Threshold {
					t.Errorf("threshold %d, preTokens %d", p.Threshold, fold.PreTokens)
				}
				if !p.Call.Warm {
					t.Errorf("summary call predicted cold: %+v", p.Call)
				}
			}
		}
	}
}

// `tollgate price` and the importer replay the sessions in time order, each
// fold learning only from folds before it.
func TestRealFoldsReplayed(t *testing.T) {
	h := NewHistory()
	n := 0
	for _, res := range realSessions(t) {
		for _, f := range Replay(cclog.TraceOf(res), h, Env{}) {
			e, ok := f.ErrorPercent()
			if !ok {
				continue
			}
			n++
			p := f.Prediction
			t.Logf("%s %s: predicted %d [%d, %d], actual %d, error %+.1f %%", res.Session.ID, f.Fold.Trigger, p.Cold, p.Low, p.High, *f.Actual, e)
			inBand := *f.Actual >= p.Low && *f.Actual <= p.High && p.High <= 2*p.Low
			if math.Abs(e) > 10 && !inBand {
				t.Errorf("%s: %+.1f %% and outside the band", res.Session.ID, e)
			}
			if f.Summary == 0 {
				t.Errorf("%s: the summary's size was not measured", res.Session.ID)
			}
		}
	}
	if n == 0 {
		t.Fatal("no billed fold in the shared data")
	}
}
