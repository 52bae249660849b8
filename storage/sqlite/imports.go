package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// Imports: the rows a session log brings in, stored one file pass at a
// time, in ONE transaction per pass, together with the file's bookkeeping
// row in `imports` (path, offset, head hash, importer state). So a pass is
// stored whole or not at all, and the offset always matches what is stored.
//
// The rows obey exactly the rules of the API's writes (recordRequestTx,
// createRewriteTx): the same session upsert, the same running totals and
// sequence numbers, the same idempotency by request id, the same filling of
// a fold's actual cold tokens by the next main-conversation request. They
// are written with statements prepared once per pass rather than once per
// row — the difference between ~4,000 and ~100,000 rows a second —, and
// TestImportMatchesRecordRequest checks, row by row, that the result is the
// one recordRequestTx gives.
//
// A request id seen before is the same request: when the new figures are
// larger in some count and smaller in none (a Claude Code message whose
// streamed snapshots straddle two passes), the row takes them — figures,
// cost and prices — and the session's totals move by the difference;
// otherwise nothing changes. A request may also turn from conversation into
// compaction (Codex: the summary call is only recognised by the line after
// it). Folds are rows of `rewrites` with source 'import', decision 'allow',
// reason '' (nobody was asked); a fold id seen before is skipped.

// ImportState is the `imports` row of one file.
type ImportState struct {
	Path       string
	Harness    string
	SessionID  string
	Size       int64  // the file's size when it was last read
	Offset     int64  // bytes consumed: the next pass starts here
	HeadHash   string // "<n>:<sha256 hex of the first n bytes>"
	State      string // the importer's state, JSON
	ImportedAt time.Time
}

// ImportItem is one row to store: a priced request or a fold.
type ImportItem struct {
	Request *storage.Request
	Fold    *storage.Rewrite
}

// ImportBatch is one pass over one file.
type ImportBatch struct {
	// From is the imports row the pass continued from, as read before
	// parsing (zero for a file never imported). When the row changed since
	// — another importer stored a pass meanwhile — nothing is stored and
	// the error is ErrImportStale.
	From ImportState
	// Restart: the file was rewritten; the rows it brought before are
	// removed first (and the sessions they belonged to renumbered).
	Restart bool
	// To is the row to store with the pass.
	To    ImportState
	Items []ImportItem
}

// ImportStats counts what a pass stored.
type ImportStats struct {
	Requests int // new rows
	Updated  int // rows that took larger figures or another purpose
	Folds    int // new folds
	Removed  int // rows removed by a restart
	Sessions []string
}

// ErrImportStale says the file's imports row changed while the pass was
// being read: read it again from the stored offset.
var ErrImportStale = errors.New("the file was imported by someone else meanwhile")

// ImportKey is the value requests.import_key and rewrites.import_key hold
// for rows a file brought in.
func ImportKey(path string) int64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return int64(h.Sum64() & (1<<63 - 1))
}

// ImportStates returns every file's imports row, by path.
func (db *DB) ImportStates(ctx context.Context) (map[string]ImportState, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT path, harness, session_id, size, offset, head_hash, state, imported_at FROM imports`)
	if err != nil {
		return nil, fmt.Errorf("reading imports: %w", err)
	}
	out := map[string]ImportState{}
	err = eachRow(rows, func(rows *sql.Rows) error {
		var s ImportState
		var at int64
		if err := rows.Scan(&s.Path, &s.Harness, &s.SessionID, &s.Size, &s.Offset, &s.HeadHash, &s.State, &at); err != nil {
			return fmt.Errorf("reading imports: %w", err)
		}
		s.ImportedAt = time.UnixMilli(at).UTC()
		out[s.Path] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ImportStateOf returns one file's imports row; ok is false when the file
// was never imported.
func (db *DB) ImportStateOf(ctx context.Context, path string) (s ImportState, ok bool, err error) {
	var at int64
	err = db.sql.QueryRowContext(ctx, `SELECT path, harness, session_id, size, offset, head_hash, state, imported_at FROM imports WHERE path = ?`, path).
		Scan(&s.Path, &s.Harness, &s.SessionID, &s.Size, &s.Offset, &s.HeadHash, &s.State, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("reading import of %s: %w", path, err)
	}
	s.ImportedAt = time.UnixMilli(at).UTC()
	return s, true, nil
}

// StoreImport stores one pass in one transaction.
func (db *DB) StoreImport(ctx context.Context, b ImportBatch) (ImportStats, error) {
	stats, errs, err := db.StoreImports(ctx, []ImportBatch{b})
	if err != nil {
		return ImportStats{}, err
	}
	return stats[0], errs[0]
}

// StoreImports stores several passes (of different files) in one
// transaction, each inside a savepoint of its own: a pass that fails
// (errs[i], e.g. ErrImportStale) leaves nothing of itself behind and the
// others are stored. Each pass is still stored whole or not at all, with its
// offset; grouping only saves the commits of a large import. err is set
// when the transaction itself failed: then nothing was stored.
func (db *DB) StoreImports(ctx context.Context, batches []ImportBatch) (stats []ImportStats, errs []error, err error) {
	stats = make([]ImportStats, len(batches))
	errs = make([]error, len(batches))
	if len(batches) == 0 {
		return stats, errs, nil
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return stats, errs, fmt.Errorf("importing %s: %w", batches[0].To.Path, err)
	}
	defer tx.Rollback()
	// The statements run without the caller's cancellation: given a
	// context that can end, mattn/go-sqlite3 starts a goroutine per
	// statement to interrupt it, and an import runs several statements a
	// row (85,000 futex calls on the 295 MB bench corpus, a third of the
	// import's time in the kernel). The passes look at ctx between rows
	// instead, so a cancelled import still stops within one row and rolls
	// back.
	cancel := ctx
	ctx = context.WithoutCancel(ctx)
	q := db.stmts(tx)
	for i, b := range batches {
		if err := cancel.Err(); err != nil {
			return stats, errs, fmt.Errorf("importing %s: %w", b.To.Path, err)
		}
		if len(batches) > 1 {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT import_pass"); err != nil {
				return stats, errs, fmt.Errorf("importing %s: %w", b.To.Path, err)
			}
		}
		stats[i], errs[i] = storeImportTx(ctx, cancel, q, tx, b, db.noLedger.Load())
		if errors.Is(errs[i], context.Canceled) || errors.Is(errs[i], context.DeadlineExceeded) {
			return stats, errs, fmt.Errorf("importing %s: %w", b.To.Path, errs[i]) // the whole group is rolled back
		}
		if errs[i] != nil {
			if cerr := cancel.Err(); cerr != nil {
				// BeginTx(ctx) lets database/sql roll the transaction back
				// when ctx ends, so a statement can fail with ErrTxDone
				// instead: that is the cancellation, not a bad file.
				errs[i] = nil
				return stats, errs, fmt.Errorf("importing %s: %w", b.To.Path, cerr)
			}
		}
		if errs[i] != nil {
			stats[i] = ImportStats{}
			if !errors.Is(errs[i], ErrImportStale) {
				errs[i] = fmt.Errorf("importing %s: %w", b.To.Path, errs[i])
			}
			if len(batches) == 1 {
				return stats, errs, nil
			}
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO import_pass"); err != nil {
				return stats, errs, fmt.Errorf("importing %s: rolling back: %w", b.To.Path, err)
			}
		}
		if len(batches) > 1 {
			if _, err := tx.ExecContext(ctx, "RELEASE import_pass"); err != nil {
				return stats, errs, fmt.Errorf("importing %s: %w", b.To.Path, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return stats, errs, fmt.Errorf("importing %s: committing: %w", batches[0].To.Path, err)
	}
	return stats, errs, nil
}

// sessionTally is what a pass adds to one session's running totals.
type sessionTally struct {
	base          int64 // sessions.requests when the pass began
	inserted      int64
	usage         pricing.Usage
	cost          float64
	lastContext   sql.NullInt64
	pricedDefault int
	awaiting      bool // some allowed rewrite waits for its actual cold tokens
	touched       bool // rows changed: totals to add
	link          bool // folds or summary calls changed: relink them
	rebuild       bool // a stored request changed: rebuild the session's ledger
	ledger        *ledgerState
	upserted      bool // the session row exists; flush widens it to [minAt, maxAt]
	minAt, maxAt  int64
	meta          storage.SessionMeta
	twins         int8 // 0 not asked yet, 1 no twin possible, 2 the session has rows of the other side
}

type importTx struct {
	ctx     context.Context
	q       *stmtTx // cached statements: most run once per row or per pass
	tx      *sql.Tx // for the few multi-row reads
	key     int64
	tallies map[string]*sessionTally
	order   []string
	stats   ImportStats
	// noLedger leaves the cache-break ledger out (DB.SetLedger, to measure
	// what it costs).
	noLedger bool
	// fresh: the pass is the file's first (nothing of it stored before).
	fresh bool
}

// storeImportTx stores one pass; ctx runs the statements, cancel (the
// caller's context) is looked at before each row.
func storeImportTx(ctx, cancel context.Context, q *stmtTx, tx *sql.Tx, b ImportBatch, noLedger bool) (ImportStats, error) {
	it := &importTx{ctx: ctx, q: q, tx: tx, key: ImportKey(b.To.Path), tallies: map[string]*sessionTally{}, noLedger: noLedger,
		fresh: b.From.Offset == 0 || b.Restart}
	if err := it.checkFrom(b.From); err != nil {
		return it.stats, err
	}
	if b.Restart {
		if err := it.restart(); err != nil {
			return it.stats, err
		}
	}
	for _, item := range b.Items {
		if err := cancel.Err(); err != nil {
			return it.stats, err
		}
		switch {
		case item.Request != nil:
			if err := it.request(*item.Request); err != nil {
				return it.stats, fmt.Errorf("request %q of session %q: %w", item.Request.RequestID, item.Request.Session.ID, err)
			}
		case item.Fold != nil:
			if err := it.fold(*item.Fold); err != nil {
				return it.stats, fmt.Errorf("fold %s of session %q: %w", item.Fold.ID, item.Fold.Session.ID, err)
			}
		}
	}
	if err := it.flush(); err != nil {
		return it.stats, err
	}
	if err := it.saveState(b.To); err != nil {
		return it.stats, err
	}
	it.stats.Sessions = it.order
	return it.stats, nil
}

func (it *importTx) checkFrom(from ImportState) error {
	var offset int64
	var head string
	err := it.q.QueryRowContext(it.ctx, "SELECT offset, head_hash FROM imports WHERE path = ?", from.Path).Scan(&offset, &head)
	if errors.Is(err, sql.ErrNoRows) {
		offset, head = 0, ""
	} else if err != nil {
		return fmt.Errorf("reading imports row: %w", err)
	}
	if offset != from.Offset || head != from.HeadHash {
		return ErrImportStale
	}
	return nil
}

// tally starts (once per pass) the running totals of a session.
func (it *importTx) tally(m storage.SessionMeta) (*sessionTally, error) {
	if t, ok := it.tallies[m.ID]; ok {
		return t, nil
	}
	if m.ID == "" {
		return nil, errors.New("empty session id")
	}
	t := &sessionTally{}
	err := it.q.QueryRowContext(it.ctx, `SELECT requests,
		EXISTS (SELECT 1 FROM rewrites WHERE session_id = ? AND decision = 'allow' AND actual_cold IS NULL AND COALESCE(applied, 1) = 1)
		FROM sessions WHERE id = ?`, m.ID, m.ID).Scan(&t.base, &t.awaiting)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("reading session %q: %w", m.ID, err)
	}
	it.tallies[m.ID] = t
	it.order = append(it.order, m.ID)
	return t, nil
}

// extendSession creates the session on the pass's first request and
// tracks the pass's earliest and latest times; flush widens the session's
// started/last times to them once. Recording over the API (a group
// commit's flushSessions, once per session per group) leaves the same row:
// its fields take the same values, and MIN/MAX of the times are the
// extremes.
func (it *importTx) extendSession(t *sessionTally, m storage.SessionMeta, at time.Time) error {
	ms := at.UnixMilli()
	if t.upserted {
		t.minAt, t.maxAt = min(t.minAt, ms), max(t.maxAt, ms)
		return nil
	}
	t.minAt, t.maxAt, t.upserted, t.meta = ms, ms, true, m
	return upsertSessionTx(it.ctx, it.q, m, at)
}

func (it *importTx) request(r storage.Request) error {
	if r.Purpose == "" {
		r.Purpose = storage.PurposeConversation
	}
	r.Profile = cmp.Or(r.Profile, r.Session.Profile)
	r.Provider = cmp.Or(r.Provider, r.Session.Provider)
	r.Model = cmp.Or(r.Model, r.Session.Model)
	if r.Prices == "" {
		r.Prices = "{}"
	}
	t, err := it.tally(r.Session)
	if err != nil {
		return err
	}
	if err := it.extendSession(t, r.Session, r.At); err != nil {
		return err
	}
	// A request the harness's telemetry reported already is stored once
	// (twins.go); the check runs only in sessions that have such rows.
	if r.Via != "" {
		if t.twins == 0 {
			t.twins = 1
			if ok, err := hasSideTx(it.ctx, it.q, r.Session.ID, r.Via); err != nil {
				return err
			} else if ok {
				t.twins = 2
			}
		}
		if t.twins == 2 {
			if _, ok, err := twinTx(it.ctx, it.q, r); err != nil || ok {
				return err
			}
		}
	}
	u := r.Usage
	seq := t.base + t.inserted + 1
	r.Thread = storage.ThreadOf(r.Purpose, r.Thread, r.RequestID)
	var j judgement
	if !it.noLedger {
		if t.ledger == nil {
			t.ledger = newLedgerState(r.Session.ID)
			t.ledger.freshFile = it.fresh
		}
		if j, err = t.ledger.judge(it.ctx, it.q, &r, seq); err != nil {
			return err
		}
	}
	res, err := it.q.ExecContext(it.ctx, insertRequest, requestArgs(&r, seq, it.key, j.next.TTLSeconds)...)
	if err != nil {
		return fmt.Errorf("inserting: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return it.update(r, t)
	}
	if t.ledger != nil {
		if err := t.ledger.commit(it.ctx, it.q, j); err != nil {
			return err
		}
	}
	t.inserted++
	t.touched = true
	it.stats.Requests++
	t.usage = addUsage(t.usage, u)
	t.cost += r.Cost.Total
	if r.PricedBy == "default" {
		t.pricedDefault = 1
	}
	if r.Purpose == storage.PurposeCompaction {
		t.link = true
	}
	if r.Purpose == storage.PurposeConversation {
		t.lastContext = sql.NullInt64{Int64: u.Prompt(), Valid: true}
		if t.awaiting {
			t.link = true
			if _, err := it.q.ExecContext(it.ctx, `UPDATE rewrites SET actual_cold = ?, actual_seq = ?
				WHERE session_id = ? AND decision = 'allow' AND actual_cold IS NULL AND COALESCE(applied, 1) = 1 AND seq < ?`,
				u.Uncached(), seq, r.Session.ID, seq); err != nil {
				return fmt.Errorf("filling actual cold tokens: %w", err)
			}
			t.awaiting = false
		}
	}
	return nil
}

func addUsage(a, b pricing.Usage) pricing.Usage {
	return pricing.Usage{Input: a.Input + b.Input, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite,
		CacheWrite1h: a.CacheWrite1h + b.CacheWrite1h, Output: a.Output + b.Output}
}

func subUsage(a, b pricing.Usage) pricing.Usage {
	return pricing.Usage{Input: a.Input - b.Input, CacheRead: a.CacheRead - b.CacheRead, CacheWrite: a.CacheWrite - b.CacheWrite,
		CacheWrite1h: a.CacheWrite1h - b.CacheWrite1h, Output: a.Output - b.Output}
}

// dominates: a is at least b in every count and larger in one.
func dominates(a, b pricing.Usage) bool {
	return a != b && a.Input >= b.Input && a.CacheRead >= b.CacheRead && a.CacheWrite >= b.CacheWrite &&
		a.CacheWrite1h >= b.CacheWrite1h && a.Output >= b.Output
}

// update handles a request id stored before.
func (it *importTx) update(r storage.Request, t *sessionTally) error {
	var id, seq int64
	var purpose string
	var old pricing.Usage
	var oldCost float64
	err := it.q.QueryRowContext(it.ctx, `SELECT id, seq, purpose, input, cache_read, cache_write, cache_write_1h, output, cost_usd
		FROM requests WHERE session_id = ? AND request_id = ?`, r.Session.ID, r.RequestID).
		Scan(&id, &seq, &purpose, &old.Input, &old.CacheRead, &old.CacheWrite, &old.CacheWrite1h, &old.Output, &oldCost)
	if err != nil {
		return fmt.Errorf("reading the stored request: %w", err)
	}
	grow := dominates(r.Usage, old)
	// Only a conversation request becomes a compaction (Codex); nothing
	// else changes purpose on a re-import.
	repurpose := purpose == storage.PurposeConversation && r.Purpose == storage.PurposeCompaction
	if !grow && !repurpose {
		return nil
	}
	if grow {
		u := r.Usage
		if _, err := it.q.ExecContext(it.ctx, `UPDATE requests SET input = ?, cache_read = ?, cache_write = ?, cache_write_1h = ?, output = ?,
			context_tokens = ?, cost_input = ?, cost_cache_read = ?, cost_cache_write = ?, cost_output = ?, cost_usd = ?,
			prices = ?, priced_by = ?, off_peak = ? WHERE id = ?`,
			u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output, u.Prompt(),
			r.Cost.Input, r.Cost.CacheRead, r.Cost.CacheWrite, r.Cost.Output, r.Cost.Total, r.Prices, r.PricedBy, boolInt(r.OffPeak), id); err != nil {
			return fmt.Errorf("updating figures: %w", err)
		}
		t.usage = addUsage(t.usage, subUsage(u, old))
		t.cost += r.Cost.Total - oldCost
		if r.PricedBy == "default" {
			t.pricedDefault = 1
		}
		// A fold whose actual cold tokens this request gave takes the new ones.
		if _, err := it.q.ExecContext(it.ctx, `UPDATE rewrites SET actual_cold = ? WHERE session_id = ? AND actual_seq = ?`,
			u.Uncached(), r.Session.ID, seq); err != nil {
			return fmt.Errorf("updating actual cold tokens: %w", err)
		}
	}
	if repurpose {
		// A summary call is a thread of its own (storage.ThreadOf): the
		// rebuild at the end of the pass takes it out of the conversation.
		if _, err := it.q.ExecContext(it.ctx, `UPDATE requests SET purpose = ?, thread = ? WHERE id = ?`, r.Purpose, r.Thread, id); err != nil {
			return fmt.Errorf("updating purpose: %w", err)
		}
		// It is no main-conversation request: a fold it closed waits again.
		res, err := it.q.ExecContext(it.ctx, `UPDATE rewrites SET actual_cold = NULL, actual_seq = NULL WHERE session_id = ? AND actual_seq = ?`,
			r.Session.ID, seq)
		if err != nil {
			return fmt.Errorf("reopening folds: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			t.awaiting = true
		}
	}
	t.touched = true
	t.link = true
	t.rebuild = !it.noLedger
	it.stats.Updated++
	return nil
}

func (it *importTx) fold(r storage.Rewrite) error {
	t, err := it.tally(r.Session)
	if err != nil {
		return err
	}
	var exists bool
	if err := it.q.QueryRowContext(it.ctx, "SELECT EXISTS (SELECT 1 FROM rewrites WHERE id = ?)", r.ID).Scan(&exists); err != nil {
		return fmt.Errorf("looking up fold: %w", err)
	}
	if exists {
		return nil
	}
	// A compaction that was asked about through the API (Claude Code's
	// PreCompact hook) already has its rewrite: the import completes that
	// row instead of adding a second fold for one compaction.
	if t.ledger != nil {
		t.ledger.forgetRewrites()
	}
	if linked, err := it.linkTwin(r); err != nil || linked {
		if linked {
			t.awaiting, t.touched, t.link = true, true, true
			it.stats.Folds++
		}
		return err
	}
	r.Seq = t.base + t.inserted
	r.Source = "import"
	r.Status = storage.StatusDecided
	r.Decision = "allow"
	r.Reason = ""
	applied := true
	r.Applied = &applied
	r.ActualCold = nil // the next main-conversation request fills it, as for the API
	if r.DecidedAt.IsZero() {
		r.DecidedAt = r.At
	}
	if _, err := createRewriteTx(it.ctx, it.q, r); err != nil {
		return err
	}
	if _, err := it.q.ExecContext(it.ctx, "UPDATE rewrites SET import_key = ? WHERE id = ?", it.key, r.ID); err != nil {
		return fmt.Errorf("marking fold: %w", err)
	}
	t.awaiting = true
	t.touched = true
	t.link = true
	it.stats.Folds++
	return nil
}

// twinWindow is how long before its boundary line a compaction may have
// been asked about: the ask precedes the summary call, which takes a while.
const twinWindow = 15 * time.Minute

// linkTwin finds the API rewrite of the same compaction — same session and
// kind, allowed, asked within twinWindow before the boundary, not linked to
// an import yet — and marks it as this file's fold: it landed (applied), and
// the boundary's preTokens are the real ones.
func (it *importTx) linkTwin(r storage.Rewrite) (bool, error) {
	var id string
	err := it.q.QueryRowContext(it.ctx, `SELECT id FROM rewrites
		WHERE session_id = +? AND source = 'api' AND decision = 'allow' AND import_key IS NULL AND kind = +? AND at BETWEEN +? AND +?
		ORDER BY at DESC LIMIT 1`,
		r.Session.ID, r.Kind, r.At.Add(-twinWindow).UnixMilli(), r.At.Add(time.Minute).UnixMilli()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for the asked rewrite of fold %s: %w", r.ID, err)
	}
	if _, err := it.q.ExecContext(it.ctx, `UPDATE rewrites SET import_key = ?, applied = 1, outcome_error = '', landed_at = ?,
		pre_tokens = CASE WHEN ? > 0 THEN ? ELSE pre_tokens END WHERE id = ?`, it.key, r.At.UnixMilli(), r.PreTokens, r.PreTokens, id); err != nil {
		return false, fmt.Errorf("linking fold %s to rewrite %s: %w", r.ID, id, err)
	}
	return true, nil
}

// flush adds the pass's totals to its sessions and links summary calls.
func (it *importTx) flush() error {
	for _, id := range it.order {
		t := it.tallies[id]
		if !t.touched {
			continue
		}
		if t.upserted {
			for _, ms := range []int64{t.minAt, t.maxAt} {
				if err := upsertSessionTx(it.ctx, it.q, t.meta, time.UnixMilli(ms)); err != nil {
					return err
				}
			}
		}
		u := t.usage
		if _, err := it.q.ExecContext(it.ctx, `UPDATE sessions SET
			requests = requests + ?, input = input + ?, cache_read = cache_read + ?, cache_write = cache_write + ?,
			cache_write_1h = cache_write_1h + ?, output = output + ?, cost_usd = cost_usd + ?,
			last_context = COALESCE(?, last_context), priced_by_default = MAX(priced_by_default, ?)
			WHERE id = ?`,
			t.inserted, u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output, t.cost, t.lastContext, t.pricedDefault, id); err != nil {
			return fmt.Errorf("updating totals of session %q: %w", id, err)
		}
		if it.stats.Updated > 0 {
			// An update may have changed the last conversation request.
			if _, err := it.q.ExecContext(it.ctx, `UPDATE sessions SET last_context = COALESCE((SELECT context_tokens FROM requests
				WHERE session_id = +? AND purpose = 'conversation' ORDER BY seq DESC LIMIT 1), last_context) WHERE id = ?`, id, id); err != nil {
				return fmt.Errorf("updating last context of session %q: %w", id, err)
			}
		}
		if t.link {
			if err := linkFoldsTx(it.ctx, it.q, id); err != nil {
				return err
			}
		}
		if t.rebuild {
			if err := rebuildBreaksTx(it.ctx, it.q, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// linkFoldsTx attaches the session's compaction requests to its imported
// summary folds — each call to the first fold at or after it (Claude Code
// writes the summary call to another file, just before the boundary line)
// — and sets each imported fold's cost: its summary call plus the cold
// input of the request after it, the break premium as Spend counts it.
func linkFoldsTx(ctx context.Context, q *stmtTx, session string) error {
	type fold struct {
		id        string
		at        int64
		kind      string
		actualSeq sql.NullInt64
		sc        storage.SummaryCall
		cost      float64
	}
	rows, err := query(ctx, q, `SELECT id, COALESCE(landed_at, at) AS landed, kind, actual_seq, summary_input, summary_cache_read, summary_cache_write, summary_output, summary_cost_usd, cost_usd
		FROM rewrites WHERE session_id = +? AND (source = 'import' OR import_key IS NOT NULL) ORDER BY landed, seq, id`, session)
	if err != nil {
		return fmt.Errorf("reading folds of %q: %w", session, err)
	}
	folds, err := collect(rows, func(rows *sql.Rows) (f fold, err error) {
		if err := rows.Scan(&f.id, &f.at, &f.kind, &f.actualSeq, &f.sc.Input, &f.sc.CacheRead, &f.sc.CacheWrite, &f.sc.Output, &f.sc.CostUSD, &f.cost); err != nil {
			return f, fmt.Errorf("reading folds of %q: %w", session, err)
		}
		return f, nil
	})
	if err != nil {
		return err
	}
	if len(folds) == 0 {
		return nil
	}
	calls := make([]storage.SummaryCall, len(folds))
	rows, err = query(ctx, q, `SELECT at, input, cache_read, cache_write + cache_write_1h, output, cost_usd
		FROM requests WHERE session_id = +? AND purpose = 'compaction' ORDER BY at, seq`, session)
	if err != nil {
		return fmt.Errorf("reading summary calls of %q: %w", session, err)
	}
	err = eachRow(rows, func(rows *sql.Rows) error {
		var at int64
		var c storage.SummaryCall
		if err := rows.Scan(&at, &c.Input, &c.CacheRead, &c.CacheWrite, &c.Output, &c.CostUSD); err != nil {
			return err
		}
		i := sort.Search(len(folds), func(i int) bool { return folds[i].at >= at })
		for i < len(folds) && folds[i].kind != "summary" {
			i++
		}
		if i < len(folds) {
			s := &calls[i]
			s.Input += c.Input
			s.CacheRead += c.CacheRead
			s.CacheWrite += c.CacheWrite
			s.Output += c.Output
			s.CostUSD += c.CostUSD
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, f := range folds {
		cost := calls[i].CostUSD
		if f.actualSeq.Valid {
			var cold float64
			err := q.QueryRowContext(ctx, `SELECT cost_input + cost_cache_write FROM requests WHERE session_id = ? AND seq = ?`, session, f.actualSeq.Int64).Scan(&cold)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			cost += cold
		}
		if calls[i] == f.sc && cost == f.cost {
			continue
		}
		c := calls[i]
		if _, err := q.ExecContext(ctx, `UPDATE rewrites SET summary_input = ?, summary_cache_read = ?, summary_cache_write = ?,
			summary_output = ?, summary_cost_usd = ?, cost_usd = ? WHERE id = ?`,
			c.Input, c.CacheRead, c.CacheWrite, c.Output, c.CostUSD, cost, f.id); err != nil {
			return fmt.Errorf("linking fold %s: %w", f.id, err)
		}
	}
	return nil
}

func (it *importTx) saveState(s ImportState) error {
	if s.State == "" {
		s.State = "{}"
	}
	if s.ImportedAt.IsZero() {
		s.ImportedAt = time.Now()
	}
	_, err := it.q.ExecContext(it.ctx, `INSERT INTO imports (path, harness, session_id, size, offset, head_hash, state, imported_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(path) DO UPDATE SET harness = excluded.harness, session_id = excluded.session_id, size = excluded.size,
		  offset = excluded.offset, head_hash = excluded.head_hash, state = excluded.state, imported_at = excluded.imported_at`,
		s.Path, s.Harness, s.SessionID, s.Size, s.Offset, s.HeadHash, s.State, s.ImportedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("saving import state: %w", err)
	}
	return nil
}

// restart removes every row the file brought in before, then renumbers and
// re-totals the sessions those rows belonged to, as if they had never been
// stored.
func (it *importTx) restart() error {
	rows, err := it.tx.QueryContext(it.ctx, `SELECT DISTINCT session_id FROM requests WHERE import_key = ?
		UNION SELECT DISTINCT session_id FROM rewrites WHERE import_key = ?`, it.key, it.key)
	if err != nil {
		return fmt.Errorf("finding the file's rows: %w", err)
	}
	sessions, err := collect(rows, scanValue[string])
	if err != nil {
		return err
	}
	res, err := it.q.ExecContext(it.ctx, "DELETE FROM requests WHERE import_key = ?", it.key)
	if err != nil {
		return fmt.Errorf("removing the file's requests: %w", err)
	}
	n, _ := res.RowsAffected()
	res, err = it.q.ExecContext(it.ctx, "DELETE FROM rewrites WHERE import_key = ? AND source = 'import'", it.key)
	if err != nil {
		return fmt.Errorf("removing the file's folds: %w", err)
	}
	m, _ := res.RowsAffected()
	// Rewrites asked through the API stay; they only lose their link.
	if _, err := it.q.ExecContext(it.ctx, "UPDATE rewrites SET import_key = NULL, landed_at = NULL WHERE import_key = ?", it.key); err != nil {
		return fmt.Errorf("unlinking the file's asked rewrites: %w", err)
	}
	it.stats.Removed = int(n + m)
	for _, s := range sessions {
		if err := renumberSessionTx(it.ctx, it.q, it.tx, s); err != nil {
			return err
		}
		if err := rebuildBreaksTx(it.ctx, it.q, s); err != nil {
			return err
		}
	}
	return nil
}

// renumberSessionTx gives a session's remaining requests the sequence
// numbers 1…n in their order, moves its rewrites' positions with them, and
// recomputes its totals from its rows. A session left without rows is
// removed.
func renumberSessionTx(ctx context.Context, q *stmtTx, tx *sql.Tx, session string) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, seq FROM requests WHERE session_id = ? ORDER BY seq, id", session)
	if err != nil {
		return fmt.Errorf("renumbering %q: %w", session, err)
	}
	type row struct{ id, seq int64 }
	reqs, err := collect(rows, func(rows *sql.Rows) (r row, err error) {
		err = rows.Scan(&r.id, &r.seq)
		return r, err
	})
	if err != nil {
		return err
	}
	newSeq := make(map[int64]int64, len(reqs)) // old seq → new seq
	for i, r := range reqs {
		newSeq[r.seq] = int64(i + 1)
		if r.seq != int64(i+1) {
			if _, err := q.ExecContext(ctx, "UPDATE requests SET seq = ? WHERE id = ?", i+1, r.id); err != nil {
				return fmt.Errorf("renumbering %q: %w", session, err)
			}
		}
	}
	rows, err = tx.QueryContext(ctx, "SELECT id, seq, actual_seq FROM rewrites WHERE session_id = ?", session)
	if err != nil {
		return fmt.Errorf("renumbering %q: %w", session, err)
	}
	type rw struct {
		id     string
		seq    int64
		actual sql.NullInt64
	}
	rws, err := collect(rows, func(rows *sql.Rows) (r rw, err error) {
		err = rows.Scan(&r.id, &r.seq, &r.actual)
		return r, err
	})
	if err != nil {
		return err
	}
	for _, r := range rws {
		// requests recorded before it: those whose old seq was ≤ its seq
		before := int64(sort.Search(len(reqs), func(i int) bool { return reqs[i].seq > r.seq }))
		var actual any
		if r.actual.Valid {
			if s, ok := newSeq[r.actual.Int64]; ok {
				actual = s
			}
		}
		if _, err := q.ExecContext(ctx, `UPDATE rewrites SET seq = ?, actual_seq = ?,
			actual_cold = CASE WHEN ? IS NULL THEN NULL ELSE actual_cold END WHERE id = ?`, before, actual, actual, r.id); err != nil {
			return fmt.Errorf("renumbering %q: %w", session, err)
		}
	}
	if len(reqs) == 0 && len(rws) == 0 {
		if _, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", session); err != nil {
			return fmt.Errorf("removing empty session %q: %w", session, err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET
		requests = (SELECT COUNT(*) FROM requests WHERE session_id = ?1),
		input = (SELECT COALESCE(SUM(input), 0) FROM requests WHERE session_id = ?1),
		cache_read = (SELECT COALESCE(SUM(cache_read), 0) FROM requests WHERE session_id = ?1),
		cache_write = (SELECT COALESCE(SUM(cache_write), 0) FROM requests WHERE session_id = ?1),
		cache_write_1h = (SELECT COALESCE(SUM(cache_write_1h), 0) FROM requests WHERE session_id = ?1),
		output = (SELECT COALESCE(SUM(output), 0) FROM requests WHERE session_id = ?1),
		cost_usd = (SELECT COALESCE(SUM(cost_usd), 0) FROM requests WHERE session_id = ?1),
		last_context = COALESCE((SELECT context_tokens FROM requests WHERE session_id = ?1 AND purpose = 'conversation' ORDER BY seq DESC LIMIT 1), 0),
		priced_by_default = EXISTS (SELECT 1 FROM requests WHERE session_id = ?1 AND priced_by = 'default')
		WHERE id = ?1`, session); err != nil {
		return fmt.Errorf("re-totalling %q: %w", session, err)
	}
	return nil
}

// query runs a multi-row read through the transaction's cached statements.
func query(ctx context.Context, q *stmtTx, sqlText string, args ...any) (*sql.Rows, error) {
	st, err := q.stmt(ctx, sqlText)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
