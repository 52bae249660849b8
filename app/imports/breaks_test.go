package imports

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
	"tollgate/storage/sqlite"
	"tollgate/test/shareddata"
)

// importShared imports every real transcript of ../shared/data into a fresh
// database and returns the database and the sessions' ledgers.
func importShared(t *testing.T) (*sqlite.DB, map[string][]storage.Break) {
	t.Helper()
	data := shareddata.Dir(t)
	db, settings, _ := importEnv(t)
	ctx := context.Background()
	srcs := []Source{
		{Path: filepath.Join(data, "claude-code")},
		{Path: filepath.Join(data, "codex", "crud.jsonl")},
		{Path: filepath.Join(data, "otel", "claude-code-2.1.332-transcript.jsonl")},
	}
	if _, err := Files(ctx, db, settings, srcs, nil); err != nil {
		t.Fatal(err)
	}
	list, err := db.Sessions(ctx, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]storage.Break{}
	for _, s := range list.Sessions {
		bs, err := db.SessionBreaks(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[s.ID] = bs.Breaks
	}
	return db, out
}

// TestLedgerOfRealTranscripts: the breaks the issue lists, found in the
// shared transcripts, with what the logs say started each (the expected
// rows are read off the logs: the requests' first-line times, their cache
// reads against the previous request's prompt).
func TestLedgerOfRealTranscripts(t *testing.T) {
	db, ledgers := importShared(t)
	type row struct {
		at        string
		cause     string
		startedBy string
		rebilled  int64
	}
	want := map[string][]row{
		"claude-code:4d5611e5-241a-462a-8d15-5122611a9569": {
			{"20:19:04", "idle", "user-prompt", 81_960},         // idle 4 h 11 min
			{"20:30:31", "rewrite", "after-compaction", 14_603}, // the compaction's new cold part
			{"20:58:58", "idle", "user-answer", 82_861},         // idle 19 min
			{"21:03:30", "prefix", "task-notification", 76_754}, // 5 s after the previous request
		},
		"claude-code:258c7280-ae70-4798-800f-63464d01a85d": {
			{"20:51:16", "prefix", "task-notification", 89_608},
			{"21:18:43", "rewrite", "after-compaction", 12_500},
			{"21:36:44", "prefix", "task-notification", 55_081},
		},
	}
	ids := make([]string, 0, len(ledgers))
	for id := range ledgers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-52s %-8s %-7s %-18s %8s %9s %9s %9s %9s\n", "session", "at", "cause", "startedBy", "gap s", "expected", "read", "rebilled", "premium")
	for _, id := range ids {
		for _, b := range ledgers[id] {
			fmt.Fprintf(&table, "%-52s %-8s %-7s %-18s %8.0f %9d %9d %9d %9.4f\n", id, b.At.Format(time.TimeOnly), b.Cause, b.StartedBy, b.GapSeconds,
				b.ExpectedCachedTokens, b.CacheReadTokens, b.RebilledTokens, b.PremiumUSD)
		}
		if _, ok := want[id]; !ok && len(ledgers[id]) > 0 {
			t.Errorf("%s: %d breaks, want none", id, len(ledgers[id]))
		}
	}
	t.Log(table.String())
	for id, rows := range want {
		got := ledgers[id]
		if len(got) != len(rows) {
			t.Errorf("%s: %d breaks, want %d", id, len(got), len(rows))
			continue
		}
		for i, w := range rows {
			b := got[i]
			if b.At.Format(time.TimeOnly) != w.at || b.Cause != w.cause || b.StartedBy != w.startedBy || b.RebilledTokens != w.rebilled {
				t.Errorf("%s break %d = %s %s %s %d, want %+v", id, i, b.At.Format(time.TimeOnly), b.Cause, b.StartedBy, b.RebilledTokens, w)
			}
			if (b.Cause == "rewrite") != (b.Rewrite != nil) {
				t.Errorf("%s break %d: cause %s, rewrite %v", id, i, b.Cause, b.Rewrite)
			}
			if b.PremiumUSD <= 0 || b.Thread != "" {
				t.Errorf("%s break %d: premium %v thread %q", id, i, b.PremiumUSD, b.Thread)
			}
		}
	}
	// The premium of 4d5611e5's notification break: 76,754 tokens written
	// for 5 minutes at Opus 4.6's $6.25, beyond the $0.50 hit.
	if b := ledgers["claude-code:4d5611e5-241a-462a-8d15-5122611a9569"][3]; fmt.Sprintf("%.4f", b.PremiumUSD) != fmt.Sprintf("%.4f", 76_754*(6.25-0.5)/1e6) {
		t.Errorf("premium %v", b.PremiumUSD)
	}

	// Rebuilding every ledger from the stored rows gives the same rows.
	ctx := context.Background()
	if err := db.RebuildBreaks(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for id, before := range ledgers {
		after, err := db.SessionBreaks(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(before, after.Breaks) && !(len(before) == 0 && len(after.Breaks) == 0) {
			t.Errorf("%s: rebuilt\n%+v\nimported\n%+v", id, after.Breaks, before)
		}
	}

	// The summary: every break of the period, split by cause.
	sum, err := db.BreakSummary(ctx, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), 10)
	if err != nil {
		t.Fatal(err)
	}
	causes := map[pricing.BreakCause]int64{}
	for _, c := range sum.ByCause {
		causes[c.Cause] = c.Breaks
	}
	if sum.Breaks != 7 || causes["prefix"] != 3 || causes["idle"] != 2 || causes["rewrite"] != 2 || len(sum.Sessions) != 2 {
		t.Errorf("summary %+v", sum)
	}
	if sum.Sessions[0].PremiumUSD < sum.Sessions[1].PremiumUSD {
		t.Errorf("sessions not by premium: %+v", sum.Sessions)
	}
}

// BenchmarkImportLedger measures what the cache-break ledger adds to an
// import: each iteration imports the same generated Claude Code corpus
// (~300 MB; TOLLGATE_BENCH_MB) into two fresh databases, one with the
// ledger and one without (DB.SetLedger(false)), alternating which goes
// first, and reports both throughputs and the overhead in percent — of
// wall time, and of the process's CPU time (getrusage), which other
// processes on a shared machine disturb far less. The budget is
// 10 %.
func BenchmarkImportLedger(b *testing.B) {
	corpus, st := benchCorpus(b)
	ctx := context.Background()
	var with, without, withCPU, withoutCPU time.Duration
	var breaks int64
	run := func(dir string, ledger bool) {
		db, settings, _ := openHome(b)
		defer db.Close()
		db.SetLedger(ledger)
		runtime.GC()
		cpu0 := cpuTime(b)
		start := time.Now()
		res, err := Files(ctx, db, settings, []Source{{Path: filepath.Join(dir, "projects")}}, nil)
		d := time.Since(start)
		c := cpuTime(b) - cpu0
		if err != nil || res.Requests != st.Requests {
			b.Fatalf("imported %d requests (want %d): %v", res.Requests, st.Requests, err)
		}
		if ledger {
			with += d
			withCPU += c
			sum, err := db.BreakSummary(ctx, time.Time{}, 1)
			if err != nil {
				b.Fatal(err)
			}
			breaks = sum.Breaks
		} else {
			without += d
			withoutCPU += c
		}
	}
	b.SetBytes(st.Bytes)
	only := os.Getenv("TOLLGATE_BENCH_ONLY") // "ledger" or "without", for a profile of one side
	for i := 0; b.Loop(); i++ {
		first := i%2 == 0
		for _, ledger := range []bool{first, !first} {
			if only == "" || only == "ledger" == ledger {
				run(corpus, ledger)
			}
		}
	}
	if only != "" {
		return
	}
	n := float64(b.N)
	b.ReportMetric(float64(st.Bytes)*n/1e6/with.Seconds(), "MB/s-ledger")
	b.ReportMetric(float64(st.Bytes)*n/1e6/without.Seconds(), "MB/s-without")
	b.ReportMetric(100*(with.Seconds()/without.Seconds()-1), "%-overhead")
	b.ReportMetric(100*(withCPU.Seconds()/withoutCPU.Seconds()-1), "%-overhead-cpu")
	b.ReportMetric(float64(breaks), "breaks")
}

// TestLedgerOfEveryHarness: a Codex rollout (cached vs total input) and a
// dsh log (its own usage, a prune between two requests) get the same
// ledger from their own fields.
func TestLedgerOfEveryHarness(t *testing.T) {
	db, settings, _ := importEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	at := func(sec int) string {
		return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second).Format("2006-01-02T15:04:05.000Z")
	}
	var codex strings.Builder
	fmt.Fprintf(&codex, `{"timestamp":"%s","type":"session_meta","payload":{"id":"019bf4b5-0000-7000-8000-00000000beef","timestamp":"%s","cwd":"/home/u/codex-proj","originator":"codex_cli_rs","cli_version":"0.89.0","model_provider":"openai"}}`+"\n", at(0), at(0))
	var total [3]int64
	tc := func(sec int, model string, in, cached int64) {
		fmt.Fprintf(&codex, `{"timestamp":"%s","type":"turn_context","payload":{"cwd":"/home/u/codex-proj","model":"%s"}}`+"\n", at(sec), model)
		total[0] += in
		total[1] += cached
		total[2] += 100
		fmt.Fprintf(&codex, `{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":100,"reasoning_output_tokens":0,"total_tokens":%d},"model_context_window":258400},"rate_limits":{}}}`+"\n",
			at(sec), total[0], total[1], total[2], total[0]+total[2], in, cached, in+100)
	}
	tc(1, "gpt-5.2-codex", 10000, 0)     // a start: nothing cached yet
	tc(10, "gpt-5.2-codex", 12000, 9984) // 16 tokens short: a hit
	tc(20, "gpt-5.2-codex", 13000, 0)    // prefix: 12,000 re-billed
	tc(30, "gpt-5.4", 14000, 0)          // another model: its own start
	tc(40, "gpt-5.2-codex", 15000, 1024) // back: a family break, 11,976 re-billed
	codexPath := filepath.Join(dir, "rollout-2026-11-30T10-00-00-019bf4b5-0000-7000-8000-00000000beef.jsonl")
	if err := os.WriteFile(codexPath, []byte(codex.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var dsh strings.Builder
	fmt.Fprintf(&dsh, `{"type":"header","format":"dsh.session","version":1,"session":"s-ledger","startedAt":"%s","harnessVersion":"0.9.1","provider":"deepseek","model":"deepseek-flash","title":"ledger","contextWindow":1048576,"thresholdTokens":838861}`+"\n", at(0))
	msg := func(sec int, id string, in, read int64) {
		fmt.Fprintf(&dsh, `{"type":"assistant/message","at":"%s","id":"%s","usage":{"inputTokens":%d,"cacheReadTokens":%d,"cacheWriteTokens":0,"cacheWrite1hTokens":0,"outputTokens":50}}`+"\n", at(sec), id, in, read)
	}
	msg(1, "m-1", 13000, 0)
	msg(10, "m-2", 500, 12992) // a hit
	fmt.Fprintf(&dsh, `{"type":"compaction/prune","at":"%s","id":"p-1","trigger":"pressure","preTokens":13492,"units":3,"shadowedTokens":2500,"fromTokens":4000}`+"\n", at(15))
	msg(20, "m-3", 9000, 4096) // the prune's cold part: 9,000 re-billed
	msg(7220, "m-4", 13196, 0) // two hours idle: past DeepSeek's hour
	dshPath := filepath.Join(dir, "s-ledger.jsonl")
	if err := os.WriteFile(dshPath, []byte(dsh.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Files(ctx, db, settings, []Source{{Path: codexPath, Harness: "codex"}, {Path: dshPath, Harness: "dsh"}}, nil); err != nil {
		t.Fatal(err)
	}
	list, err := db.Sessions(ctx, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list.Sessions {
		bs, err := db.SessionBreaks(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs.Breaks {
			got[s.Harness] += fmt.Sprintf("%d:%s:%d:%v ", b.Seq, b.Cause, b.RebilledTokens, b.Rewrite != nil)
		}
	}
	want := map[string]string{"codex": "3:prefix:12000:false 5:family:11976:false ", "dsh": "3:rewrite:9000:true 4:idle:13096:false "}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ledgers %v, want %v", got, want)
	}
}

// cpuTime is the CPU time (user + system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
