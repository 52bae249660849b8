package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"tollgate/app/importer/jsonl"
)

// Options say what to parse and where the previous pass stopped.
type Options struct {
	// Harness is a registered format's name (Harnesses()).
	Harness string
	// Path is the file's path, or an upload's name: it names the file in
	// errors, and a format may read the session id or the log's role
	// (a subagent's) from it.
	Path string
	// State is what the previous pass over this file returned (nil: the
	// input starts at the beginning of the file).
	State json.RawMessage
	// AtEOF says the input ends for good (an upload, or a file that is no
	// longer written): a last line without a newline is then read too, if
	// it is a whole JSON object. Otherwise it is left for the next pass, as
	// a writer may still be writing it.
	AtEOF bool
	// Live reads a log its harness is writing, for a hook that must
	// answer now: a line that cannot be read is skipped and counted in
	// Result.Skipped instead of failing the pass, and a parser that
	// measures it (PendingMeter) reports the content written after the
	// main thread's last request in Result.PendingBytes.
	Live bool
	// Limits bound what one pass reads (zero fields: the defaults).
	Limits jsonl.Limits
	// Trace also builds Result.Trace, the structure the format's fold
	// predictor replays (formats with a Predictor). Every line is then
	// decoded: ask for it only when predicting.
	Trace bool
	// TraceFolds is Trace for a log that has a fold, as far as the pass
	// can tell before its first line (a parser that is a Header decides
	// from the first read when that holds all of the input; a longer
	// one is traced). An import reads each log once this way instead of
	// reading it first to find out.
	TraceFolds bool
}

// Result is one pass over a file.
type Result struct {
	Batch
	// State is to be handed back in Options.State with the next pass.
	State json.RawMessage
	// Skipped counts unreadable lines passed over (Options.Live only).
	Skipped int
	// PendingBytes is, with Options.Live, the size of the message content
	// (raw JSON bytes) on the main thread after its last request: what the
	// next request will add to the prompt.
	PendingBytes int64
	// Trace is the log's structure for its format's predictor
	// (Options.Trace; a Tracer parser), nil when not traced.
	Trace any
}

// LineParser is a log format's parser of one pass (Format.NewParser).
// Line handles one complete line (no newline; n is its 1-based number in
// the file), Finish returns the pass's session and records, and State is
// carried to the next pass (lines is the count so far; it must keep
// {"lines": lines} at its top level for the driver).
type LineParser interface {
	Line(b []byte, n int) error
	Finish() (Session, []Record)
	State(lines int) (json.RawMessage, error)
}

// PendingMeter is a LineParser that measures, with Options.Live, the
// content after the main thread's last request (Result.PendingBytes).
type PendingMeter interface{ PendingBytes() int64 }

// Tracer is a LineParser that builds a trace with Options.Trace
// (Result.Trace); Trace returns nil when it built none.
type Tracer interface{ Trace() any }

// Header is a LineParser that, with Options.TraceFolds, looks at the
// pass's first read before its first line (whole: the read holds all of
// the input) to decide whether to trace. Head returns nil when it has
// nothing to look at.
type Header interface {
	Head() func(b []byte, whole bool)
}

// baseState is the part of every parser's state the driver reads.
type baseState struct {
	Lines int `json:"lines"`
}

func newParser(opts Options) (LineParser, int, error) {
	var base baseState
	if len(opts.State) > 0 {
		if err := json.Unmarshal(opts.State, &base); err != nil {
			return nil, 0, fmt.Errorf("%s: import state: %w", opts.Path, err)
		}
	}
	f, ok := formats[opts.Harness]
	if !ok {
		return nil, 0, fmt.Errorf("%s: unknown harness %q (want one of %s)", opts.Path, opts.Harness, strings.Join(Harnesses(), ", "))
	}
	if f.NewParser == nil {
		return nil, 0, fmt.Errorf("%s: %s keeps its sessions in a database, not a log of lines: import it by path (tollgate import --harness %s)", opts.Path, opts.Harness, opts.Harness)
	}
	p, err := f.NewParser(opts)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: import state: %w", opts.Path, err)
	}
	return p, base.Lines, nil
}

// Parse reads a log from r, which starts where the previous pass stopped
// (or at the file's start), and returns its records. A zstd-framed log
// (IsZstd(opts.Path)) is read frame by frame and Consumed counts
// compressed bytes up to the end of the last frame whose lines were read.
//
// A line that cannot be read is a *LineError naming the file and the line;
// the pass is then worthless as a whole (the caller stores nothing of it).
func Parse(r io.Reader, opts Options) (*Result, error) {
	p, lines, err := newParser(opts)
	if err != nil {
		return nil, err
	}
	var head func([]byte, bool)
	if h, ok := p.(Header); ok && opts.TraceFolds {
		head = h.Head()
	}
	st, err := jsonl.Read(r, jsonl.Options{Path: opts.Path, Line: lines, AtEOF: opts.AtEOF, Live: opts.Live, Limits: opts.Limits, Head: head}, p.Line)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	res.Harness = opts.Harness
	res.Session, res.Records = p.Finish()
	res.Lines = st.Lines - lines
	res.Consumed = st.Consumed
	res.Skipped = st.Skipped
	if m, ok := p.(PendingMeter); ok && opts.Live {
		res.PendingBytes = m.PendingBytes()
	}
	if t, ok := p.(Tracer); ok {
		res.Trace = t.Trace()
	}
	res.State, err = p.State(st.Lines)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// The reader's limits and errors, named where the importer's callers look.
type (
	Limits     = jsonl.Limits
	LimitError = jsonl.LimitError
	LineError  = jsonl.LineError
)

// Default limits of one pass (jsonl).
const (
	DefaultInputLimit     = jsonl.DefaultInputLimit
	DefaultZstdInputLimit = jsonl.DefaultZstdInputLimit
	DefaultLineLimit      = jsonl.DefaultLineLimit
	DefaultDecodedLimit   = jsonl.DefaultDecodedLimit
)

// IsZstd reports whether a path names a zstd-framed log.
func IsZstd(path string) bool { return jsonl.IsZstd(path) }
