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
	return eachRow(rows, func(rows *sql.Rows) error {
		var r storage.ExportedRequest
		var at int64
		var offPeak int
		var c [5]sql.NullFloat64
		if err := rows.Scan(&r.Session, &r.RequestID, &r.Seq, &at, &r.Purpose, &r.Turn, &r.Profile, &r.Provider, &r.Model,
			&r.Usage.Input, &r.Usage.CacheRead, &r.Usage.CacheWrite, &r.Usage.CacheWrite1h, &r.Usage.Output, &r.ContextTokens,
			&c[0], &c[1], &c[2], &c[3], &c[4], &r.Prices, &r.PricedBy, &offPeak); err != nil {
			skipRow("export", err)
			return nil
		}
		var bad badFields
		r.At = bad.time("at", at)
		r.Cost.Input, r.Cost.CacheRead, r.Cost.CacheWrite = bad.usd("cost.input", c[0]), bad.usd("cost.cacheRead", c[1]), bad.usd("cost.cacheWrite", c[2])
		r.Cost.Output, r.Cost.Total = bad.usd("cost.output", c[3]), bad.usd("cost.total", c[4])
		if err := bad.err("request", r.Session+" "+r.RequestID); err != nil {
			skipRow("export", err)
			return nil
		}
		r.OffPeak = offPeak == 1
		return fn(r)
	})
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
	return eachRow(rows, func(rows *sql.Rows) error {
		r, err := scanRewrite(rows)
		if err != nil {
			skipRow("export", err)
			return nil
		}
		return fn(storage.FoldOf(r))
	})
}

// Repriced is a stored request priced again: its cost, the prices and the
// cache TTL that made it.
type Repriced struct {
	Cost       pricing.Cost
	Prices     string // JSON
	PricedBy   string
	OffPeak    bool
	TTLSeconds int64 // the profile's ttlSeconds, for the cache-break ledger (0: keep the stored one)
}

// Repricer prices one stored request again with today's prices.
type Repricer func(r storage.ExportedRequest) (Repriced, error)

// Reprice re-prices the requests of one session ("" = all) in one
// transaction and recomputes the session totals. Costs are stored with the
// prices used at the time; this is the explicit action that replaces them.
func (db *DB) Reprice(ctx context.Context, sessionID string, price Repricer) (requests, sessions int64, err error) {
	var all []storage.ExportedRequest
	if err := db.ExportRequests(ctx, sessionID, func(r storage.ExportedRequest) error { all = append(all, r); return nil }); err != nil {
		return 0, 0, err
	}
	_, err = db.writer.submit(ctx, func(tx querier) (any, error) {
		// The usage is in the WHERE clause: a row an import grew since it
		// was read keeps the cost the import gave it, priced today anyway.
		const update = `UPDATE requests SET cost_input = ?, cost_cache_read = ?, cost_cache_write = ?, cost_output = ?,
			cost_usd = ?, prices = ?, priced_by = ?, off_peak = ?, ttl_seconds = CASE WHEN ? > 0 THEN ? ELSE ttl_seconds END
			WHERE session_id = ? AND request_id = ?
			AND input = ? AND cache_read = ? AND cache_write = ? AND cache_write_1h = ? AND output = ?`
		touched := map[string]bool{}
		for _, r := range all {
			p, err := price(r)
			if err != nil {
				return nil, fmt.Errorf("pricing request %q of %q: %w", r.RequestID, r.Session, err)
			}
			c, u := p.Cost, r.Usage
			if _, err := tx.ExecContext(ctx, update, c.Input, c.CacheRead, c.CacheWrite, c.Output, c.Total, p.Prices, p.PricedBy, boolInt(p.OffPeak),
				p.TTLSeconds, p.TTLSeconds, r.Session, r.RequestID, u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output); err != nil {
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
