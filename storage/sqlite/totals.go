package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"tollgate/storage"
)

// Totals sums every stored request by the session's harness and the
// request's model (the exports' counters).
func (db *DB) Totals(ctx context.Context) ([]storage.Totals, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT s.harness, r.model, COUNT(*),
		SUM(r.input), SUM(r.cache_read), SUM(r.cache_write), SUM(r.cache_write_1h), SUM(r.output), SUM(r.cost_usd)
		FROM requests r JOIN sessions s ON s.id = r.session_id
		GROUP BY s.harness, r.model ORDER BY s.harness, r.model`)
	if err != nil {
		return nil, fmt.Errorf("summing requests: %w", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (t storage.Totals, err error) {
		err = rows.Scan(&t.Harness, &t.Model, &t.Requests, &t.Tokens.Input, &t.Tokens.CacheRead, &t.Tokens.CacheWrite,
			&t.Tokens.CacheWrite1h, &t.Tokens.Output, &t.CostUSD)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading sums: %w", err)
	}
	return out, nil
}

// RewriteTotals counts every rewrite by the session's harness and its
// decision, with the predicted cold tokens of the declined ones (what
// /v1/spend calls avoidedColdTokens).
func (db *DB) RewriteTotals(ctx context.Context) ([]storage.RewriteTotals, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT s.harness, CASE WHEN w.decision = '' THEN 'pending' ELSE w.decision END AS d, COUNT(*),
		SUM(CASE WHEN w.decision = 'decline' THEN COALESCE(w.predicted_cold, 0) ELSE 0 END)
		FROM rewrites w JOIN sessions s ON s.id = w.session_id
		GROUP BY s.harness, d ORDER BY s.harness, d`)
	if err != nil {
		return nil, fmt.Errorf("counting rewrites: %w", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (t storage.RewriteTotals, err error) {
		err = rows.Scan(&t.Harness, &t.Decision, &t.Rewrites, &t.AvoidedColdTokens)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading rewrite counts: %w", err)
	}
	return out, nil
}

// BreakTotals sums every break of the ledger by the session's harness and
// the cause.
func (db *DB) BreakTotals(ctx context.Context) ([]storage.BreakTotals, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT s.harness, b.cause, COUNT(*), SUM(b.rebilled), SUM(b.premium_usd)
		FROM breaks b JOIN sessions s ON s.id = b.session_id GROUP BY s.harness, b.cause ORDER BY s.harness, b.cause`)
	if err != nil {
		return nil, fmt.Errorf("summing breaks: %w", err)
	}
	out, err := collect(rows, func(rows *sql.Rows) (t storage.BreakTotals, err error) {
		err = rows.Scan(&t.Harness, &t.Cause, &t.Breaks, &t.RebilledTokens, &t.PremiumUSD)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading break sums: %w", err)
	}
	return out, nil
}
