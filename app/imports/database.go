package imports

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"tollgate/app/importer"
	"tollgate/storage"
	"tollgate/storage/sqlite"
)

// A harness that keeps its sessions in one database, not in log files
// (importer.Database: OpenCode's SQLite file), is read by its format and
// stored session by session, each under its own imports row ("<db
// path>#<session id>") whose head hash is the session's stamp, so an
// import again stores only the sessions that changed, and the same
// message ids make a re-import add nothing twice.

// splitDatabases takes the databases out of the sources: a source of a
// Database format (a folder means the database in it), or a file named as
// one's database is.
func splitDatabases(sources []Source) (dbs, rest []Source) {
	for _, s := range sources {
		if f := databaseOf(s); f != nil {
			s.Harness = f.Name
			dbs = append(dbs, s)
		} else {
			rest = append(rest, s)
		}
	}
	return dbs, rest
}

// databaseOf is the Database format a source names, or nil.
func databaseOf(s Source) *importer.Format {
	if f, ok := importer.Lookup(s.Harness); ok {
		if f.Database != nil {
			return f
		}
		return nil
	}
	if s.Reader != nil || s.Harness != "" {
		return nil
	}
	for _, f := range importer.Formats() {
		if f.Database != nil && filepath.Base(s.Path) == f.Database.File {
			return f
		}
	}
	return nil
}

// databases imports each database, one result per session (and one for a
// database that could not be read).
func (r *importRun) databases(sources []Source) []FileResult {
	var out []FileResult
	for _, src := range sources {
		f, _ := importer.Lookup(src.Harness)
		if src.Reader != nil {
			// SQLite reads a file in place (and its -wal beside it): an
			// upload of the database alone may miss what was last written.
			err := fmt.Errorf("%s: %s's database is read where it lies: import it by path (tollgate import --harness %s PATH), not as an upload", src.Name, f.Label, f.Name)
			out = append(out, FileResult{Path: src.Name, Harness: f.Name, Err: err, Error: err.Error()})
			continue
		}
		out = append(out, r.database(f, src.Path)...)
	}
	return out
}

func (r *importRun) database(f *importer.Format, path string) []FileResult {
	db, ok, err := resolveDatabase(f, path)
	if err != nil {
		return []FileResult{{Path: path, Harness: f.Name, Err: err, Error: err.Error()}}
	}
	if !ok {
		return nil
	}
	path = db
	abs, err := filepath.Abs(path)
	if err == nil {
		path = abs
	}
	// Only the sessions whose stamp changed since their last import are
	// read; a state that cannot be read counts as changed (the store then
	// says why).
	changed := func(session, stamp string) bool {
		prev, known, err := r.db.ImportStateOf(r.ctx, path+"#"+session)
		return err != nil || !known || prev.HeadHash != stamp
	}
	logs, err := f.Database.Read(r.ctx, path, changed)
	if err != nil {
		return []FileResult{{Path: path, Harness: f.Name, Err: err, Error: err.Error()}}
	}
	out := make([]FileResult, 0, len(logs))
	for _, l := range logs {
		switch {
		case l.Unchanged:
			out = append(out, FileResult{Path: path + "#" + l.Batch.Session.ID, Harness: f.Name, Session: l.Batch.Session.ID, Unchanged: true})
		case l.Err != nil:
			out = append(out, FileResult{Path: path + "#" + l.Batch.Session.ID, Harness: f.Name, Session: l.Batch.Session.ID, Err: l.Err, Error: l.Err.Error()})
		default:
			out = append(out, r.databaseSession(f.Name, path, l))
		}
	}
	return out
}

// databaseSession stores one session when its stamp changed.
func (r *importRun) databaseSession(harness, path string, l importer.DatabaseSession) FileResult {
	key := path + "#" + l.Batch.Session.ID
	res := FileResult{Path: key, Harness: harness, Session: l.Batch.Session.ID}
	for attempt := 0; ; attempt++ {
		prev, known, err := r.db.ImportStateOf(r.ctx, key)
		if err != nil {
			res.Err, res.Error = err, err.Error()
			return res
		}
		if known && prev.HeadHash == l.Stamp {
			res.Unchanged = true
			return res
		}
		from := sqlite.ImportState{Path: key}
		if known {
			from = prev
		}
		batch, err := r.databaseBatch(harness, path, l, from)
		if err != nil {
			res.Err, res.Error = err, err.Error()
			return res
		}
		st, err := r.db.StoreImport(r.ctx, batch)
		if errors.Is(err, sqlite.ErrImportStale) && attempt < 2 {
			continue // another import stored this session meanwhile
		}
		if err != nil {
			res.Err, res.Error = err, err.Error()
			return res
		}
		r.account(&res, st)
		return res
	}
}

func (r *importRun) databaseBatch(harness, path string, l importer.DatabaseSession, from sqlite.ImportState) (sqlite.ImportBatch, error) {
	s := l.Batch.Session
	meta := storage.SessionMeta{ID: s.ID, Harness: s.Harness, Provider: s.Provider, Model: s.Model, Title: s.Title}
	n := int64(len(l.Batch.Records))
	batch := sqlite.ImportBatch{From: from, To: sqlite.ImportState{Path: path + "#" + s.ID, Harness: harness, SessionID: s.ID,
		Size: n, Offset: max(n, 1), HeadHash: l.Stamp, State: `{"records":` + strconv.FormatInt(n, 10) + `}`, ImportedAt: time.Now()}}
	var pc priceCache
	now := time.Now()
	for _, rec := range l.Batch.Records {
		if q := rec.Request; q != nil {
			if why := storage.CheckTime(q.At, now); why != "" {
				return batch, fmt.Errorf("%s: session %s, message %s: time %s is %s", path, s.ID, q.ID, q.At.Format(time.RFC3339), why)
			}
			sr, err := r.price(&pc, meta, q)
			if err != nil {
				return batch, fmt.Errorf("%s: session %s, message %s: pricing: %w", path, s.ID, q.ID, err)
			}
			if field := storage.CheckCost(sr.Cost); field != "" {
				return batch, fmt.Errorf("%s: session %s, message %s: pricing: %s is out of range", path, s.ID, q.ID, field)
			}
			batch.Items = append(batch.Items, sqlite.ImportItem{Request: sr})
		}
		if f := rec.Fold; f != nil {
			if why := storage.CheckTime(f.At, now); why != "" {
				return batch, fmt.Errorf("%s: session %s, fold %s: time %s is %s", path, s.ID, f.ID, f.At.Format(time.RFC3339), why)
			}
			batch.Items = append(batch.Items, sqlite.ImportItem{Fold: &storage.Rewrite{ID: f.ID, Session: meta, At: f.At, Trigger: f.Trigger,
				Kind: f.Kind, PreTokens: f.PreTokens, Plan: f.Plan()}})
		}
	}
	return batch, nil
}

// walkDatabase is Walk for a Database format: the database a path names,
// as one file whose size includes its write-ahead log — the harness writes
// there, and the database file itself grows only at checkpoints, so
// --watch would not see a new message otherwise.
func walkDatabase(f *importer.Format, path string) ([]FileInfo, error) {
	db, ok, err := resolveDatabase(f, path)
	if err != nil || !ok {
		return nil, err
	}
	st, err := os.Stat(db)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file, not read", db)
	}
	size := st.Size()
	if wal, err := os.Stat(db + "-wal"); err == nil && wal.Mode().IsRegular() {
		size += wal.Size()
	}
	return []FileInfo{{Path: db, Harness: f.Name, Size: size, ModTime: st.ModTime().UnixNano()}}, nil
}

// resolveDatabase finds the database a source names: the file itself, or
// the one in a folder. A folder that does not exist or holds no database
// yields nothing (the harness never ran here), as Walk does for log
// folders; a missing *.db file is an error.
func resolveDatabase(f *importer.Format, path string) (string, bool, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && filepath.Ext(path) != ".db" {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if !fi.IsDir() {
		return path, true, nil
	}
	db := filepath.Join(path, f.Database.File)
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	return db, true, nil
}
