package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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
	// which saves mattn/go-sqlite3's goroutine per statement (issue 17).
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
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("committing %d requests: %w", len(rs), err)
	}
	return out, nil
}

// sessionMetaUpdate is how a known session takes what a new row says of it:
// the first harness, profile, provider and model stay; a title, window or
// threshold given replaces the old one; the time span only widens.
const sessionMetaUpdate = `
  harness          = CASE WHEN sessions.harness  = '' THEN excluded.harness  ELSE sessions.harness  END,
  profile          = CASE WHEN sessions.profile  = '' THEN excluded.profile  ELSE sessions.profile  END,
  provider         = CASE WHEN sessions.provider = '' THEN excluded.provider ELSE sessions.provider END,
  model            = CASE WHEN sessions.model    = '' THEN excluded.model    ELSE sessions.model    END,
  title            = CASE WHEN excluded.title    = '' THEN sessions.title    ELSE excluded.title    END,
  context_window   = CASE WHEN excluded.context_window   > 0 THEN excluded.context_window   ELSE sessions.context_window   END,
  threshold_tokens = CASE WHEN excluded.threshold_tokens > 0 THEN excluded.threshold_tokens ELSE sessions.threshold_tokens END,
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
		m.ID, m.Harness, m.Profile, m.Provider, m.Model, m.Title, m.ContextWindow, m.ThresholdTokens, ms, ms)
	if err != nil {
		return fmt.Errorf("saving session %q: %w", m.ID, err)
	}
	return nil
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
	// the transaction when it records several (a group commit).
	var l *ledgerState
	if st, ok := tx.(*stmtTx); ok {
		l = st.ledger(r.Session.ID)
	} else {
		l = newLedgerState(r.Session.ID)
	}
	// The request is judged before it is written, so its row carries the
	// cache lifetime the ledger hands on (no UPDATE after it): its
	// sequence number is the session's count plus one, read once per
	// transaction and then counted along.
	seq := l.nextSeq
	if seq == 0 {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT requests FROM sessions WHERE id = ?), 0) + 1`, r.Session.ID).Scan(&seq); err != nil {
			return storage.StoredRequest{}, fmt.Errorf("reading the session's request count: %w", err)
		}
	}
	j, err := l.judge(ctx, tx, &r, seq)
	if err != nil {
		return storage.StoredRequest{}, err
	}
	// Two statements in the common case. The request goes in first; a
	// retried request id inserts nothing and leaves the ledger as it was
	// (the foreign key to sessions is deferred to COMMIT, so the session
	// may be created right after).
	res, err := tx.ExecContext(ctx, `INSERT INTO requests (session_id, request_id, seq, at, purpose, turn, engine, profile, provider, model,
		input, cache_read, cache_write, cache_write_1h, output, context_tokens,
		cost_input, cost_cache_read, cost_cache_write, cost_output, cost_usd, prices, priced_by, off_peak, thread, started_by, ttl_seconds, cache_ttl, via, message_uuid)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, request_id) DO NOTHING`,
		r.Session.ID, r.RequestID, seq, r.At.UnixMilli(), r.Purpose, r.Turn, r.Engine, r.Profile, r.Provider, r.Model,
		u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output, contextTokens,
		r.Cost.Input, r.Cost.CacheRead, r.Cost.CacheWrite, r.Cost.Output, r.Cost.Total, r.Prices, r.PricedBy, boolInt(r.OffPeak),
		r.Thread, r.StartedBy, r.TTLSeconds, j.next.TTLSeconds, r.Via, r.MessageUUID)
	if err != nil {
		return storage.StoredRequest{}, fmt.Errorf("inserting request: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return storage.StoredRequest{}, fmt.Errorf("inserting request: %w", err)
	} else if n == 0 {
		l.nextSeq = seq // a retry: nothing was added
		return storedRequestTx(ctx, tx, r.Session.ID, r.RequestID)
	}

	// Then the session: created on first sight, its metadata refreshed and
	// its totals advanced. It answers whether a rewrite waits for its
	// actual cold tokens.
	var lastContext sql.NullInt64
	if r.Purpose == storage.PurposeConversation {
		lastContext = sql.NullInt64{Int64: contextTokens, Valid: true}
	}
	pricedDefault := 0
	if r.PricedBy == "default" {
		pricedDefault = 1
	}
	m, ms := r.Session, r.At.UnixMilli()
	args := []any{m.ID, m.Harness, m.Profile, m.Provider, m.Model, m.Title, m.ContextWindow, m.ThresholdTokens, ms, ms,
		u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output, r.Cost.Total, lastContext, pricedDefault,
		lastContext.Valid}
	var awaiting bool
	if l.noneAwaiting {
		// Known since an earlier request of this transaction: no rewrite
		// of the session waits for its actual cold tokens.
		if _, err := tx.ExecContext(ctx, upsertRecordedSession, args...); err != nil {
			return storage.StoredRequest{}, fmt.Errorf("saving session %q: %w", m.ID, err)
		}
	} else if err := tx.QueryRowContext(ctx, upsertRecordedSession+`
RETURNING EXISTS (SELECT 1 FROM rewrites WHERE session_id = ? AND decision = 'allow' AND actual_cold IS NULL)`, append(args, m.ID)...).Scan(&awaiting); err != nil {
		return storage.StoredRequest{}, fmt.Errorf("saving session %q: %w", m.ID, err)
	} else if !awaiting {
		l.noneAwaiting = true
	}
	st := storage.StoredRequest{
		SessionID: r.Session.ID, RequestID: r.RequestID, Seq: seq, At: r.At.UTC(), Purpose: r.Purpose,
		ContextTokens: contextTokens, Cost: r.Cost, PricedBy: r.PricedBy, OffPeak: r.OffPeak,
	}
	if err := l.commit(ctx, tx, j); err != nil {
		return st, err
	}
	l.nextSeq = seq + 1
	st.Break = j.brk
	if !awaiting || r.Purpose != storage.PurposeConversation {
		return st, nil
	}
	// The first main-conversation request after an allowed rewrite shows
	// what the rewrite really cost: its uncached part is the actual cold
	// tokens, stored beside the prediction.
	{
		if _, err := tx.ExecContext(ctx, `UPDATE rewrites SET actual_cold = ?, actual_seq = ?
			WHERE session_id = ? AND decision = 'allow' AND actual_cold IS NULL AND COALESCE(applied, 1) = 1 AND seq < ?`,
			u.Uncached(), seq, r.Session.ID, seq); err != nil {
			return st, fmt.Errorf("filling actual cold tokens: %w", err)
		}
	}
	return st, nil
}

// upsertRecordedSession creates a recorded request's session on first
// sight, refreshes what the request says of it and advances its totals.
const upsertRecordedSession = `
INSERT INTO sessions (id, harness, profile, provider, model, title, context_window, threshold_tokens, started_at, last_at,
  requests, input, cache_read, cache_write, cache_write_1h, output, cost_usd, last_context, priced_by_default)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, COALESCE(?, 0), ?)
ON CONFLICT(id) DO UPDATE SET ` + sessionMetaUpdate + `,
  requests         = sessions.requests + 1,
  input            = sessions.input + excluded.input,
  cache_read       = sessions.cache_read + excluded.cache_read,
  cache_write      = sessions.cache_write + excluded.cache_write,
  cache_write_1h   = sessions.cache_write_1h + excluded.cache_write_1h,
  output           = sessions.output + excluded.output,
  cost_usd         = sessions.cost_usd + excluded.cost_usd,
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
