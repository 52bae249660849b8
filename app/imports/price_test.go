package imports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/config"
	"tollgate/app/importer/testcorpus"
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

func TestPriceRealFolds(t *testing.T) {
	data := sharedDataDir(t)
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
		sl, err := ReadSessionLog(path, "")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := PriceFolds(sl, settings, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows, want the estimated and the actual checkpoint", tc.file, len(rows))
		}
		// The actual cold tokens come from the raw lines (independent decode).
		w := decodeClaudeSession(t, path)
		for _, r := range rows {
			if r.PreTokens != tc.pre || r.Trigger != tc.trigger || deref(r.ActualCold) != tc.actual || deref(r.ActualCold) != deref(w.folds[0].actual) {
				t.Errorf("%s: %+v", tc.file, r)
			}
			// Anthropic caches at breakpoints: the next request reads the
			// envelope and nothing after it, so the checkpoint is all cold.
			if r.Skipped != "" || r.Envelope < 4096 || r.PredictedCold != r.Checkpoint || r.Order != "summarize-then-prune-tail" {
				t.Errorf("%s: %+v", tc.file, r)
			}
		}
		if rows[0].Checkpoint != 4000 || rows[0].CheckpointActual || !rows[1].CheckpointActual || !rows[1].CheckpointEstimated {
			t.Errorf("%s: checkpoints %+v / %+v", tc.file, rows[0], rows[1])
		}
	}
	out, err := priceTable(t, filepath.Join(data, "claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
	if err != nil || !strings.Contains(out, "predicted cold") || !strings.Contains(out, "14603") || !strings.Contains(out, "-72.6%") {
		t.Fatalf("%q %v", out, err)
	}
}

func TestPriceDSHFolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	os.WriteFile(path, []byte(testcorpus.DSHPriceLog), 0o644)
	sl, err := ReadSessionLog(path, "")
	if err != nil {
		t.Fatal(err)
	}
	_, settings, _ := importEnv(t)
	rows, err := PriceFolds(sl, settings, 0)
	if err != nil {
		t.Fatal(err)
	}
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
