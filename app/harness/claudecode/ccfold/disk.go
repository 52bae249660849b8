package ccfold

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
)

// The package's I/O, for its callers (the hook, `tollgate price`): the
// session's files on this machine, and the project's earlier transcripts.
// The predictor itself reads only through Env.

// OSFiles is the session's files on this machine: bounded reads, nothing
// written.
type OSFiles struct{}

// Stat implements FileSource.
func (OSFiles) Stat(path string) (int64, time.Time, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0, time.Time{}, false
	}
	return st.Size(), st.ModTime(), true
}

// Read implements FileSource.
func (OSFiles) Read(path string, limit int64) (string, bool) {
	f, err := importer.OpenRegular(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		return "", false
	}
	return string(b), true
}

// Bounds of what EarlierSessions reads: the most recent transcripts beside
// the session's, each and all together at most so many bytes (the hook
// must answer in seconds).
const (
	historySessions   = 8
	historyFileBytes  = 16 << 20
	historyTotalBytes = 48 << 20
)

// EarlierSessions is what the project's earlier sessions teach the
// predictor: the transcripts beside path (Claude Code keeps one folder per
// project) that ended before the moment before (the session's start) and
// have a fold, the most recently written first, replayed oldest first —
// their summaries' sizes, the base, the cached prefix of each Claude Code
// version. Unreadable files are passed over; "" or a missing path gives an
// empty history.
func EarlierSessions(path string, before time.Time) *History {
	return EarlierSessionsFrom(path, before, osTranscripts{})
}

// Transcripts reads transcripts for EarlierSessionsFrom: whether one has a
// fold, and its trace.
type Transcripts interface {
	HasFold(path string) bool
	Trace(path string) (*cclog.Trace, error)
}

type osTranscripts struct{}

func (osTranscripts) HasFold(path string) bool                { return HasFold(path) }
func (osTranscripts) Trace(path string) (*cclog.Trace, error) { return ReadTrace(path) }

// Candidate is a transcript EarlierSessions may learn from.
type Candidate struct {
	Path string
	Info os.FileInfo
}

// Candidates lists the transcripts of a project folder that EarlierSessions
// chooses from: regular *.jsonl files of at most historyFileBytes, the most
// recently written first.
func Candidates(dir string) []Candidate {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var cands []Candidate
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || st.Size() > historyFileBytes || !st.Mode().IsRegular() {
			continue
		}
		cands = append(cands, Candidate{p, st})
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Info.ModTime().After(cands[j].Info.ModTime()) })
	return cands
}

// MayLearnFrom says whether EarlierSessions, for some session of the
// folder, can read path: it is among the folder's first historySessions+1
// candidates (a session passes over itself). An import keeps the traces
// of these only.
func MayLearnFrom(cands []Candidate, path string) bool {
	for i, c := range cands {
		if i > historySessions {
			return false
		}
		if c.Path == path {
			return true
		}
	}
	return false
}

// Decoding is a Transcripts that says which transcripts another caller is
// decoding right now (an import's workers share one cache).
type Decoding interface {
	Decoding(path string) bool
}

// HistoryCache is a Transcripts that keeps what replaying a list of
// transcripts taught (an import), by a key naming the list: History returns
// the kept one or build's, which the caller does not change.
type HistoryCache interface {
	History(key string, build func() *History) *History
}

// Lister is a Transcripts that also lists a folder's candidates (an
// import lists each folder once, not once per session).
type Lister interface {
	Candidates(dir string) []Candidate
}

// EarlierSessionsFrom is EarlierSessions reading the transcripts through
// read: an import that predicts many sessions of one project (a cache)
// reads each once.
func EarlierSessionsFrom(path string, before time.Time, read Transcripts) *History {
	h := NewHistory()
	if path == "" {
		return h
	}
	self, err := os.Stat(path)
	if err != nil {
		return h
	}
	var cands []Candidate
	if l, ok := read.(Lister); ok {
		cands = l.Candidates(filepath.Dir(path))
	} else {
		cands = Candidates(filepath.Dir(path))
	}
	var total int64
	var take []Candidate
	for _, c := range cands {
		if os.SameFile(c.Info, self) {
			continue
		}
		if len(take) == historySessions || total+c.Info.Size() > historyTotalBytes {
			break
		}
		take = append(take, c)
		total += c.Info.Size()
	}
	type earlier struct {
		tr    *cclog.Trace
		start time.Time
		path  string
		size  int64
		mod   time.Time
	}
	// A transcript another caller is decoding is taken once the others
	// are: two workers asking for a project's history then decode half of
	// it each, instead of one decoding while the other waits for the same
	// file.
	busy, _ := read.(Decoding)
	rest := slices.Clone(take)
	next := func() Candidate {
		k := 0
		if busy != nil {
			for i, c := range rest {
				if !busy.Decoding(c.Path) {
					k = i
					break
				}
			}
		}
		c := rest[k]
		rest = slices.Delete(rest, k, k+1)
		return c
	}
	var learn []earlier
	for len(rest) > 0 {
		c := next()
		if !read.HasFold(c.Path) {
			continue // what a session without a fold teaches (a restart's prefix) is not worth decoding it
		}
		tr, err := read.Trace(c.Path)
		if err != nil {
			continue
		}
		start, end := span(tr)
		if end.IsZero() || !end.Before(before) {
			continue // empty, or not over when this session started
		}
		learn = append(learn, earlier{tr, start, c.Path, c.Info.Size(), c.Info.ModTime()})
	}
	// Oldest first; the order they were read in does not matter.
	sort.SliceStable(learn, func(i, j int) bool {
		if !learn[i].start.Equal(learn[j].start) {
			return learn[i].start.Before(learn[j].start)
		}
		return learn[i].path < learn[j].path
	})
	build := func() *History {
		h := NewHistory()
		for _, e := range learn {
			Replay(e.tr, h, Env{})
		}
		return h
	}
	if c, ok := read.(HistoryCache); ok && len(learn) > 0 {
		// The sessions of a project mostly learn from the same latest
		// transcripts: replayed once, then copied (an import of a project
		// with many sessions replayed the same eight for each).
		var key strings.Builder
		for _, e := range learn {
			key.WriteString(e.path)
			key.WriteString("\x00")
			key.WriteString(strconv.FormatInt(e.size, 10))
			key.WriteString("\x00")
			key.WriteString(strconv.FormatInt(e.mod.UnixNano(), 10))
			key.WriteString("\x00")
		}
		return c.History(key.String(), build).Clone()
	}
	return build()
}

// HasFold says the transcript has a compact_boundary line, reading it in
// chunks without decoding it.
func HasFold(path string) bool {
	f, err := importer.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	bp := foldBufs.Get().(*[]byte)
	defer foldBufs.Put(bp)
	buf := *bp
	keep := 0
	for {
		n, err := f.Read(buf[keep:])
		if containsFoldKey(buf[:keep+n]) {
			return true
		}
		if err != nil {
			return false
		}
		// Keep the tail, in case the key spans two reads.
		keep = copy(buf, buf[max(keep+n-len(foldKey), 0):keep+n])
	}
}

// foldBufs are HasFold's read buffers: an import asks about the earlier
// transcripts it has not read whole, and a fresh 256 KB each time was a
// tenth of its garbage.
var foldBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// foldKey is what a compact_boundary line holds; containsFoldKey looks
// for it as the importer does (cclog.HasFoldKey).
var foldKey = []byte(cclog.FoldKey)

func containsFoldKey(b []byte) bool { return cclog.HasFoldKey(b) }

// span is the first and last moment of a trace (zero when it has none).
func span(tr *cclog.Trace) (first, last time.Time) {
	for _, e := range tr.Events {
		if e.At.IsZero() {
			continue
		}
		if first.IsZero() {
			first = e.At
		}
		last = e.At
	}
	return first, last
}

// Start is the first moment of a trace (zero when it has none).
func Start(tr *cclog.Trace) time.Time {
	first, _ := span(tr)
	return first
}

// ReadTrace reads a Claude Code main transcript's trace; a line being
// written or corrupt is passed over.
func ReadTrace(path string) (*cclog.Trace, error) {
	f, err := importer.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := importer.Parse(f, importer.Options{Harness: cclog.Name, Path: path, AtEOF: true, Live: true, Trace: true})
	if err != nil {
		return nil, err
	}
	if cclog.TraceOf(res) == nil {
		return &cclog.Trace{}, nil
	}
	return cclog.TraceOf(res), nil
}
