package imports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/config"
	"tollgate/app/harness/claudecode/testcorpus"
	"tollgate/storage"
	"tollgate/test/shareddata"
)

// priceTable is what `tollgate price FILE` prints below its header: the
// folds of the log priced with a fresh home's prices (app/cli adds the
// flags and the exit status).
func priceTable(t *testing.T, path string) (string, error) {
	t.Helper()
	_, settings, _ := importEnv(t)
	sl, err := ReadSessionLog(path, "")
	if err != nil {
		return "", err
	}
	rows, err := PriceFolds(sl, settings, 0)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	WritePriceTable(&out, rows)
	return out.String(), nil
}

// Claude Code folds are priced by the fold predictor, each learning only
// from what came before it (the session's earlier folds, the project's
// earlier transcripts beside it): the predictor's targets are within 10 %
// of the bill, or inside a band with high ≤ 2 × low.
func TestPriceRealFolds(t *testing.T) {
	data := shareddata.Dir(t)
	settings := func() *config.Settings { _, s, _ := importEnv(t); return s }()
	for _, tc := range []struct {
		file    string
		pre     int64
		actual  any
		trigger string
	}{
		{"4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 170251, int64(14603), "auto"},
		{"258c7280-ae70-4798-800f-63464d01a85d.jsonl", 167094, int64(12500), "auto"},
		{"small-manual-compact.jsonl", 15808, nil, "manual"},
	} {
		path := filepath.Join(data, "claude-code", tc.file)
		sl, rows := priceLog(t, path, settings)
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want the predicted and the actual summary", tc.file, len(rows))
		}
		// The actual cold tokens come from the raw lines (independent decode).
		w := decodeClaudeSession(t, path)
		for _, r := range rows {
			if r.PreTokens != tc.pre || r.Trigger != tc.trigger || deref(r.ActualCold) != tc.actual || deref(r.ActualCold) != deref(w.folds[0].actual) {
				t.Errorf("%s: %+v", tc.file, r)
			}
			if r.Skipped != "" || r.Envelope < 4096 || r.PredictedCold <= r.Checkpoint || r.Order != "summarize-then-prune-tail" {
				t.Errorf("%s: %+v", tc.file, r)
			}
		}
		est := rows[0]
		if est.CheckpointActual || !rows[1].CheckpointActual || !rows[1].CheckpointEstimated || est.Band == nil || len(est.Parts) < 2 {
			t.Fatalf("%s: rows %+v / %+v", tc.file, est, rows[1])
		}
		if est.PredictedCold < est.Band.Low || est.PredictedCold > est.Band.High || est.SummaryCallUSD <= 0 {
			t.Errorf("%s: predicted %d band %+v call $%f", tc.file, est.PredictedCold, est.Band, est.SummaryCallUSD)
		}
		t.Logf("%s: predicted %d [%d, %d], actual %v, summary call $%.4f (billed %v)", tc.file, est.PredictedCold, est.Band.Low, est.Band.High, tc.actual, est.SummaryCallUSD, derefF(est.SummaryCallActualUSD))
		if e, ok := est.ErrorPercent(); ok {
			a := float64(*est.ActualCold)
			inBand := a >= float64(est.Band.Low) && a <= float64(est.Band.High) && est.Band.High <= 2*est.Band.Low
			if e > 10 || e < -10 {
				if !inBand {
					t.Errorf("%s: %+.1f %% and outside the band", tc.file, e)
				}
			}
			// The summary call, warm: its input within a tenth of the bill
			// (the transcript records only a streaming partial of its output).
			call := sl.summaryCall(0)
			if call == nil {
				t.Fatalf("%s: no summary call", tc.file)
			}
			pin, ain := est.SummaryCall.Prompt(), call.Prompt()
			if float64(pin) < float64(ain)*0.9 || float64(pin) > float64(ain)*1.1 || est.SummaryCall.CacheRead < call.CacheRead-100 {
				t.Errorf("%s: summary call predicted %+v, billed %+v", tc.file, est.SummaryCall, *call)
			}
		}
	}
	out, err := priceTable(t, filepath.Join(data, "claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
	if err != nil || !strings.Contains(out, "predicted cold") || !strings.Contains(out, "band") || !strings.Contains(out, "14603") {
		t.Fatalf("%q %v", out, err)
	}
	t.Log("\n" + out)
}

func derefF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// `tollgate price --format json`: one entry per fold, the prediction
// beside the bill.
func TestPriceJSON(t *testing.T) {
	data := shareddata.Dir(t)
	_, settings, _ := importEnv(t)
	path := filepath.Join(data, "claude-code", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	sl, rows := priceLog(t, path, settings)
	var buf bytes.Buffer
	if err := WritePriceJSON(&buf, sl.Session(), rows); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Session string `json:"session"`
		Folds   []struct {
			Fold                int              `json:"fold"`
			Trigger             string           `json:"trigger"`
			PreTokens           int64            `json:"preTokens"`
			PredictedColdTokens int64            `json:"predictedColdTokens"`
			PredictedColdBand   storage.ColdBand `json:"predictedColdBand"`
			ActualColdTokens    int64            `json:"actualColdTokens"`
			ErrorPct            float64          `json:"errorPct"`
			SummaryCall         struct {
				PredictedUSD float64 `json:"predictedUSD"`
				ActualUSD    float64 `json:"actualUSD"`
			} `json:"summaryCall"`
		} `json:"folds"`
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Session != "claude-code:258c7280-ae70-4798-800f-63464d01a85d" || len(got.Folds) != 1 {
		t.Fatalf("%+v", got)
	}
	f := got.Folds[0]
	want := float64(f.PredictedColdTokens-12500) / 12500 * 100
	if f.Fold != 1 || f.Trigger != "auto" || f.PreTokens != 167094 || f.ActualColdTokens != 12500 || math.Abs(f.ErrorPct-want) > 0.05 ||
		f.PredictedColdBand.Low > f.PredictedColdTokens || f.PredictedColdBand.High < f.PredictedColdTokens || f.SummaryCall.PredictedUSD <= 0 || f.SummaryCall.ActualUSD <= 0 {
		t.Fatalf("%+v", f)
	}
}

func TestPriceDSHFolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	os.WriteFile(path, []byte(testcorpus.DSHPriceLog), 0o644)
	_, settings, _ := importEnv(t)
	_, rows := priceLog(t, path, settings)
	if len(rows) != 3 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	// Fold 1 (summary): envelope 13,000 (the smallest read), surface
	// 20,000 | 12,000 | 15,000 | 1,000 pending; the last 15,500 retained,
	// so the span is the first two units. The next request reads the
	// envelope rounded down to 64 (12,992) and nothing else: cold =
	// 13,000 − 12,992 + checkpoint + the retained 16,000.
	est, act := rows[0], rows[1]
	if est.Envelope != 13000 || est.Units != 4 || est.PredictedCold != 8+4000+16000 || act.PredictedCold != 8+3000+16000 {
		t.Fatalf("summary fold: %+v / %+v", est, act)
	}
	if deref(est.ActualCold) != int64(18508) {
		t.Fatalf("actual %v", deref(est.ActualCold))
	}
	if e, ok := act.ErrorPercent(); !ok || fmt.Sprintf("%.1f", e) != "2.7" {
		t.Fatalf("error %v", e)
	}
	// Fold 2 (prune): envelope = the first request after fold 1 read
	// 12,992; the prune starts 3,000 tokens in, inside the first unit
	// (18,508 long), and frees 9,000: cold from that unit on.
	pr := rows[2]
	if pr.Kind != "prune" || pr.Envelope != 12992 || deref(pr.ActualCold) != int64(8000) {
		t.Fatalf("prune fold: %+v", pr)
	}
	if want := int64(12992 + 18508 + 500 - 9000 - 12992); pr.PredictedCold != want {
		t.Fatalf("prune fold predicted %d, want %d", pr.PredictedCold, want)
	}
}

// A Codex rollout with a local compaction: its summary call is the
// token_count before the compacted item and leaves the main line.
func TestPriceCodexFold(t *testing.T) {
	tc := func(at string, total, in, cached, out int64) string {
		return fmt.Sprintf(`{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"total_tokens":%d},"model_context_window":258400}}}`+"\n", at, total, in, cached, out, in+out)
	}
	log := `{"timestamp":"2026-01-25T10:32:00.707Z","type":"session_meta","payload":{"id":"019bf4b5-aaaa-7000-8000-000000000001","cwd":"/w","model_provider":"openai"}}
{"timestamp":"2026-01-25T10:32:00.800Z","type":"turn_context","payload":{"model":"gpt-5.2-codex"}}
` + tc("2026-01-25T10:32:04.520Z", 100, 9162, 6656, 144) + tc("2026-01-25T10:32:10.520Z", 200, 30000, 9216, 300) +
		tc("2026-01-25T10:32:20.520Z", 300, 30500, 30208, 2500) + // the summary call
		`{"timestamp":"2026-01-25T10:32:21.000Z","type":"compacted","payload":{"message":"` + strings.Repeat("summary ", 1000) + `"}}
{"timestamp":"2026-01-25T10:32:21.000Z","type":"event_msg","payload":{"type":"context_compacted"}}
` + tc("2026-01-25T10:32:30.520Z", 400, 9800, 6656, 100)
	path := filepath.Join(t.TempDir(), "rollout-2026-01-25T10-32-00-019bf4b5-aaaa-7000-8000-000000000001.jsonl")
	os.WriteFile(path, []byte(log), 0o644)
	out, err := priceTable(t, path)
	t.Log("\n" + out)
	if err != nil || strings.Count(out, "\n     1  summary") != 2 || !strings.Contains(out, "3144") {
		t.Fatalf("%v\n%s", err, out)
	}
	sl, err := ReadSessionLog(path, "")
	if err != nil || len(sl.main) != 3 || len(sl.calls) != 1 || len(sl.folds) != 1 {
		t.Fatalf("%+v %v", sl, err)
	}
}

// The import's trace cache decodes a transcript once while it is
// unchanged, again once it grows, and keeps at most its bound.
func TestTraceCache(t *testing.T) {
	dir := t.TempDir()
	line := `{"type":"user","cwd":"/p","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"hi"}}` + "\n"
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := newTraceCache(claudePredictor(t), int64(len(line))+1) // room for one file
	t1, err := traceOf(c, a)
	if err != nil || t1.Cwd != "/p" {
		t.Fatalf("%+v %v", t1, err)
	}
	if t2, _ := traceOf(c, a); t2 != t1 {
		t.Fatal("an unchanged file was decoded again")
	}
	if err := os.WriteFile(a, []byte(line+line), 0o600); err != nil {
		t.Fatal(err)
	}
	if t3, _ := traceOf(c, a); t3 == t1 || len(t3.Events) != 2 {
		t.Fatalf("a grown file: %+v", t3)
	}
	if _, err := traceOf(c, b); err != nil {
		t.Fatal(err)
	}
	if len(c.m) != 1 || c.m[b] == nil || c.bytes != int64(len(line)) {
		t.Fatalf("cache holds %d files, %d bytes", len(c.m), c.bytes)
	}
	if _, err := traceOf(c, filepath.Join(dir, "none.jsonl")); err == nil {
		t.Fatal("a missing file read")
	}
	if c.HasFold(a) || c.HasFold(filepath.Join(dir, "none.jsonl")) {
		t.Fatal("a fold in a file without one")
	}
	fold := `{"type":"system","subtype":"compact_boundary","timestamp":"2026-03-01T10:00:01Z"}` + "\n"
	if err := os.WriteFile(a, []byte(line+fold), 0o600); err != nil {
		t.Fatal(err)
	}
	if !c.HasFold(a) {
		t.Fatal("the fold written since is not seen")
	}
}

// priceLog reads the log at path and prices every fold of it, as
// `tollgate price` does.
func priceLog(t *testing.T, path string, settings *config.Settings) (*SessionLog, []FoldPrice) {
	t.Helper()
	sl, err := ReadSessionLog(path, "")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := PriceFolds(sl, settings, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sl, rows
}
