package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// The cache-break ledger (pricing.Breaks; ARCHITECTURE.md, "The cache-break
// ledger") kept beside the requests. Every stored request is judged as it
// is written — against the last request of its thread and family, looked up
// once and then remembered for the rest of the transaction — and its break,
// if any, becomes a row of `breaks`; requests.cache_ttl carries the family's
// cache lifetime to the next request. When stored rows change under the
// ledger (a re-import that grew a request or restarted a file, a re-price)
// the session's ledger is rebuilt from its rows: rebuildBreaksTx gives
// exactly what judging the rows one by one gave (TestRebuildMatchesIncremental).

// defaultTTLSeconds is the TTL of a request priced before its profile's
// ttlSeconds was stored.
const defaultTTLSeconds = 300

// ledgerState is the ledger's memory of one session within a transaction.
type ledgerState struct {
	session string
	last    map[ledgerKey]pricing.LedgerPrev // a zero Seq: the family has no request in the thread
	threads map[string]threadLast
	prices  map[string]pricing.Prices // by the rows' prices JSON
	// The previous request's family and prices, reused by the next: an
	// import judges ~10⁵ requests a second, mostly of one model.
	provider, model, family string
	priceText               string
	priceLast               pricing.Prices
	// The session's rewrites, read at its first break (rewriteBetween).
	rewrites       []rewriteRef
	rewritesLoaded bool
	// nextSeq is the session's next sequence number, once a request of
	// this transaction read it (recordRequestTx); 0: not known.
	nextSeq int64
	// noneAwaiting: a request of this transaction found that no allowed
	// rewrite of the session waits for its actual cold tokens.
	noneAwaiting bool
	// recorded is what the transaction's recorded requests change in the
	// session's row (recordRequestTx), written once before COMMIT.
	recorded recordedSession
	// freshFile: the pass is a file's first, so a thread of its own (a
	// subagent's, named after the file) has no rows stored before it. A
	// row that was (a copy of the file imported from elsewhere) is a
	// duplicate, never judged into the ledger.
	freshFile bool
}

type ledgerKey struct{ thread, family string }

// threadLast is a thread's last request: its family and sequence number.
type threadLast struct {
	family string
	seq    int64
}

func newLedgerState(session string) *ledgerState {
	return &ledgerState{session: session, last: map[ledgerKey]pricing.LedgerPrev{}, threads: map[string]threadLast{}, prices: map[string]pricing.Prices{}}
}

func familyOf(provider, model string) string { return provider + "/" + model }

// pricesOf decodes a row's prices JSON once per distinct text.
func (l *ledgerState) pricesOf(text string) pricing.Prices {
	if text == l.priceText && text != "" {
		return l.priceLast
	}
	if p, ok := l.prices[text]; ok {
		l.priceText, l.priceLast = text, p
		return p
	}
	var p pricing.Prices
	_ = json.Unmarshal([]byte(text), &p) // "{}" and a damaged text price at zero: no premium, still a break
	if len(l.prices) < 256 {
		l.prices[text] = p
	}
	l.priceText, l.priceLast = text, p
	return p
}

// ledgerRequest is what the ledger reads of a request about to be stored
// (or stored) with sequence number seq; r's thread is already resolved.
func (l *ledgerState) ledgerRequest(r *storage.Request, seq int64) pricing.LedgerRequest {
	ttl := r.TTLSeconds
	if ttl <= 0 {
		ttl = defaultTTLSeconds
	}
	if r.Provider != l.provider || r.Model != l.model || l.family == "" {
		l.provider, l.model, l.family = r.Provider, r.Model, familyOf(r.Provider, r.Model)
	}
	return pricing.LedgerRequest{Seq: seq, At: r.At, Thread: r.Thread, Family: l.family, Model: r.Model,
		Usage: r.Usage, StartedBy: r.StartedBy, Prices: l.pricesOf(r.Prices), TTLSeconds: ttl}
}

// judgement is the ledger's verdict on one request before it is committed
// to the state.
type judgement struct {
	req  pricing.LedgerRequest
	next pricing.LedgerPrev // the family's state after it: next.TTLSeconds is its cache_ttl
	brk  *storage.Break
}

// judge looks r up against the session's earlier requests (from memory,
// else the database) without remembering it: a request id already stored
// must leave the state as it was.
func (l *ledgerState) judge(ctx context.Context, q querier, r *storage.Request, seq int64) (judgement, error) {
	lr := l.ledgerRequest(r, seq)
	key := ledgerKey{lr.Thread, lr.Family}
	tl, threadKnown := l.threads[lr.Thread]
	prev, keyKnown := l.last[key]
	if !threadKnown && l.newThread(lr.Thread) {
		threadKnown = true
		l.threads[lr.Thread] = tl
		if !keyKnown {
			prev, keyKnown = pricing.LedgerPrev{}, true
			l.last[key] = prev
		}
	}
	if !threadKnown {
		// One read finds the thread's last request, which is most often
		// also the last of this family.
		var last pricing.LedgerPrev
		var at int64
		var provider, model string
		err := q.QueryRowContext(ctx, `SELECT seq, at, provider, model, context_tokens, cache_ttl FROM requests
			WHERE session_id = +? AND thread = +? AND seq < +? ORDER BY seq DESC LIMIT 1`,
			l.session, lr.Thread, seq).Scan(&last.Seq, &at, &provider, &model, &last.Prompt, &last.TTLSeconds)
		switch {
		case errors.Is(err, sql.ErrNoRows): // a new thread: nothing before it
			if !keyKnown {
				prev, keyKnown = pricing.LedgerPrev{}, true
				l.last[key] = prev
			}
		case err != nil:
			return judgement{}, fmt.Errorf("reading the last request of thread %q: %w", lr.Thread, err)
		default:
			last.At = time.UnixMilli(at)
			tl = threadLast{family: familyOf(provider, model), seq: last.Seq}
			if !keyKnown && tl.family == lr.Family {
				prev, keyKnown = last, true
				l.last[key] = prev
			}
		}
		l.threads[lr.Thread] = tl
	}
	if !keyKnown {
		var at int64
		err := q.QueryRowContext(ctx, `SELECT seq, at, context_tokens, cache_ttl FROM requests
			WHERE session_id = +? AND thread = +? AND provider = +? AND model = +? AND seq < +? ORDER BY seq DESC LIMIT 1`,
			l.session, lr.Thread, r.Provider, r.Model, seq).Scan(&prev.Seq, &at, &prev.Prompt, &prev.TTLSeconds)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			prev = pricing.LedgerPrev{}
		case err != nil:
			return judgement{}, fmt.Errorf("reading the previous request of thread %q: %w", lr.Thread, err)
		default:
			prev.At = time.UnixMilli(at)
		}
		l.last[key] = prev
	}
	var pp *pricing.LedgerPrev
	if prev.Seq > 0 {
		pp = &prev
	}
	j := judgement{req: lr, next: prev.Next(lr)}
	b, broke := pricing.BreakOf(pp, tl.family, lr)
	if !broke {
		return j, nil
	}
	// Only a break asks whether a rewrite came between: the main thread's
	// folds and prunes, recorded after the thread's previous request.
	if lr.Thread == "" && tl.seq > 0 {
		id, err := l.rewriteBetween(ctx, q, tl.seq, seq)
		if err != nil {
			return judgement{}, err
		}
		if id != "" {
			j.req.Rewrite = id
			b, _ = pricing.BreakOf(pp, tl.family, j.req)
		}
	}
	sb := storage.BreakOf(l.session, b)
	j.brk = &sb
	return j, nil
}

// newThread says a thread can have no stored rows: each summary call is
// its own, and a fresh file's own thread starts with it.
func (l *ledgerState) newThread(thread string) bool {
	return strings.HasPrefix(thread, "compaction:") || l.freshFile && thread != ""
}

// rewriteRef is an allowed, applied rewrite: its id and the number of
// requests recorded before it.
type rewriteRef struct {
	seq int64
	id  string
}

// loadRewrites reads the session's allowed and applied rewrites, in the
// order the rebuild takes them.
func loadRewrites(ctx context.Context, q querier, session string) ([]rewriteRef, error) {
	st, ok := q.(*stmtTx)
	if !ok {
		return nil, errors.New("reading rewrites: not in a transaction")
	}
	rows, err := query(ctx, st, `SELECT seq, id FROM rewrites WHERE session_id = +? AND decision = 'allow' AND COALESCE(applied, 1) = 1
		ORDER BY seq, at, id`, session)
	if err != nil {
		return nil, fmt.Errorf("reading the rewrites of %q: %w", session, err)
	}
	return collect(rows, func(rows *sql.Rows) (r rewriteRef, err error) {
		if err := rows.Scan(&r.seq, &r.id); err != nil {
			return r, fmt.Errorf("reading the rewrites of %q: %w", session, err)
		}
		return r, nil
	})
}

// lastRewriteIn is the last of rws (in order) recorded in [from, to): the
// rewrite between a thread's previous request (from) and the request to.
func lastRewriteIn(rws []rewriteRef, from, to int64) string {
	if i := sort.Search(len(rws), func(i int) bool { return rws[i].seq >= to }); i > 0 && rws[i-1].seq >= from {
		return rws[i-1].id
	}
	return ""
}

// rewriteBetween finds the rewrite recorded in [from, to), reading the
// session's rewrites once (forgetRewrites drops them when one is added).
func (l *ledgerState) rewriteBetween(ctx context.Context, q querier, from, to int64) (string, error) {
	if !l.rewritesLoaded {
		rws, err := loadRewrites(ctx, q, l.session)
		if err != nil {
			return "", err
		}
		l.rewrites, l.rewritesLoaded = rws, true
	}
	return lastRewriteIn(l.rewrites, from, to), nil
}

// forgetRewrites says a rewrite was stored: the next break reads them again.
func (l *ledgerState) forgetRewrites() { l.rewrites, l.rewritesLoaded = nil, false }

// commit remembers a judged request that was stored, and stores its break.
func (l *ledgerState) commit(ctx context.Context, q querier, j judgement) error {
	l.last[ledgerKey{j.req.Thread, j.req.Family}] = j.next
	l.threads[j.req.Thread] = threadLast{family: j.req.Family, seq: j.req.Seq}
	if j.brk == nil {
		return nil
	}
	return insertBreakTx(ctx, q, *j.brk)
}

func insertBreakTx(ctx context.Context, q querier, b storage.Break) error {
	var rewrite any
	if b.Rewrite != nil {
		rewrite = *b.Rewrite
	}
	_, err := q.ExecContext(ctx, `INSERT INTO breaks (session_id, seq, at, thread, model, cause, started_by, rewrite, gap_ms, ttl_seconds,
		expected, cache_read, rebilled, premium_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, seq) DO UPDATE SET at = excluded.at, thread = excluded.thread, model = excluded.model, cause = excluded.cause,
		started_by = excluded.started_by, rewrite = excluded.rewrite, gap_ms = excluded.gap_ms, ttl_seconds = excluded.ttl_seconds,
		expected = excluded.expected, cache_read = excluded.cache_read, rebilled = excluded.rebilled, premium_usd = excluded.premium_usd`,
		b.Session, b.Seq, b.At.UnixMilli(), b.Thread, b.Model, b.Cause, b.StartedBy, rewrite, int64(b.GapSeconds*1000), b.TTLSeconds,
		b.ExpectedCachedTokens, b.CacheReadTokens, b.RebilledTokens, b.PremiumUSD)
	if err != nil {
		return fmt.Errorf("storing the break of request %d: %w", b.Seq, err)
	}
	return nil
}

// rebuildBreaksTx recomputes a session's ledger from its stored rows: the
// breaks, and each request's cache_ttl.
func rebuildBreaksTx(ctx context.Context, q *stmtTx, session string) error {
	rws, err := loadRewrites(ctx, q, session)
	if err != nil {
		return err
	}
	type ttlFix struct{ seq, ttl int64 }
	var fixes []ttlFix
	var breaks []storage.Break
	l := newLedgerState(session)
	var ledger pricing.Ledger
	lastSeq := map[string]int64{}
	rows, err := query(ctx, q, `SELECT seq, at, thread, started_by, provider, model, input, cache_read, cache_write, cache_write_1h,
		prices, ttl_seconds, cache_ttl FROM requests WHERE session_id = +? ORDER BY seq`, session)
	if err != nil {
		return fmt.Errorf("rebuilding the breaks of %q: %w", session, err)
	}
	err = eachRow(rows, func(rows *sql.Rows) error {
		var r storage.Request
		var seq, at, stored int64
		u := &r.Usage
		if err := rows.Scan(&seq, &at, &r.Thread, &r.StartedBy, &r.Provider, &r.Model, &u.Input, &u.CacheRead, &u.CacheWrite, &u.CacheWrite1h,
			&r.Prices, &r.TTLSeconds, &stored); err != nil {
			return fmt.Errorf("rebuilding the breaks of %q: %w", session, err)
		}
		r.At = time.UnixMilli(at)
		lr := l.ledgerRequest(&r, seq)
		if ps, ok := lastSeq[lr.Thread]; ok && lr.Thread == "" {
			lr.Rewrite = lastRewriteIn(rws, ps, seq)
		}
		lastSeq[lr.Thread] = seq
		key := ledgerKey{lr.Thread, lr.Family}
		next := l.last[key].Next(lr)
		l.last[key] = next
		if next.TTLSeconds != stored {
			fixes = append(fixes, ttlFix{seq, next.TTLSeconds})
		}
		if b, ok := ledger.Add(lr); ok {
			breaks = append(breaks, storage.BreakOf(session, b))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range fixes {
		if _, err := q.ExecContext(ctx, "UPDATE requests SET cache_ttl = ? WHERE session_id = ? AND seq = ?", f.ttl, session, f.seq); err != nil {
			return fmt.Errorf("rebuilding the breaks of %q: %w", session, err)
		}
	}
	if _, err := q.ExecContext(ctx, "DELETE FROM breaks WHERE session_id = ?", session); err != nil {
		return fmt.Errorf("rebuilding the breaks of %q: %w", session, err)
	}
	for _, b := range breaks {
		if err := insertBreakTx(ctx, q, b); err != nil {
			return err
		}
	}
	return nil
}

// RebuildBreaks recomputes the ledger of one session ("" = every session).
func (db *DB) RebuildBreaks(ctx context.Context, session string) error {
	var ids []string
	if session != "" {
		ids = []string{session}
	} else {
		rows, err := db.sql.QueryContext(ctx, "SELECT id FROM sessions")
		if err != nil {
			return fmt.Errorf("rebuilding breaks: %w", err)
		}
		if ids, err = collect(rows, scanValue[string]); err != nil {
			return err
		}
	}
	_, err := db.writer.submit(ctx, func(q querier) (any, error) {
		for _, id := range ids {
			if err := rebuildBreaksTx(ctx, q.(*stmtTx), id); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

const breakColumns = `session_id, seq, at, thread, model, cause, started_by, rewrite, gap_ms, ttl_seconds, expected, cache_read, rebilled, premium_usd`

func scanBreak(row scanner) (storage.Break, error) {
	var b storage.Break
	var at, gap int64
	var rewrite sql.NullString
	err := row.Scan(&b.Session, &b.Seq, &at, &b.Thread, &b.Model, &b.Cause, &b.StartedBy, &rewrite, &gap, &b.TTLSeconds,
		&b.ExpectedCachedTokens, &b.CacheReadTokens, &b.RebilledTokens, &b.PremiumUSD)
	b.At = time.UnixMilli(at).UTC()
	b.GapSeconds = float64(gap) / 1000
	if rewrite.Valid {
		b.Rewrite = &rewrite.String
	}
	return b, err
}

// SessionBreaks is the ledger of one session, in request order.
func (db *DB) SessionBreaks(ctx context.Context, session string) (storage.SessionBreaks, error) {
	out := storage.SessionBreaks{Breaks: []storage.Break{}}
	var exists bool
	if err := db.sql.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?)", session).Scan(&exists); err != nil {
		return out, fmt.Errorf("reading breaks of %q: %w", session, err)
	}
	if !exists {
		return out, storage.ErrNotFound
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT "+breakColumns+" FROM breaks WHERE session_id = ? ORDER BY seq", session)
	if err != nil {
		return out, fmt.Errorf("reading breaks of %q: %w", session, err)
	}
	err = eachRow(rows, func(rows *sql.Rows) error {
		b, err := scanBreak(rows)
		if err != nil {
			return fmt.Errorf("reading breaks of %q: %w", session, err)
		}
		b.Session = ""
		out.Breaks = append(out.Breaks, b)
		return nil
	})
	return out, err
}

// BreakSummary sums the breaks since a time: per cause, per cause and what
// started the request, and the costliest sessions (at most limit).
func (db *DB) BreakSummary(ctx context.Context, since time.Time, limit int) (storage.BreakSummary, error) {
	out := storage.BreakSummary{Since: since.UTC(), ByCause: []pricing.CauseTotal{}, ByStart: []storage.BreakCauseStarted{}, Sessions: []storage.BreakSession{}}
	ms := since.UnixMilli()
	rows, err := db.sql.QueryContext(ctx, `SELECT cause, started_by, COUNT(*), SUM(rebilled), SUM(premium_usd) FROM breaks
		WHERE at >= ? GROUP BY cause, started_by ORDER BY SUM(premium_usd) DESC, cause, started_by`, ms)
	if err != nil {
		return out, fmt.Errorf("summing breaks: %w", err)
	}
	byCause := map[string]*pricing.CauseTotal{}
	err = eachRow(rows, func(rows *sql.Rows) error {
		var s storage.BreakCauseStarted
		if err := rows.Scan(&s.Cause, &s.StartedBy, &s.Breaks, &s.RebilledTokens, &s.PremiumUSD); err != nil {
			return fmt.Errorf("summing breaks: %w", err)
		}
		out.ByStart = append(out.ByStart, s)
		c := byCause[s.Cause]
		if c == nil {
			c = &pricing.CauseTotal{Cause: pricing.BreakCause(s.Cause)}
			byCause[s.Cause] = c
		}
		c.Breaks += s.Breaks
		c.RebilledTokens += s.RebilledTokens
		c.PremiumUSD += s.PremiumUSD
		out.Breaks += s.Breaks
		out.RebilledTokens += s.RebilledTokens
		out.PremiumUSD += s.PremiumUSD
		return nil
	})
	if err != nil {
		return out, err
	}
	for _, c := range pricing.BreakCauses {
		if t := byCause[string(c)]; t != nil {
			out.ByCause = append(out.ByCause, *t)
		}
	}
	sort.SliceStable(out.ByCause, func(i, j int) bool { return out.ByCause[i].PremiumUSD > out.ByCause[j].PremiumUSD })
	rows, err = db.sql.QueryContext(ctx, `SELECT b.session_id, COALESCE(s.title, ''), COALESCE(s.harness, ''), COUNT(*), SUM(b.rebilled), SUM(b.premium_usd),
		(SELECT cause FROM breaks c WHERE c.session_id = b.session_id AND c.at >= ?1 GROUP BY cause ORDER BY SUM(premium_usd) DESC, cause LIMIT 1)
		FROM breaks b LEFT JOIN sessions s ON s.id = b.session_id WHERE b.at >= ?1
		GROUP BY b.session_id ORDER BY SUM(b.premium_usd) DESC, b.session_id LIMIT ?2`, ms, limit)
	if err != nil {
		return out, fmt.Errorf("summing breaks per session: %w", err)
	}
	err = eachRow(rows, func(rows *sql.Rows) error {
		var s storage.BreakSession
		if err := rows.Scan(&s.Session, &s.Title, &s.Harness, &s.Breaks, &s.RebilledTokens, &s.PremiumUSD, &s.TopCause); err != nil {
			return fmt.Errorf("summing breaks per session: %w", err)
		}
		out.Sessions = append(out.Sessions, s)
		return nil
	})
	return out, err
}
