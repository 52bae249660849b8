package imports

import (
	"os"
	"path/filepath"
	"sync"
	"time"

	"tollgate/app/importer"
)

// traceCacheBytes bounds the logs (by file size) whose traces an import
// keeps for fold predictions: what one project's sessions learn from
// (Claude Code's predictor reads at most 48 MB of a project's latest
// transcripts) and some. Files are imported folder by folder, so the
// least recently used traces are another project's; keeping every traced
// file would be most of an import's peak memory.
const traceCacheBytes = 64 << 20

// traceCaches are the trace caches of an import, or of a Batch of
// imports: one per Predictor, made when a file first needs it.
type traceCaches struct {
	mu sync.Mutex
	m  map[importer.Predictor]*traceCache
}

// of is p's cache.
func (cs *traceCaches) of(p importer.Predictor) *traceCache {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[p]
	if c == nil {
		if cs.m == nil {
			cs.m = map[importer.Predictor]*traceCache{}
		}
		c = newTraceCache(p, traceCacheBytes)
		cs.m[p] = c
	}
	return c
}

// traceCache keeps the traces an import read, and whether files have a
// fold, by path, while the file's size and modification time are
// unchanged; the least recently used traces go first past the bound.
// Workers asking for one file at once decode it once (Trace). It serves
// one Predictor, whose reads it caches, and is the TraceCache that
// predictor's Predict reads through.
type traceCache struct {
	pred  importer.Predictor
	mu    sync.Mutex
	limit int64
	bytes int64
	m     map[string]*cachedTrace
	folds map[string]cachedFold
	tick  int64
	// reading has the files being decoded, closed when done.
	reading map[string]chan struct{}
	// lists are the project folders' candidates, listed once per import.
	lists map[string]any
	// histories are what replaying a project's latest logs taught, by the
	// list replayed.
	histories map[string]any
}

// maxHistories bounds the histories kept: a handful per project folder,
// and folders come one after another.
const maxHistories = 64

// History implements importer.TraceCache.
func (c *traceCache) History(key string, build func() any) any {
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

// Candidates implements importer.TraceCache: a folder is listed once per
// import, not for every session (a stat of every log each time).
func (c *traceCache) Candidates(dir string) any {
	c.mu.Lock()
	l, ok := c.lists[dir]
	c.mu.Unlock()
	if ok {
		return l
	}
	l = c.pred.Candidates(dir)
	c.mu.Lock()
	c.lists[dir] = l
	c.mu.Unlock()
	return l
}

type cachedTrace struct {
	tr   any
	size int64
	mod  time.Time
	used int64
}

type cachedFold struct {
	size int64
	mod  time.Time
	has  bool
}

func newTraceCache(pred importer.Predictor, limit int64) *traceCache {
	return &traceCache{pred: pred, limit: limit, m: map[string]*cachedTrace{}, folds: map[string]cachedFold{}, reading: map[string]chan struct{}{},
		lists: map[string]any{}, histories: map[string]any{}}
}

// mayLearnFrom says the sessions of path's folder may learn from it
// (Predictor.MayLearnFrom over the folder's candidates).
func (c *traceCache) mayLearnFrom(path string) bool {
	return c.pred.MayLearnFrom(c.Candidates(filepath.Dir(path)), path)
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

// HasFold implements importer.TraceCache.
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
	has := c.pred.HasFold(path)
	c.mu.Lock()
	c.folds[path] = cachedFold{st.Size(), st.ModTime(), has}
	c.mu.Unlock()
	return has
}

// Decoding implements importer.TraceCache.
func (c *traceCache) Decoding(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, busy := c.reading[path]
	return busy
}

// Trace implements importer.TraceCache. A file another worker is decoding
// is waited for, not decoded twice: every session of a project asks for
// the same few latest logs, so without the wait both workers would decode
// each of them at once. So is a candidate whose own import pass is under
// way (claim): it publishes its trace when it has one, and Trace looks
// again either way.
func (c *traceCache) Trace(path string) (any, error) {
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
	tr, err := c.pred.ReadTrace(path)
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
// at put's time would say the trace held lines it never read.
func (c *traceCache) put(path string, tr any, st os.FileInfo) {
	c.store(path, tr, st)
}

func (c *traceCache) store(path string, tr any, st os.FileInfo) {
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
