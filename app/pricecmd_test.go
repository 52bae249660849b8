package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runPrice(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := RunPrice(args, IO{Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestPriceRealFolds(t *testing.T) {
	data := sharedDataDir(t)
	settings := func() *Settings { _, s, _ := importEnv(t); return s }()
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
		sl, err := readSessionLog(path, "")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := priceFolds(sl, settings, 0)
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
	code, out, errs := runPrice(filepath.Join(data, "claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"), "--home", t.TempDir())
	if code != 0 || !strings.Contains(out, "predicted cold") || !strings.Contains(out, "14603") || !strings.Contains(out, "-72.6%") {
		t.Fatalf("%d %q %q", code, out, errs)
	}
}

func TestPriceCommandErrors(t *testing.T) {
	home := t.TempDir()
	if code, _, _ := runPrice("--home", home); code != 2 {
		t.Fatalf("no file: %d", code)
	}
	if code, _, errs := runPrice(filepath.Join(t.TempDir(), "none.jsonl"), "--home", home); code != 1 || !strings.Contains(errs, "none.jsonl") {
		t.Fatalf("missing file: %d %q", code, errs)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	os.WriteFile(path, []byte(dshPriceLog), 0o644)
	if code, _, errs := runPrice(path, "--fold", "9", "--home", home); code != 1 || !strings.Contains(errs, "the log has 2 folds") {
		t.Fatalf("--fold 9: %d %q", code, errs)
	}
	os.WriteFile(path, []byte(strings.SplitAfter(dshPriceLog, "\n")[0]), 0o644)
	if code, out, _ := runPrice(path, "--home", home); code != 0 || !strings.Contains(out, "no fold to price") {
		t.Fatalf("no folds: %d %q", code, out)
	}
}

// A dsh session on DeepSeek's positional cache (64-token units): the
// envelope is 13,000 tokens, each request reads the one before.
const dshPriceLog = `{"type":"header","format":"dsh.session","version":1,"session":"p-1","provider":"deepseek","model":"deepseek-v4-pro","contextWindow":1048576,"thresholdTokens":60000}
{"type":"assistant/message","at":"2026-11-30T10:00:00Z","id":"m1","usage":{"inputTokens":20000,"cacheReadTokens":13000,"outputTokens":500}}
{"type":"assistant/message","at":"2026-11-30T10:00:30Z","id":"m2","usage":{"inputTokens":12000,"cacheReadTokens":33000,"outputTokens":500}}
{"type":"assistant/message","at":"2026-11-30T10:01:00Z","id":"m3","usage":{"inputTokens":15000,"cacheReadTokens":45000,"outputTokens":500}}
{"type":"compaction/summary","at":"2026-11-30T10:01:10Z","id":"c1","trigger":"pressure","preTokens":61000,"retainedTokens":15500,"checkpointTokens":3000,"call":{"id":"m-c1","usage":{"inputTokens":470,"cacheReadTokens":45500,"outputTokens":3000}}}
{"type":"assistant/message","at":"2026-11-30T10:01:40Z","id":"m4","usage":{"inputTokens":18508,"cacheReadTokens":12992,"outputTokens":400}}
{"type":"compaction/prune","at":"2026-11-30T10:02:00Z","id":"p1","trigger":"pressure","preTokens":32000,"units":2,"shadowedTokens":9000,"fromTokens":3000}
{"type":"assistant/message","at":"2026-11-30T10:02:30Z","id":"m5","usage":{"inputTokens":8000,"cacheReadTokens":15936,"outputTokens":200}}
`

func TestPriceDSHFolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.jsonl")
	os.WriteFile(path, []byte(dshPriceLog), 0o644)
	sl, err := readSessionLog(path, "")
	if err != nil {
		t.Fatal(err)
	}
	_, settings, _ := importEnv(t)
	rows, err := priceFolds(sl, settings, 0)
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
	code, out, errs := runPrice(path, "--home", t.TempDir())
	t.Log("\n" + out)
	if code != 0 || strings.Count(out, "\n     1  summary") != 2 || !strings.Contains(out, "3144") {
		t.Fatalf("%d\n%s\n%s", code, out, errs)
	}
	sl, err := readSessionLog(path, "")
	if err != nil || len(sl.main) != 3 || len(sl.calls) != 1 || len(sl.folds) != 1 {
		t.Fatalf("%+v %v", sl, err)
	}
}
