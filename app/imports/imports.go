// Package imports brings harness logs into the database: files parsed in
// parallel by app/importer, priced with the home's profiles, stored by one
// writer in grouped transactions with each file's offset (an import can be
// interrupted and run again); the upload route (POST /v1/import), --watch,
// and the fold pricing of a log behind `tollgate price`
// (ARCHITECTURE.md, "The flow of an import").
package imports

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/app/config"
	"tollgate/app/importer"
	"tollgate/app/harness/claudecode/ccfold"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
	"tollgate/storage"
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
	return filesWith(ctx, db, settings, files, progress, newTraceCache(traceCacheBytes))
}

func filesWith(ctx context.Context, db *sqlite.DB, settings *config.Settings, files []Source, progress func(Progress), traces *traceCache) (Result, error) {
	var res Result
	states, err := db.ImportStates(ctx)
	if err != nil {
		return res, err
	}
	var jobs []*importJob
	var errs []error
	openCodeDBs, files := splitOpenCode(files) // one database, not log files (opencode.go)
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
	run := &importRun{ctx: ctx, db: db, settings: settings, states: states, traces: traces}
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
	results := append(run.runJobs(jobs), run.openCode(openCodeDBs)...)
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

// candidatesFirst moves a folder's candidates (the latest transcripts,
// which ccfold.EarlierSessionsFrom reads for each of its sessions with a
// fold) ahead of its other main transcripts, the order otherwise kept.
// Imported first, a candidate is traced by its own pass and published,
// instead of being decoded for a session before it and then parsed again
// by its own pass (issue 17: ~9 % of an import's CPU). Only main
// transcripts named by their session's uuid move: each is a session of
// its own, so no session's requests are numbered in another order. A
// subagent's transcript (in <session>/subagents/, or agent-*.jsonl beside
// the main ones, as Claude Code 2.0 kept them) and a file of another name
// (its session comes from its lines) stay where Walk put them, and end
// the run of files that move. A folder with fewer than two files new to
// the database (the follower's import of a growing transcript, an import
// run again) is not listed: no session of it would decode another's.
func (r *importRun) candidatesFirst(jobs []*importJob) {
	isMain := make([]bool, len(jobs)) // once a job: harnessOf may read the file
	head := make([]byte, headSize)
	for i, j := range jobs {
		if r.ctx.Err() != nil {
			return // the run answers every job as cancelled
		}
		isMain[i] = importer.ClaudeNamedSession(j.path) != "" && r.predictsFolds(j, r.harnessOf(j, head))
	}
	for i := 0; i < len(jobs); {
		if !isMain[i] {
			i++
			continue
		}
		dir := filepath.Dir(jobs[i].path)
		j, fresh := i, 0
		for ; j < len(jobs) && isMain[j] && filepath.Dir(jobs[j].path) == dir; j++ {
			if _, known := r.states[jobs[j].path]; !known {
				fresh++
			}
		}
		if fresh < 2 {
			i = j
			continue
		}
		cands := r.traces.Candidates(dir)
		for _, job := range jobs[i:j] {
			job.candidate = ccfold.MayLearnFrom(cands, job.path)
		}
		slices.SortStableFunc(jobs[i:j], func(a, b *importJob) int {
			switch {
			case a.candidate == b.candidate:
				return 0
			case a.candidate:
				return -1
			}
			return 1
		})
		i = j
	}
}

// harnessOf says which harness wrote job's file before its pass reads
// it, as the pass will: the harness given, else the one stored with the
// file, else what its first bytes say (`tollgate import PATH` without
// --harness; one read of headSize bytes a uuid-named file new to the
// database, into head). "" when it cannot tell: the file then keeps its
// place.
func (r *importRun) harnessOf(job *importJob, head []byte) string {
	if job.src.Harness != "" || job.src.Reader != nil {
		return job.src.Harness
	}
	if st, ok := r.states[job.path]; ok && st.Harness != "" {
		return st.Harness
	}
	f, err := importer.OpenRegular(job.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	n, _ := io.ReadFull(f, head[:headSize])
	return detect(job.path, head[:n])
}

// testHookClaimed, set by tests only, runs when a worker has claimed job
// i, before it parses it: a slow worker at that point must not stall the
// import (TestSlowWorkerDoesNotStallTheWindow).
var testHookClaimed func(i int)

// claimer hands out an import's jobs in order. A candidate is taken with
// its entry in traces.reading, under the same lock: a worker that takes a
// later job of the folder and asks for the candidate's trace then waits
// for its pass instead of decoding the file a second time.
type claimer struct {
	mu     sync.Mutex
	next   int
	jobs   []*importJob
	traces *traceCache
	window chan struct{}
	// extra: slots past the window for the candidates a worker reads
	// after the one it holds, when the window is full (a slow file of
	// an earlier folder holds the writer). The first candidate of a
	// folder holds a window slot, so a folder borrows at most
	// historySessions (8, ccfold's); extraSlots is two folders' worth.
	// borrowed: which jobs hold one (the writer gives it back).
	extra    chan struct{}
	borrowed []bool
}

// extraSlots bounds claimer.extra: twice ccfold's historySessions. Past
// it a candidate may be decoded twice again, never lost.
const extraSlots = 16

// take claims the next job, or returns -1. With after (a job the caller
// holds), it claims only a candidate of after's folder that follows it,
// and only when a slot is free right away, the window's or else an extra
// one: a worker must not wait for one while it holds jobs the writer
// waits for. claimed: the job's pass holds its entry in traces.reading,
// which read releases.
func (c *claimer) take(after *importJob) (i int, claimed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i = c.next
	if i >= len(c.jobs) {
		return -1, false
	}
	job := c.jobs[i]
	if after != nil {
		if !after.candidate || !job.candidate || filepath.Dir(job.path) != filepath.Dir(after.path) {
			return -1, false
		}
		select {
		case c.window <- struct{}{}:
		default:
			select {
			case c.extra <- struct{}{}:
				c.borrowed[i] = true
			default:
				return -1, false
			}
		}
	}
	c.next++
	return i, job.candidate && c.traces.claim(job.path)
}

// readClaimed reads job i (read).
func (r *importRun) readClaimed(i int, job *importJob, claimed bool) *pass {
	if testHookClaimed != nil {
		testHookClaimed(i)
	}
	return r.read(job, false, claimed)
}

type importJob struct {
	src  Source
	path string // absolute path, or an upload's name
	size int64
	// candidate: a Claude Code main transcript that the sessions of its
	// folder may learn from (ccfold.MayLearnFrom; candidatesFirst).
	candidate bool
}

type importRun struct {
	ctx      context.Context
	db       *sqlite.DB
	settings *config.Settings
	states   map[string]sqlite.ImportState

	filesTotal int
	bytesTotal atomic.Int64
	bytesDone  atomic.Int64
	filesDone  atomic.Int64
	requests   atomic.Int64
	folds      atomic.Int64

	mu       sync.Mutex
	current  string
	sessions []string
	seen     map[string]bool

	// traces are the Claude Code traces read for fold predictions, so a
	// project's transcripts are decoded once per run, not once per session
	// that learns from them.
	traces *traceCache
}

// startProgress calls progress every 100 ms while the import runs, and
// once more at the end; it returns the function that stops it.
func (r *importRun) startProgress(progress func(Progress)) func() {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				progress(r.snapshot())
			case <-done:
				progress(r.snapshot())
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r *importRun) snapshot() Progress {
	r.mu.Lock()
	file := r.current
	r.mu.Unlock()
	return Progress{File: file, FilesDone: int(r.filesDone.Load()), FilesTotal: r.filesTotal,
		BytesDone: r.bytesDone.Load(), BytesTotal: r.bytesTotal.Load(), Requests: int(r.requests.Load()), Folds: int(r.folds.Load())}
}

// parsed is a file read and priced, ready to store.
type parsed struct {
	job    *importJob
	result FileResult
	batch  *sqlite.ImportBatch
	retry  bool
}

// runJobs parses and prices files on all cores and stores them
// from one goroutine, in the order they were listed. Files parsed by the
// time the store is free go into one transaction, each in a savepoint of
// its own (storage.StoreImports): a large import then pays few commits,
// while every file is still stored whole or not at all.
func (r *importRun) runJobs(jobs []*importJob) []FileResult {
	results := make([]FileResult, len(jobs))
	if len(jobs) == 0 {
		return results
	}
	// Every core parses and prices. The one writer (SQLite has one) spends
	// most of its time waiting for parsed files: a core kept for it sat
	// idle (the profile of issue 17's corpus: the writer ~20 % of the CPU).
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	slots := make([]chan parsed, len(jobs))
	for i := range slots {
		slots[i] = make(chan parsed, 1)
	}
	// A bounded window of parsed-but-unstored files keeps memory flat.
	window := make(chan struct{}, maxGroupFiles)
	c := &claimer{jobs: jobs, traces: r.traces, window: window, extra: make(chan struct{}, extraSlots), borrowed: make([]bool, len(jobs))}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// The window's slot first, then the job: a worker that
				// claimed job i before its slot could wait behind 64 later
				// jobs that hold every slot while the writer waits for i.
				window <- struct{}{}
				i, claimed := c.take(nil)
				if i < 0 {
					<-window
					return
				}
				held := []int{i}
				reads := []*pass{r.readClaimed(i, jobs[i], claimed)}
				// A candidate's pass publishes its trace before the pass
				// predicts (finish), but its prediction reads the folder's
				// other candidates: read first, while they come next, so
				// each is traced by its own pass, not decoded once more
				// for this prediction (the first of a folder's sessions
				// with a fold otherwise decoded them all). Past the extra
				// slots, or for a file traced by no pass of this import
				// (appended lines), Trace still decodes it.
				for {
					j, claimed := c.take(jobs[i])
					if j < 0 {
						break
					}
					held = append(held, j)
					reads = append(reads, r.readClaimed(j, jobs[j], claimed))
				}
				for k, ps := range reads {
					slots[held[k]] <- r.finish(ps)
				}
			}
		}()
	}
	for i := 0; i < len(jobs); {
		group := []parsed{<-slots[i]}
		rows := len(group[0].items())
		for j := i + 1; j < len(jobs) && len(group) < maxGroupFiles && rows < maxGroupRows; j++ {
			select {
			case p := <-slots[j]:
				group = append(group, p)
				rows += len(p.items())
				continue
			default:
			}
			break
		}
		for k, res := range r.storeGroup(group) {
			results[i+k] = res
			if c.borrowed[i+k] {
				<-c.extra
			} else {
				<-window
			}
			r.filesDone.Add(1)
		}
		i += len(group)
	}
	wg.Wait()
	return results
}

// A group of files stored in one transaction stays small enough that a
// tollgate serving the same database waits at most a few tens of
// milliseconds for the write lock.
const (
	maxGroupFiles = 64
	maxGroupRows  = 20000
)

func (p parsed) items() []sqlite.ImportItem {
	if p.batch == nil {
		return nil
	}
	return p.batch.Items
}

// storeGroup commits parsed files in one transaction; a file another
// importer stored meanwhile is read again from the new offset and stored
// on its own.
func (r *importRun) storeGroup(group []parsed) []FileResult {
	out := make([]FileResult, len(group))
	var batches []sqlite.ImportBatch
	var idx []int
	for k, p := range group {
		out[k] = p.result
		if p.batch != nil && p.result.Err == nil {
			batches = append(batches, *p.batch)
			idx = append(idx, k)
		}
	}
	if len(batches) == 0 {
		return out
	}
	stats, errs, err := r.db.StoreImports(r.ctx, batches)
	if err != nil {
		for _, k := range idx {
			out[k].Err, out[k].Error = err, err.Error()
		}
		return out
	}
	for n, k := range idx {
		switch {
		case errors.Is(errs[n], sqlite.ErrImportStale):
			out[k] = r.retry(group[k])
		case errs[n] != nil:
			out[k].Err, out[k].Error = errs[n], errs[n].Error()
		default:
			r.account(&out[k], stats[n])
		}
	}
	return out
}

// retry re-reads a file whose imports row moved under this import.
func (r *importRun) retry(p parsed) FileResult {
	for attempt := 0; attempt < 3; attempt++ {
		fresh, ok, err := r.db.ImportStateOf(r.ctx, p.job.path)
		if err != nil {
			p.result.Err, p.result.Error = err, err.Error()
			return p.result
		}
		r.mu.Lock()
		if ok {
			r.states[p.job.path] = fresh
		} else {
			delete(r.states, p.job.path)
		}
		r.mu.Unlock()
		p = r.parse(p.job, true)
		if p.batch == nil || p.result.Err != nil {
			return p.result
		}
		st, err := r.db.StoreImport(r.ctx, *p.batch)
		if errors.Is(err, sqlite.ErrImportStale) {
			continue
		}
		if err != nil {
			p.result.Err, p.result.Error = err, err.Error()
			return p.result
		}
		r.account(&p.result, st)
		return p.result
	}
	p.result.Err = fmt.Errorf("%s: %w (three times in a row)", p.job.path, sqlite.ErrImportStale)
	p.result.Error = p.result.Err.Error()
	return p.result
}

func (r *importRun) account(res *FileResult, st sqlite.ImportStats) {
	res.Requests, res.Updated, res.Folds = st.Requests, st.Updated, st.Folds
	r.requests.Add(int64(st.Requests))
	r.folds.Add(int64(st.Folds))
	r.mu.Lock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	for _, s := range st.Sessions {
		if !r.seen[s] {
			r.seen[s] = true
			r.sessions = append(r.sessions, s)
		}
	}
	r.mu.Unlock()
}

// countingReader adds what it reads to the run's progress.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func fail(p parsed, err error) parsed {
	p.result.Err = err
	p.result.Error = err.Error()
	return p
}

// parse reads the new part of one file and prices it.
func (r *importRun) parse(job *importJob, again bool) parsed {
	return r.finish(r.read(job, again, false))
}

// pass is a file's new part parsed (read), not yet priced (finish).
type pass struct {
	p       parsed
	res     *importer.Result // nil: p is all the file brings (unchanged, or failed)
	harness string
	key     string
	head    []byte
	size    int64
	offset  int64
	from    sqlite.ImportState
	restart bool
	again   bool
}

// read is the first half of a pass: the file's new part parsed, its trace
// published when it is a candidate of its folder. claimed: the pass holds
// the file in traces.reading (runJobs took it with the job), so a worker
// asking for its trace meanwhile waits for this pass. read releases it,
// whatever the pass brought: before parsing when it will not trace the
// file (appended lines, no fold), else when it returns, its trace
// published if it has one to publish (a worker waiting for one then
// finds it in the cache, or decodes the file itself: Trace looks again).
func (r *importRun) read(job *importJob, again, claimed bool) *pass {
	release := func() {}
	if claimed {
		released := false
		release = func() {
			if !released {
				released = true
				r.traces.release(job.path)
			}
		}
		defer release()
	}
	p := parsed{job: job, result: FileResult{Path: job.path, Harness: job.src.Harness}}
	if err := r.ctx.Err(); err != nil {
		return &pass{p: fail(p, err)}
	}
	r.mu.Lock()
	r.current = job.path
	prev, known := r.states[job.path]
	r.mu.Unlock()

	var in io.Reader
	var head []byte
	var size int64
	atEOF := false
	key := job.path
	var opened os.FileInfo // the file when the pass opened it
	if job.src.Reader != nil {
		if c, ok := job.src.Reader.(io.Closer); ok {
			defer c.Close() // a spooled upload holds a descriptor only while it is read
		}
		// An upload: its key is its name and first bytes, so the same log
		// uploaded again (or grown) continues where it stopped, and another
		// log of the same name is another file.
		head = make([]byte, headSize)
		n, err := io.ReadFull(job.src.Reader, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return &pass{p: fail(p, fmt.Errorf("reading %s: %w", job.path, err))}
		}
		head = head[:n]
		sum := sha256.Sum256(head)
		key = "upload:" + hex.EncodeToString(sum[:8]) + ":" + job.src.Name
		p.result.Path = key
		r.mu.Lock()
		prev, known = r.states[key]
		r.mu.Unlock()
		in = io.MultiReader(bytes.NewReader(head), job.src.Reader)
		size = -1
		atEOF = true
	} else {
		f, err := importer.OpenRegular(job.path)
		if err != nil {
			return &pass{p: fail(p, err)}
		}
		defer f.Close()
		info, err := f.Stat()
		opened = info
		if err != nil {
			return &pass{p: fail(p, err)}
		}
		size = info.Size()
		if size == 0 && !known {
			p.result.Unchanged = true // nothing written yet
			return &pass{p: p}
		}
		head = make([]byte, min(size, headSize))
		if _, err := io.ReadFull(f, head); err != nil {
			return &pass{p: fail(p, fmt.Errorf("reading %s: %w", job.path, err))}
		}
		if known && size == prev.Offset && headHash(head, prev.Offset) == prev.HeadHash {
			p.result.Unchanged = true
			p.result.Harness = prev.Harness
			p.result.Session = prev.SessionID
			return &pass{p: p}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return &pass{p: fail(p, err)}
		}
		in = f
	}

	harness := job.src.Harness
	if harness == "" && known {
		harness = prev.Harness
	}
	if harness == "" {
		harness = detect(job.path, head)
	}
	if harness == "" {
		return &pass{p: fail(p, fmt.Errorf("%s: cannot tell which harness wrote it (use --harness: %s)", job.path, strings.Join(importer.Harnesses(), ", ")))}
	}
	p.result.Harness = harness

	from := sqlite.ImportState{Path: key}
	restart := false
	var state []byte
	offset := int64(0)
	if known {
		from = prev
		if (size >= 0 && size < prev.Offset) || headHash(head, prev.Offset) != prev.HeadHash {
			restart = true // rewritten: start over
		} else {
			offset = prev.Offset
			state = []byte(prev.State)
		}
	}
	if offset > 0 {
		if f, ok := in.(*os.File); ok {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				return &pass{p: fail(p, err)}
			}
		} else if _, err := io.CopyN(io.Discard, in, offset); err != nil {
			if errors.Is(err, io.EOF) {
				p.result.Unchanged = true
				return &pass{p: p}
			}
			return &pass{p: fail(p, err)}
		}
	}
	counted := countingReader{r: importer.ContextReader(r.ctx, in), n: &r.bytesDone}
	// A Claude Code main transcript read from its start is traced in this
	// pass too when it has a fold, for the fold predictions
	// (claudePredictions): the pass looks for one in its first read when
	// that holds the whole file — reading every transcript first to find
	// out was a second read of each (issue 17) — and a longer file is
	// scanned for one first.
	// A transcript that an earlier session's prediction already decoded
	// is not traced again: claudePredictions takes it from the cache. Nor
	// is a candidate of its folder that this pass did not claim: another
	// worker is decoding it, and publishes its trace.
	trace := offset == 0 && r.predictsFolds(job, harness) && !r.traces.has(job.path) && (claimed || !job.candidate)
	opts := importer.Options{Harness: harness, Path: job.path, State: state, AtEOF: atEOF, TraceFolds: trace}
	if trace && size > jsonl.ChunkSize {
		// Longer than the first read: a scan for the fold key decides (the
		// cached HasFold, which the sessions after it reuse). Traced
		// blind, a long transcript that never compacted cost ~1.6× its
		// pass, for a trace then dropped (review of issue 17's pass).
		opts.TraceFolds, opts.Trace = false, r.traces.HasFold(job.path)
	}
	if !opts.TraceFolds && !opts.Trace {
		release() // no trace to wait for (appended lines, no fold)
	}
	res, err := importer.Parse(counted, opts)
	if err != nil {
		return &pass{p: fail(p, err)}
	}
	if testHookParsed != nil {
		testHookParsed(job.path)
	}
	if opts.TraceFolds && res.Consumed == size {
		// Read whole: whether it has a fold, for the sessions after it
		// (ccfold.EarlierSessionsFrom), without reading it again.
		r.traces.noteFolds(job.path, size, hasFold(res.Records))
	}
	if res.Trace != nil && opened != nil && res.Consumed == size && ccfold.MayLearnFrom(r.traces.Candidates(filepath.Dir(job.path)), job.path) {
		// Kept for the later sessions of the project, which all learn from
		// its few latest transcripts; published before this pass predicts
		// its own folds (finish), so no pass waits for one that waits in
		// turn. Only a trace of the whole file: ccfold.ReadTrace's, which
		// the hook reads, would hold a last line without its newline.
		r.traces.put(job.path, res.Trace, opened)
	}
	return &pass{p: p, res: res, harness: harness, key: key, head: head, size: size, offset: offset, from: from, restart: restart, again: again}
}

// finish is the second half of a pass: its folds predicted, its requests
// priced.
func (r *importRun) finish(ps *pass) parsed {
	p, res := ps.p, ps.res
	if res == nil {
		return p
	}
	if err := r.ctx.Err(); err != nil {
		return fail(p, err) // cancelled: no predictions (they may decode other transcripts)
	}
	job, harness, key, head, size, offset, from, restart, again := p.job, ps.harness, ps.key, ps.head, ps.size, ps.offset, ps.from, ps.restart, ps.again
	if job.src.Reader != nil && !again {
		r.bytesTotal.Add(res.Consumed) // an upload's size is known once read
	}
	p.result.Bytes = res.Consumed
	p.result.Restarted = restart
	p.result.Session = res.Session.ID
	if size < 0 {
		size = offset + res.Consumed
	}
	newOffset := offset + res.Consumed
	to := sqlite.ImportState{Path: key, Harness: harness, SessionID: res.Session.ID, Size: size, Offset: newOffset,
		HeadHash: headHash(head, newOffset), State: string(res.State), ImportedAt: time.Now()}
	batch := &sqlite.ImportBatch{From: from, Restart: restart, To: to}
	if len(res.Records) > 0 && res.Session.ID == "" {
		return fail(p, fmt.Errorf("%s: no session id in the log (a %s log must start with its %s line)", job.path, harness, sessionLine(harness)))
	}
	meta := storage.SessionMeta{ID: res.Session.ID, Harness: res.Session.Harness, Profile: res.Session.Profile, Provider: res.Session.Provider,
		Model: res.Session.Model, Title: res.Session.Title, ContextWindow: res.Session.ContextWindow, ThresholdTokens: res.Session.ThresholdTokens}
	batch.Items = make([]sqlite.ImportItem, 0, len(res.Records))
	preds := r.claudePredictions(job, harness, res)
	var pc priceCache
	now := time.Now()
	for _, rec := range res.Records {
		if q := rec.Request; q != nil {
			if why := storage.CheckTime(q.At, now); why != "" && !q.At.IsZero() {
				return fail(p, fmt.Errorf("%s:%d: time %s is %s", job.path, q.Line, q.At.Format(time.RFC3339), why))
			}
			sr, err := r.price(&pc, meta, q)
			if err != nil {
				return fail(p, fmt.Errorf("%s:%d: pricing: %w", job.path, q.Line, err))
			}
			if field := storage.CheckCost(sr.Cost); field != "" {
				return fail(p, fmt.Errorf("%s:%d: pricing: %s is out of range", job.path, q.Line, field))
			}
			batch.Items = append(batch.Items, sqlite.ImportItem{Request: sr})
		}
		if f := rec.Fold; f != nil {
			if why := storage.CheckTime(f.At, now); why != "" && !f.At.IsZero() {
				return fail(p, fmt.Errorf("%s: fold %s: time %s is %s", job.path, f.ID, f.At.Format(time.RFC3339), why))
			}
			fr := &storage.Rewrite{ID: f.ID, Session: meta, At: f.At, Trigger: f.Trigger, Kind: f.Kind, PreTokens: f.PreTokens, Plan: f.Plan()}
			if pred, ok := preds[f.ID]; ok {
				fr.PredictedCold = &pred.Cold
				fr.PredictedBand = &storage.ColdBand{Low: pred.Low, High: pred.High}
			}
			batch.Items = append(batch.Items, sqlite.ImportItem{Fold: fr})
		}
	}
	p.batch = batch
	return p
}

// claudePredictions is, for the folds of a Claude Code main transcript on
// disk, the prediction the PreCompact hook would have made at each (the
// transcript cut at its boundary, the project's earlier transcripts as
// history), by fold id. The trace is the pass's own when it read the file
// from its start; else (appended lines, or a file whose trace a session
// before it took into the cache) the cache's, which reads the whole file
// when it does not hold it. An upload cannot be read again and gets none.
func (r *importRun) claudePredictions(job *importJob, harness string, res *importer.Result) map[string]ccfold.Prediction {
	if !r.predictsFolds(job, harness) {
		return nil
	}
	folds := 0
	for _, rec := range res.Records {
		if rec.Fold != nil {
			folds++
		}
	}
	if folds == 0 {
		return nil
	}
	tr := res.Trace // traced in the pass when it read the file from its start
	if tr == nil {
		var err error
		if tr, err = r.traces.Trace(job.path); err != nil {
			return nil
		}
	}
	out := map[string]ccfold.Prediction{}
	for _, f := range ccfold.Replay(tr, ccfold.EarlierSessionsFrom(job.path, ccfold.Start(tr), r.traces), ccfold.Env{}) {
		out[f.Fold.ID] = f.Prediction
	}
	return out
}

// predictsFolds says the file's folds get the predictor's figures: a
// Claude Code main transcript on disk (an upload cannot be read again).
func (r *importRun) predictsFolds(job *importJob, harness string) bool {
	return harness == importer.ClaudeCode && job.src.Reader == nil && !strings.Contains(filepath.ToSlash(job.path), "/subagents/")
}

// traceCacheBytes bounds the transcripts (by file size) whose traces an
// import keeps for fold predictions: what one project's sessions learn
// from (ccfold reads at most 48 MB of a project's latest transcripts) and
// some. Files are imported folder by folder, so the least recently used
// traces are another project's. It was 256 MB, and kept every traced
// file: most of an import's peak memory (issue 17).
const traceCacheBytes = 64 << 20

// traceCache keeps the traces an import read, and whether files have a
// fold, by path, while the file's size and modification time are
// unchanged; the least recently used traces go first past the bound.
// Workers asking for one file at once decode it once (Trace).
type traceCache struct {
	mu    sync.Mutex
	limit int64
	bytes int64
	m     map[string]*cachedTrace
	folds map[string]cachedFold
	tick  int64
	// reading has the files being decoded, closed when done.
	reading map[string]chan struct{}
	// lists are the project folders' candidates, listed once per import.
	lists map[string][]ccfold.Candidate
	// histories are what replaying a project's latest transcripts taught,
	// by the list replayed (ccfold.HistoryCache).
	histories map[string]*ccfold.History
}

// maxHistories bounds the histories kept: a handful per project folder,
// and folders come one after another.
const maxHistories = 64

// History implements ccfold.HistoryCache.
func (c *traceCache) History(key string, build func() *ccfold.History) *ccfold.History {
	c.mu.Lock()
	h, ok := c.histories[key]
	c.mu.Unlock()
	if ok {
		return h
	}
	h = build()
	c.mu.Lock()
	if len(c.histories) >= maxHistories {
		clear(c.histories)
	}
	c.histories[key] = h
	c.mu.Unlock()
	return h
}

// Candidates implements ccfold.Lister: a folder is listed once per import
// (it was listed for every session, a stat of every transcript each time).
func (c *traceCache) Candidates(dir string) []ccfold.Candidate {
	c.mu.Lock()
	l, ok := c.lists[dir]
	c.mu.Unlock()
	if ok {
		return l
	}
	l = ccfold.Candidates(dir)
	c.mu.Lock()
	c.lists[dir] = l
	c.mu.Unlock()
	return l
}

type cachedTrace struct {
	tr   *importer.ClaudeTrace
	size int64
	mod  time.Time
	used int64
}

type cachedFold struct {
	size int64
	mod  time.Time
	has  bool
}

func newTraceCache(limit int64) *traceCache {
	return &traceCache{limit: limit, m: map[string]*cachedTrace{}, folds: map[string]cachedFold{}, reading: map[string]chan struct{}{},
		lists: map[string][]ccfold.Candidate{}, histories: map[string]*ccfold.History{}}
}

// hasFold says the records hold a fold.
func hasFold(recs []importer.Record) bool {
	for _, rec := range recs {
		if rec.Fold != nil {
			return true
		}
	}
	return false
}

// noteFolds keeps whether a file read whole by the import (size bytes)
// has a fold. A fold the parser does not read as one (a subagent's, a
// line that is not a system line) teaches the predictor nothing: such a
// file is not worth tracing again either.
func (c *traceCache) noteFolds(path string, size int64, has bool) {
	st, err := os.Stat(path)
	if err != nil || st.Size() != size {
		return // written since: HasFold reads it when asked
	}
	c.mu.Lock()
	c.folds[path] = cachedFold{st.Size(), st.ModTime(), has}
	c.mu.Unlock()
}

// HasFold implements ccfold.Transcripts.
func (c *traceCache) HasFold(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	c.mu.Lock()
	f, ok := c.folds[path]
	c.mu.Unlock()
	if ok && f.size == st.Size() && f.mod.Equal(st.ModTime()) {
		return f.has
	}
	has := ccfold.HasFold(path)
	c.mu.Lock()
	c.folds[path] = cachedFold{st.Size(), st.ModTime(), has}
	c.mu.Unlock()
	return has
}

// Decoding implements ccfold.Decoding.
func (c *traceCache) Decoding(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, busy := c.reading[path]
	return busy
}

// Trace implements ccfold.Transcripts. A file another worker is decoding
// is waited for, not decoded twice: every session of a project asks for
// the same few latest transcripts, so without this both workers decoded
// each of them at once (issue 17's profile). So is a candidate whose own
// import pass is under way (claim): it publishes its trace when it has
// one, and Trace looks again either way.
func (c *traceCache) Trace(path string) (*importer.ClaudeTrace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	for {
		c.mu.Lock()
		c.tick++
		if e, ok := c.m[path]; ok && e.size == st.Size() && e.mod.Equal(st.ModTime()) {
			e.used = c.tick
			c.mu.Unlock()
			return e.tr, nil
		}
		wait, busy := c.reading[path]
		if !busy {
			wait = make(chan struct{})
			c.reading[path] = wait
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
		<-wait // then look again: it may have failed, or been evicted
	}
	defer c.release(path)
	if testHookReadTrace != nil {
		testHookReadTrace(path)
	}
	tr, err := ccfold.ReadTrace(path)
	if err != nil {
		return nil, err
	}
	c.store(path, tr, st)
	return tr, nil
}

// testHookParsed, set by tests only, runs when a pass has parsed its file,
// before it publishes its trace.
var testHookParsed func(path string)

// testHookReadTrace, set by tests only, runs when Trace decodes a file.
var testHookReadTrace func(path string)

// claim enters an import pass about to read path in reading, so that Trace
// waits for the trace it publishes; false when another caller is
// decoding the file. The pass calls release when it ends.
func (c *traceCache) claim(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, busy := c.reading[path]; busy {
		return false
	}
	c.reading[path] = make(chan struct{})
	return true
}

// release ends a claim in reading (claim's, or Trace's own), waking the
// callers waiting for it.
func (c *traceCache) release(path string) {
	c.mu.Lock()
	close(c.reading[path])
	delete(c.reading, path)
	c.mu.Unlock()
}

// has says the cache holds the file's trace as the file is now.
func (c *traceCache) has(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[path]
	return ok && e.size == st.Size() && e.mod.Equal(st.ModTime())
}

// put keeps a trace an import pass built of the file as the pass found
// it when it opened it (st): a file written to since is then not taken
// for the one traced (Trace and has compare size and time), where a stat
// at put's time said the trace held lines it never read.
func (c *traceCache) put(path string, tr *importer.ClaudeTrace, st os.FileInfo) {
	c.store(path, tr, st)
}

func (c *traceCache) store(path string, tr *importer.ClaudeTrace, st os.FileInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[path]; ok {
		c.bytes -= old.size
	}
	c.tick++
	c.m[path] = &cachedTrace{tr: tr, size: st.Size(), mod: st.ModTime(), used: c.tick}
	c.bytes += st.Size()
	for c.bytes > c.limit && len(c.m) > 1 {
		var oldest string
		for p, e := range c.m {
			if p != path && (oldest == "" || e.used < c.m[oldest].used) {
				oldest = p
			}
		}
		c.bytes -= c.m[oldest].size
		delete(c.m, oldest)
	}
}

func sessionLine(harness string) string {
	switch harness {
	case importer.Codex:
		return "session_meta"
	case importer.DSH:
		return "header"
	}
	return "sessionId"
}

// headHash identifies a file by its first bytes: "<n>:<sha256>" of the
// first min(n, headSize) bytes, n being the offset imported so far.
func headHash(head []byte, offset int64) string {
	n := min(int64(len(head)), offset, headSize)
	sum := sha256.Sum256(head[:n])
	return strconv.FormatInt(n, 10) + ":" + hex.EncodeToString(sum[:])
}

// priceCache remembers, within one file, the prices PriceUsage chose for a
// (profile, provider, model) in one UTC minute: prices change at most at
// minute boundaries (off-peak windows are HH:MM), so the cost of every
// other request with that key is the same pricing.Prices.Cost that
// PriceUsage computes. It saves resolving profiles for every request.
type priceCache struct {
	key    string
	minute int64
	prices pricing.Prices
	json   string
	by     config.PricedBy
	off    bool
	ttl    int64
}

func (r *importRun) price(pc *priceCache, meta storage.SessionMeta, q *importer.Request) (*storage.Request, error) {
	profile := q.Profile
	if profile == "" {
		profile = meta.Profile
	}
	provider := q.Provider
	if provider == "" {
		provider = meta.Provider
	}
	key := profile + "\x00" + provider + "\x00" + q.Model
	minute := q.At.Unix() / 60
	var cost pricing.Cost
	if pc.json != "" && pc.key == key && pc.minute == minute {
		cost = pc.prices.Cost(q.Usage)
	} else {
		pu, err := r.settings.PriceUsage(profile, provider, q.Model, q.At, q.Usage)
		if err != nil {
			return nil, err
		}
		cost = pu.Cost
		*pc = priceCache{key: key, minute: minute, json: pu.Prices, by: pu.PricedBy, off: pu.OffPeak, ttl: pu.TTLSeconds}
		if err := json.Unmarshal([]byte(pu.Prices), &pc.prices); err != nil {
			pc.json = "" // never reuse what cannot be read back
		}
	}
	return &storage.Request{
		Session: meta, RequestID: q.ID, At: q.At, Purpose: q.Purpose, Profile: q.Profile, Provider: q.Provider, Model: q.Model,
		Usage: q.Usage,
		Cost:  cost, Prices: pc.json, PricedBy: string(pc.by), OffPeak: pc.off,
		Thread: q.Thread, StartedBy: q.StartedBy, TTLSeconds: pc.ttl,
		Via: storage.ViaImport, MessageUUID: q.UUID, // counted once with its live report (storage/sqlite/twins.go)
	}, nil
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
