package claudecode

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"tollgate/app/importer"
	"tollgate/app/importer/ccfold"
	"tollgate/pricing"
)

// transcript is what the hook needs from a Claude Code transcript, read with
// the importer's Claude Code parser (the one parser: the ids, purposes and
// figures the hook records are the ones `tollgate import` stores).
type transcript struct {
	// Records are every request and fold of the main file, in order.
	Records []importer.Record
	// Since are the main conversation's requests after the last fold.
	Since []*importer.Request
	// Folds counts the file's compact boundaries.
	Folds int
	// Checkpoint is the last fold's summary size in tokens (0: unknown).
	Checkpoint int64
	// PendingBytes is the message content written after the last main
	// request (the prompt and tool results not yet sent).
	PendingBytes int64
	Model        string
	LastAt       time.Time
	// Trace is the main thread's structure, for the fold predictor.
	Trace *importer.ClaudeTrace
}

// readTranscript reads a live transcript: a line Claude Code is still
// writing, or a corrupt one, is skipped, never fatal.
func readTranscript(path string) (transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return transcript{}, err
	}
	defer f.Close()
	res, err := importer.Parse(f, importer.Options{Harness: importer.ClaudeCode, Path: path, AtEOF: true, Live: true, Trace: true})
	if err != nil {
		return transcript{}, err
	}
	return newTranscript(res), nil
}

func newTranscript(res *importer.Result) transcript {
	tr := transcript{Records: res.Records, PendingBytes: res.PendingBytes, Trace: res.Trace}
	if tr.Trace == nil {
		tr.Trace = &importer.ClaudeTrace{}
	}
	for _, rec := range res.Records {
		switch {
		case rec.Fold != nil:
			tr.Folds++
			tr.Since = tr.Since[:0]
			tr.Checkpoint = rec.Fold.CheckpointTokens
		case rec.Request != nil && rec.Request.Purpose == importer.PurposeConversation:
			q := rec.Request
			tr.Since = append(tr.Since, q)
			tr.Model = q.Model
			if !q.At.IsZero() {
				tr.LastAt = q.At
			}
		}
	}
	return tr
}

// surface turns the conversation since the last fold into units: one per
// main request (the tokens its prompt added to the previous one's, ending at
// a cache breakpoint), then the last output and the pending input. The
// envelope is the cached prefix of the first request after the last fold,
// else the smallest non-zero cache read.
func (tr *transcript) surface() (int64, []pricing.Unit) {
	var envelope int64
	if len(tr.Since) > 0 {
		first := tr.Since[0].Usage
		if tr.Folds > 0 && first.CacheRead > 0 {
			envelope = first.CacheRead
		} else {
			for _, q := range tr.Since {
				if cr := q.Usage.CacheRead; cr > 0 && (envelope == 0 || cr < envelope) {
					envelope = cr
				}
			}
		}
		envelope = min(envelope, first.Prompt())
	}
	units := make([]pricing.Unit, 0, len(tr.Since)+1)
	covered := envelope
	for _, q := range tr.Since {
		p := q.Usage.Prompt()
		if p <= covered {
			continue // nothing new (or content cleared): no unit
		}
		units = append(units, pricing.Unit{ID: q.ID, Tokens: p - covered, Kind: "turn", Breakpoint: true})
		covered = p
	}
	var last int64
	if len(tr.Since) > 0 {
		last = tr.Since[len(tr.Since)-1].Usage.Output
	}
	if pending := last + (tr.PendingBytes+3)/4; pending > 0 {
		units = append(units, pricing.Unit{ID: "pending", Tokens: pending, Kind: "pending"})
	}
	return envelope, units
}

// subagentFiles are the transcripts beside a session's main file
// (<session>/subagents/*.jsonl: subagents and the compaction call).
func subagentFiles(transcript string) []string {
	files, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(transcript, ".jsonl"), "subagents", "*.jsonl"))
	return files
}

// Bounds of what the hook reads to learn from the project's earlier
// sessions: the most recent transcripts beside this one, each and all
// together at most so many bytes (a hook must answer in seconds).
const (
	historySessions   = 8
	historyFileBytes  = 16 << 20
	historyTotalBytes = 48 << 20
)

// projectHistory is what the project's earlier sessions (the transcripts
// beside this one: Claude Code keeps one folder per project) teach the fold
// predictor: their summaries' sizes, the base, the cached prefix of this
// Claude Code version. Unreadable files are passed over.
func projectHistory(path string) *ccfold.History {
	h := ccfold.NewHistory()
	if path == "" {
		return h
	}
	self, err := os.Stat(path)
	if err != nil {
		return h
	}
	paths, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.jsonl"))
	type cand struct {
		path string
		mod  time.Time
		size int64
	}
	var cands []cand
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || os.SameFile(st, self) || st.Size() > historyFileBytes || st.ModTime().After(self.ModTime()) {
			continue
		}
		cands = append(cands, cand{p, st.ModTime(), st.Size()})
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].mod.After(cands[j].mod) })
	var total int64
	var take []cand
	for _, c := range cands {
		if len(take) == historySessions || total+c.size > historyTotalBytes {
			break
		}
		take = append(take, c)
		total += c.size
	}
	// Oldest first: each session learns only from those before it.
	for i := len(take) - 1; i >= 0; i-- {
		if tr, err := readTranscript(take[i].path); err == nil && tr.Trace != nil {
			ccfold.Replay(tr.Trace, h, ccfold.Env{})
		}
	}
	return h
}

// osFiles is the fold predictor's view of the session's files on this
// machine: bounded reads, nothing written.
type osFiles struct{}

func (osFiles) Stat(path string) (int64, time.Time, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0, time.Time{}, false
	}
	return st.Size(), st.ModTime(), true
}

func (osFiles) Read(path string, limit int64) (string, bool) {
	f, err := os.Open(path)
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
