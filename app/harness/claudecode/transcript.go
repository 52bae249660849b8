package claudecode

import (
	"context"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
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
	Trace *cclog.Trace
}

// readTranscript reads a live transcript: a line Claude Code is still
// writing, or a corrupt one, is skipped, never fatal.
//
// Only a regular file is read (a FIFO or /dev/zero named as the transcript
// is refused at once), within the importer's limits, and the read gives up
// when ctx ends (the hook's client went away).
func readTranscript(ctx context.Context, path string) (transcript, error) {
	f, err := importer.OpenRegular(path)
	if err != nil {
		return transcript{}, err
	}
	defer f.Close()
	res, err := importer.Parse(importer.ContextReader(ctx, f), importer.Options{Harness: cclog.Name, Path: path, AtEOF: true, Live: true, Trace: true})
	if err != nil {
		return transcript{}, err
	}
	return newTranscript(res), nil
}

func newTranscript(res *importer.Result) transcript {
	tr := transcript{Records: res.Records, PendingBytes: res.PendingBytes, Trace: cclog.TraceOf(res)}
	if tr.Trace == nil {
		tr.Trace = &cclog.Trace{}
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
	pricing.Growth(envelope, prompts(tr.Since), func(i int, tokens int64) {
		units = append(units, pricing.Unit{ID: tr.Since[i].ID, Tokens: tokens, Kind: "turn", Breakpoint: true})
	})
	var last int64
	if len(tr.Since) > 0 {
		last = tr.Since[len(tr.Since)-1].Usage.Output
	}
	if pending := last + (tr.PendingBytes+3)/4; pending > 0 {
		units = append(units, pricing.Unit{ID: "pending", Tokens: pending, Kind: "pending"})
	}
	return envelope, units
}

// prompts are the requests' prompt sizes, for pricing.Growth.
func prompts(reqs []*importer.Request) []int64 {
	out := make([]int64, len(reqs))
	for i, q := range reqs {
		out[i] = q.Usage.Prompt()
	}
	return out
}
