package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// Parameters written `+?`: mattn/go-sqlite3 clears a statement's bindings
// before every run (sqlite3_clear_bindings), and SQLite marks a statement
// expired when bindings are cleared whose values its planner looked at —
// which it does for an equality on a parameter in a query with ORDER BY —
// so such a statement would be compiled again on every run: 25-40 µs instead
// of ~5, and several of them run per group commit and per imported
// session. A unary plus makes the operand an expression the planner does
// not look into; comparisons take the column's affinity either way and the
// plans are the same (EXPLAIN QUERY PLAN).

// querier is what the write helpers need: *sql.Tx, or a stmtTx that reuses
// prepared statements. mattn/go-sqlite3 prepares every statement afresh
// otherwise, which cost more than a third of a small write.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// stmtCache holds DB-level prepared statements. database/sql prepares each
// on a connection once and reuses it there: Tx.StmtContext finds the copy
// prepared on the transaction's connection.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[query] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// stmtTx runs queries of one transaction through cached statements.
type stmtTx struct {
	tx    *sql.Tx
	cache *stmtCache
	local map[string]*sql.Stmt
	// ledgers are the cache-break ledger's states of the sessions whose
	// requests this transaction recorded: the requests of a group commit
	// are judged as an import pass's are, the thread's last request and
	// the session's rewrites read once per group, not once per request.
	// Any other write in the transaction forgets them (forgetLedgers).
	ledgers map[string]*ledgerState
	// recorded lists, in order, the ledger states whose sessions have
	// recorded requests not yet written to their rows (flushSessions).
	recorded []*ledgerState
}

// ledger is the session's ledger state in this transaction.
func (s *stmtTx) ledger(session string) *ledgerState {
	if l, ok := s.ledgers[session]; ok {
		return l
	}
	if s.ledgers == nil {
		s.ledgers = map[string]*ledgerState{}
	}
	l := newLedgerState(session)
	s.ledgers[session] = l
	return l
}

// forgetLedgers drops the remembered ledger states: a write other than a
// recorded request may have changed what they remember. The sessions'
// pending totals must have been written first (flushSessions).
func (s *stmtTx) forgetLedgers() { s.ledgers, s.recorded = nil, nil }

// flushSessions writes to their rows what the transaction's recorded
// requests changed in their sessions. It runs before COMMIT and before any
// other write of the transaction, which may read those rows.
func (s *stmtTx) flushSessions(ctx context.Context) error {
	for _, l := range s.recorded {
		if err := l.recorded.flush(ctx, s, l.session); err != nil {
			return err
		}
	}
	s.recorded = s.recorded[:0]
	return nil
}

func (db *DB) stmts(tx *sql.Tx) *stmtTx {
	return &stmtTx{tx: tx, cache: &db.cache}
}

func (s *stmtTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.local[query]; ok {
		return st, nil
	}
	shared, err := s.cache.get(ctx, query)
	if err != nil {
		return nil, err
	}
	st := s.tx.StmtContext(ctx, shared) // closed with the transaction
	if s.local == nil {
		s.local = map[string]*sql.Stmt{}
	}
	s.local[query] = st
	return st, nil
}

func (s *stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (s *stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, query)
	if err != nil {
		// A *sql.Row cannot be built with an error from outside database/sql;
		// fall back to the transaction, which reports the same error.
		return s.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
