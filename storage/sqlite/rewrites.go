package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"tollgate/storage"
)

// CreateRewrite stores a rewrite (pending, or already decided in auto and
// off modes: then one commit covers the whole gate). Seq is filled in from
// the session's request count.
func (db *DB) CreateRewrite(ctx context.Context, r storage.Rewrite) (storage.Rewrite, error) {
	res, err := db.writer.submit(ctx, func(tx querier) (any, error) {
		return createRewriteTx(ctx, tx, r)
	})
	if err != nil {
		return r, fmt.Errorf("storing rewrite %s of session %q: %w", r.ID, r.Session.ID, err)
	}
	return res.(storage.Rewrite), nil
}

func createRewriteTx(ctx context.Context, tx querier, r storage.Rewrite) (storage.Rewrite, error) {
	if err := upsertSessionTx(ctx, tx, r.Session, r.At); err != nil {
		return r, err
	}
	if r.Seq == 0 {
		if err := tx.QueryRowContext(ctx, "SELECT requests FROM sessions WHERE id = ?", r.Session.ID).Scan(&r.Seq); err != nil {
			return r, fmt.Errorf("reading session request count: %w", err)
		}
	}
	if r.Source == "" {
		r.Source = "api"
	}
	if r.Status == "" {
		r.Status = storage.StatusPending
	}
	if r.Plan == "" {
		r.Plan = "{}"
	}
	if r.Quote == "" {
		r.Quote = "null"
	}
	sc := r.SummaryCall
	if sc == nil {
		sc = &storage.SummaryCall{}
	}
	var low, high *int64
	if b := r.PredictedBand; b != nil {
		low, high = &b.Low, &b.High
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO rewrites (id, session_id, seq, at, engine, turn, trigger, kind, source, mode, status,
		decision, reason, order_name, pre_tokens, predicted_cold, predicted_cold_low, predicted_cold_high, actual_cold, cost_usd,
		summary_input, summary_cache_read, summary_cache_write, summary_output, summary_cost_usd,
		deadline_at, decided_at, applied, outcome_error, plan, quote)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Session.ID, r.Seq, r.At.UnixMilli(), r.Engine, r.Turn, r.Trigger, r.Kind, r.Source, r.Mode, r.Status,
		r.Decision, r.Reason, r.Order, r.PreTokens, nullInt(r.PredictedCold), nullInt(low), nullInt(high), nullInt(r.ActualCold), r.CostUSD,
		sc.Input, sc.CacheRead, sc.CacheWrite+sc.CacheWrite1h, sc.Output, sc.CostUSD,
		msOrZero(r.DeadlineAt), msOrZero(r.DecidedAt), nullBool(r.Applied), r.OutcomeError, r.Plan, r.Quote)
	if err != nil {
		return r, fmt.Errorf("inserting rewrite: %w", err)
	}
	return r, nil
}

// DecideRewrite records the decision of a pending rewrite. A rewrite is
// decided once: a second decision gets storage.ErrAlreadyDecided.
// answeredBy names who answered (window, browser, tray, owner-token; ""
// when nobody did: a timeout).
func (db *DB) DecideRewrite(ctx context.Context, id, decision, reason, mode, order, answeredBy string, at time.Time) error {
	_, err := db.writer.submit(ctx, func(tx querier) (any, error) {
		res, err := tx.ExecContext(ctx, `UPDATE rewrites SET status = 'decided', decision = ?, reason = ?, mode = ?,
			order_name = CASE WHEN ? = '' THEN order_name ELSE ? END, decided_at = ?, answered_by = ?
			WHERE id = ? AND status = 'pending'`, decision, reason, mode, order, order, at.UnixMilli(), answeredBy, id)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var status string
			if err := tx.QueryRowContext(ctx, "SELECT status FROM rewrites WHERE id = ?", id).Scan(&status); errors.Is(err, sql.ErrNoRows) {
				return nil, storage.ErrNotFound
			}
			return nil, storage.ErrAlreadyDecided
		}
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("deciding rewrite %s: %w", id, err)
	}
	return nil
}

// SetRewriteOutcome records whether the harness applied the rewrite. A
// rewrite that did not land has no actual cold tokens.
func (db *DB) SetRewriteOutcome(ctx context.Context, id string, applied bool, errText string) error {
	_, err := db.writer.submit(ctx, func(tx querier) (any, error) {
		res, err := tx.ExecContext(ctx, `UPDATE rewrites SET applied = ?, outcome_error = ?,
			actual_cold = CASE WHEN ? THEN actual_cold ELSE NULL END,
			actual_seq  = CASE WHEN ? THEN actual_seq  ELSE NULL END
			WHERE id = ?`, boolInt(applied), errText, applied, applied, id)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, storage.ErrNotFound
		}
		return nil, nil
	})
	if err != nil {
		return fmt.Errorf("recording outcome of rewrite %s: %w", id, err)
	}
	return nil
}

const rewriteColumns = `r.id, r.session_id, r.seq, r.at, r.engine, r.turn, r.trigger, r.kind, r.source, r.mode, r.status,
	r.decision, r.reason, r.order_name, r.pre_tokens, r.predicted_cold, r.predicted_cold_low, r.predicted_cold_high, r.actual_cold, r.cost_usd,
	r.summary_input, r.summary_cache_read, r.summary_cache_write, r.summary_output, r.summary_cost_usd,
	r.deadline_at, r.decided_at, r.applied, r.outcome_error, r.plan, r.quote, r.answered_by`

type scanner interface{ Scan(...any) error }

func scanRewrite(row scanner) (r storage.Rewrite, err error) {
	var at, deadline, decided int64
	var predicted, low, high, actual, applied sql.NullInt64
	var sc storage.SummaryCall
	var cost, scCost sql.NullFloat64
	err = row.Scan(&r.ID, &r.Session.ID, &r.Seq, &at, &r.Engine, &r.Turn, &r.Trigger, &r.Kind, &r.Source, &r.Mode, &r.Status,
		&r.Decision, &r.Reason, &r.Order, &r.PreTokens, &predicted, &low, &high, &actual, &cost,
		&sc.Input, &sc.CacheRead, &sc.CacheWrite, &sc.Output, &scCost,
		&deadline, &decided, &applied, &r.OutcomeError, &r.Plan, &r.Quote, &r.AnsweredBy)
	if err != nil {
		return r, err
	}
	var bad badFields
	r.At = bad.time("at", at)
	r.CostUSD = bad.usd("costUSD", cost)
	sc.CostUSD = bad.usd("summaryCall.costUSD", scCost)
	if deadline != 0 {
		r.DeadlineAt = bad.time("deadlineAt", deadline)
	}
	if decided != 0 {
		r.DecidedAt = bad.time("decidedAt", decided)
	}
	defer func() {
		if err == nil {
			err = bad.err("rewrite", r.ID)
		}
	}()
	if predicted.Valid {
		r.PredictedCold = &predicted.Int64
	}
	if low.Valid && high.Valid {
		r.PredictedBand = &storage.ColdBand{Low: low.Int64, High: high.Int64}
	}
	if actual.Valid {
		r.ActualCold = &actual.Int64
	}
	if applied.Valid {
		b := applied.Int64 == 1
		r.Applied = &b
	}
	if sc != (storage.SummaryCall{}) {
		r.SummaryCall = &sc
	}
	return r, nil
}

// storage.Rewrite reads one rewrite.
func (db *DB) Rewrite(ctx context.Context, id string) (storage.Rewrite, error) {
	r, err := scanRewrite(db.sql.QueryRowContext(ctx, "SELECT "+rewriteColumns+" FROM rewrites r WHERE r.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("reading rewrite %s: %w", id, storage.ErrNotFound)
	}
	var bad *BadRowError
	if errors.As(err, &bad) {
		slog.Warn("storage: a stored rewrite has values out of range; served with them zeroed", "err", err)
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("reading rewrite %s: %w", id, err)
	}
	return r, nil
}

// SessionRewrites lists a session's rewrites in order.
func (db *DB) SessionRewrites(ctx context.Context, sessionID string) ([]storage.Rewrite, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+rewriteColumns+" FROM rewrites r WHERE r.session_id = ? ORDER BY r.at, r.seq, r.id", sessionID)
	if err != nil {
		return nil, fmt.Errorf("listing rewrites of %q: %w", sessionID, err)
	}
	var out []storage.Rewrite
	err = eachRow(rows, func(rows *sql.Rows) error {
		r, err := scanRewrite(rows)
		if err != nil {
			skipRow("rewrites of "+strconv.Quote(sessionID), err)
			return nil
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// ExpirePending declines rewrites a previous process left pending: nobody
// is waiting for them any more. It returns how many it closed.
func (db *DB) ExpirePending(ctx context.Context, at time.Time) (int64, error) {
	res, err := db.sql.ExecContext(ctx, `UPDATE rewrites SET status = 'decided', decision = 'decline', reason = 'timeout', decided_at = ?
		WHERE status = 'pending'`, at.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("closing rewrites left pending: %w", err)
	}
	return res.RowsAffected()
}

// SetSessionMode stores a session's mode override; "" removes it.
func (db *DB) SetSessionMode(ctx context.Context, sessionID, mode string, at time.Time) error {
	var err error
	if mode == "" {
		_, err = db.sql.ExecContext(ctx, "DELETE FROM session_modes WHERE session_id = ?", sessionID)
	} else {
		_, err = db.sql.ExecContext(ctx, `INSERT INTO session_modes (session_id, mode, updated_at) VALUES (?, ?, ?)
			ON CONFLICT(session_id) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at`, sessionID, mode, at.UnixMilli())
	}
	if err != nil {
		return fmt.Errorf("saving mode of session %q: %w", sessionID, err)
	}
	return nil
}

// SessionModes returns every session mode override.
func (db *DB) SessionModes(ctx context.Context) (map[string]string, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT session_id, mode FROM session_modes")
	if err != nil {
		return nil, fmt.Errorf("reading session modes: %w", err)
	}
	out := map[string]string{}
	err = eachRow(rows, func(rows *sql.Rows) error {
		var id, mode string
		if err := rows.Scan(&id, &mode); err != nil {
			return fmt.Errorf("reading session modes: %w", err)
		}
		out[id] = mode
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullBool(p *bool) any {
	if p == nil {
		return nil
	}
	return boolInt(*p)
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
