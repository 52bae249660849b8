// Package imports brings harness logs into the database: files parsed in
// parallel by app/importer, priced with the home's profiles, stored by one
// writer in grouped transactions with each file's offset (an import can be
// interrupted and run again); the upload route (POST /v1/import), --watch,
// and the fold pricing of a log behind `tollgate price`
// (ARCHITECTURE.md, "The flow of an import").
package imports

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tollgate/app/config"
	"tollgate/app/importer"
	"tollgate/storage/sqlite"
)

// Source is one thing to import: a log file or a folder of logs on
// disk (Path), or an uploaded file's content (Name and Reader; the HTTP
// API's Import, where the browser sends the file).
type Source struct {
	// Path is a file or a folder (walked for *.jsonl, rollout-*.jsonl,
	// *.jsonl.zstd). Empty for an upload.
	Path string
	// Name is an upload's file name: it picks the harness when the content
	// does not, tells a Claude Code subagent transcript by its
	// agent-*.jsonl name, and names the file in errors.
	Name string
	// Reader is an upload's content, read once to its end.
	Reader io.Reader
	// Harness is one of importer.Harnesses(); "" detects it per file.
	Harness string
}

// Progress reports a running import. BytesTotal counts the files'
// sizes not yet imported (uploads count once read).
type Progress struct {
	File       string `json:"file"`
	FilesDone  int    `json:"filesDone"`
	FilesTotal int    `json:"filesTotal"`
	BytesDone  int64  `json:"bytesDone"`
	BytesTotal int64  `json:"bytesTotal"`
	Requests   int    `json:"requests"`
	Folds      int    `json:"folds"`
}

// FileResult is what one file brought.
type FileResult struct {
	Path     string `json:"path"`
	Harness  string `json:"harness"`
	Session  string `json:"session"`
	Bytes    int64  `json:"bytes"`    // read this time
	Requests int    `json:"requests"` // new requests
	Updated  int    `json:"updated"`  // requests that took final figures
	Folds    int    `json:"folds"`
	// Unchanged: nothing new since the last import; Restarted: the file was
	// rewritten and imported again from its start.
	Unchanged bool   `json:"unchanged,omitempty"`
	Restarted bool   `json:"restarted,omitempty"`
	Error     string `json:"error,omitempty"`
	Err       error  `json:"-"`
}

// Result sums an import.
type Result struct {
	Files    []FileResult `json:"files"`
	Sessions []string     `json:"sessions"` // touched, first touch first
	Requests int          `json:"requests"`
	Updated  int          `json:"updated"`
	Folds    int          `json:"folds"`
	Bytes    int64        `json:"bytes"`
	Failed   int          `json:"failed"`
}

// headSize is how much of a file's start identifies it: when these bytes
// change, the file was rewritten and is imported again from its start.
const headSize = 4096

// Files imports session logs into db, pricing every request with
// settings.PriceUsage (the prices used are stored with it). Each file's new
// lines are stored in one transaction with its offset, so an import can be
// interrupted and run again, runs beside a tollgate serving the same
// database, and adds nothing for a file imported before unless the file
// grew. A file that cannot be read (a malformed line, an unknown dsh
// version) is stored not at all; the others still are, and the error
// (errors.Join of each file's, naming file and line) is returned with the
// result. progress (may be nil) is called from one goroutine at a time.
func Files(ctx context.Context, db *sqlite.DB, settings *config.Settings, files []Source, progress func(Progress)) (Result, error) {
	return filesWith(ctx, db, settings, files, progress, nil)
}

// filesWith is Files with the predictors' trace caches given, shared with
// other calls (nil: each predictor's is made when a file needs it, for
// this call only).
func filesWith(ctx context.Context, db *sqlite.DB, settings *config.Settings, files []Source, progress func(Progress), caches *traceCaches) (Result, error) {
	var res Result
	states, err := db.ImportStates(ctx)
	if err != nil {
		return res, err
	}
	var jobs []*importJob
	var errs []error
	dbs, files := splitDatabases(files) // one database, not log files (database.go)
	for _, src := range files {
		if src.Harness != "" && !ValidHarness(src.Harness) {
			return res, fmt.Errorf("harness %q: want one of %s", src.Harness, strings.Join(importer.Harnesses(), ", "))
		}
		if src.Reader != nil {
			jobs = append(jobs, &importJob{src: src, path: src.Name})
			continue
		}
		found, err := Walk(src.Path, src.Harness)
		if err != nil {
			errs = append(errs, err)
			res.Files = append(res.Files, FileResult{Path: src.Path, Err: err, Error: err.Error()})
			continue
		}
		for _, f := range found {
			abs, err := filepath.Abs(f.Path)
			if err != nil {
				abs = f.Path
			}
			jobs = append(jobs, &importJob{src: Source{Path: abs, Harness: src.Harness}, path: abs, size: f.Size})
		}
	}
	if caches == nil {
		caches = &traceCaches{}
	}
	run := &importRun{ctx: ctx, db: db, settings: settings, states: states, caches: caches}
	run.candidatesFirst(jobs)
	var total int64
	for _, j := range jobs {
		if st, ok := states[j.path]; ok && j.src.Reader == nil {
			total += max(j.size-st.Offset, 0)
		} else {
			total += j.size
		}
	}
	run.bytesTotal.Store(total)
	run.filesTotal = len(jobs)

	stopTicker := run.startProgress(progress)
	results := append(run.runJobs(jobs), run.databases(dbs)...)
	stopTicker()
	for _, r := range results {
		res.Files = append(res.Files, r)
		if r.Err != nil {
			res.Failed++
			errs = append(errs, r.Err)
			continue
		}
		res.Requests += r.Requests
		res.Updated += r.Updated
		res.Folds += r.Folds
		res.Bytes += r.Bytes
	}
	res.Sessions = run.sessions
	if res.Sessions == nil {
		res.Sessions = []string{}
	}
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// ValidHarness reports whether h names a harness the importer reads.
func ValidHarness(h string) bool {
	return slices.Contains(importer.Harnesses(), h)
}

// Sources turns a command line into sources: the given paths, or
// the harnesses' default folders.
func Sources(paths []string, harness string) []Source {
	var out []Source
	if len(paths) == 0 {
		home, _ := os.UserHomeDir()
		for _, root := range DefaultRoots(os.Getenv, home) {
			if harness == "" || harness == root.Harness {
				out = append(out, Source{Path: root.Dir, Harness: root.Harness})
			}
		}
		return out
	}
	for _, p := range paths {
		out = append(out, Source{Path: p, Harness: harness})
	}
	return out
}
