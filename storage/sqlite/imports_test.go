package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

func impReq(session, id string, at time.Time, purpose string, u pricing.Usage) *storage.Request {
	total := float64(u.Input)*3e-6 + float64(u.CacheRead)*0.3e-6 + float64(u.CacheWrite+u.CacheWrite1h)*3.75e-6 + float64(u.Output)*15e-6
	return &storage.Request{
		Session:   storage.SessionMeta{ID: session, Harness: "claude-code", Provider: "anthropic", Model: "claude-opus-4-6", Title: "proj", ContextWindow: 200000},
		RequestID: id, At: at, Purpose: purpose, Usage: u, Provider: "anthropic", Model: "claude-opus-4-6",
		Cost:   pricing.Cost{Input: float64(u.Input) * 3e-6, CacheRead: float64(u.CacheRead) * 0.3e-6, CacheWrite: float64(u.CacheWrite+u.CacheWrite1h) * 3.75e-6, Output: float64(u.Output) * 15e-6, Total: total},
		Prices: `{"pricePerMTokens":3}`, PricedBy: "builtin",
	}
}

func impFold(session, id string, at time.Time, pre int64) *storage.Rewrite {
	return &storage.Rewrite{ID: id, Session: storage.SessionMeta{ID: session, Harness: "claude-code"}, At: at, Kind: "summary", Trigger: "auto", PreTokens: pre, Plan: `{"source":"import"}`}
}

// the items of two passes over one log: conversation requests, a
// subagent's, a fold, its summary call (before it), the request after it.
func sampleItems() [][]ImportItem {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	var pass1, pass2 []ImportItem
	for i := 1; i <= 5; i++ {
		pass1 = append(pass1, ImportItem{Request: impReq("cc:1", fmt.Sprint("m", i), at(i), storage.PurposeConversation, pricing.Usage{Input: 3, CacheRead: int64(1000 * i), CacheWrite: 200, Output: int64(10 * i)})})
	}
	pass1 = append(pass1,
		ImportItem{Request: impReq("cc:1", "sub1", at(6), storage.PurposeSubagent, pricing.Usage{Input: 5, CacheWrite1h: 900, Output: 40})},
		ImportItem{Request: impReq("cc:1", "call1", at(7), storage.PurposeCompaction, pricing.Usage{Input: 3, CacheRead: 5000, CacheWrite: 800, Output: 1200})},
		ImportItem{Fold: impFold("cc:1", "r_imp_1", at(8), 6100)},
	)
	pass2 = append(pass2,
		ImportItem{Request: impReq("cc:1", "m6", at(9), storage.PurposeConversation, pricing.Usage{Input: 2, CacheRead: 11000, CacheWrite: 4100, Output: 70})},
		ImportItem{Request: impReq("cc:1", "m7", at(10), storage.PurposeConversation, pricing.Usage{Input: 1, CacheRead: 15000, CacheWrite: 300, Output: 20})},
		ImportItem{Fold: impFold("cc:1", "r_imp_2", at(11), 15400)},
		ImportItem{Request: impReq("cc:2", "x1", at(12), storage.PurposeConversation, pricing.Usage{Input: 7, Output: 7})},
	)
	return [][]ImportItem{pass1, pass2}
}

func batch(path string, from ImportState, offset int64, items []ImportItem) ImportBatch {
	return ImportBatch{From: from, To: ImportState{Path: path, Harness: "claude-code", SessionID: "cc:1", Size: offset, Offset: offset, HeadHash: "4:abcd", State: `{"lines":1}`}, Items: items}
}

func storePasses(t *testing.T, db *DB, path string, passes [][]ImportItem) {
	t.Helper()
	ctx := context.Background()
	from := ImportState{Path: path}
	for i, items := range passes {
		b := batch(path, from, int64(100*(i+1)), items)
		if _, err := db.StoreImport(ctx, b); err != nil {
			t.Fatal(err)
		}
		from = b.To
	}
}

type table []string

func dump(t *testing.T, db *DB, query string) table {
	t.Helper()
	rows, err := db.sql.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	out, err := collect(rows, func(rows *sql.Rows) (string, error) {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		var b strings.Builder
		for i, v := range vals {
			if f, ok := v.(float64); ok {
				v = math.Round(f*1e9) / 1e9 // sums in another order differ in the last bits
			}
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v ", cols[i], v)
		}
		return b.String(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const (
	sessionsRow = `SELECT id, harness, profile, provider, model, title, context_window, threshold_tokens, started_at, last_at,
		requests, input, cache_read, cache_write, cache_write_1h, output, cost_usd, last_context, priced_by_default FROM sessions ORDER BY id`
	requestsRow = `SELECT session_id, request_id, seq, at, purpose, turn, engine, profile, provider, model, input, cache_read, cache_write,
		cache_write_1h, output, context_tokens, cost_input, cost_cache_read, cost_cache_write, cost_output, cost_usd, prices, priced_by, off_peak
		FROM requests ORDER BY session_id, seq`
	rewritesRow = `SELECT id, session_id, seq, at, kind, source, status, decision, reason, pre_tokens, actual_cold, actual_seq, applied FROM rewrites ORDER BY id`
)

// The import writes the rows recordRequestTx and createRewriteTx write,
// pass for pass.
func TestImportMatchesRecordRequest(t *testing.T) {
	ctx := context.Background()
	imported, recorded := openTest(t), openTest(t)
	passes := sampleItems()
	storePasses(t, imported, "/logs/a.jsonl", passes)
	for _, items := range passes {
		for _, it := range items {
			if it.Request != nil {
				if _, err := recorded.RecordRequest(ctx, *it.Request); err != nil {
					t.Fatal(err)
				}
			} else {
				r := *it.Fold
				r.Source, r.Status, r.Decision, r.DecidedAt = "import", storage.StatusDecided, "allow", r.At
				applied := true
				r.Applied = &applied
				if _, err := recorded.CreateRewrite(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, q := range []string{sessionsRow, requestsRow, rewritesRow} {
		a, b := dump(t, imported, q), dump(t, recorded, q)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("imported:\n%s\nrecorded:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
	// the fold's actual cold tokens: the uncached part of m6 (2 + 4100) at seq 8
	fold, err := imported.Rewrite(ctx, "r_imp_1")
	if err != nil || fold.ActualCold == nil || *fold.ActualCold != 4102 || fold.Seq != 7 {
		t.Fatalf("fold: %+v %v", fold, err)
	}
	// the summary call is attached to the fold after it; the second fold has none
	if fold.SummaryCall == nil || fold.SummaryCall.Output != 1200 || fold.SummaryCall.CacheWrite != 800 {
		t.Fatalf("summary call: %+v", fold.SummaryCall)
	}
	if f2, _ := imported.Rewrite(ctx, "r_imp_2"); f2.SummaryCall != nil || f2.ActualCold != nil {
		t.Fatalf("second fold: %+v", f2)
	}
	s, _ := imported.Session(ctx, "cc:1")
	if s.Folds != 2 {
		t.Fatalf("folds %d", s.Folds)
	}
}

func TestImportTwiceAddsNothing(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	passes := sampleItems()
	storePasses(t, db, "/logs/a.jsonl", passes)
	before := dump(t, db, requestsRow)
	// The same rows again (a copy of the log under another path).
	st, err := db.StoreImport(ctx, batch("/copy/a.jsonl", ImportState{Path: "/copy/a.jsonl"}, 200, append(passes[0], passes[1]...)))
	if err != nil || st.Requests != 0 || st.Folds != 0 || st.Updated != 0 {
		t.Fatalf("second import: %+v %v", st, err)
	}
	if after := dump(t, db, requestsRow); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatal("rows changed")
	}
}

func TestImportTakesFinalFiguresOfAStreamedMessage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	first := impReq("cc:1", "m1", t0, storage.PurposeConversation, pricing.Usage{Input: 3, CacheRead: 1000, CacheWrite: 200, Output: 9})
	fold := impFold("cc:1", "r_imp_1", t0.Add(-time.Minute), 900)
	storePasses(t, db, "/l.jsonl", [][]ImportItem{{{Fold: fold}, {Request: first}}})
	final := impReq("cc:1", "m1", t0, storage.PurposeConversation, pricing.Usage{Input: 3, CacheRead: 1000, CacheWrite: 200, Output: 640})
	from, _, _ := db.ImportStateOf(ctx, "/l.jsonl")
	st, err := db.StoreImport(ctx, batch("/l.jsonl", from, 200, []ImportItem{{Request: final}}))
	if err != nil || st.Updated != 1 || st.Requests != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	s, _ := db.Session(ctx, "cc:1")
	if s.Requests != 1 || s.Tokens.Output != 640 || math.Abs(s.CostUSD-final.Cost.Total) > 1e-12 {
		t.Fatalf("session %+v cost %v want %v", s.Tokens, s.CostUSD, final.Cost.Total)
	}
	// An older snapshot arriving later changes nothing.
	from, _, _ = db.ImportStateOf(ctx, "/l.jsonl")
	st, err = db.StoreImport(ctx, batch("/l.jsonl", from, 300, []ImportItem{{Request: first}}))
	if err != nil || st.Updated != 0 {
		t.Fatalf("%+v %v", st, err)
	}
	if s, _ := db.Session(ctx, "cc:1"); s.Tokens.Output != 640 {
		t.Fatalf("regressed to %d", s.Tokens.Output)
	}
	if f, _ := db.Rewrite(ctx, "r_imp_1"); f.ActualCold == nil || *f.ActualCold != 203 {
		t.Fatalf("actual cold %v", f.ActualCold)
	}
}

func TestImportRepurposesASummaryCall(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	fold0 := impFold("cx:1", "r_imp_0", t0, 100)
	call := impReq("cx:1", "t500", t0.Add(time.Minute), storage.PurposeConversation, pricing.Usage{Input: 100, CacheRead: 400})
	storePasses(t, db, "/r.jsonl", [][]ImportItem{{{Fold: fold0}, {Request: call}}})
	if f, _ := db.Rewrite(ctx, "r_imp_0"); f.ActualCold == nil {
		t.Fatal("fold 0 not closed by the request after it")
	}
	// The next pass shows that request was a compaction's summary call.
	again := *call
	again.Purpose = storage.PurposeCompaction
	from, _, _ := db.ImportStateOf(ctx, "/r.jsonl")
	st, err := db.StoreImport(ctx, batch("/r.jsonl", from, 200, []ImportItem{
		{Request: &again}, {Fold: impFold("cx:1", "r_imp_1", t0.Add(2*time.Minute), 500)},
		{Request: impReq("cx:1", "t900", t0.Add(3*time.Minute), storage.PurposeConversation, pricing.Usage{Input: 300, CacheRead: 50})},
	}))
	if err != nil || st.Updated != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	f0, _ := db.Rewrite(ctx, "r_imp_0")
	f1, _ := db.Rewrite(ctx, "r_imp_1")
	if f0.ActualCold == nil || *f0.ActualCold != 300 || f1.ActualCold == nil || *f1.ActualCold != 300 {
		t.Fatalf("folds reopen and close on the next conversation request: %v %v", f0.ActualCold, f1.ActualCold)
	}
	if f1.SummaryCall == nil || f1.SummaryCall.Input != 100 {
		t.Fatalf("summary call %+v", f1.SummaryCall)
	}
	if s, _ := db.Session(ctx, "cx:1"); s.LastContextTokens != 350 {
		t.Fatalf("last context %d", s.LastContextTokens)
	}
}

func TestImportRefusesAStalePass(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	passes := sampleItems()
	storePasses(t, db, "/a.jsonl", passes[:1])
	// A pass that believes the file was never imported.
	_, err := db.StoreImport(ctx, batch("/a.jsonl", ImportState{Path: "/a.jsonl"}, 100, passes[1]))
	if !errors.Is(err, ErrImportStale) {
		t.Fatalf("err = %v", err)
	}
	if s, _ := db.Session(ctx, "cc:1"); s.Requests != 7 {
		t.Fatalf("stale pass stored something: %d requests", s.Requests)
	}
	// In a group, the stale pass alone is left out.
	good := batch("/b.jsonl", ImportState{Path: "/b.jsonl"}, 10, []ImportItem{{Request: impReq("cc:9", "z", t0, storage.PurposeConversation, pricing.Usage{Input: 1})}})
	stale := batch("/a.jsonl", ImportState{Path: "/a.jsonl"}, 100, passes[1])
	_, errs, err := db.StoreImports(ctx, []ImportBatch{stale, good})
	if err != nil || !errors.Is(errs[0], ErrImportStale) || errs[1] != nil {
		t.Fatalf("%v %v", errs, err)
	}
	if s, err := db.Session(ctx, "cc:9"); err != nil || s.Requests != 1 {
		t.Fatalf("good pass: %+v %v", s, err)
	}
}

func TestImportRestartRemovesTheOldRows(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	// The session also holds a request recorded through the API.
	if _, err := db.RecordRequest(ctx, *impReq("cc:1", "api-1", t0.Add(-time.Hour), storage.PurposeConversation, pricing.Usage{Input: 50, Output: 5})); err != nil {
		t.Fatal(err)
	}
	passes := sampleItems()
	storePasses(t, db, "/a.jsonl", passes)
	from, _, _ := db.ImportStateOf(ctx, "/a.jsonl")
	// The file was rewritten: it now holds two other requests.
	b := batch("/a.jsonl", from, 50, []ImportItem{
		{Request: impReq("cc:1", "n1", t0.Add(30*time.Minute), storage.PurposeConversation, pricing.Usage{Input: 9, Output: 1})},
		{Request: impReq("cc:1", "n2", t0.Add(31*time.Minute), storage.PurposeConversation, pricing.Usage{Input: 8, Output: 2})},
	})
	b.Restart = true
	st, err := db.StoreImport(ctx, b)
	if err != nil || st.Requests != 2 || st.Removed != 12 {
		t.Fatalf("%+v %v", st, err)
	}
	s, _ := db.Session(ctx, "cc:1")
	if s.Requests != 3 || s.Tokens.Input != 67 || s.Tokens.Output != 8 || s.Folds != 0 {
		t.Fatalf("session after restart: %+v", s)
	}
	rows := dump(t, db, "SELECT request_id, seq FROM requests WHERE session_id = 'cc:1' ORDER BY seq")
	if strings.Join(rows, ";") != "request_id=api-1 seq=1 ;request_id=n1 seq=2 ;request_id=n2 seq=3 " {
		t.Fatalf("renumbered: %v", rows)
	}
	// cc:2 lost its only row and is gone
	if _, err := db.Session(ctx, "cc:2"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("cc:2: %v", err)
	}
}

func TestImportKeepsImportsRow(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	storePasses(t, db, "/a.jsonl", sampleItems())
	st, ok, err := db.ImportStateOf(ctx, "/a.jsonl")
	if err != nil || !ok || st.Offset != 200 || st.HeadHash != "4:abcd" || st.State != `{"lines":1}` || st.Harness != "claude-code" || st.SessionID != "cc:1" {
		t.Fatalf("%+v %v %v", st, ok, err)
	}
	all, err := db.ImportStates(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("%v %v", all, err)
	}
	// Deleting the session forgets its imports, so a re-import brings it back.
	if err := db.DeleteSession(ctx, "cc:1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.ImportStateOf(ctx, "/a.jsonl"); ok {
		t.Fatal("imports row survived the session")
	}
}

// The store keeps up with the parsers: thousands of rows a second, in
// one transaction per pass.
func BenchmarkStoreImport(b *testing.B) {
	for _, ledger := range []bool{true, false} {
		name := "ledger"
		if !ledger {
			name = "without-ledger"
		}
		b.Run(name, func(b *testing.B) { benchStoreImport(b, ledger) })
	}
	// What the length of a session id costs the writer: rows as a Claude
	// Code import stores them (a 48-byte session id, a 57-byte request
	// id, a message uuid, via "import": all six indexes), against the
	// same rows under a 6-byte id — what an integer session key (a
	// migration of requests, rewrites and breaks) would buy at most.
	for _, long := range []bool{true, false} {
		name := "claude-ids"
		if !long {
			name = "short-session-ids"
		}
		b.Run(name, func(b *testing.B) { benchStoreClaudeRows(b, long) })
	}
}

func benchStoreClaudeRows(b *testing.B, longIDs bool) {
	ctx := context.Background()
	db := openTest(b)
	const rows = 300 // a long session's main transcript
	hexOf := func(parts ...any) string {
		h := sha256.Sum256([]byte(fmt.Sprint(parts...)))
		return hex.EncodeToString(h[:])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := hexOf(i)
		session := h[:6]
		if longIDs {
			session = "claude-code:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
		}
		items := make([]ImportItem, rows)
		for k := range items {
			m := hexOf(i, "m", k)
			r := impReq(session, "msg_"+m[:24]+":req_"+m[24:48], t0.Add(time.Duration(k)*time.Second), storage.PurposeConversation,
				pricing.Usage{Input: 3, CacheRead: 5000 + int64(k)*100, CacheWrite: 100, Output: 50})
			r.Via, r.MessageUUID = "import", m[:8]+"-"+m[8:12]+"-"+m[12:16]+"-"+m[16:20]+"-"+m[20:32]
			items[k] = ImportItem{Request: r}
		}
		path := fmt.Sprintf("/f%d", i)
		if _, err := db.StoreImport(ctx, batch(path, ImportState{Path: path}, 10, items)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows)/1e3, "µs/row")
}

func benchStoreImport(b *testing.B, ledger bool) {
	ctx := context.Background()
	db := openTest(b)
	db.SetLedger(ledger)
	const rows = 2000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		items := make([]ImportItem, rows)
		for k := range items {
			items[k] = ImportItem{Request: impReq(fmt.Sprintf("s%d", i), fmt.Sprint("m", k), t0.Add(time.Duration(k)*time.Second), storage.PurposeConversation, pricing.Usage{Input: 3, CacheRead: 5000, CacheWrite: 100, Output: 50})}
		}
		path := fmt.Sprintf("/f%d", i)
		if _, err := db.StoreImport(ctx, batch(path, ImportState{Path: path}, 10, items)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}

// A compaction asked about through the API and later imported from its
// transcript is one fold: the import completes the asked rewrite.
func TestImportCompletesTheRewriteAskedAboutInsteadOfAddingATwin(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	pred := int64(9000)
	if _, err := db.CreateRewrite(ctx, storage.Rewrite{ID: "r_api", Session: storage.SessionMeta{ID: "cc:1"}, At: at(6), Kind: "summary", Trigger: "auto",
		Source: "api", Status: storage.StatusDecided, Decision: "allow", Reason: "user", PredictedCold: &pred, PreTokens: 5000}); err != nil {
		t.Fatal(err)
	}
	storePasses(t, db, "/logs/cc1.jsonl", sampleItems())
	folds := dump(t, db, `SELECT id, source, pre_tokens, applied, actual_cold IS NOT NULL AS has_actual, summary_output, import_key IS NOT NULL AS linked FROM rewrites ORDER BY at`)
	if len(folds) != 2 || !strings.HasPrefix(folds[0], "id=r_api source=api pre_tokens=6100 applied=1 has_actual=1 summary_output=1200 linked=1") ||
		!strings.HasPrefix(folds[1], "id=r_imp_2 source=import") {
		t.Fatalf("folds:\n%s", strings.Join(folds, "\n"))
	}
	// A rewritten file unlinks the asked rewrite but never deletes it.
	b := batch("/logs/cc1.jsonl", ImportState{Path: "/logs/cc1.jsonl"}, 50, nil)
	b.Restart = true
	b.To.HeadHash = "4:ffff"
	st, _, err := db.ImportStateOf(ctx, "/logs/cc1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	b.From = st
	if _, err := db.StoreImport(ctx, b); err != nil {
		t.Fatal(err)
	}
	left := dump(t, db, `SELECT id, import_key IS NULL AS unlinked FROM rewrites`)
	if len(left) != 1 || left[0] != "id=r_api unlinked=1 " {
		t.Fatalf("after a restart: %v", left)
	}
}

// cancelAfter is a context that reports itself cancelled from its nth
// look on: a caller cancelling while a group is being stored.
type cancelAfter struct {
	context.Context
	looks, n int
}

func (c *cancelAfter) Err() error {
	c.looks++
	if c.looks >= c.n {
		return context.Canceled
	}
	return nil
}

// The statements of an import run without the caller's cancellation (no
// goroutine per statement), so the passes look at it between rows: a
// cancel in the middle of a group stores nothing of the group, and the
// same passes stored afterwards give the rows they give on their own.
func TestStoreImportsCancelledMidGroupStoresNothing(t *testing.T) {
	passes := sampleItems()
	group := func() []ImportBatch {
		return []ImportBatch{
			batch("/logs/a.jsonl", ImportState{Path: "/logs/a.jsonl"}, 100, passes[0]),
			batch("/logs/b.jsonl", ImportState{Path: "/logs/b.jsonl"}, 100, passes[1]),
		}
	}
	rows := len(passes[0]) + len(passes[1])
	for n := 1; ; n++ {
		db := openTest(t)
		stats, _, err := db.StoreImports(&cancelAfter{Context: context.Background(), n: n}, group())
		if err == nil {
			// The cancel came after the last look: everything is stored.
			if n <= rows {
				t.Fatalf("cancelled at look %d of a group of %d rows, and it was stored: the rows are not looked at one by one", n, rows)
			}
			if stats[0].Requests != 7 || stats[1].Requests != 3 {
				t.Fatalf("stored: %+v", stats)
			}
			return
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at look %d: err %v, want context.Canceled", n, err)
		}
		for _, tab := range []string{"requests", "rewrites", "sessions", "imports", "breaks"} {
			var count int
			if err := db.sql.QueryRow("SELECT COUNT(*) FROM " + tab).Scan(&count); err != nil || count != 0 {
				t.Fatalf("cancelled at look %d: %d rows in %s (%v)", n, count, tab, err)
			}
		}
	}
}

// A real context cancelled while a one-file import runs: either the file is
// stored, or the import says it was cancelled — never a per-file failure
// (database/sql's rollback on cancel surfaced as "transaction has already
// been committed or rolled back", counted as a bad file).
func TestStoreImportCancelledIsNeverAFileFailure(t *testing.T) {
	passes := sampleItems()
	for try := range 40 {
		db := openTest(t)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for range try % 8 {
				runtime.Gosched()
			}
			cancel()
		}()
		_, errs, err := db.StoreImports(ctx, []ImportBatch{batch("/logs/a.jsonl", ImportState{Path: "/logs/a.jsonl"}, 100, passes[0])})
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("try %d: err %v, want context.Canceled", try, err)
		}
		if err == nil && errs[0] != nil {
			t.Fatalf("try %d: a cancelled import reported as a file failure: %v", try, errs[0])
		}
	}
}
