package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func req(session, id string, at time.Time, u pricing.Usage, cost float64) storage.Request {
	return storage.Request{
		Session:   storage.SessionMeta{ID: session, Harness: "dsh", Profile: "p", Provider: "deepseek", Model: "deepseek-flash", ContextWindow: 1000, ThresholdTokens: 800},
		RequestID: id, At: at, Purpose: storage.PurposeConversation, Usage: u,
		Cost: pricing.Cost{Input: cost / 2, CacheRead: cost / 4, Output: cost / 4, Total: cost}, PricedBy: "profile",
	}
}

func TestRecordRequestIsIdempotentAndKeepsTotals(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	u := pricing.Usage{Input: 10, CacheRead: 100, CacheWrite: 5, Output: 7}
	first, err := db.RecordRequest(ctx, req("s1", "a", t0, u, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	if first.Seq != 1 || first.ContextTokens != 115 || first.Duplicate {
		t.Fatalf("first: %+v", first)
	}
	// A retry with other figures gets the first answer and changes nothing.
	retry, err := db.RecordRequest(ctx, req("s1", "a", t0.Add(time.Minute), pricing.Usage{Input: 999}, 9))
	if err != nil {
		t.Fatal(err)
	}
	if !retry.Duplicate || retry.Seq != 1 || retry.Cost.Total != 0.01 || retry.ContextTokens != 115 {
		t.Fatalf("retry: %+v", retry)
	}
	second, err := db.RecordRequest(ctx, req("s1", "b", t0.Add(time.Minute), pricing.Usage{CacheRead: 200, Output: 3}, 0.02))
	if err != nil || second.Seq != 2 {
		t.Fatalf("second: %+v %v", second, err)
	}
	s, err := db.Session(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 2 || s.Tokens.Input != 10 || s.Tokens.CacheRead != 300 || s.Tokens.CacheWrite != 5 || s.Tokens.Output != 10 ||
		math.Abs(s.CostUSD-0.03) > 1e-12 || s.LastContextTokens != 200 || s.Harness != "dsh" || s.ContextWindow != 1000 {
		t.Fatalf("session: %+v", s)
	}
	if want := 300.0 / 315.0; math.Abs(s.HitRate-want) > 1e-12 {
		t.Fatalf("hit rate %v, want %v", s.HitRate, want)
	}
	if !s.StartedAt.Equal(t0) || !s.LastAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("times %v %v", s.StartedAt, s.LastAt)
	}
}

func TestConcurrentRecordsAreAllCommittedOnce(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	var wg sync.WaitGroup
	const clients, each = 20, 25
	errs := make(chan error, clients*each*2)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := req(fmt.Sprintf("s%d", c%4), fmt.Sprintf("c%d-%d", c, i), t0, pricing.Usage{Input: 1, Output: 1}, 0.001)
				for try := 0; try < 2; try++ { // every request retried once
					if _, err := db.RecordRequest(ctx, r); err != nil {
						errs <- err
					}
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var n, seqs int
	db.sql.QueryRow("SELECT COUNT(*), COUNT(DISTINCT session_id || '/' || seq) FROM requests").Scan(&n, &seqs)
	if n != clients*each || seqs != n {
		t.Fatalf("%d rows with %d distinct seqs, want %d", n, seqs, clients*each)
	}
	list, err := db.Sessions(ctx, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range list.Sessions {
		total += s.Requests
	}
	if total != clients*each {
		t.Fatalf("session totals %d, want %d", total, clients*each)
	}
}

func TestOneFailingWriteDoesNotSinkItsGroup(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	var wg sync.WaitGroup
	results := make([]error, 40)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := req("s", fmt.Sprint(i), t0, pricing.Usage{Input: 1}, 0)
			if i%10 == 0 {
				r.Session.ID = "" // invalid
			}
			_, results[i] = db.RecordRequest(ctx, r)
		}(i)
	}
	wg.Wait()
	ok := 0
	for i, err := range results {
		if (i%10 == 0) != (err != nil) {
			t.Fatalf("request %d: err %v", i, err)
		}
		if err == nil {
			ok++
		}
	}
	var n int
	db.sql.QueryRow("SELECT COUNT(*) FROM requests").Scan(&n)
	if n != ok {
		t.Fatalf("%d rows, want %d", n, ok)
	}
}

func TestRewriteLifecycleFillsActualColdFromTheNextConversationRequest(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.RecordRequest(ctx, req("s", "1", t0, pricing.Usage{CacheRead: 500, Output: 10}, 0.01)); err != nil {
		t.Fatal(err)
	}
	pred := int64(300)
	rw, err := db.CreateRewrite(ctx, storage.Rewrite{ID: "r_1", Session: storage.SessionMeta{ID: "s"}, At: t0.Add(time.Second), Kind: "summary", Mode: "ask", PredictedCold: &pred, PreTokens: 510})
	if err != nil {
		t.Fatal(err)
	}
	if rw.Seq != 1 || rw.Status != storage.StatusPending {
		t.Fatalf("created %+v", rw)
	}
	if err := db.DecideRewrite(ctx, "r_1", "allow", "user", "ask", "summarize-then-prune-tail", "owner-token", t0.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := db.DecideRewrite(ctx, "r_1", "decline", "user", "ask", "", "window", t0); !errors.Is(err, storage.ErrAlreadyDecided) {
		t.Fatalf("second decision: %v", err)
	}
	if err := db.DecideRewrite(ctx, "r_nope", "allow", "user", "ask", "", "window", t0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unknown rewrite: %v", err)
	}
	// The compaction call itself does not count; the next conversation request does.
	c := req("s", "2", t0.Add(3*time.Second), pricing.Usage{Input: 999}, 0.05)
	c.Purpose = storage.PurposeCompaction
	db.RecordRequest(ctx, c)
	db.RecordRequest(ctx, req("s", "3", t0.Add(4*time.Second), pricing.Usage{Input: 20, CacheRead: 64, CacheWrite: 250, Output: 5}, 0.02))
	db.RecordRequest(ctx, req("s", "4", t0.Add(5*time.Second), pricing.Usage{Input: 1, CacheRead: 400}, 0.001))
	got, err := db.Rewrite(ctx, "r_1")
	if err != nil {
		t.Fatal(err)
	}
	if got.ActualCold == nil || *got.ActualCold != 270 || got.Decision != "allow" || got.Order != "summarize-then-prune-tail" || got.AnsweredBy != "owner-token" {
		t.Fatalf("rewrite %+v actual %v", got, got.ActualCold)
	}
	series, err := db.Series(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(series.Points) != 3 || len(series.Folds) != 1 || *series.Folds[0].ActualColdTokens != 270 || *series.Folds[0].PredictedColdTokens != 300 {
		t.Fatalf("series %+v", series)
	}
	// An outcome of "not applied" clears the actual figure.
	if err := db.SetRewriteOutcome(ctx, "r_1", false, "harness crashed"); err != nil {
		t.Fatal(err)
	}
	got, _ = db.Rewrite(ctx, "r_1")
	if got.ActualCold != nil || got.Applied == nil || *got.Applied || got.OutcomeError != "harness crashed" {
		t.Fatalf("after outcome: %+v", got)
	}
}

func TestSpendStacksAddUpToTheTotal(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	// 23:30 UTC on the 29th is 00:30 on the 30th in Berlin.
	r1 := req("s", "1", time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC), pricing.Usage{Input: 100, CacheRead: 1000, Output: 10}, 0)
	r1.Cost = pricing.Cost{Input: 0.30, CacheRead: 0.05, CacheWrite: 0.10, Output: 0.02, Total: 0.47}
	db.RecordRequest(ctx, r1)
	pred := int64(5000)
	db.CreateRewrite(ctx, storage.Rewrite{ID: "r_a", Session: storage.SessionMeta{ID: "s"}, At: r1.At.Add(time.Minute), Status: storage.StatusDecided, Decision: "allow", Reason: "auto", PredictedCold: &pred})
	sum := req("s", "2", r1.At.Add(2*time.Minute), pricing.Usage{Input: 50, Output: 40}, 0)
	sum.Purpose = storage.PurposeCompaction
	sum.Cost = pricing.Cost{Input: 0.01, CacheRead: 0.02, Output: 0.03, Total: 0.06}
	db.RecordRequest(ctx, sum)
	after := req("s", "3", r1.At.Add(3*time.Minute), pricing.Usage{Input: 5000, CacheRead: 64}, 0)
	after.Cost = pricing.Cost{Input: 1.5, CacheRead: 0.001, Output: 0.01, Total: 1.511}
	db.RecordRequest(ctx, after)
	db.CreateRewrite(ctx, storage.Rewrite{ID: "r_b", Session: storage.SessionMeta{ID: "s"}, At: r1.At.Add(4 * time.Minute), Status: storage.StatusDecided, Decision: "decline", Reason: "user", PredictedCold: &pred})

	sp, err := db.Spend(ctx, storage.SpendByDay, berlin, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Rows) != 1 || sp.Rows[0].Key != "2026-11-30" {
		t.Fatalf("rows %+v: want one Berlin day 2026-11-30", sp.Rows)
	}
	row := sp.Rows[0]
	stacks := row.CacheReadUSD + row.ColdInputUSD + row.OutputUSD + row.BreakPremiumUSD
	if math.Abs(stacks-row.TotalUSD) > 1e-9 || math.Abs(row.TotalUSD-2.041) > 1e-9 {
		t.Fatalf("stacks %v vs total %v: %+v", stacks, row.TotalUSD, row)
	}
	if math.Abs(row.BreakPremiumUSD-(0.06+1.5)) > 1e-9 {
		t.Fatalf("break premium %v, want the summary call 0.06 + the cold input after the fold 1.5", row.BreakPremiumUSD)
	}
	if sp.Folds != 1 || sp.Declined != 1 || sp.AvoidedColdTokens != 5000 {
		t.Fatalf("folds %d declined %d avoided %d", sp.Folds, sp.Declined, sp.AvoidedColdTokens)
	}
	byModel, err := db.Spend(ctx, storage.SpendByModel, time.UTC, time.Time{})
	if err != nil || len(byModel.Rows) != 1 || byModel.Rows[0].Key != "deepseek-flash" {
		t.Fatalf("by model %+v %v", byModel, err)
	}
	if _, err := db.Spend(ctx, "week", time.UTC, time.Time{}); err == nil {
		t.Fatal("by=week accepted")
	}
}

func TestSessionsPageByCursorAndDelete(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for i := 0; i < 7; i++ {
		db.RecordRequest(ctx, req(fmt.Sprintf("s%d", i), "x", t0.Add(time.Duration(i)*time.Minute), pricing.Usage{Input: 1}, 0))
	}
	var seen []string
	cursor := ""
	for {
		page, err := db.Sessions(ctx, 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Sessions {
			seen = append(seen, s.ID)
		}
		if page.Next == nil {
			break
		}
		cursor = *page.Next
	}
	if fmt.Sprint(seen) != "[s6 s5 s4 s3 s2 s1 s0]" {
		t.Fatalf("pages gave %v", seen)
	}
	if _, err := db.Sessions(ctx, 3, "garbage"); err == nil {
		t.Fatal("bad cursor accepted")
	}
	if err := db.DeleteSession(ctx, "s3"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Session(ctx, "s3"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleted session still readable: %v", err)
	}
	var n int
	db.sql.QueryRow("SELECT COUNT(*) FROM requests WHERE session_id = 's3'").Scan(&n)
	if n != 0 {
		t.Fatal("requests of a deleted session remain")
	}
	if n, err := db.DeleteAll(ctx); err != nil || n != 6 {
		t.Fatalf("delete all: %d %v", n, err)
	}
}

func TestSessionModesPersist(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tollgate.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetSessionMode(ctx, "a", "auto", t0)
	db.SetSessionMode(ctx, "b", "off", t0)
	db.SetSessionMode(ctx, "b", "", t0)
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	modes, err := db.SessionModes(ctx)
	if err != nil || len(modes) != 1 || modes["a"] != "auto" {
		t.Fatalf("modes after restart %v %v", modes, err)
	}
	if err := db.SetSessionMode(ctx, "c", "sometimes", t0); err == nil {
		t.Fatal("invalid mode stored")
	}
}

// A rewrite's predicted band (migration 0004) is stored and read back,
// and the series' fold carries it; a rewrite without one has none.
func TestRewritePredictedBand(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	pred := int64(14_000)
	band := &storage.ColdBand{Low: 11_000, High: 19_000}
	if _, err := db.CreateRewrite(ctx, storage.Rewrite{ID: "r_b", Session: storage.SessionMeta{ID: "s"}, At: t0, Kind: "summary", Mode: "ask", PredictedCold: &pred, PredictedBand: band}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRewrite(ctx, storage.Rewrite{ID: "r_n", Session: storage.SessionMeta{ID: "s"}, At: t0.Add(time.Second), Kind: "summary", Mode: "ask", PredictedCold: &pred}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Rewrite(ctx, "r_b")
	if err != nil || got.PredictedBand == nil || *got.PredictedBand != *band {
		t.Fatalf("read back %+v %v", got.PredictedBand, err)
	}
	series, err := db.Series(ctx, "s")
	if err != nil || len(series.Folds) != 2 {
		t.Fatalf("series %+v %v", series, err)
	}
	if b := series.Folds[0].PredictedColdBand; b == nil || *b != *band || series.Folds[1].PredictedColdBand != nil {
		t.Fatalf("folds %+v / %+v", series.Folds[0], series.Folds[1])
	}
	b, _ := json.Marshal(series.Folds[0])
	if !strings.Contains(string(b), `"predictedColdBand":{"low":11000,"high":19000}`) {
		t.Fatalf("wire %s", b)
	}
	b, _ = json.Marshal(series.Folds[1])
	if !strings.Contains(string(b), `"predictedColdBand":null`) {
		t.Fatalf("wire %s", b)
	}
}

// A group commit writes each session's row once, from what its requests
// gathered (recordedSession): the rows must end exactly — costs to the last
// bit — as when every request commits alone. The group mixes two sessions,
// one stored before and one new, metadata that only some requests carry,
// times out of order, every purpose, a retried request id, a rewrite
// waiting for its actual cold tokens, and another write in the middle of
// the group (which reads the session's row).
func TestGroupCommitWritesSessionsAsOneByOne(t *testing.T) {
	ctx := context.Background()
	grouped, alone := openTest(t), openTest(t)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var rs []storage.Request
	add := func(session, id string, s int, purpose string, u pricing.Usage, cost float64, edit func(r *storage.Request)) {
		r := req(session, id, at(s), u, cost)
		r.Purpose = purpose
		if edit != nil {
			edit(&r)
		}
		rs = append(rs, r)
	}
	conv, comp, sub := storage.PurposeConversation, storage.PurposeCompaction, storage.PurposeSubagent
	add("old", "o2", 60, conv, pricing.Usage{Input: 7, CacheRead: 900, Output: 3}, 0.1, func(r *storage.Request) { r.Session.Harness, r.Session.Title = "", "" })
	add("new", "n1", 50, comp, pricing.Usage{Input: 40, Output: 9}, 0.2, func(r *storage.Request) {
		r.Session.Harness, r.Session.Model, r.Session.ContextWindow, r.Session.ThresholdTokens = "", "", 0, 0
	})
	add("new", "n2", 40, conv, pricing.Usage{Input: 5, CacheRead: 1000, CacheWrite: 20, Output: 8}, 0.3, func(r *storage.Request) {
		r.Session.Harness, r.Session.Title, r.Session.ContextWindow = "second", "first title", 4000
	})
	add("old", "o3", 70, sub, pricing.Usage{Input: 1, CacheWrite1h: 300, Output: 2}, 0.7, func(r *storage.Request) { r.PricedBy = "default" })
	add("new", "n2", 45, conv, pricing.Usage{Input: 999}, 9, nil) // a retry: changes nothing
	add("new", "n3", 30, conv, pricing.Usage{Input: 2, CacheRead: 1100, Output: 4}, 0.11, func(r *storage.Request) {
		r.Session.Harness, r.Session.Title, r.Session.ContextWindow, r.Session.ThresholdTokens = "late", "", 0, 3000
	})
	add("old", "o4", 80, conv, pricing.Usage{Input: 3, CacheRead: 100, CacheWrite: 800, Output: 1}, 0.13, func(r *storage.Request) { r.Session.Title = "renamed" })
	add("new", "n4", 90, conv, pricing.Usage{Input: 6, CacheRead: 1200, Output: 5}, 0.17, func(r *storage.Request) { r.Session.Title = "last title" })
	add("old", "o5", 95, comp, pricing.Usage{Input: 8, Output: 6}, 0.19, nil)
	rw := storage.Rewrite{ID: "rw_mid", Session: storage.SessionMeta{ID: "new"}, At: at(91), Kind: "summary", Trigger: "auto",
		Mode: "auto", Status: storage.StatusDecided, Decision: "allow", Reason: "auto", DecidedAt: at(91)}
	add("new", "n5", 100, conv, pricing.Usage{Input: 9, CacheRead: 300, CacheWrite: 50, Output: 7}, 0.23, nil)
	const rewriteAfter = 8 // the other write comes after the first eight requests

	for _, db := range []*DB{grouped, alone} {
		// The stored session, with an allowed rewrite waiting for its
		// actual cold tokens.
		if _, err := db.RecordRequest(ctx, req("old", "o1", at(65), pricing.Usage{Input: 11, CacheRead: 800, Output: 2}, 0.3)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateRewrite(ctx, storage.Rewrite{ID: "rw_old", Session: storage.SessionMeta{ID: "old"}, At: at(66), Kind: "summary",
			Mode: "auto", Status: storage.StatusDecided, Decision: "allow", Reason: "auto", DecidedAt: at(66)}); err != nil {
			t.Fatal(err)
		}
	}
	var jobs []*writeJob
	for i := range rs {
		if i == rewriteAfter {
			jobs = append(jobs, &writeJob{ctx: ctx, ready: make(chan struct{}), fn: func(q querier) (any, error) { return createRewriteTx(ctx, q, rw) }})
		}
		r := rs[i]
		jobs = append(jobs, &writeJob{ctx: ctx, record: true, ready: make(chan struct{}), fn: func(q querier) (any, error) { return recordRequestTx(ctx, q, r) }})
	}
	if err := grouped.writer.run(jobs); err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if i == rewriteAfter {
			if _, err := alone.CreateRewrite(ctx, rw); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := alone.RecordRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	exact := `SELECT id, harness, profile, provider, model, title, context_window, threshold_tokens, started_at, last_at,
		requests, input, cache_read, cache_write, cache_write_1h, output, printf('%.17g', cost_usd), last_context, priced_by_default FROM sessions ORDER BY id`
	for _, q := range []string{exact, requestsRow + ", cache_ttl", rewritesRow, "SELECT " + breakColumns + " FROM breaks ORDER BY session_id, seq"} {
		if q == requestsRow+", cache_ttl" {
			q = strings.Replace(requestsRow, "FROM requests", ", cache_ttl FROM requests", 1)
		}
		a, b := dump(t, grouped, q), dump(t, alone, q)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("grouped:\n%s\none by one:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
	// The rows say what the one-by-one upserts said: the checks above
	// cannot pass by both sides being wrong the same way.
	s, err := grouped.Session(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if s.Harness != "second" || s.Title != "last title" || s.ContextWindow != 1000 || s.Requests != 5 || !s.StartedAt.Equal(at(30)) || !s.LastAt.Equal(at(100)) {
		t.Fatalf("session new: %+v", s)
	}
	if got, _ := grouped.Rewrite(ctx, "rw_old"); got.ActualCold == nil || *got.ActualCold != 7 {
		t.Fatalf("the stored session's rewrite: actual cold %v, want 7 (o2's uncached input)", got.ActualCold)
	}
	if got, _ := grouped.Rewrite(ctx, "rw_mid"); got.ActualCold == nil || *got.ActualCold != 59 {
		t.Fatalf("the rewrite written mid-group: actual cold %v, want 59 (n5's uncached input)", got.ActualCold)
	}
}

// A session's window and threshold come from what the harness said (its
// hook, over the API): the defaults an import or the telemetry assume for
// the model fill a session that has none, and never replace what the hook
// said, in whichever order the paths arrive.
func TestSaidLimitsOutliveAssumedOnes(t *testing.T) {
	ctx := context.Background()
	said := storage.SessionMeta{ContextWindow: 100_000, ThresholdTokens: 48_000}
	assumed := storage.SessionMeta{ContextWindow: 200_000, ThresholdTokens: 167_000, LimitsAssumed: true}
	record := func(db *DB, session, id string, m storage.SessionMeta, via string, at time.Time) {
		t.Helper()
		m.ID, m.Harness, m.Provider, m.Model = session, "claude-code", "anthropic", "claude-opus-5-5"
		r := storage.Request{Session: m, RequestID: id, At: at, Purpose: storage.PurposeConversation, Usage: pricing.Usage{Input: 10, Output: 1},
			Cost: pricing.Cost{Total: 0.001}, PricedBy: "profile", Via: via}
		if via == storage.ViaImport {
			if _, err := db.StoreImport(ctx, ImportBatch{To: ImportState{Path: session + id, Harness: "claude-code", SessionID: session, Size: 1, Offset: 1, HeadHash: "1:x", State: `{"lines":1}`},
				Items: []ImportItem{{Request: &r}}}); err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := db.RecordRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	limits := func(db *DB, session string) (int64, int64) {
		t.Helper()
		s, err := db.Session(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		return s.ContextWindow, s.ThresholdTokens
	}
	for _, order := range [][]string{{"hook", "import", "otlp"}, {"import", "hook", "otlp"}, {"otlp", "import", "hook"}} {
		db := openTest(t)
		for i, path := range order {
			at := t0.Add(time.Duration(i) * time.Minute)
			switch path {
			case "hook":
				record(db, "s", "h", said, "", at)
			case "import":
				record(db, "s", "m", assumed, storage.ViaImport, at)
			case "otlp":
				record(db, "s", "o", assumed, storage.ViaOTLP, at)
			}
		}
		if w, th := limits(db, "s"); w != said.ContextWindow || th != said.ThresholdTokens {
			t.Errorf("%v: window %d, threshold %d; want the hook's %d, %d", order, w, th, said.ContextWindow, said.ThresholdTokens)
		}
	}
	// Without the hook, the assumed ones are the session's.
	db := openTest(t)
	record(db, "s", "m", assumed, storage.ViaImport, t0)
	if w, th := limits(db, "s"); w != assumed.ContextWindow || th != assumed.ThresholdTokens {
		t.Errorf("import alone: window %d, threshold %d", w, th)
	}
}

// TakeLimits, the rule the group writer folds a transaction's requests
// with, agrees with the row's update: said replaces assumed, never the
// other way.
func TestTakeLimits(t *testing.T) {
	said := storage.SessionMeta{ContextWindow: 100_000, ThresholdTokens: 48_000}
	assumed := storage.SessionMeta{ContextWindow: 200_000, ThresholdTokens: 167_000, LimitsAssumed: true}
	m := assumed
	m.TakeLimits(said)
	if m.ContextWindow != 100_000 || m.LimitsAssumed {
		t.Fatalf("said after assumed: %+v", m)
	}
	m.TakeLimits(assumed)
	if m.ContextWindow != 100_000 || m.ThresholdTokens != 48_000 {
		t.Fatalf("assumed after said: %+v", m)
	}
	var none storage.SessionMeta
	none.TakeLimits(assumed)
	if none.ContextWindow != 200_000 || !none.LimitsAssumed {
		t.Fatalf("assumed into none: %+v", none)
	}
}
