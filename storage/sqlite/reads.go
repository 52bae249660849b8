package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// Session reads are served straight into the API's read models (guard/api
// is a leaf of plain types), so no layer copies them field by field.

const sessionColumns = `s.id, s.harness, s.profile, s.provider, s.model, s.title, s.started_at, s.last_at, s.requests,
	s.input, s.cache_read, s.cache_write, s.cache_write_1h, s.output, s.cost_usd, s.priced_by_default,
	s.context_window, s.threshold_tokens, s.last_context, COALESCE(m.mode, ''),
	(SELECT COUNT(*) FROM rewrites w WHERE w.session_id = s.id),
	(SELECT COUNT(*) FROM rewrites w WHERE w.session_id = s.id AND w.decision = 'allow' AND COALESCE(w.applied, 1) = 1 AND w.reason != 'off'),
	(SELECT COUNT(*) FROM rewrites w WHERE w.session_id = s.id AND w.decision = 'decline'),
	(SELECT CASE WHEN r.cache_ttl > 0 THEN r.at + r.cache_ttl * 1000 END FROM requests r WHERE r.session_id = s.id AND r.thread = '' ORDER BY r.seq DESC LIMIT 1)`

const sessionFrom = ` FROM sessions s LEFT JOIN session_modes m ON m.session_id = s.id`

// scanSession reads one session row. A row no read could write out (a
// time past year 9999, a cost that is not a finite amount) comes back
// sanitized — bad times zero, bad costs 0 — with a *BadRowError.
func scanSession(row scanner) (storage.Session, error) {
	var s storage.Session
	var started, last int64
	var byDefault int
	var warm sql.NullInt64
	var cost sql.NullFloat64
	err := row.Scan(&s.ID, &s.Harness, &s.Profile, &s.Provider, &s.Model, &s.Title, &started, &last, &s.Requests,
		&s.Tokens.Input, &s.Tokens.CacheRead, &s.Tokens.CacheWrite, &s.Tokens.CacheWrite1h, &s.Tokens.Output, &cost, &byDefault,
		&s.ContextWindow, &s.ThresholdTokens, &s.LastContextTokens, &s.SessionMode, &s.Rewrites, &s.Folds, &s.Declined, &warm)
	if err != nil {
		return s, err
	}
	var bad badFields
	if warm.Valid {
		t := bad.time("cacheWarmUntil", warm.Int64)
		s.CacheWarmUntil = &t
	}
	s.StartedAt = bad.time("startedAt", started)
	s.LastAt = bad.time("lastAt", last)
	s.CostUSD = bad.usd("costUSD", cost)
	s.PricedByDefault = byDefault == 1
	s.HitRate = hitRate(s.Tokens)
	return s, bad.err("session", s.ID)
}

func hitRate(t pricing.Usage) float64 {
	prompt := t.Input + t.CacheRead + t.CacheWrite + t.CacheWrite1h
	if prompt == 0 {
		return 0
	}
	return float64(t.CacheRead) / float64(prompt)
}

// Sessions lists sessions by latest activity, newest first. before is the
// cursor a previous page returned ("" for the first page).
func (db *DB) Sessions(ctx context.Context, limit int, before string) (storage.SessionList, error) {
	if limit <= 0 || limit > 1000 {
		limit = 50
	}
	q := "SELECT " + sessionColumns + sessionFrom
	args := []any{}
	if before != "" {
		ms, id, ok := parseCursor(before)
		if !ok {
			return storage.SessionList{}, fmt.Errorf("before: %q is not a cursor this server issued", before)
		}
		q += " WHERE (s.last_at < ? OR (s.last_at = ? AND s.id > ?))"
		args = append(args, ms, ms, id)
	}
	q += " ORDER BY s.last_at DESC, s.id LIMIT ?"
	args = append(args, limit+1)
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return storage.SessionList{}, fmt.Errorf("listing sessions: %w", err)
	}
	list := storage.SessionList{Sessions: []storage.Session{}}
	err = eachRow(rows, func(rows *sql.Rows) error {
		s, err := scanSession(rows)
		var bad *BadRowError
		if errors.As(err, &bad) {
			// Listed sanitized, so it can be found and deleted.
			slog.Warn("storage: a stored session has values out of range; listed with them zeroed", "err", err)
		} else if err != nil {
			skipRow("sessions", err)
			return nil
		}
		list.Sessions = append(list.Sessions, s)
		return nil
	})
	if err != nil {
		return list, fmt.Errorf("listing sessions: %w", err)
	}
	if len(list.Sessions) > limit {
		list.Sessions = list.Sessions[:limit]
		last := list.Sessions[limit-1]
		c := strconv.FormatInt(last.LastAt.UnixMilli(), 10) + "." + last.ID
		list.Next = &c
	}
	return list, nil
}

func parseCursor(c string) (int64, string, bool) {
	ms, id, ok := strings.Cut(c, ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, id, ok && err == nil
}

// Session reads one session.
func (db *DB) Session(ctx context.Context, id string) (storage.Session, error) {
	s, err := scanSession(db.sql.QueryRowContext(ctx, "SELECT "+sessionColumns+sessionFrom+" WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("reading session %q: %w", id, storage.ErrNotFound)
	}
	var bad *BadRowError
	if errors.As(err, &bad) {
		// Served sanitized, so the session can still be opened and deleted.
		slog.Warn("storage: a stored session has values out of range; served with them zeroed", "err", err)
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading session %q: %w", id, err)
	}
	return s, nil
}

// storage.SessionMeta reads what a session knows of its harness, profile and
// model: the gate's pricing lookup needs only this, not the totals.
func (db *DB) SessionMeta(ctx context.Context, id string) (storage.SessionMeta, error) {
	m := storage.SessionMeta{ID: id}
	err := db.sql.QueryRowContext(ctx, `SELECT harness, profile, provider, model, title, context_window, threshold_tokens FROM sessions WHERE id = ?`, id).
		Scan(&m.Harness, &m.Profile, &m.Provider, &m.Model, &m.Title, &m.ContextWindow, &m.ThresholdTokens)
	if errors.Is(err, sql.ErrNoRows) {
		return m, fmt.Errorf("reading session %q: %w", id, storage.ErrNotFound)
	}
	if err != nil {
		return m, fmt.Errorf("reading session %q: %w", id, err)
	}
	return m, nil
}

// Series reads a session's main-conversation points and its folds.
func (db *DB) Series(ctx context.Context, id string) (storage.Series, error) {
	var out storage.Series
	s, err := db.Session(ctx, id)
	if err != nil {
		return out, err
	}
	out.Session, out.ContextWindow, out.ThresholdTokens = s, s.ContextWindow, s.ThresholdTokens
	rows, err := db.sql.QueryContext(ctx, `SELECT seq, at, purpose, context_tokens, input, cache_read, cache_write, cache_write_1h, output, cost_usd
		FROM requests WHERE session_id = ? AND purpose = 'conversation' ORDER BY seq`, id)
	if err != nil {
		return out, fmt.Errorf("reading series of %q: %w", id, err)
	}
	out.Points = make(storage.Points, 0, s.Requests)
	err = eachRow(rows, func(rows *sql.Rows) error {
		var p storage.Point
		var at int64
		var cost sql.NullFloat64
		if err := rows.Scan(&p.Seq, &at, &p.Purpose, &p.ContextTokens, &p.Input, &p.CacheRead, &p.CacheWrite, &p.CacheWrite1h, &p.Output, &cost); err != nil {
			skipRow("series of "+strconv.Quote(id), err)
			return nil
		}
		var bad badFields
		p.At = bad.time("at", at)
		p.CostUSD = bad.usd("costUSD", cost)
		if err := bad.err("request", id+" #"+strconv.FormatInt(p.Seq, 10)); err != nil {
			skipRow("series of "+strconv.Quote(id), err)
			return nil
		}
		out.Points = append(out.Points, p)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("reading series of %q: %w", id, err)
	}
	rws, err := db.SessionRewrites(ctx, id)
	if err != nil {
		return out, err
	}
	out.Folds = make([]storage.Fold, 0, len(rws))
	for _, r := range rws {
		out.Folds = append(out.Folds, storage.FoldOf(r))
	}
	return out, nil
}

// Spend sums what was billed since `since`, bucketed by local day (in loc),
// profile or model. Four stacks add up to the total: cache-hit input, cold
// input, output, and the break premium — the summary calls plus the cold
// input of the first main request after each applied fold.
func (db *DB) Spend(ctx context.Context, by string, loc *time.Location, since time.Time) (storage.Spend, error) {
	out := storage.Spend{By: by, TZ: loc.String(), Rows: []storage.SpendRow{}}
	var key string
	switch by {
	case storage.SpendByDay:
		// 15-minute UTC buckets map onto local days for every real time zone
		// offset (they are multiples of 15 minutes), so SQLite sums and Go
		// only places a few thousand buckets.
		key = "CAST(r.at / 900000 AS TEXT)"
	case storage.SpendByProfile:
		key = "r.profile"
	case storage.SpendByModel:
		key = "r.model"
	default:
		return out, fmt.Errorf("by: %q: want day, profile or model", by)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT `+key+` AS k,
		COUNT(*), SUM(r.input), SUM(r.cache_read), SUM(r.cache_write), SUM(r.cache_write_1h), SUM(r.output),
		SUM(r.cost_cache_read), SUM(r.cost_input + r.cost_cache_write), SUM(r.cost_output), SUM(r.cost_usd),
		SUM(CASE WHEN r.purpose = 'compaction' THEN r.cost_usd
		         WHEN f.actual_seq IS NOT NULL THEN r.cost_input + r.cost_cache_write ELSE 0 END),
		SUM(CASE WHEN r.purpose = 'compaction' THEN r.cost_cache_read ELSE 0 END),
		SUM(CASE WHEN r.purpose = 'compaction' THEN r.cost_output ELSE 0 END)
		FROM requests r
		LEFT JOIN (SELECT DISTINCT session_id, actual_seq FROM rewrites WHERE actual_seq IS NOT NULL) f
		  ON f.session_id = r.session_id AND f.actual_seq = r.seq
		WHERE r.at >= ? AND r.at <= ? AND `+saneCostsSQL+` GROUP BY k`, since.UnixMilli(), maxStoredMilli)
	if err != nil {
		return out, fmt.Errorf("summing spend by %s: %w", by, err)
	}
	buckets := map[string]*storage.SpendRow{}
	var order []string
	err = eachRow(rows, func(rows *sql.Rows) error {
		var k string
		var r storage.SpendRow
		var premium, compactionHit, compactionOut float64
		if err := rows.Scan(&k, &r.Requests, &r.Tokens.Input, &r.Tokens.CacheRead, &r.Tokens.CacheWrite, &r.Tokens.CacheWrite1h, &r.Tokens.Output,
			&r.CacheReadUSD, &r.ColdInputUSD, &r.OutputUSD, &r.TotalUSD, &premium, &compactionHit, &compactionOut); err != nil {
			return err
		}
		// Move the premium out of the stacks it was counted in, so the
		// four stacks still add up to the total.
		r.BreakPremiumUSD = premium
		r.CacheReadUSD -= compactionHit
		r.OutputUSD -= compactionOut
		r.ColdInputUSD -= premium - compactionHit - compactionOut
		if by == storage.SpendByDay {
			q, _ := strconv.ParseInt(k, 10, 64)
			k = time.UnixMilli(q * 900000).In(loc).Format("2006-01-02")
		}
		b, ok := buckets[k]
		if !ok {
			b = &storage.SpendRow{Key: k}
			buckets[k] = b
			order = append(order, k)
		}
		addSpend(b, r)
		addSpend(&out.Totals, r)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("reading spend: %w", err)
	}
	sort.Strings(order)
	for _, k := range order {
		out.Rows = append(out.Rows, *buckets[k])
	}
	out.Totals.Key = "total"
	out.HitRate = hitRate(out.Totals.Tokens)
	err = db.sql.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN decision = 'allow' AND COALESCE(applied, 1) = 1 AND reason != 'off' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN decision = 'decline' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN decision = 'decline' THEN COALESCE(predicted_cold, 0) ELSE 0 END), 0)
		FROM rewrites WHERE at >= ? AND at <= ?`, since.UnixMilli(), maxStoredMilli).Scan(&out.Folds, &out.Declined, &out.AvoidedColdTokens)
	if err != nil {
		return out, fmt.Errorf("counting folds: %w", err)
	}
	return out, nil
}

func addSpend(dst *storage.SpendRow, r storage.SpendRow) {
	dst.Requests += r.Requests
	dst.CacheReadUSD += r.CacheReadUSD
	dst.ColdInputUSD += r.ColdInputUSD
	dst.OutputUSD += r.OutputUSD
	dst.BreakPremiumUSD += r.BreakPremiumUSD
	dst.TotalUSD += r.TotalUSD
	dst.Tokens.Input += r.Tokens.Input
	dst.Tokens.CacheRead += r.Tokens.CacheRead
	dst.Tokens.CacheWrite += r.Tokens.CacheWrite
	dst.Tokens.CacheWrite1h += r.Tokens.CacheWrite1h
	dst.Tokens.Output += r.Tokens.Output
}

// DeleteSession removes a session with its requests, rewrites, mode and
// import bookkeeping (so a re-import brings it back whole).
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	_, err := db.writer.submit(ctx, func(tx querier) (any, error) {
		res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, storage.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM session_modes WHERE session_id = ?", id); err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM imports WHERE session_id = ?", id)
		return nil, err
	})
	if err != nil {
		return fmt.Errorf("deleting session %q: %w", id, err)
	}
	return nil
}

// DeleteAll removes every session and returns how many there were.
func (db *DB) DeleteAll(ctx context.Context) (int64, error) {
	res, err := db.writer.submit(ctx, func(tx querier) (any, error) {
		r, err := tx.ExecContext(ctx, "DELETE FROM sessions")
		if err != nil {
			return nil, err
		}
		n, _ := r.RowsAffected()
		for _, t := range []string{"session_modes", "imports", "breaks", "rewrites", "requests"} {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
				return nil, err
			}
		}
		return n, nil
	})
	if err != nil {
		return 0, fmt.Errorf("deleting all sessions: %w", err)
	}
	return res.(int64), nil
}

// ---- rows no read can serve ----

// maxStoredMilli is the last millisecond of year 9999 UTC: a later time
// cannot be written as RFC 3339.
var maxStoredMilli = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli()

// saneCostsSQL keeps a request out of sums when a cost is not a finite
// amount (NaN is stored as NULL, ±Inf as itself).
const saneCostsSQL = `r.cost_usd BETWEEN -1e15 AND 1e15 AND r.cost_input BETWEEN -1e15 AND 1e15 AND r.cost_cache_read BETWEEN -1e15 AND 1e15
	AND r.cost_cache_write BETWEEN -1e15 AND 1e15 AND r.cost_output BETWEEN -1e15 AND 1e15`

// BadRowError is a stored row with values no read could write out.
type BadRowError struct {
	What, ID string
	Fields   []string
}

func (e *BadRowError) Error() string {
	return e.What + " " + strconv.Quote(e.ID) + ": out of range: " + strings.Join(e.Fields, ", ")
}

// badFields collects the fields of one row that are out of range.
type badFields []string

func (b *badFields) time(name string, ms int64) time.Time {
	t := time.UnixMilli(ms).UTC()
	if !storage.SaneStoredTime(t) {
		*b = append(*b, name)
		return time.Time{}
	}
	return t
}

func (b *badFields) usd(name string, v sql.NullFloat64) float64 {
	if !v.Valid || !storage.SaneUSD(v.Float64) {
		*b = append(*b, name)
		return 0
	}
	return v.Float64
}

func (b badFields) err(what, id string) error {
	if len(b) == 0 {
		return nil
	}
	return &BadRowError{What: what, ID: id, Fields: b}
}

// skipRow logs a row a list leaves out: one bad row must not take the
// whole list (or an export) down with it.
func skipRow(list string, err error) {
	slog.Warn("storage: a stored row cannot be read; left out", "list", list, "err", err)
}
