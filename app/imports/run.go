package imports

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"tollgate/app/config"
	"tollgate/storage/sqlite"
)

// testHookClaimed, set by tests only, runs when a worker has claimed job
// i, before it parses it: a slow worker at that point must not stall the
// import (TestSlowWorkerDoesNotStallTheWindow).
var testHookClaimed func(i int)

// claimer hands out an import's jobs in order. A candidate is taken with
// its entry in its cache's reading, under the same lock: a worker that
// takes a later job of the folder and asks for the candidate's trace then
// waits for its pass instead of decoding the file a second time.
type claimer struct {
	mu     sync.Mutex
	next   int
	jobs   []*importJob
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
// waits for. claimed: the job's pass holds its entry in its cache's
// reading, which read releases.
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
	return i, job.candidate && job.cache.claim(job.path)
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
	// candidate: a main log that the sessions of its folder may learn
	// from (Predictor.MayLearnFrom; candidatesFirst), cache its
	// predictor's trace cache.
	candidate bool
	cache     *traceCache
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

	// caches are the traces read for fold predictions, one cache per
	// Predictor, so a project's logs are decoded once per run, not once
	// per session that learns from them.
	caches *traceCaches
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
	// most of its time waiting for parsed files (~20 % of an import's CPU
	// on real transcripts): a core kept for it would sit idle.
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	slots := make([]chan parsed, len(jobs))
	for i := range slots {
		slots[i] = make(chan parsed, 1)
	}
	// A bounded window of parsed-but-unstored files keeps memory flat.
	window := make(chan struct{}, maxGroupFiles)
	c := &claimer{jobs: jobs, window: window, extra: make(chan struct{}, extraSlots), borrowed: make([]bool, len(jobs))}
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
