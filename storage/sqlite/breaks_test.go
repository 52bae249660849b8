package sqlite

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

func breaksOf(t *testing.T, db *DB, session string) []storage.Break {
	t.Helper()
	bs, err := db.SessionBreaks(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	return bs.Breaks
}

// A database from before the ledger gets its breaks when it opens: threads
// from the purposes, then every session's ledger from its rows.
func TestLedgerUpgradeOfAnOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tollgate.db")
	all, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	old, err := openWith(ctx, path, all[:3])
	if err != nil {
		t.Fatal(err)
	}
	ms := func(sec int) int64 { return t0.Add(time.Duration(sec) * time.Second).UnixMilli() }
	if _, err := old.sql.ExecContext(ctx, `INSERT INTO sessions (id, started_at, last_at, requests) VALUES ('s', ?, ?, 4)`, ms(0), ms(900)); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		seq            int
		purpose        string
		sec            int
		read, write, n int64
	}{
		{1, "conversation", 0, 0, 20000, 3},
		{2, "subagent", 5, 0, 9000, 3},      // its own thread: a start
		{3, "compaction", 10, 19000, 50, 3}, // its own thread: a start
		{4, "conversation", 900, 0, 20500, 3},
	} {
		if _, err := old.sql.ExecContext(ctx, `INSERT INTO requests (session_id, request_id, seq, at, purpose, provider, model, input, cache_read, cache_write,
			context_tokens, prices) VALUES ('s', ?, ?, ?, ?, 'anthropic', 'claude-opus-4-6', ?, ?, ?, ?, '{"pricePerMTokens":5,"cacheHitPricePerMTokens":0.5,"cacheWritePricePerMTokens":6.25}')`,
			fmt.Sprint("r", r.seq), r.seq, ms(r.sec), r.purpose, r.n, r.read, r.write, r.n+r.read+r.write); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bs := breaksOf(t, db, "s")
	if len(bs) != 1 || bs[0].Seq != 4 || bs[0].Cause != "idle" || bs[0].RebilledTokens != 20003 || bs[0].TTLSeconds != 300 {
		t.Fatalf("breaks after the upgrade: %+v", bs)
	}
	if want := 20003 * (6.25 - 0.5) / 1e6; math.Abs(bs[0].PremiumUSD-want) > 1e-12 {
		t.Errorf("premium %v, want %v", bs[0].PremiumUSD, want)
	}
}

// Requests judged one by one as passes store them — threads interleaved, a
// fold between, a request whose figures grow in a later pass — leave the
// ledger a rebuild from the rows gives, and a re-price moves the premiums.
func TestRebuildMatchesIncremental(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	u := func(read, write int64) pricing.Usage {
		return pricing.Usage{Input: 3, CacheRead: read, CacheWrite: write, Output: 10}
	}
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	sub := func(r *storage.Request) *storage.Request {
		r.Purpose, r.Thread = storage.PurposeSubagent, "agent-a"
		return r
	}
	main := func(id string, sec int, us pricing.Usage) ImportItem {
		return ImportItem{Request: impReq("cc:1", id, at(sec), storage.PurposeConversation, us)}
	}
	passes := [][]ImportItem{
		{main("m1", 0, u(0, 20000)), {Request: sub(impReq("cc:1", "a1", at(1), "", u(0, 9000)))}, main("m2", 10, u(20003, 500))},
		{{Request: sub(impReq("cc:1", "a2", at(11), "", u(0, 9100)))}, main("m3", 20, u(13000, 8000))}, // a's prefix break; main's too
		{{Fold: &storage.Rewrite{ID: "r_fold", Session: storage.SessionMeta{ID: "cc:1"}, At: at(30), Kind: "summary", Trigger: "auto"}},
			main("m4", 40, u(13000, 3000)), // the fold's cold part
			main("m3", 20, pricing.Usage{Input: 3, CacheRead: 13000, CacheWrite: 8000, Output: 99}), // m3 grows: an update
			main("m5", 900, u(0, 16500))}, // idle
	}
	// Judged as the rows arrive, with no update to force a rebuild, the
	// ledger is what a rebuild from the rows gives.
	first := openTest(t)
	storePasses(t, first, "/logs/cc1.jsonl", passes[:2])
	incremental := breaksOf(t, first, "cc:1")
	if len(incremental) != 2 {
		t.Fatalf("breaks of the first two passes: %+v", incremental)
	}
	if err := first.RebuildBreaks(ctx, "cc:1"); err != nil {
		t.Fatal(err)
	}
	if rebuilt := breaksOf(t, first, "cc:1"); !reflect.DeepEqual(incremental, rebuilt) {
		t.Fatalf("rebuilt\n%+v\nas judged\n%+v", rebuilt, incremental)
	}

	storePasses(t, db, "/logs/cc1.jsonl", passes)
	got := breaksOf(t, db, "cc:1")
	causes := ""
	for _, b := range got {
		causes += fmt.Sprintf("%d:%s:%s ", b.Seq, b.Thread, b.Cause)
	}
	if causes != "4:agent-a:prefix 5::prefix 6::rewrite 7::idle " {
		t.Fatalf("breaks %s", causes)
	}
	if got[2].Rewrite == nil || *got[2].Rewrite != "r_fold" || got[2].RebilledTokens != 3003 {
		t.Errorf("rewrite break %+v", got[2])
	}
	if err := db.RebuildBreaks(ctx, "cc:1"); err != nil {
		t.Fatal(err)
	}
	if again := breaksOf(t, db, "cc:1"); !reflect.DeepEqual(got, again) {
		t.Fatalf("rebuilt\n%+v\nincremental\n%+v", again, got)
	}
	// Re-priced at twice the miss price: premiums follow.
	if _, _, err := db.Reprice(ctx, "cc:1", func(r storage.ExportedRequest) (Repriced, error) {
		return Repriced{Prices: `{"pricePerMTokens":6}`, PricedBy: "profile"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, b := range breaksOf(t, db, "cc:1") {
		if want := float64(b.RebilledTokens) * 6 / 1e6; math.Abs(b.PremiumUSD-want) > 1e-12 {
			t.Errorf("break %d after re-pricing: %v, want %v", i, b.PremiumUSD, want)
		}
	}
	// Deleting the session takes its ledger along.
	if err := db.DeleteSession(ctx, "cc:1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM breaks").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d breaks left: %v", n, err)
	}
	if _, err := db.SessionBreaks(ctx, "cc:1"); err != storage.ErrNotFound {
		t.Fatalf("breaks of a deleted session: %v", err)
	}
}

// A request that turns out to have been a summary call (Codex says so only
// with the line after it) leaves the conversation's ledger.
func TestRepurposedSummaryCallLeavesTheLedger(t *testing.T) {
	db := openTest(t)
	u := func(read, write int64) pricing.Usage {
		return pricing.Usage{Input: 3, CacheRead: read, CacheWrite: write, Output: 10}
	}
	item := func(id string, sec int, purpose string, us pricing.Usage) ImportItem {
		return ImportItem{Request: impReq("cc:1", id, t0.Add(time.Duration(sec)*time.Second), purpose, us)}
	}
	storePasses(t, db, "/logs/codex.jsonl", [][]ImportItem{
		{item("c1", 0, storage.PurposeConversation, u(0, 20000)), item("c2", 10, storage.PurposeConversation, u(20003, 500)),
			item("c3", 20, storage.PurposeConversation, u(0, 8000))},
		{item("c3", 20, storage.PurposeCompaction, u(0, 8000))},
	})
	if bs := breaksOf(t, db, "cc:1"); len(bs) != 0 {
		t.Fatalf("the summary call still breaks the conversation: %+v", bs)
	}
	var thread string
	if err := db.sql.QueryRow("SELECT thread FROM requests WHERE request_id = 'c3'").Scan(&thread); err != nil || thread != "compaction:c3" {
		t.Fatalf("thread %q, %v", thread, err)
	}
}

// Requests recorded concurrently share group commits, whose requests are
// judged against a ledger state remembered through the transaction; a
// rewrite decided in between makes it forget. The ledger they leave is the
// one a rebuild from the stored rows gives.
func TestGroupCommitLedgerMatchesRebuild(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sessions := []string{"g:1", "g:2", "g:3"}
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for c := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				n := c*12 + i
				s := sessions[n%3]
				r := impReq(s, fmt.Sprint("r", n), t0.Add(time.Duration(n)*time.Second), storage.PurposeConversation,
					pricing.Usage{Input: 3, CacheRead: int64(1000 * (n % 7)), CacheWrite: int64(2000 + 100*(n%5)), Output: 10})
				switch n % 6 {
				case 1:
					r.Purpose = storage.PurposeSubagent
				case 4:
					r.Model = "claude-sonnet-4-6" // a family switch, and back
				}
				if n%50 == 7 {
					r.At = r.At.Add(time.Hour) // idle past the TTL
				}
				if _, err := db.RecordRequest(ctx, *r); err != nil {
					errs <- err
					return
				}
				if n%40 == 5 {
					id := fmt.Sprint("rw", n)
					// Allowed as it is stored (auto mode): a decision
					// arriving later would judge the requests between
					// differently from a rebuild whatever the groups do.
					if _, err := db.CreateRewrite(ctx, storage.Rewrite{ID: id, Session: storage.SessionMeta{ID: s}, At: r.At, Kind: "summary", Trigger: "auto",
						Mode: "auto", Status: storage.StatusDecided, Decision: "allow", Reason: "auto", DecidedAt: r.At}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	causes := map[string]int{}
	for _, s := range sessions {
		judged := breaksOf(t, db, s)
		if err := db.RebuildBreaks(ctx, s); err != nil {
			t.Fatal(err)
		}
		if rebuilt := breaksOf(t, db, s); !reflect.DeepEqual(judged, rebuilt) {
			t.Fatalf("session %s: rebuilt\n%+v\nas judged in groups\n%+v", s, rebuilt, judged)
		}
		for _, b := range judged {
			causes[b.Cause]++
		}
	}
	// The rows exercise what the remembered state holds: threads, families
	// (a switch to a model and back), idle gaps and rewrites.
	for _, c := range []string{"prefix", "rewrite", "idle"} {
		if causes[c] == 0 {
			t.Errorf("no %s break among %v: the test no longer covers it", c, causes)
		}
	}
}

// One group commit, in order: a request, a rewrite allowed at once, the
// next request. The rewrite is another write, so the group forgets what it
// remembered of the session (no rewrite awaiting, the ledger): the second
// request fills the rewrite's actual cold tokens and breaks with it as its
// cause, as it would in a transaction of its own.
func TestGroupCommitForgetsAfterARewrite(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	rec := func(r *storage.Request) *writeJob {
		return &writeJob{ctx: ctx, record: true, ready: make(chan struct{}), fn: func(q querier) (any, error) { return recordRequestTx(ctx, q, *r) }}
	}
	r1 := impReq("g", "r1", t0, storage.PurposeConversation, pricing.Usage{Input: 3, CacheWrite: 30000, Output: 10})
	r2 := impReq("g", "r2", t0.Add(time.Minute), storage.PurposeConversation, pricing.Usage{Input: 3, CacheRead: 2000, CacheWrite: 9000, Output: 10})
	rw := storage.Rewrite{ID: "rw", Session: storage.SessionMeta{ID: "g"}, At: t0.Add(30 * time.Second), Kind: "summary", Trigger: "auto",
		Mode: "auto", Status: storage.StatusDecided, Decision: "allow", Reason: "auto", DecidedAt: t0.Add(30 * time.Second)}
	jobs := []*writeJob{
		rec(r1),
		{ctx: ctx, ready: make(chan struct{}), fn: func(q querier) (any, error) { return createRewriteTx(ctx, q, rw) }},
		rec(r2),
	}
	if err := db.writer.run(jobs); err != nil {
		t.Fatal(err)
	}
	got, err := db.Rewrite(ctx, "rw")
	if err != nil {
		t.Fatal(err)
	}
	if got.ActualCold == nil || *got.ActualCold != r2.Usage.Uncached() {
		t.Fatalf("actual cold tokens %v, want %d", got.ActualCold, r2.Usage.Uncached())
	}
	bs := breaksOf(t, db, "g")
	if len(bs) != 1 || bs[0].Cause != "rewrite" || bs[0].Rewrite == nil || *bs[0].Rewrite != "rw" {
		t.Fatalf("breaks %+v, want one caused by the rewrite", bs)
	}
}
