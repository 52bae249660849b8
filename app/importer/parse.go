package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"tollgate/app/importer/jsonl"
)

// Options say what to parse and where the previous pass stopped.
type Options struct {
	// Harness is ClaudeCode, Codex or a registered format's name (DSH,
	// the Gemini CLI's: Harnesses()).
	Harness string
	// Path is the file's path, or an upload's name: it names the file in
	// errors and, for Claude Code, tells a main transcript from a subagent's
	// (…/<session>/subagents/agent-*.jsonl) and gives the session id.
	Path string
	// State is what the previous pass over this file returned (nil: the
	// input starts at the beginning of the file).
	State json.RawMessage
	// AtEOF says the input ends for good (an upload, or a file that is no
	// longer written): a last line without a newline is then read too, if
	// it is a whole JSON object. Otherwise it is left for the next pass, as
	// a writer may still be writing it.
	AtEOF bool
	// Live reads a transcript its harness is writing, for a hook that must
	// answer now: a line that cannot be read is skipped and counted in
	// Result.Skipped instead of failing the pass, and (Claude Code) the
	// content written after the main thread's last request is measured in
	// Result.PendingBytes.
	Live bool
	// Limits bound what one pass reads (zero fields: the defaults).
	Limits jsonl.Limits
	// Trace (Claude Code main transcripts) also builds Result.Trace, the
	// structure a fold predictor replays. Every line is then decoded: ask
	// for it only when predicting.
	Trace bool
	// TraceFolds is Trace for a transcript that has a fold (FoldKey), as
	// far as the pass can tell before its first line: the input is looked
	// at when its first read holds all of it (up to 1 MB); a longer one is
	// traced. An import reads each transcript once this way, where finding
	// out first was a second read of every one (issue 17).
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
	// Trace is the main thread's structure (Options.Trace, Claude Code).
	Trace *ClaudeTrace
}

// pendingMeter is a parser that measures pending content (Options.Live).
type pendingMeter interface{ pendingBytes() int64 }

// parser turns lines into records. Implementations keep everything they
// need across passes in their state.
type parser interface {
	// line handles one complete line (no newline); n is its 1-based number
	// in the file.
	line(b []byte, n int) error
	// finish returns the pass's session and records.
	finish() (Session, []Record)
	// state is carried to the next pass; lines is the count so far.
	state(lines int) (json.RawMessage, error)
}

// LineParser is a log format kept in its own package (app/importer/<format>),
// registered with Register. It is the contract the built-in parsers keep:
// Line handles one complete line (no newline; n is its 1-based number in
// the file), Finish returns the pass's session and records, and State is
// carried to the next pass (lines is the count so far; it must keep
// {"lines": lines} at its top level for the driver).
type LineParser interface {
	Line(b []byte, n int) error
	Finish() (Session, []Record)
	State(lines int) (json.RawMessage, error)
}

// formats are the registered line formats, by harness name. They are
// registered from init functions, before any Parse runs, so the map is
// read without a lock.
var formats = map[string]func(Options) (LineParser, error){}

// Register adds a line format for a harness name (from an init function).
// Registering a name twice, or a built-in one, panics: it is a program
// error, not an input one.
func Register(harness string, newParser func(Options) (LineParser, error)) {
	if _, dup := formats[harness]; dup || databases[harness] || harness == ClaudeCode || harness == Codex {
		panic("importer: format " + harness + " registered twice")
	}
	formats[harness] = newParser
}

// databases are harnesses whose logs are not line files (OpenCode's SQLite
// database), read by their own package and registered with
// RegisterDatabase so that every list of harness names agrees.
var databases = map[string]bool{}

// RegisterDatabase names a harness whose logs are a database its own
// package reads (from an init function). Parse refuses it, naming the way in.
func RegisterDatabase(harness string) {
	if _, dup := formats[harness]; dup || databases[harness] || harness == ClaudeCode || harness == Codex {
		panic("importer: format " + harness + " registered twice")
	}
	databases[harness] = true
}

// Harnesses lists every harness name the importers read: the built-in
// ones, then the registered line formats and databases in name order.
func Harnesses() []string {
	out := []string{ClaudeCode, Codex}
	extra := make([]string, 0, len(formats)+len(databases))
	for h := range formats {
		extra = append(extra, h)
	}
	for h := range databases {
		extra = append(extra, h)
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// registered adapts a LineParser to the driver's parser.
type registered struct{ LineParser }

func (r registered) line(b []byte, n int) error               { return r.Line(b, n) }
func (r registered) finish() (Session, []Record)              { return r.Finish() }
func (r registered) state(lines int) (json.RawMessage, error) { return r.State(lines) }

// baseState is the part of every parser's state the driver reads.
type baseState struct {
	Lines int `json:"lines"`
}

func newParser(opts Options) (parser, int, error) {
	var base baseState
	if len(opts.State) > 0 {
		if err := json.Unmarshal(opts.State, &base); err != nil {
			return nil, 0, fmt.Errorf("%s: import state: %w", opts.Path, err)
		}
	}
	var p parser
	var err error
	switch opts.Harness {
	case ClaudeCode:
		p, err = newClaudeParser(opts)
	case Codex:
		p, err = newCodexParser(opts)
	default:
		newFormat, ok := formats[opts.Harness]
		if databases[opts.Harness] {
			return nil, 0, fmt.Errorf("%s: %s keeps its sessions in a database, not a log of lines: import it by path (tollgate import --harness %s)", opts.Path, opts.Harness, opts.Harness)
		}
		if !ok {
			return nil, 0, fmt.Errorf("%s: unknown harness %q (want one of %s)", opts.Path, opts.Harness, strings.Join(Harnesses(), ", "))
		}
		var lp LineParser
		if lp, err = newFormat(opts); err == nil {
			p = registered{lp}
		}
	}
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
	if cp, ok := p.(*claudeParser); ok && opts.TraceFolds && cp.trace == nil && cp.role == PurposeConversation {
		head = func(b []byte, whole bool) {
			if !whole || HasFoldKey(b) {
				cp.trace = newTracer()
			}
		}
	}
	st, err := jsonl.Read(r, jsonl.Options{Path: opts.Path, Line: lines, AtEOF: opts.AtEOF, Live: opts.Live, Limits: opts.Limits, Head: head}, p.line)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	res.Harness = opts.Harness
	res.Session, res.Records = p.finish()
	res.Lines = st.Lines - lines
	res.Consumed = st.Consumed
	res.Skipped = st.Skipped
	if m, ok := p.(pendingMeter); ok && opts.Live {
		res.PendingBytes = m.pendingBytes()
	}
	if cp, ok := p.(*claudeParser); ok && cp.trace != nil {
		tr := cp.trace.tr
		res.Trace = &tr
	}
	res.State, err = p.state(st.Lines)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ClaudeRole is the purpose of a Claude Code transcript's requests, by its
// file name: a main transcript's are the conversation, agent-acompact-*
// holds a summary call, other agent-* files a subagent.
func ClaudeRole(path string) string { return claudeRole(path) }

// ClaudeNamedSession is the session a Claude Code main transcript is by
// its file name (<session uuid>.jsonl); "" for a subagent's transcript (its
// session is its folder's or its lines') and for a main transcript of
// another name (its session comes from its lines, and two files may share
// one).
func ClaudeNamedSession(path string) string {
	if claudeRole(path) != PurposeConversation {
		return ""
	}
	return claudeSessionFromPath(path, PurposeConversation)
}

// claudeRole tells a Claude Code main transcript from a subagent's.
func claudeRole(path string) string {
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "agent-acompact"):
		return PurposeCompaction
	case strings.HasPrefix(base, "agent-"):
		return PurposeSubagent
	}
	return PurposeConversation
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
