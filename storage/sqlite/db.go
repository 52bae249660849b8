// Package sqlite keeps tollgate's sessions, requests and rewrites in one
// SQLite file through mattn/go-sqlite3.
//
// Invariants:
//   - Connection settings that must hold on every pooled connection (foreign
//     keys, busy timeout, immediate write transactions) are DSN options, not
//     PRAGMAs run once on whichever connection happens to be first.
//   - Settings no DSN option names (temp_store) are set by the connector's
//     ConnectHook (connect), so they too hold on every pooled connection.
//   - The journal is WAL with synchronous=NORMAL: a committed transaction
//     survives a kill -9 of the process (the API's 2xx promise); only an OS
//     crash or power loss can lose the last few commits.
//   - Migrations are embedded, numbered, and all pending ones apply in one
//     transaction together with their version rows.
//   - Only token counts, costs, hashes and metadata are stored, never text.
//   - No package globals: every handle is a *DB returned by Open.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an open tollgate database.
type DB struct {
	sql    *sql.DB
	path   string
	writer *groupWriter
	cache  stmtCache
	// noLedger: imports leave the cache-break ledger out (SetLedger).
	noLedger atomic.Bool
}

// SetLedger turns the cache-break ledger of imports on (the default) or
// off. Off exists to measure what the ledger costs an import
// (BenchmarkImport); a database imported without it has no breaks until
// RebuildBreaks.
func (db *DB) SetLedger(on bool) { db.noLedger.Store(!on) }

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Open opens (creating if needed) the database at path and applies any
// pending migrations.
func Open(ctx context.Context, path string) (*DB, error) {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return nil, err
	}
	return openWith(ctx, path, ms)
}

func dsn(path string) string {
	q := url.Values{}
	q.Set("_fk", "1")               // foreign keys on every connection
	q.Set("_busy_timeout", "5000")  // wait for a writer instead of failing with SQLITE_BUSY
	q.Set("_txlock", "immediate")   // take the write lock at BEGIN: no upgrade deadlocks
	q.Set("_journal_mode", "WAL")   // readers never block the writer
	q.Set("_synchronous", "NORMAL") // durable across process crashes in WAL mode
	q.Set("_cache_size", "-2000")   // 2 MB page cache per connection (pageCache)
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// pageCache: SQLite's page cache is private memory beside the kernel's
// cache of the same file, so every page it holds counts twice. At 16 MB a
// connection, the import's writer keeps the whole 14 MB database of the
// 1× bench corpus in it (the import's peak RSS 92 MB, ccusage's 79-83). At
// 2 MB a page it drops is read back from the kernel's cache with a pread
// (~5,600 more a 1× import) and a large group spills some dirty pages to
// the WAL early (~1,800 more frames): the import's CPU stays within noise
// (1.59 s against 1.70 s user+sys, medians of 4 alternating runs) and its peak RSS
// is 79 MB; the 10,000-request series read too stays within noise.

// connector opens connections with the settings a DSN cannot carry.
type connector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// connect is the connections' ConnectHook. temp_store=MEMORY keeps
// SQLite's statement journals and savepoint journals in memory: an import
// stores each file in a savepoint (StoreImports), and with the default
// (temporary files) every page a file's rows touch is first copied to a
// journal file, a pwrite each — half of the 37,000 pwrite calls of the
// 295 MB bench import. Those journals only undo a statement or a
// savepoint inside an open transaction; what is committed is in the WAL
// either way, so durability is unchanged.
func connect(c *sqlite3.SQLiteConn) error {
	_, err := c.Exec("PRAGMA temp_store = MEMORY", nil)
	return err
}

func openWith(ctx context.Context, path string, ms []Migration) (*DB, error) {
	sqldb := sql.OpenDB(connector{dsn: dsn(path), drv: &sqlite3.SQLiteDriver{ConnectHook: connect}})
	db := &DB{sql: sqldb, path: path, cache: stmtCache{db: sqldb}}
	if err := sqldb.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	var mode string
	if err := sqldb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("reading journal mode of %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		sqldb.Close()
		return nil, fmt.Errorf("database %s: journal mode is %q, want wal", path, mode)
	}
	from, err := db.migrate(ctx, ms)
	if err != nil {
		sqldb.Close()
		return nil, err
	}
	db.writer = newGroupWriter(db)
	// A database that predates the cache-break ledger gets it now, from
	// its stored requests and rewrites. PRAGMA user_version says the ledger
	// was built: it is set only once the rebuild committed, so a start cut
	// short (Ctrl-C, an error) rebuilds next time instead of leaving the
	// older sessions without a ledger.
	if len(ms) >= ledgerVersion {
		var built int
		if err := sqldb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&built); err != nil {
			db.Close()
			return nil, fmt.Errorf("database %s: reading user_version: %w", path, err)
		}
		if built < ledgerVersion {
			if from > 0 {
				if err := db.RebuildBreaks(ctx, ""); err != nil {
					db.Close()
					return nil, fmt.Errorf("database %s: computing the cache-break ledger: %w", path, err)
				}
			}
			if _, err := sqldb.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(ledgerVersion)); err != nil {
				db.Close()
				return nil, fmt.Errorf("database %s: recording the ledger: %w", path, err)
			}
		}
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	db.writer.close()
	db.cache.close()
	return db.sql.Close()
}

// Path is the file the database lives in.
func (db *DB) Path() string { return db.path }

// SQL exposes the handle for packages' tests and one-off checks.
func (db *DB) SQL() *sql.DB { return db.sql }

func loadMigrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("listing migrations: %w", err)
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and '_'", base)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", base, err)
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d (no gaps, no duplicates)", m.Name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the highest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := db.sql.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return int(v.Int64), nil
}

// ledgerVersion is the migration that added the cache-break ledger.
const ledgerVersion = 5

// migrate applies the pending migrations and returns the version the
// database had before.
func (db *DB) migrate(ctx context.Context, ms []Migration) (int, error) {
	if _, err := db.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return 0, fmt.Errorf("creating schema_migrations: %w", err)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("starting migration: %w", err)
	}
	defer tx.Rollback()
	var current sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&current); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	if int(current.Int64) > len(ms) {
		return 0, fmt.Errorf("database %s has schema version %d, newer than this tollgate knows (%d): upgrade tollgate", db.path, current.Int64, len(ms))
	}
	// The version alone is not proof: every applied migration must be the
	// one this tollgate embeds under its number (a development build that
	// shipped another 0004 would otherwise leave its schema behind unseen).
	if err := checkApplied(ctx, tx, db.path, ms); err != nil {
		return 0, err
	}
	now := time.Now().UnixMilli()
	for _, m := range ms[current.Int64:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return 0, fmt.Errorf("applying migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)", m.Version, m.Name, now); err != nil {
			return 0, fmt.Errorf("recording migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("committing migrations: %w", err)
	}
	return int(current.Int64), nil
}

// checkApplied compares the recorded migrations with the embedded ones.
func checkApplied(ctx context.Context, tx *sql.Tx, path string, ms []Migration) error {
	rows, err := tx.QueryContext(ctx, "SELECT version, name FROM schema_migrations ORDER BY version")
	if err != nil {
		return fmt.Errorf("reading applied migrations: %w", err)
	}
	return eachRow(rows, func(rows *sql.Rows) error {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return fmt.Errorf("reading applied migrations: %w", err)
		}
		if v < 1 || v > len(ms) || ms[v-1].Name != name {
			want := "none"
			if v >= 1 && v <= len(ms) {
				want = ms[v-1].Name
			}
			return fmt.Errorf("database %s: migration %d was applied as %q, but this tollgate's is %q: the database comes from another build; move it aside (tollgate starts a new one)", path, v, name, want)
		}
		return nil
	})
}

// IntegrityCheck runs PRAGMA integrity_check and returns nil when it says ok.
func (db *DB) IntegrityCheck(ctx context.Context) error { return integrityCheck(ctx, db.sql) }

// integrityCheck names up to three of the problems PRAGMA integrity_check
// finds.
func integrityCheck(ctx context.Context, q *sql.DB) error {
	rows, err := q.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	var problems []string
	err = eachRow(rows, func(rows *sql.Rows) error {
		s, err := scanValue[string](rows)
		if err == nil && s != "ok" && len(problems) < 3 {
			problems = append(problems, s)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(problems) > 0 {
		return errors.New("integrity check: " + strings.Join(problems, "; "))
	}
	return nil
}

// Inspect checks the integrity of the database at path and reads its
// schema version on a read-only connection: it never creates, migrates or
// writes a database (tollgate doctor runs it beside a live tollgate).
func Inspect(ctx context.Context, path string) (version int, err error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_busy_timeout", "5000")
	sqldb, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return 0, err
	}
	defer sqldb.Close()
	sqldb.SetMaxOpenConns(1)
	if err := integrityCheck(ctx, sqldb); err != nil {
		return 0, err
	}
	var v sql.NullInt64
	if err := sqldb.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("not a tollgate database (reading schema_migrations: %v)", err)
	}
	return int(v.Int64), nil
}
