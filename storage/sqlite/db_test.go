package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestOpenAppliesEmbeddedMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tollgate.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := loadMigrations(migrationFiles)
	if v != len(ms) || v < 1 {
		t.Fatalf("schema version %d, want %d", v, len(ms))
	}
	var mode string
	if err := db.sql.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

// DSN options and the ConnectHook's settings must hold on every pooled
// connection, not only the first.
func TestPragmasHoldOnEveryPooledConnection(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.sql.SetMaxIdleConns(4)
	var conns []interface{ Close() error }
	for i := 0; i < 4; i++ {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var fk, busy, sync, temp int
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&temp); err != nil {
			t.Fatal(err)
		}
		if fk != 1 || busy != 5000 || sync != 1 || temp != 2 {
			t.Fatalf("connection %d: foreign_keys=%d busy_timeout=%d synchronous=%d temp_store=%d; want 1, 5000, 1 (NORMAL), 2 (MEMORY)", i, fk, busy, sync, temp)
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

func TestSecondStartWithNewerSchemaMigratesInOneTransaction(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tollgate.db")
	v1 := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
	}
	ms1, err := loadMigrations(v1)
	if err != nil {
		t.Fatal(err)
	}
	db, err := openWith(ctx, path, ms1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, "INSERT INTO a VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// A newer binary whose 0003 fails: neither 0002 nor 0003 may stick.
	broken := fstest.MapFS{
		"migrations/0001_a.sql": v1["migrations/0001_a.sql"],
		"migrations/0002_b.sql": {Data: []byte("CREATE TABLE b (y INTEGER); ALTER TABLE a ADD COLUMN z TEXT;")},
		"migrations/0003_c.sql": {Data: []byte("CREATE TABLE c (oops;")},
	}
	msBroken, err := loadMigrations(broken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openWith(ctx, path, msBroken); err == nil || !strings.Contains(err.Error(), "0003_c.sql") {
		t.Fatalf("broken migration: err = %v, want one naming 0003_c.sql", err)
	}
	db, err = openWith(ctx, path, ms1)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := db.SchemaVersion(ctx); v != 1 {
		t.Fatalf("after failed upgrade schema version = %d, want 1", v)
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("table b exists after a failed upgrade (n=%d, err=%v)", n, err)
	}
	db.Close()

	// The fixed newer binary migrates 1 → 3 and keeps the data.
	fixed := fstest.MapFS{
		"migrations/0001_a.sql": v1["migrations/0001_a.sql"],
		"migrations/0002_b.sql": broken["migrations/0002_b.sql"],
		"migrations/0003_c.sql": {Data: []byte("CREATE TABLE c (w INTEGER);")},
	}
	msFixed, _ := loadMigrations(fixed)
	db, err = openWith(ctx, path, msFixed)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.SchemaVersion(ctx); v != 3 {
		t.Fatalf("schema version = %d, want 3", v)
	}
	var x int
	if err := db.sql.QueryRowContext(ctx, "SELECT x FROM a").Scan(&x); err != nil || x != 42 {
		t.Fatalf("data lost in migration: x=%d err=%v", x, err)
	}

	// An older binary refuses a newer database instead of corrupting it.
	db.Close()
	if _, err := openWith(ctx, path, ms1); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("old binary on new schema: err = %v, want a refusal", err)
	}
}

func TestMigrationNamesMustBeNumberedWithoutGaps(t *testing.T) {
	for name, files := range map[string]fstest.MapFS{
		"gap":       {"migrations/0001_a.sql": {}, "migrations/0003_c.sql": {}},
		"no number": {"migrations/init.sql": {}},
	} {
		if _, err := loadMigrations(files); err == nil {
			t.Errorf("%s: loadMigrations accepted it", name)
		}
	}
}

// A database whose recorded migration differs from this build's under the
// same number is refused, naming both, rather than trusted by its version.
func TestOpenRefusesAMigrationAppliedUnderAnotherName(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tollgate.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, "UPDATE schema_migrations SET name = '0004_reserved.sql' WHERE version = 4"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), `migration 4 was applied as "0004_reserved.sql"`) {
		t.Fatalf("err = %v", err)
	}
}

// The ledger of an upgraded database counts as built only once its rebuild
// committed: a start cut short rebuilds on the next one.
func TestLedgerRebuildIsRecordedOnlyWhenDone(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tollgate.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db.SQL().QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != ledgerVersion {
		t.Fatalf("fresh database: user_version %d (%v), want %d", v, err, ledgerVersion)
	}
	// As a start that migrated but was stopped before the rebuild left it.
	if _, err := db.SQL().ExecContext(ctx, "PRAGMA user_version = 0"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SQL().QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != ledgerVersion {
		t.Fatalf("after the rebuild: user_version %d (%v), want %d", v, err, ledgerVersion)
	}
}
