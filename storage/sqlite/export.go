package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"tollgate/pricing"
	"tollgate/storage"
)

// ExportRequests calls fn for every request of a session ("" = every session)
// in session, seq order, streaming: exports of big databases stay small in
// memory.
func (db *DB) ExportRequests(ctx context.Context, sessionID string, fn func(storage.ExportedRequest) error) error {
	q := `SELECT session_id, request_id, seq, at, purpose, turn, profile, provider, model,
		input, cache_read, cache_write, cache_write_1h, output, context_tokens,
		cost_input, cost_cache_read, cost_cache_write, cost_output, cost_usd, prices, priced_by, off_peak FROM requests`
	var args []any
	if sessionID != "" {
		q += " WHERE session_id = ?"
		args = append(args, sessionID)
	}
	q += " ORDER BY session_id, seq"
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("exporting requests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r storage.ExportedRequest
		var at int64
		var offPeak int
		var c [5]sql.NullFloat64
		if err := rows.Scan(&r.Session, &r.RequestID, &r.Seq, &at, &r.Purpose, &r.Turn, &r.Profile, &r.Provider, &r.Model,
			&r.Usage.Input, &r.Usage.CacheRead, &r.Usage.CacheWrite, &r.Usage.CacheWrite1h, &r.Usage.Output, &r.ContextTokens,
			&c[0], &c[1], &c[2], &c[3], &c[4], &r.Prices, &r.PricedBy, &offPeak); err != nil {
			skipRow("export", err)
			continue
		}
		var bad badFields
		r.At = bad.time("at", at)
		r.Cost.Input, r.Cost.CacheRead, r.Cost.CacheWrite = bad.usd("cost.input", c[0]), bad.usd("cost.cacheRead", c[1]), bad.usd("cost.cacheWrite", c[2])
		r.Cost.Output, r.Cost.Total = bad.usd("cost.output", c[3]), bad.usd("cost.total", c[4])
		if err := bad.err("request", r.Session+" "+r.RequestID); err != nil {
			skipRow("export", err)
			continue
		}
		r.OffPeak = offPeak == 1
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ExportRewrites calls fn for every rewrite of a session ("" = all), as folds.
func (db *DB) ExportRewrites(ctx context.Context, sessionID string, fn func(storage.Fold) error) error {
	q := "SELECT " + rewriteColumns + " FROM rewrites r"
	var args []any
	if sessionID != "" {
		q += " WHERE r.session_id = ?"
		args = append(args, sessionID)
	}
	q += " ORDER BY r.session_id, r.at, r.id"
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("exporting rewrites: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRewrite(rows)
		if err != nil {
			skipRow("export", err)
			continue
		}
		if err := fn(storage.FoldOf(r)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Repricer prices one stored request again with today's prices.
type Repricer func(r storage.ExportedRequest) (cost pricing.Cost, prices string, pricedBy string, offPeak bool, err error)

// Reprice re-prices the requests of one session ("" = all) in one
// transaction and recomputes the session totals. Costs are stored with the
// prices used at the time; this is the explicit action that replaces them.
func (db *DB) Reprice(ctx context.Context, sessionID string, price Repricer) (requests, sessions int64, err error) {
	var all []storage.ExportedRequest
	if err := db.ExportRequests(ctx, sessionID, func(r storage.ExportedRequest) error { all = append(all, r); return nil }); err != nil {
		return 0, 0, err
	}
	_, err = db.writer.submit(ctx, func(tx querier) (any, error) {
		const update = `UPDATE requests SET cost_input = ?, cost_cache_read = ?, cost_cache_write = ?, cost_output = ?,
			cost_usd = ?, prices = ?, priced_by = ?, off_peak = ? WHERE session_id = ? AND request_id = ?`
		touched := map[string]bool{}
		for _, r := range all {
			c, prices, by, off, err := price(r)
			if err != nil {
				return nil, fmt.Errorf("pricing request %q of %q: %w", r.RequestID, r.Session, err)
			}
			if _, err := tx.ExecContext(ctx, update, c.Input, c.CacheRead, c.CacheWrite, c.Output, c.Total, prices, by, boolInt(off), r.Session, r.RequestID); err != nil {
				return nil, err
			}
			touched[r.Session] = true
		}
		for s := range touched {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET
				cost_usd = (SELECT COALESCE(SUM(cost_usd), 0) FROM requests WHERE session_id = ?),
				priced_by_default = EXISTS(SELECT 1 FROM requests WHERE session_id = ? AND priced_by = 'default')
				WHERE id = ?`, s, s, s); err != nil {
				return nil, err
			}
			// The premiums follow the new prices.
			if err := rebuildBreaksTx(ctx, tx.(*stmtTx), s); err != nil {
				return nil, err
			}
		}
		sessions = int64(len(touched))
		return nil, nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("re-pricing: %w", err)
	}
	return int64(len(all)), sessions, nil
}
