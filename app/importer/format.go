package importer

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// A Format is one harness's logs: everything the walk, the follower, the
// import pipeline and `tollgate price` ask of them. A harness folder
// (app/harness/<name>) registers its Format from an init function, the way
// an image format registers with image.RegisterFormat; the generic rooms
// loop over Formats and never name a harness.
type Format struct {
	// Name is the harness's name: sessions.harness, --harness, and the
	// prefix of its session ids (SessionID).
	Name string
	// Label is how the UI and messages name it ("Claude Code").
	Label string
	// Order places it in every list of harnesses (Formats): the default
	// roots are imported in this order.
	Order int
	// Roots are the folders its logs live in, in import order; getenv is
	// os.Getenv in production, home the user's home folder.
	Roots func(getenv func(string) string, home string) []string
	// IsLog reports whether a file found under one of its roots (or a
	// folder imported with --harness) is one of its logs. It sees names
	// only and is both the walk's filter and the follower's; the file is
	// already known to be named *.jsonl, *.jsonl.zst or *.jsonl.zstd
	// (IsLogName). nil accepts every such file.
	IsLog func(path string) bool
	// Detect reports whether a file of unknown harness is one of its logs,
	// from its path and first bytes (head: up to 4 KB). Formats are asked
	// in DetectOrder, lowest first, as some logs share a key. nil: the
	// format is never detected.
	Detect      func(path string, head []byte) bool
	DetectOrder int
	// Subagent reports whether a log is a subagent's (or another thread of
	// a parent session): it is imported after the parent's logs, so the
	// session's own rows are numbered first, and counts as no session of
	// its own. nil: none is.
	Subagent func(path string) bool
	// Companions are the other logs of the session whose main log is path
	// (Claude Code's subagents), read with it by `tollgate price`.
	Companions func(path string) []string
	// SessionLine names the line a log starts with, which gives its
	// session id (an error names it when a log has none).
	SessionLine string
	// FoldAfterCall says a fold is written when its summary call returns
	// (Claude Code): the rewrite was decided when that call started.
	FoldAfterCall bool
	// NewParser makes the parser of one pass (Parse). nil for a Database.
	NewParser func(Options) (LineParser, error)
	// Database is set for a harness whose logs are one database read
	// session by session (OpenCode), instead of files of lines.
	Database *Database
	// Predictor predicts the cold tokens of its folds (AddPredictor); nil
	// when the format has none.
	Predictor Predictor
}

// A Database is a harness's log kept in one database file (OpenCode's
// opencode.db), read session by session: each session is stored under its
// own imports row, "<file>#<session id>", whose head hash is the session's
// stamp.
type Database struct {
	// File is the database's name in its folder. Its SQLite write-ahead
	// log, File+"-wal", is where new rows are written first.
	File string
	// Read returns the database's sessions; changed says, by session id
	// and stamp, which to read (the others come back Unchanged).
	Read func(ctx context.Context, path string, changed func(session, stamp string) bool) ([]DatabaseSession, error)
	// Sessions counts the database's sessions (the history banner).
	Sessions func(ctx context.Context, path string) (int, error)
}

// DatabaseSession is one session a Database read.
type DatabaseSession struct {
	Batch     Batch
	Stamp     string
	Unchanged bool
	Err       error
}

// formats are the registered formats by name. They are registered from
// init functions, before any Parse runs, so the map is read without a
// lock.
var formats = map[string]*Format{}

// ordered holds the formats in Order (then name), byDetect in DetectOrder:
// both kept as formats register, so the walk's and every file's lookups
// sort nothing.
var ordered, byDetect []*Format

// Register adds a harness's log format (from an init function). A format
// without a name or a way to read it, or a name registered twice, panics:
// it is a program error, not an input one.
func Register(f Format) {
	switch {
	case f.Name == "" || strings.ContainsAny(f.Name, ": \t"):
		panic("importer: format name " + f.Name + " is empty or holds a colon or a space")
	case formats[f.Name] != nil:
		panic("importer: format " + f.Name + " registered twice")
	case (f.NewParser == nil) == (f.Database == nil):
		panic("importer: format " + f.Name + " needs a parser or a database, not both")
	}
	if f.Label == "" {
		f.Label = f.Name
	}
	formats[f.Name] = &f
	ordered = append(ordered, &f)
	slices.SortFunc(ordered, func(a, b *Format) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	byDetect = slices.Clone(ordered)
	slices.SortStableFunc(byDetect, func(a, b *Format) int { return cmp.Compare(a.DetectOrder, b.DetectOrder) })
}

// AddPredictor gives a registered format its fold predictor (from the
// predictor package's init function, which sits above the format's
// parser).
func AddPredictor(name string, p Predictor) {
	f := formats[name]
	if f == nil || f.Predictor != nil {
		panic("importer: predictor for " + name + ": format unknown or predicted twice")
	}
	f.Predictor = p
}

// Lookup returns the format registered under name.
func Lookup(name string) (*Format, bool) {
	f, ok := formats[name]
	return f, ok
}

// Formats lists the registered formats in Order (then name).
func Formats() []*Format { return slices.Clone(ordered) }

// Harnesses lists every harness name the importers read, in Order.
func Harnesses() []string {
	out := make([]string, len(ordered))
	for i, f := range ordered {
		out[i] = f.Name
	}
	return out
}

// SessionID is the id tollgate stores a harness's session under:
// "<harness>:<the harness's own id>". Hook rows, imported rows and live
// telemetry of one session merge because all of them build it here.
func SessionID(harness, id string) string { return harness + ":" + id }

// Detect tells which harness wrote a log, from its name and its first
// bytes, asking the formats in DetectOrder. It returns "" when none can
// tell.
func Detect(path string, head []byte) string {
	for _, f := range byDetect {
		if f.Detect != nil && f.Detect(path, head) {
			return f.Name
		}
	}
	return ""
}

// IsLogName reports whether a file name can be a log of lines: *.jsonl,
// or zstd-framed *.jsonl.zst / *.jsonl.zstd.
func IsLogName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zstd") || strings.HasSuffix(name, ".jsonl.zst")
}

// IsSubagent reports whether any format takes the log for a subagent's.
func IsSubagent(path string) bool {
	for _, f := range formats {
		if f.Subagent != nil && f.Subagent(path) {
			return true
		}
	}
	return false
}

// A Predictor predicts, for a format that has one, the cold tokens of the
// request after each fold: what the harness's hook would have been told
// at that fold. Traces are the format's own (a parser's Trace with
// Options.Trace), opaque to the pipeline.
type Predictor interface {
	// Predicts reports whether the folds of the log at path (on disk) get
	// predictions.
	Predicts(path string) bool
	// Named reports whether path is a session of its own by its file
	// name, so the import may move it ahead of its folder's other logs.
	Named(path string) bool
	// Candidates lists a folder's logs that its sessions learn from
	// (opaque to the caller, which caches it per run), and MayLearnFrom
	// whether path is one of them.
	Candidates(dir string) any
	MayLearnFrom(cands any, path string) bool
	// HasFold reports whether a log on disk holds a fold, and ReadTrace
	// reads its whole trace.
	HasFold(path string) bool
	ReadTrace(path string) (any, error)
	// Predict is, for the folds of the log at path whose trace is tr, the
	// predictions by fold id, learning from the logs beside it through
	// the run's cache.
	Predict(path string, tr any, cache TraceCache) map[string]Forecast
	// PredictLog is Predict for a log read alone (`tollgate price`), by
	// fold, reading what it learns from on disk.
	PredictLog(path string, tr any) map[*Fold]Forecast
}

// TraceCache is what an import run offers its Predictor: the traces and
// fold flags of the logs it read, each decoded once a run, and what
// replaying them taught, by key.
type TraceCache interface {
	HasFold(path string) bool
	Trace(path string) (any, error)
	Decoding(path string) bool
	Candidates(dir string) any
	History(key string, build func() any) any
}

// Forecast is a predictor's figures for one fold.
type Forecast struct {
	// Cold is the predicted cold tokens of the request after the fold,
	// within [Low, High].
	Cold, Low, High int64
	// Summary is the predicted summary's size in tokens; Parts the named
	// parts of Cold (the predictor's own breakdown, for `tollgate price`).
	Summary int64
	Parts   []ForecastPart
	// Call is the summary call's predicted usage.
	Call ForecastCall
}

// ForecastPart is one named part of a Forecast.
type ForecastPart struct {
	Name   string `json:"name"`
	Tokens int64  `json:"tokens"`
}

// ForecastCall is a summary call's predicted tokens and its cache's TTL.
type ForecastCall struct {
	Read, Write, Output int64
	TTLSeconds          int64
}
