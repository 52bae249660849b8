package imports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"tollgate/app/config"
	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
	"tollgate/storage"
	"tollgate/storage/sqlite"
)

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
// the file in its cache's reading (runJobs took it with the job), so a
// worker asking for its trace meanwhile waits for this pass. read releases
// it, whatever the pass brought: before parsing when it will not trace the
// file (appended lines, no fold), else when it returns, its trace
// published if it has one to publish (a worker waiting for one then finds
// it in the cache, or decodes the file itself: Trace looks again).
func (r *importRun) read(job *importJob, again, claimed bool) *pass {
	release := func() {}
	if claimed {
		released := false
		release = func() {
			if !released {
				released = true
				job.cache.release(job.path)
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
	r.mu.Unlock()
	src, done := r.open(job, &p)
	if done != nil {
		return done
	}
	defer src.close()

	harness := job.src.Harness
	if harness == "" && src.known {
		harness = src.prev.Harness
	}
	if harness == "" {
		harness = importer.Detect(job.path, src.head)
	}
	if harness == "" {
		return &pass{p: fail(p, fmt.Errorf("%s: cannot tell which harness wrote it (use --harness: %s)", job.path, strings.Join(importer.Harnesses(), ", ")))}
	}
	p.result.Harness = harness

	from, restart, state, offset, done := src.resume(&p)
	if done != nil {
		return done
	}
	counted := countingReader{r: importer.ContextReader(r.ctx, src.in), n: &r.bytesDone}
	// A log its format predicts, read from its start, is traced in this
	// pass too when it has a fold, for the fold predictions
	// (predictions): the pass looks for one in its first read when that
	// holds the whole file — reading every log first to find out would be
	// a second read of each — and a longer file is scanned for one first.
	// A log that an earlier session's prediction already decoded is not
	// traced again: predictions takes it from the cache. Nor is a
	// candidate of its folder that this pass did not claim: another worker
	// is decoding it, and publishes its trace.
	pred, cache := r.predictorOf(job, harness)
	trace := offset == 0 && pred != nil && !cache.has(job.path) && (claimed || !job.candidate)
	opts := importer.Options{Harness: harness, Path: job.path, State: state, AtEOF: src.atEOF, TraceFolds: trace}
	if trace && src.size > jsonl.ChunkSize {
		// Longer than the first read: a scan for a fold decides (the
		// cached HasFold, which the sessions after it reuse). Traced
		// blind, a long transcript that never compacted costs ~1.6× its
		// pass, for a trace then dropped.
		opts.TraceFolds, opts.Trace = false, cache.HasFold(job.path)
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
	if opts.TraceFolds && res.Consumed == src.size {
		// Read whole: whether it has a fold, for the sessions after it
		// (the predictor's HasFold), without reading it again.
		cache.noteFolds(job.path, src.size, hasFold(res.Records))
	}
	if res.Trace != nil && cache != nil && src.opened != nil && res.Consumed == src.size && cache.mayLearnFrom(job.path) {
		// Kept for the later sessions of the project, which all learn from
		// its few latest logs; published before this pass predicts its own
		// folds (finish), so no pass waits for one that waits in turn. Only
		// a trace of the whole file: the predictor's ReadTrace, which the
		// hook reads, would hold a last line without its newline.
		cache.put(job.path, res.Trace, src.opened)
	}
	return &pass{p: p, res: res, harness: harness, key: src.key, head: src.head, size: src.size, offset: offset, from: from, restart: restart, again: again}
}

// source is a pass's input, opened: an upload's content or a file on disk,
// with what the database knows of it.
type source struct {
	in     io.Reader
	head   []byte // its first headSize bytes
	size   int64  // -1 for an upload (known once read)
	atEOF  bool
	key    string // the imports row's path
	prev   sqlite.ImportState
	known  bool        // prev is the row's
	opened os.FileInfo // a file when the pass opened it
	close  func()
}

// open opens a job's input. A pass that ends here (a failure, or a file
// that has nothing new) comes back as done.
func (r *importRun) open(job *importJob, p *parsed) (src source, done *pass) {
	r.mu.Lock()
	src.prev, src.known = r.states[job.path]
	r.mu.Unlock()
	src.key, src.close = job.path, func() {}
	if job.src.Reader != nil {
		if c, ok := job.src.Reader.(io.Closer); ok {
			src.close = func() { c.Close() } // a spooled upload holds a descriptor only while it is read
		}
		// An upload: its key is its name and first bytes, so the same log
		// uploaded again (or grown) continues where it stopped, and another
		// log of the same name is another file.
		head := make([]byte, headSize)
		n, err := io.ReadFull(job.src.Reader, head)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			src.close()
			return src, &pass{p: fail(*p, fmt.Errorf("reading %s: %w", job.path, err))}
		}
		src.head = head[:n]
		sum := sha256.Sum256(src.head)
		src.key = "upload:" + hex.EncodeToString(sum[:8]) + ":" + job.src.Name
		p.result.Path = src.key
		r.mu.Lock()
		src.prev, src.known = r.states[src.key]
		r.mu.Unlock()
		src.in = io.MultiReader(bytes.NewReader(src.head), job.src.Reader)
		src.size, src.atEOF = -1, true
		return src, nil
	}
	f, err := importer.OpenRegular(job.path)
	if err != nil {
		return src, &pass{p: fail(*p, err)}
	}
	ended := func(ps *pass) (source, *pass) { f.Close(); return src, ps }
	info, err := f.Stat()
	if err != nil {
		return ended(&pass{p: fail(*p, err)})
	}
	src.opened, src.size = info, info.Size()
	if src.size == 0 && !src.known {
		p.result.Unchanged = true // nothing written yet
		return ended(&pass{p: *p})
	}
	src.head = make([]byte, min(src.size, headSize))
	if _, err := io.ReadFull(f, src.head); err != nil {
		return ended(&pass{p: fail(*p, fmt.Errorf("reading %s: %w", job.path, err))})
	}
	if src.known && src.size == src.prev.Offset && headHash(src.head, src.prev.Offset) == src.prev.HeadHash {
		p.result.Unchanged = true
		p.result.Harness = src.prev.Harness
		p.result.Session = src.prev.SessionID
		return ended(&pass{p: *p})
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ended(&pass{p: fail(*p, err)})
	}
	src.in, src.close = f, func() { f.Close() }
	return src, nil
}

// resume finds where the pass starts: where the last import of the file
// stopped (with the parser's state), or its start when the file is new or
// was rewritten (restart), and moves the input there. A pass that ends
// here comes back as done.
func (src *source) resume(p *parsed) (from sqlite.ImportState, restart bool, state []byte, offset int64, done *pass) {
	from = sqlite.ImportState{Path: src.key}
	if src.known {
		from = src.prev
		if (src.size >= 0 && src.size < src.prev.Offset) || headHash(src.head, src.prev.Offset) != src.prev.HeadHash {
			restart = true // rewritten: start over
		} else {
			offset = src.prev.Offset
			state = []byte(src.prev.State)
		}
	}
	if offset > 0 {
		if f, ok := src.in.(*os.File); ok {
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				return from, restart, state, offset, &pass{p: fail(*p, err)}
			}
		} else if _, err := io.CopyN(io.Discard, src.in, offset); err != nil {
			if errors.Is(err, io.EOF) {
				p.result.Unchanged = true
				return from, restart, state, offset, &pass{p: *p}
			}
			return from, restart, state, offset, &pass{p: fail(*p, err)}
		}
	}
	return from, restart, state, offset, nil
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
		Model: res.Session.Model, Title: res.Session.Title, ContextWindow: res.Session.ContextWindow, ThresholdTokens: res.Session.ThresholdTokens,
		LimitsAssumed: res.Session.LimitsAssumed}
	batch.Items = make([]sqlite.ImportItem, 0, len(res.Records))
	preds := r.predictions(job, harness, res)
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

// predictions is, for the folds of a log on disk whose format predicts
// them, the prediction the harness's hook would have made at each (the
// log cut at its fold, the folder's earlier logs as history), by fold id.
// The trace is the pass's own when it read the file from its start; else
// (appended lines, or a file whose trace a session before it took into
// the cache) the cache's, which reads the whole file when it does not
// hold it. An upload cannot be read again and gets none.
func (r *importRun) predictions(job *importJob, harness string, res *importer.Result) map[string]importer.Forecast {
	pred, cache := r.predictorOf(job, harness)
	if pred == nil || !hasFold(res.Records) {
		return nil
	}
	tr := res.Trace // traced in the pass when it read the file from its start
	if tr == nil {
		var err error
		if tr, err = cache.Trace(job.path); err != nil {
			return nil
		}
	}
	return pred.Predict(job.path, tr, cache)
}

// predictorOf is the Predictor of a file's folds and the run's trace
// cache for it: nil for an upload (it cannot be read again) and for a
// format without one or a log it does not predict.
func (r *importRun) predictorOf(job *importJob, harness string) (importer.Predictor, *traceCache) {
	if job.src.Reader != nil {
		return nil, nil
	}
	f, ok := importer.Lookup(harness)
	if !ok || f.Predictor == nil || !f.Predictor.Predicts(job.path) {
		return nil, nil
	}
	return f.Predictor, r.caches.of(f.Predictor)
}

// sessionLine names the line a harness's log starts with.
func sessionLine(harness string) string {
	if f, ok := importer.Lookup(harness); ok && f.SessionLine != "" {
		return f.SessionLine
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
