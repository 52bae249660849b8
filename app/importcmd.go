package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"tollgate/app/importer"
	"tollgate/pricing"
	"tollgate/storage"
	"tollgate/storage/sqlite"
)

// ImportSource is one thing to import: a log file or a folder of logs on
// disk (Path), or an uploaded file's content (Name and Reader; the HTTP
// API's Import, where the browser sends the file).
type ImportSource struct {
	// Path is a file or a folder (walked for *.jsonl, rollout-*.jsonl,
	// *.jsonl.zstd). Empty for an upload.
	Path string
	// Name is an upload's file name: it picks the harness when the content
	// does not, tells a Claude Code subagent transcript by its
	// agent-*.jsonl name, and names the file in errors.
	Name string
	// Reader is an upload's content, read once to its end.
	Reader io.Reader
	// Harness is claude-code, codex or dsh; "" detects it per file.
	Harness string
}

// ImportProgress reports a running import. BytesTotal counts the files'
// sizes not yet imported (uploads count once read).
type ImportProgress struct {
	File       string `json:"file"`
	FilesDone  int    `json:"filesDone"`
	FilesTotal int    `json:"filesTotal"`
	BytesDone  int64  `json:"bytesDone"`
	BytesTotal int64  `json:"bytesTotal"`
	Requests   int    `json:"requests"`
	Folds      int    `json:"folds"`
}

// ImportFileResult is what one file brought.
type ImportFileResult struct {
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

// ImportResult sums an import.
type ImportResult struct {
	Files    []ImportFileResult `json:"files"`
	Sessions []string           `json:"sessions"` // touched, first touch first
	Requests int                `json:"requests"`
	Updated  int                `json:"updated"`
	Folds    int                `json:"folds"`
	Bytes    int64              `json:"bytes"`
	Failed   int                `json:"failed"`
}

// headSize is how much of a file's start identifies it: when these bytes
// change, the file was rewritten and is imported again from its start.
const headSize = 4096

// ImportFiles imports session logs into db, pricing every request with
// settings.PriceUsage (the prices used are stored with it). Each file's new
// lines are stored in one transaction with its offset, so an import can be
// interrupted and run again, runs beside a tollgate serving the same
// database, and adds nothing for a file imported before unless the file
// grew. A file that cannot be read (a malformed line, an unknown dsh
// version) is stored not at all; the others still are, and the error
// (errors.Join of each file's, naming file and line) is returned with the
// result. progress (may be nil) is called from one goroutine at a time.
func ImportFiles(ctx context.Context, db *sqlite.DB, settings *Settings, files []ImportSource, progress func(ImportProgress)) (ImportResult, error) {
	var res ImportResult
	states, err := db.ImportStates(ctx)
	if err != nil {
		return res, err
	}
	var jobs []*importJob
	var errs []error
	for _, src := range files {
		if src.Harness != "" && !validHarness(src.Harness) {
			return res, fmt.Errorf("harness %q: want %s, %s or %s", src.Harness, importer.ClaudeCode, importer.Codex, importer.DSH)
		}
		if src.Reader != nil {
			jobs = append(jobs, &importJob{src: src, path: src.Name})
			continue
		}
		found, err := importer.Walk(src.Path, src.Harness)
		if err != nil {
			errs = append(errs, err)
			res.Files = append(res.Files, ImportFileResult{Path: src.Path, Err: err, Error: err.Error()})
			continue
		}
		for _, f := range found {
			abs, err := filepath.Abs(f.Path)
			if err != nil {
				abs = f.Path
			}
			jobs = append(jobs, &importJob{src: ImportSource{Path: abs, Harness: src.Harness}, path: abs, size: f.Size})
		}
	}
	run := &importRun{ctx: ctx, db: db, settings: settings, states: states}
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
	results := run.runJobs(jobs)
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

func validHarness(h string) bool {
	return h == importer.ClaudeCode || h == importer.Codex || h == importer.DSH
}

type importJob struct {
	src  ImportSource
	path string // absolute path, or an upload's name
	size int64
}

type importRun struct {
	ctx      context.Context
	db       *sqlite.DB
	settings *Settings
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
}

// startProgress calls progress every 100 ms while the import runs, and
// once more at the end; it returns the function that stops it.
func (r *importRun) startProgress(progress func(ImportProgress)) func() {
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

func (r *importRun) snapshot() ImportProgress {
	r.mu.Lock()
	file := r.current
	r.mu.Unlock()
	return ImportProgress{File: file, FilesDone: int(r.filesDone.Load()), FilesTotal: r.filesTotal,
		BytesDone: r.bytesDone.Load(), BytesTotal: r.bytesTotal.Load(), Requests: int(r.requests.Load()), Folds: int(r.folds.Load())}
}

// parsed is a file read and priced, ready to store.
type parsed struct {
	job    *importJob
	result ImportFileResult
	batch  *sqlite.ImportBatch
	retry  bool
}

// runJobs parses and prices files on all cores but one and stores them
// from one goroutine, in the order they were listed. Files parsed by the
// time the store is free go into one transaction, each in a savepoint of
// its own (storage.StoreImports): a large import then pays few commits,
// while every file is still stored whole or not at all.
func (r *importRun) runJobs(jobs []*importJob) []ImportFileResult {
	results := make([]ImportFileResult, len(jobs))
	if len(jobs) == 0 {
		return results
	}
	// One core stores (SQLite has one writer); the others parse and price.
	workers := min(max(runtime.GOMAXPROCS(0)-1, 1), len(jobs))
	slots := make([]chan parsed, len(jobs))
	for i := range slots {
		slots[i] = make(chan parsed, 1)
	}
	var next atomic.Int64
	// A bounded window of parsed-but-unstored files keeps memory flat.
	window := make(chan struct{}, maxGroupFiles)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				window <- struct{}{}
				slots[i] <- r.parse(jobs[i], false)
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
			<-window
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
func (r *importRun) storeGroup(group []parsed) []ImportFileResult {
	out := make([]ImportFileResult, len(group))
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
func (r *importRun) retry(p parsed) ImportFileResult {
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

func (r *importRun) account(res *ImportFileResult, st sqlite.ImportStats) {
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
	p := parsed{job: job, result: ImportFileResult{Path: job.path, Harness: job.src.Harness}}
	if err := r.ctx.Err(); err != nil {
		return fail(p, err)
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
	if job.src.Reader != nil {
		// An upload: its key is its name and first bytes, so the same log
		// uploaded again (or grown) continues where it stopped, and another
		// log of the same name is another file.
		head = make([]byte, headSize)
		n, err := io.ReadFull(job.src.Reader, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return fail(p, fmt.Errorf("reading %s: %w", job.path, err))
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
		f, err := os.Open(job.path)
		if err != nil {
			return fail(p, err)
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return fail(p, err)
		}
		size = info.Size()
		if size == 0 && !known {
			p.result.Unchanged = true // nothing written yet
			return p
		}
		head = make([]byte, min(size, headSize))
		if _, err := io.ReadFull(f, head); err != nil {
			return fail(p, fmt.Errorf("reading %s: %w", job.path, err))
		}
		if known && size == prev.Offset && headHash(head, prev.Offset) == prev.HeadHash {
			p.result.Unchanged = true
			p.result.Harness = prev.Harness
			p.result.Session = prev.SessionID
			return p
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fail(p, err)
		}
		in = f
	}

	harness := job.src.Harness
	if harness == "" && known {
		harness = prev.Harness
	}
	if harness == "" {
		harness = importer.Detect(job.path, head)
	}
	if harness == "" {
		return fail(p, fmt.Errorf("%s: cannot tell which harness wrote it (use --harness claude-code, codex or dsh)", job.path))
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
				return fail(p, err)
			}
		} else if _, err := io.CopyN(io.Discard, in, offset); err != nil {
			if errors.Is(err, io.EOF) {
				p.result.Unchanged = true
				return p
			}
			return fail(p, err)
		}
	}
	counted := countingReader{r: in, n: &r.bytesDone}
	res, err := importer.Parse(counted, importer.Options{Harness: harness, Path: job.path, State: state, AtEOF: atEOF})
	if err != nil {
		return fail(p, err)
	}
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
	var pc priceCache
	for _, rec := range res.Records {
		if q := rec.Request; q != nil {
			sr, err := r.price(&pc, meta, q)
			if err != nil {
				return fail(p, fmt.Errorf("%s:%d: pricing: %w", job.path, q.Line, err))
			}
			batch.Items = append(batch.Items, sqlite.ImportItem{Request: sr})
		}
		if f := rec.Fold; f != nil {
			batch.Items = append(batch.Items, sqlite.ImportItem{Fold: &storage.Rewrite{
				ID: f.ID, Session: meta, At: f.At, Trigger: f.Trigger, Kind: f.Kind, PreTokens: f.PreTokens, Plan: f.Plan(),
			}})
		}
	}
	p.batch = batch
	return p
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
	by     PricedBy
	off    bool
}

func (r *importRun) price(pc *priceCache, meta storage.SessionMeta, q *importer.Request) (*storage.Request, error) {
	u := pricing.Usage{InputTokens: q.Usage.Input, CacheReadTokens: q.Usage.CacheRead, CacheWriteTokens: q.Usage.CacheWrite,
		CacheWrite1hTokens: q.Usage.CacheWrite1h, OutputTokens: q.Usage.Output}
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
		cost = pc.prices.Cost(u)
	} else {
		pu, err := r.settings.PriceUsage(profile, provider, q.Model, q.At, u)
		if err != nil {
			return nil, err
		}
		cost = pu.Cost
		*pc = priceCache{key: key, minute: minute, json: pu.Prices, by: pu.PricedBy, off: pu.OffPeak}
		if err := json.Unmarshal([]byte(pu.Prices), &pc.prices); err != nil {
			pc.json = "" // never reuse what cannot be read back
		}
	}
	return &storage.Request{
		Session: meta, RequestID: q.ID, At: q.At, Purpose: q.Purpose, Profile: q.Profile, Provider: q.Provider, Model: q.Model,
		Usage: storage.Usage{Input: q.Usage.Input, CacheRead: q.Usage.CacheRead, CacheWrite: q.Usage.CacheWrite, CacheWrite1h: q.Usage.CacheWrite1h, Output: q.Usage.Output},
		Cost:  cost, Prices: pc.json, PricedBy: string(pc.by), OffPeak: pc.off,
	}, nil
}

// RunImport is `tollgate import [--home DIR] [--harness H] [--watch] PATH…`.
func RunImport(args []string, stdio IO) int {
	fset := flag.NewFlagSet("import", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common CommonFlags
	common.Register(fset, false)
	harness := fset.String("harness", "", "the `HARNESS` that wrote the logs: claude-code, codex or dsh (default: detect per file)")
	watch := fset.Bool("watch", false, "keep running and import what the harnesses append, so the dashboard stays live")
	interval := fset.Duration("interval", time.Second, "how often --watch looks for new lines")
	fset.Usage = func() {
		fmt.Fprint(stdio.Stderr, `usage: tollgate import [--home DIR] [--harness claude-code|codex|dsh] [--watch] [PATH…]

Imports agent session logs: files or folders (no PATH: the harnesses' own
folders — Claude Code's ~/.claude/projects or $CLAUDE_CONFIG_DIR/projects,
Codex's ~/.codex/sessions or $CODEX_HOME/sessions, dsh's
~/.local/share/dsh/sessions or $DSH_HOME/sessions). Importing again adds only
what the logs gained since. Works whether or not a tollgate is running.

`)
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *harness != "" && !validHarness(*harness) {
		fmt.Fprintf(stdio.Stderr, "tollgate import: --harness %q: want claude-code, codex or dsh\n", *harness)
		return 2
	}
	home, err := ResolveHome(common.Home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	cfg, err := LoadConfig(home, Flags{})
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	settings := NewSettings(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := sqlite.Open(ctx, DBPath(home))
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	defer db.Close()

	sources := importSources(fset.Args(), *harness)
	bar := newProgressBar(stdio.Stderr)
	res, err := ImportFiles(ctx, db, settings, sources, bar.update)
	bar.done()
	printImportResult(stdio, res, err)
	code := 0
	if err != nil {
		code = 1
	}
	if !*watch {
		return code
	}
	fmt.Fprintf(stdio.Stderr, "watching %s for new lines (Ctrl-C stops)\n", describeSources(sources))
	if err := WatchImports(ctx, db, settings, sources, *interval, func(r ImportResult, err error) {
		printWatchResult(stdio, r, err)
	}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stdio.Stderr, "tollgate import:", err)
		return 1
	}
	return code
}

// importSources turns the command line into sources: the given paths, or
// the harnesses' default folders.
func importSources(paths []string, harness string) []ImportSource {
	var out []ImportSource
	if len(paths) == 0 {
		home, _ := os.UserHomeDir()
		for _, root := range importer.DefaultRoots(os.Getenv, home) {
			if harness == "" || harness == root.Harness {
				out = append(out, ImportSource{Path: root.Dir, Harness: root.Harness})
			}
		}
		return out
	}
	for _, p := range paths {
		out = append(out, ImportSource{Path: p, Harness: harness})
	}
	return out
}

func describeSources(srcs []ImportSource) string {
	var names []string
	for _, s := range srcs {
		names = append(names, s.Path)
	}
	return strings.Join(names, ", ")
}

// WatchImports imports what the sources gain, every interval, until ctx
// ends. A file is read again only when its size changed since the last
// look; each look's result goes to report (which may be nil).
func WatchImports(ctx context.Context, db *sqlite.DB, settings *Settings, sources []ImportSource, interval time.Duration, report func(ImportResult, error)) error {
	if interval <= 0 {
		interval = time.Second
	}
	sizes := map[string]int64{}
	// The first look hands every file to ImportFiles, which skips those
	// unchanged since their last import at the cost of a stat and a head
	// read; later looks only the files whose size changed.
	look := func() {
		var changed []ImportSource
		for _, src := range sources {
			files, err := importer.Walk(src.Path, src.Harness)
			if err != nil {
				if report != nil {
					report(ImportResult{}, err)
				}
				continue
			}
			for _, f := range files {
				if old, ok := sizes[f.Path]; ok && old == f.Size {
					continue
				}
				sizes[f.Path] = f.Size
				changed = append(changed, ImportSource{Path: f.Path, Harness: src.Harness})
			}
		}
		if len(changed) == 0 {
			return
		}
		res, err := ImportFiles(ctx, db, settings, changed, nil)
		if report != nil {
			report(res, err)
		}
	}
	look()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			look()
		}
	}
}

func printImportResult(stdio IO, res ImportResult, err error) {
	unchanged := 0
	for _, f := range res.Files {
		switch {
		case f.Err != nil:
		case f.Unchanged:
			unchanged++
		}
	}
	fmt.Fprintf(stdio.Stdout, "imported %d files (%s): %d requests, %d updated, %d folds in %d sessions",
		len(res.Files)-res.Failed-unchanged, formatBytes(res.Bytes), res.Requests, res.Updated, res.Folds, len(res.Sessions))
	if unchanged > 0 {
		fmt.Fprintf(stdio.Stdout, "; %d unchanged", unchanged)
	}
	fmt.Fprintln(stdio.Stdout)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "tollgate import: %d files failed (nothing of them was stored):\n", res.Failed)
		for _, f := range res.Files {
			if f.Err != nil {
				fmt.Fprintln(stdio.Stderr, " ", f.Err)
			}
		}
		if res.Failed == 0 {
			fmt.Fprintln(stdio.Stderr, " ", err)
		}
	}
}

func printWatchResult(stdio IO, res ImportResult, err error) {
	now := time.Now().Format("15:04:05")
	for _, f := range res.Files {
		switch {
		case f.Err != nil:
			fmt.Fprintf(stdio.Stderr, "%s %v\n", now, f.Err)
		case f.Requests+f.Updated+f.Folds > 0:
			fmt.Fprintf(stdio.Stdout, "%s %s +%d requests, %d updated, +%d folds\n", now, f.Session, f.Requests, f.Updated, f.Folds)
		}
	}
	if err != nil && res.Failed == 0 {
		fmt.Fprintf(stdio.Stderr, "%s %v\n", now, err)
	}
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// progressBar draws a large import's progress on stderr: a redrawn bar on
// a terminal, else (a pipe, a log file) a plain line at every further
// tenth of the bytes.
type progressBar struct {
	w     io.Writer
	tty   bool
	drawn bool
	tenth int
	start time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	b := &progressBar{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

// barMinBytes: smaller imports finish before progress would help.
const barMinBytes = 16 << 20

func (b *progressBar) update(p ImportProgress) {
	if p.BytesTotal < barMinBytes && time.Since(b.start) < time.Second {
		return
	}
	if b.tty {
		b.drawn = true
		fmt.Fprint(b.w, "\r\x1b[K"+renderBar(p, 30))
		return
	}
	if p.BytesTotal <= 0 {
		return
	}
	if t := int(10 * min(p.BytesDone, p.BytesTotal) / p.BytesTotal); t > b.tenth && t < 10 {
		b.tenth = t
		fmt.Fprintf(b.w, "importing: %d%% of %s, %d/%d files, %d requests, %d folds\n",
			10*t, formatBytes(p.BytesTotal), p.FilesDone, p.FilesTotal, p.Requests, p.Folds)
	}
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}

func renderBar(p ImportProgress, width int) string {
	frac := 0.0
	if p.BytesTotal > 0 {
		frac = min(float64(p.BytesDone)/float64(p.BytesTotal), 1)
	} else if p.FilesTotal > 0 {
		frac = float64(p.FilesDone) / float64(p.FilesTotal)
	}
	fill := int(frac * float64(width))
	bar := strings.Repeat("=", fill)
	if fill < width {
		bar += ">" + strings.Repeat(" ", width-fill-1)
	}
	return fmt.Sprintf("[%s] %3.0f%% %s/%s · %d/%d files · %d requests · %d folds",
		bar, frac*100, formatBytes(p.BytesDone), formatBytes(p.BytesTotal), p.FilesDone, p.FilesTotal, p.Requests, p.Folds)
}
