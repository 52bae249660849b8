package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// RecordRequest stores one request and returns once it is committed. Under
// concurrency requests are committed in groups (one transaction, one WAL
// append for many), which is what makes thousands of acknowledged writes a
// second possible; every caller still hears back only after the commit that
// holds its row.
func (db *DB) RecordRequest(ctx context.Context, r storage.Request) (storage.StoredRequest, error) {
	// Once queued, a job runs and is answered whatever its context does
	// (groupWriter.submit): its statements run without the cancellation,
	// which saves mattn/go-sqlite3's goroutine per statement (StoreImports
	// does the same).
	run := context.WithoutCancel(ctx)
	res, err := db.writer.submitRecord(ctx, func(tx querier) (any, error) {
		return recordRequestTx(run, tx, r)
	})
	if err != nil {
		return storage.StoredRequest{}, fmt.Errorf("recording request %q of session %q: %w", r.RequestID, r.Session.ID, err)
	}
	return res.(storage.StoredRequest), nil
}

// RecordRequests stores many requests in one transaction (imports).
func (db *DB) RecordRequests(ctx context.Context, rs []storage.Request) ([]storage.StoredRequest, error) {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("recording %d requests: %w", len(rs), err)
	}
	defer tx.Rollback()
	q := db.stmts(tx)
	out := make([]storage.StoredRequest, 0, len(rs))
	for _, r := range rs {
		st, err := recordRequestTx(ctx, q, r)
		if err != nil {
			return nil, fmt.Errorf("recording request %q of session %q: %w", r.RequestID, r.Session.ID, err)
		}
		out = append(out, st)
	}
	if err := q.flushSessions(ctx); err != nil {
		return nil, fmt.Errorf("recording %d requests: %w", len(rs), err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("committing %d requests: %w", len(rs), err)
	}
	return out, nil
}

// sessionMetaUpdate is how a known session takes what a new row says of it:
// the first harness, profile, provider and model stay; a title given
// replaces the old one; a window or threshold given replaces the old one
// when the statement's two ? are true (the harness said it), else only
// fills one the session lacks (LimitsAssumed); the time span only widens.
const sessionMetaUpdate = `
  harness          = CASE WHEN sessions.harness  = '' THEN excluded.harness  ELSE sessions.harness  END,
  profile          = CASE WHEN sessions.profile  = '' THEN excluded.profile  ELSE sessions.profile  END,
  provider         = CASE WHEN sessions.provider = '' THEN excluded.provider ELSE sessions.provider END,
  model            = CASE WHEN sessions.model    = '' THEN excluded.model    ELSE sessions.model    END,
  title            = CASE WHEN excluded.title    = '' THEN sessions.title    ELSE excluded.title    END,
  context_window   = CASE WHEN excluded.context_window   > 0 AND (? OR sessions.context_window   = 0) THEN excluded.context_window   ELSE sessions.context_window   END,
  threshold_tokens = CASE WHEN excluded.threshold_tokens > 0 AND (? OR sessions.threshold_tokens = 0) THEN excluded.threshold_tokens ELSE sessions.threshold_tokens END,
  started_at       = MIN(sessions.started_at, excluded.started_at),
  last_at          = MAX(sessions.last_at, excluded.last_at)`

// upsertSessionTx creates the session on first sight and refreshes what the
// caller knows. lastAt only moves forward.
func upsertSessionTx(ctx context.Context, tx querier, m storage.SessionMeta, at time.Time) error {
	ms := at.UnixMilli()
	_, err := tx.ExecContext(ctx, `
INSERT INTO sessions (id, harness, profile, provider, model, title, context_window, threshold_tokens, started_at, last_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET `+sessionMetaUpdate,
		m.ID, m.Harness, m.Profile, m.Provider, m.Model, m.Title, m.ContextWindow, m.ThresholdTokens, ms, ms, !m.LimitsAssumed, !m.LimitsAssumed)
	if err != nil {
		return fmt.Errorf("saving session %q: %w", m.ID, err)
	}
	return nil
}

// insertRequest stores one request, recorded over the API or imported
// (requestArgs gives its arguments). A request id the session has already
// stored inserts nothing: each caller tells a retry by RowsAffected and
// does what a retry means to it.
const insertRequest = `INSERT INTO requests (session_id, request_id, seq, at, purpose, turn, engine, profile, provider, model,
	input, cache_read, cache_write, cache_write_1h, output, context_tokens,
	cost_input, cost_cache_read, cost_cache_write, cost_output, cost_usd, prices, priced_by, off_peak, import_key,
	thread, started_by, ttl_seconds, cache_ttl, via, message_uuid)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT(session_id, request_id) DO NOTHING`

// requestArgs are insertRequest's arguments for r as request seq of its
// session: importKey is the imported file's ImportKey (nil, stored as NULL,
// for a request recorded over the API), cacheTTL the cache lifetime the
// ledger hands on to the next request (judgement.next).
func requestArgs(r *storage.Request, seq int64, importKey any, cacheTTL int64) []any {
	u := r.Usage
	return []any{r.Session.ID, r.RequestID, seq, r.At.UnixMilli(), r.Purpose, r.Turn, r.Engine, r.Profile, r.Provider, r.Model,
		u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output, u.Prompt(),
		r.Cost.Input, r.Cost.CacheRead, r.Cost.CacheWrite, r.Cost.Output, r.Cost.Total, r.Prices, r.PricedBy, boolInt(r.OffPeak), importKey,
		r.Thread, r.StartedBy, r.TTLSeconds, cacheTTL, r.Via, r.MessageUUID}
}

func recordRequestTx(ctx context.Context, tx querier, r storage.Request) (storage.StoredRequest, error) {
	if r.Session.ID == "" {
		return storage.StoredRequest{}, errors.New("empty session id")
	}
	// The last line of defence: the doors check times against now and
	// prices where they are set; a row no read could write out is refused.
	if !storage.SaneStoredTime(r.At) {
		return storage.StoredRequest{}, fmt.Errorf("request %q: time %v is out of range", r.RequestID, r.At)
	}
	if field := storage.CheckCost(r.Cost); field != "" {
		return storage.StoredRequest{}, fmt.Errorf("request %q: %s is out of range", r.RequestID, field)
	}
	if r.Purpose == "" {
		r.Purpose = storage.PurposeConversation
	}
	r.Profile = cmp.Or(r.Profile, r.Session.Profile)
	r.Provider = cmp.Or(r.Provider, r.Session.Provider)
	r.Model = cmp.Or(r.Model, r.Session.Model)
	r.Thread = storage.ThreadOf(r.Purpose, r.Thread, r.RequestID)
	u := r.Usage
	contextTokens := u.Prompt()
	if r.Prices == "" {
		r.Prices = "{}"
	}
	// A request with a witness on the other side (twins.go) is stored once.
	if r.Via != "" {
		if rid, ok, err := twinTx(ctx, tx, r); err != nil || ok {
			if err != nil {
				return storage.StoredRequest{}, err
			}
			return storedRequestTx(ctx, tx, r.Session.ID, rid)
		}
	}
	// The cache-break ledger's state of the session, remembered through
	// the transaction when it records several (a group commit); a lone
	// querier writes the session's row at once.
	var l *ledgerState
	st, grouped := tx.(*stmtTx)
	if grouped {
		l = st.ledger(r.Session.ID)
	} else {
		l = newLedgerState(r.Session.ID)
	}
	// The session's row is read once per transaction: its request count
	// (the sequence numbers are counted along from it), its cost (the
	// total is added to in order, as the row's own additions were) and
	// whether a rewrite waits for its actual cold tokens.
	if !l.recorded.read {
		var count int64
		var awaiting bool
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT requests FROM sessions WHERE id = ?1), 0),
			COALESCE((SELECT cost_usd FROM sessions WHERE id = ?1), 0),
			EXISTS (SELECT 1 FROM rewrites WHERE session_id = ?1 AND decision = 'allow' AND actual_cold IS NULL)`, r.Session.ID).
			Scan(&count, &l.recorded.cost, &awaiting); err != nil {
			return storage.StoredRequest{}, fmt.Errorf("reading session %q: %w", r.Session.ID, err)
		}
		l.nextSeq, l.recorded.read, l.recorded.awaitingRead = count+1, true, awaiting
		l.noneAwaiting = !awaiting
	}
	// The request is judged before it is written, so its row carries the
	// cache lifetime the ledger hands on (no UPDATE after it).
	seq := l.nextSeq
	j, err := l.judge(ctx, tx, &r, seq)
	if err != nil {
		return storage.StoredRequest{}, err
	}
	// One statement in the common case. The request goes in first; a
	// retried request id inserts nothing and leaves the ledger as it was
	// (the foreign key to sessions is deferred to COMMIT, so the session
	// is created when the transaction's requests are written to it).
	res, err := tx.ExecContext(ctx, insertRequest, requestArgs(&r, seq, nil, j.next.TTLSeconds)...)
	if err != nil {
		return storage.StoredRequest{}, fmt.Errorf("inserting request: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return storage.StoredRequest{}, fmt.Errorf("inserting request: %w", err)
	} else if n == 0 {
		return storedRequestTx(ctx, tx, r.Session.ID, r.RequestID) // a retry: nothing was added
	}

	// Then the session: what the request says of it and adds to its totals
	// is gathered, and written once before COMMIT (flushSessions).
	var lastContext sql.NullInt64
	if r.Purpose == storage.PurposeConversation {
		lastContext = sql.NullInt64{Int64: contextTokens, Valid: true}
	}
	if l.recorded.add(r, lastContext) && grouped {
		st.recorded = append(st.recorded, l)
	}
	awaiting := false
	if !l.noneAwaiting {
		if l.recorded.awaitingRead {
			awaiting, l.recorded.awaitingRead = true, false
		} else if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM rewrites WHERE session_id = ? AND decision = 'allow' AND actual_cold IS NULL)`,
			r.Session.ID).Scan(&awaiting); err != nil {
			return storage.StoredRequest{}, fmt.Errorf("reading the rewrites of session %q: %w", r.Session.ID, err)
		}
		l.noneAwaiting = !awaiting
	}
	stored := storage.StoredRequest{
		SessionID: r.Session.ID, RequestID: r.RequestID, Seq: seq, At: r.At.UTC(), Purpose: r.Purpose,
		ContextTokens: contextTokens, Cost: r.Cost, PricedBy: r.PricedBy, OffPeak: r.OffPeak,
	}
	if err := l.commit(ctx, tx, j); err != nil {
		return stored, err
	}
	l.nextSeq = seq + 1
	stored.Break = j.brk
	if awaiting && r.Purpose == storage.PurposeConversation {
		// The first main-conversation request after an allowed rewrite
		// shows what the rewrite really cost: its uncached part is the
		// actual cold tokens, stored beside the prediction.
		if _, err := tx.ExecContext(ctx, `UPDATE rewrites SET actual_cold = ?, actual_seq = ?
			WHERE session_id = ? AND decision = 'allow' AND actual_cold IS NULL AND COALESCE(applied, 1) = 1 AND seq < ?`,
			u.Uncached(), seq, r.Session.ID, seq); err != nil {
			return stored, fmt.Errorf("filling actual cold tokens: %w", err)
		}
	}
	if !grouped {
		if err := l.recorded.flush(ctx, tx, r.Session.ID); err != nil {
			return stored, err
		}
	}
	return stored, nil
}

// recordedSession is what a transaction's recorded requests change in
// their session's row. A row written once per transaction instead of once
// per request (the upsert and its index entries would be a third of a
// recorded request's cost) ends the same as one-by-one upserts would:
// sessionMetaUpdate applied to the gathered fields gives what applying it
// to each request in turn gives.
type recordedSession struct {
	read         bool  // the row was read in this transaction
	awaitingRead bool  // that read found a rewrite waiting for its actual cold tokens, not yet acted on
	requests     int64 // requests added since the last flush
	// meta: Harness, Profile, Provider and Model the first non-empty (an
	// empty one stays empty only when every request's is); Title the
	// last non-empty; ContextWindow and ThresholdTokens the last > 0 of
	// those the harness said, else of the assumed ones (LimitsAssumed).
	meta          storage.SessionMeta
	minAt, maxAt  int64
	usage         pricing.Usage
	cost          float64 // the row's cost_usd after the requests, added one by one in order
	lastContext   sql.NullInt64
	pricedDefault int
}

// add gathers one stored request; it says whether it is the first since
// the last flush (the session has to be listed for the next one).
func (s *recordedSession) add(r storage.Request, lastContext sql.NullInt64) bool {
	ms := r.At.UnixMilli()
	m := r.Session
	first := s.requests == 0
	if first {
		s.meta, s.minAt, s.maxAt = m, ms, ms
		s.usage, s.lastContext, s.pricedDefault = pricing.Usage{}, sql.NullInt64{}, 0
	} else {
		s.meta.Harness = cmp.Or(s.meta.Harness, m.Harness)
		s.meta.Profile = cmp.Or(s.meta.Profile, m.Profile)
		s.meta.Provider = cmp.Or(s.meta.Provider, m.Provider)
		s.meta.Model = cmp.Or(s.meta.Model, m.Model)
		s.meta.Title = cmp.Or(m.Title, s.meta.Title)
		s.meta.TakeLimits(m)
		s.minAt, s.maxAt = min(s.minAt, ms), max(s.maxAt, ms)
	}
	s.requests++
	s.usage = addUsage(s.usage, r.Usage)
	s.cost += r.Cost.Total
	if lastContext.Valid {
		s.lastContext = lastContext
	}
	if r.PricedBy == "default" {
		s.pricedDefault = 1
	}
	return first
}

// flush writes the gathered requests to the session's row: created on
// first sight, its metadata refreshed and its totals advanced.
func (s *recordedSession) flush(ctx context.Context, tx querier, session string) error {
	if s.requests == 0 {
		return nil
	}
	m, u := s.meta, s.usage
	if _, err := tx.ExecContext(ctx, upsertRecordedSession,
		session, m.Harness, m.Profile, m.Provider, m.Model, m.Title, m.ContextWindow, m.ThresholdTokens, s.minAt, s.maxAt,
		s.requests, u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output, s.cost, s.lastContext, s.pricedDefault,
		!m.LimitsAssumed, !m.LimitsAssumed, s.lastContext.Valid); err != nil {
		return fmt.Errorf("saving session %q: %w", session, err)
	}
	s.requests = 0
	return nil
}

// upsertRecordedSession creates a recorded request's session on first
// sight, refreshes what the requests say of it and advances its totals;
// cost_usd is the total already added up (recordedSession.cost).
const upsertRecordedSession = `
INSERT INTO sessions (id, harness, profile, provider, model, title, context_window, threshold_tokens, started_at, last_at,
  requests, input, cache_read, cache_write, cache_write_1h, output, cost_usd, last_context, priced_by_default)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, 0), ?)
ON CONFLICT(id) DO UPDATE SET ` + sessionMetaUpdate + `,
  requests         = sessions.requests + excluded.requests,
  input            = sessions.input + excluded.input,
  cache_read       = sessions.cache_read + excluded.cache_read,
  cache_write      = sessions.cache_write + excluded.cache_write,
  cache_write_1h   = sessions.cache_write_1h + excluded.cache_write_1h,
  output           = sessions.output + excluded.output,
  cost_usd         = excluded.cost_usd,
  last_context     = CASE WHEN ? THEN excluded.last_context ELSE sessions.last_context END,
  priced_by_default = MAX(sessions.priced_by_default, excluded.priced_by_default)`

// storedRequestTx reads back a stored request: a retry gets the first
// answer, and nothing is written.
func storedRequestTx(ctx context.Context, tx querier, session, requestID string) (storage.StoredRequest, error) {
	st := storage.StoredRequest{SessionID: session, RequestID: requestID, Duplicate: true}
	var at int64
	var offPeak int
	err := tx.QueryRowContext(ctx, `SELECT seq, at, purpose, context_tokens, cost_input, cost_cache_read, cost_cache_write, cost_output, cost_usd, priced_by, off_peak
		FROM requests WHERE session_id = ? AND request_id = ?`, session, requestID).
		Scan(&st.Seq, &at, &st.Purpose, &st.ContextTokens, &st.Cost.Input, &st.Cost.CacheRead, &st.Cost.CacheWrite, &st.Cost.Output, &st.Cost.Total, &st.PricedBy, &offPeak)
	if err != nil {
		return st, fmt.Errorf("reading back request %q: %w", requestID, err)
	}
	st.At, st.OffPeak = time.UnixMilli(at).UTC(), offPeak == 1
	return st, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
