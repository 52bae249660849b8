// Package ccfold predicts what a Claude Code compaction costs: the cold
// tokens of the first request after it (what it re-reads in full) with
// their parts and an honest band, and the summary call's cache figures
// (README, "Claude Code folds"). One predictor serves the
// PreCompact hook (the transcript cut at the boundary: the moment of
// asking), `tollgate price` and the importer (the prediction the hook would
// have made at every past fold).
//
// It replays a trace (importer.Options.Trace) of the main thread. It is pure
// but for a FileSource the caller passes (the session's files on disk, when
// they exist) and the clock, which is passed in.
//
// What Claude Code re-sends after compacting (its compact.ts, 2.1.x):
// system prompt and tools (the cached prefix, read), then — all new to the
// cache, so all cold — the user context (CLAUDE.md files), the summary, the
// five most recently touched files (by the mtime recorded at the read or
// write) re-read whole unless over 5,000 tokens (then a one-line note), the
// plan file, invoked skills, and the SessionStart(compact) hook output.
package ccfold

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
)

// Claude Code's own constants (services/compact/compact.ts, autoCompact.ts).
const (
	maxFilesToRestore   = 5      // POST_COMPACT_MAX_FILES_TO_RESTORE
	postCompactBudget   = 50_000 // POST_COMPACT_TOKEN_BUDGET (len/4 of the attachment)
	maxTokensPerFile    = 5_000  // POST_COMPACT_MAX_TOKENS_PER_FILE (count_tokens of the raw file)
	maxTokensPerSkill   = 5_000  // POST_COMPACT_MAX_TOKENS_PER_SKILL
	skillsBudget        = 25_000 // POST_COMPACT_SKILLS_TOKEN_BUDGET
	skillListingPercent = 0.01   // the startup-only skill listing: ≤ 1 % of the window
	ccCharsPerToken     = 4.0    // roughTokenCountEstimation
	numberPrefixBytes   = 9      // the Read tool's "%6d→" before each line
)

// Priors, used only until the session or project has taught better.
const (
	defaultSummary     = 4_300 // summaries of 3.8–4.9k tokens seen in real folds
	defaultSummaryLow  = 3_000
	defaultSummaryHigh = 6_000
	defaultInstruction = 2_200 // the compact prompt (~8.9k characters)
	defaultBase        = 2_700 // CLAUDE.md + SessionStart hooks, unknown project
	defaultBaseLow     = 1_500
	defaultBaseHigh    = 4_000
	manualExtra        = 2_000 // a manual /compact's own output (~2k in real folds), until learned
	manualHigh         = 3_000
	capAmbiguity       = 0.15  // a file within ±15 % of the 5k cap may go either way
	minCalibration     = 3_000 // bytes of Read results a calibration sample needs
)

// FileSource reads the session's files where they exist. Stat gives a
// file's size and modification time; Read its text (at most limit bytes:
// ok is false beyond). A nil FileSource says the files are absent (an
// imported log, another machine).
type FileSource interface {
	Stat(path string) (size int64, mtime time.Time, ok bool)
	Read(path string, limit int64) (text string, ok bool)
}

// Env is what a prediction may see besides the trace.
type Env struct {
	Files  FileSource          // nil: the session's files are absent
	Getenv func(string) string // nil: no overrides
	// Home is the user's home directory (~/.claude/CLAUDE.md), "" unknown.
	Home string
}

// Part is one part of the predicted cold tokens.
type Part struct {
	Name   string `json:"name"` // summary | files | plan+skills | base | manual
	Tokens int64  `json:"tokens"`
	Low    int64  `json:"low"`
	High   int64  `json:"high"`
	Note   string `json:"note,omitempty"`
}

// Cap decisions of a restored file.
const (
	CapWhole     = "whole"     // re-attached whole
	CapNote      = "note"      // over 5,000 tokens: a one-line note
	CapAmbiguous = "ambiguous" // near the cap: the band holds both
)

// File is one file Claude Code restores after compacting.
type File struct {
	Path      string `json:"path"`
	Tokens    int64  `json:"tokens"`    // what it adds to the request
	RawTokens int64  `json:"rawTokens"` // the cap test's estimate of the raw text
	Cap       string `json:"cap"`
	Source    string `json:"source"` // disk | transcript | partial
}

// SummaryCall predicts the compaction's own request.
type SummaryCall struct {
	Warm bool `json:"warm"`
	// Idle is the time since the last main request; TTL the cache's.
	Idle time.Duration `json:"idle"`
	TTL  time.Duration `json:"ttl"`
	// Read, Write and Output are its predicted tokens: a warm call reads
	// the whole last prompt and writes the tail and the instruction; a
	// cold one writes everything.
	Read   int64 `json:"read"`
	Write  int64 `json:"write"`
	Output int64 `json:"output"`
}

// Expired is how long ago the cache expired (0: still warm).
func (c SummaryCall) Expired() time.Duration {
	if c.Warm || c.TTL == 0 {
		return 0
	}
	return c.Idle - c.TTL
}

// Prediction is one fold's predicted cost.
type Prediction struct {
	Cold   int64  `json:"cold"`
	Low    int64  `json:"low"`
	High   int64  `json:"high"`
	Parts  []Part `json:"parts"`
	Files  []File `json:"files"`
	Prefix int64  `json:"prefix"` // the cached system prompt + tools that survives
	// Window and Threshold are Claude Code's auto-compact rule for the model.
	Window    int64       `json:"window"`
	Threshold int64       `json:"threshold"`
	Call      SummaryCall `json:"summaryCall"`
}

// Part returns the named part (zero if absent).
func (p Prediction) Part(name string) Part {
	for _, x := range p.Parts {
		if x.Name == name {
			return x
		}
	}
	return Part{}
}

// Fold is one past fold: the prediction made from the trace cut at its
// boundary, beside what it cost.
type Fold struct {
	Fold       *importer.Fold
	Prediction Prediction
	// Summary is the summary's size (its text at 4 characters a token), 0
	// unknown; Actual the billed cold tokens of the request after it.
	Summary int64
	Actual  *int64
}

// ErrorPercent is (predicted − actual) / actual in percent.
func (f Fold) ErrorPercent() (float64, bool) {
	if f.Actual == nil || *f.Actual <= 0 {
		return 0, false
	}
	return float64(f.Prediction.Cold-*f.Actual) / float64(*f.Actual) * 100, true
}

// History is what earlier folds taught, per project (cwd) and for the
// user: summary sizes, the base, the cached prefix per Claude Code version
// and model. A fold learns only from folds before it.
type History struct {
	projects  map[string]*project
	summaries []float64
	prefix    map[string]int64
}

type project struct {
	summaries []float64
	bases     []float64
	manuals   []float64 // a manual /compact's extra, once the base is known
}

// NewHistory is an empty history.
func NewHistory() *History {
	return &History{projects: map[string]*project{}, prefix: map[string]int64{}}
}

// Clone is a copy of h that learns apart from it.
func (h *History) Clone() *History {
	c := &History{projects: make(map[string]*project, len(h.projects)), summaries: slices.Clone(h.summaries), prefix: maps.Clone(h.prefix)}
	for cwd, p := range h.projects {
		c.projects[cwd] = &project{summaries: slices.Clone(p.summaries), bases: slices.Clone(p.bases), manuals: slices.Clone(p.manuals)}
	}
	return c
}

func (h *History) project(cwd string) *project {
	p := h.projects[cwd]
	if p == nil {
		p = &project{}
		h.projects[cwd] = p
	}
	return p
}

// Replay predicts every fold of the trace from what preceded it, and
// learns from each into h (nil: a history of its own).
func Replay(tr *cclog.Trace, h *History, env Env) []Fold {
	folds, _ := replay(tr, h, env)
	return folds
}

// Predict is the hook's prediction: the trace is cut at the boundary about
// to be written (the PreCompact moment); its own earlier folds teach h
// (nil: a history of its own) first. now is the moment of asking (the
// summary call's idle time).
func Predict(tr *cclog.Trace, h *History, env Env, trigger string, now time.Time) Prediction {
	if h == nil {
		h = NewHistory()
	}
	_, s := replay(tr, h, env)
	return s.predict(h, trigger, now)
}

func replay(tr *cclog.Trace, h *History, env Env) ([]Fold, *session) {
	if h == nil {
		h = NewHistory()
	}
	s := newSession(tr, env)
	var out []Fold
	open := -1
	for _, ev := range tr.Events {
		switch {
		case ev.Kind == cclog.TraceBoundary:
			if open >= 0 {
				s.learn(h, &out[open])
			}
			pred := s.predict(h, ev.Fold.Trigger, s.lastAt)
			out = append(out, Fold{Fold: ev.Fold, Prediction: pred, Actual: ev.Fold.ActualCold})
			open = len(out) - 1
			s.afterFold(pred)
		case ev.Kind == cclog.TraceSummary && open >= 0 && out[open].Summary == 0:
			out[open].Summary = int64(math.Round(float64(ev.Bytes) / ccCharsPerToken))
		default:
			s.step(ev)
		}
	}
	if open >= 0 {
		s.learn(h, &out[open])
	}
	return out, s
}

// fileState mirrors one entry of Claude Code's readFileState. Its text is
// content with edits applied, in order: applied (and the text decoded)
// only when the prediction looks at the file, since most of a session's
// edits are to files a later read or edit replaces, or that are not among
// the few restored (applying each edit as it comes would copy the whole
// file every time).
type fileState struct {
	path      string
	content   cclog.Text
	edits     []cclog.Edit // applied to content when the text is used
	known     bool
	partBytes int
	partLines int
	total     int
	written   time.Time // last Write/Edit in the session (the mtime it recorded)
	access    time.Time // last Read/Write/Edit
}

type session struct {
	env       Env
	cwd       string
	version   string
	reqs      []*cclog.TraceEvent
	files     map[string]*fileState
	skills    map[string]skill
	plan      int
	samples   [][2]float64 // Read calibration: bytes, tokens
	since     []*cclog.TraceEvent
	pending   int64
	lastFold  int // index in reqs of the first request after the last fold, -1
	writes1h  bool
	firstUser int
	lastAt    time.Time
}

type skill struct {
	bytes int
	at    time.Time
}

func newSession(tr *cclog.Trace, env Env) *session {
	return &session{env: env, cwd: tr.Cwd, version: tr.Version, files: map[string]*fileState{}, skills: map[string]skill{}, lastFold: -1}
}

func (s *session) step(ev cclog.TraceEvent) {
	if !ev.At.IsZero() {
		s.lastAt = ev.At
	}
	switch ev.Kind {
	case cclog.TraceRequest:
		r := ev.Request
		if r.Usage.CacheWrite1h > 0 {
			s.writes1h = true
		}
		if len(s.reqs) > 0 {
			s.calibrate(s.reqs[len(s.reqs)-1], &ev)
		}
		e := ev
		s.reqs = append(s.reqs, &e)
		s.pending = 0
		s.since = nil
	case cclog.TraceUser:
		if len(s.reqs) == 0 && !ev.Meta {
			s.firstUser += ev.Bytes
		}
		if ev.Skill != "" {
			s.skills[ev.Skill] = skill{ev.Bytes, ev.At}
		}
		if ev.Plan > 0 {
			s.plan = ev.Plan
		}
		for _, op := range ev.Files {
			s.fileOp(op, ev.At)
		}
		s.pending += int64(ev.Bytes)
		e := ev
		s.since = append(s.since, &e)
	}
}

// calibrate learns the bytes per token of line-numbered file text from a
// request whose new content is (almost all) Read results.
func (s *session) calibrate(prev, cur *cclog.TraceEvent) {
	if prev.Request.Model != cur.Request.Model || len(s.since) == 0 {
		return
	}
	delta := float64(cur.Request.Usage.Prompt()-prev.Request.Usage.Prompt()) - float64(prev.Bytes)/ccCharsPerToken
	var all, read int
	for _, c := range s.since {
		all += c.Bytes
		if c.Reads > 0 {
			read += c.Bytes
		}
	}
	if read < minCalibration || float64(read) < 0.9*float64(all) || delta <= 0 {
		return
	}
	delta -= float64(all-read) / ccCharsPerToken
	if delta > 0 {
		s.samples = append(s.samples, [2]float64{float64(read), delta})
	}
}

// cpt is the session's bytes per token of numbered file text (ratio of
// sums, at least two samples), else Claude Code's 4.
func (s *session) cpt() float64 {
	var b, t float64
	for _, x := range s.samples {
		b += x[0]
		t += x[1]
	}
	if len(s.samples) < 2 || t == 0 {
		return ccCharsPerToken
	}
	return b / t
}

func (s *session) fileOp(op cclog.FileOp, at time.Time) {
	fs := s.files[op.Path]
	if fs == nil {
		fs = &fileState{path: op.Path}
		s.files[op.Path] = fs
	}
	fs.access = at
	switch op.Tool {
	case "Read":
		if !op.Partial() {
			fs.content, fs.edits, fs.known = op.Content, nil, true
		} else if !fs.known {
			fs.partBytes += op.Content.Len()
			fs.partLines += op.NumLines
			fs.total = op.TotalLines
		}
	case "Write":
		fs.written = at
		fs.content, fs.edits, fs.known = op.Content, nil, true
	case "Edit", "MultiEdit":
		fs.written = at
		if op.HasContent {
			// The edits apply to the file as the tool found it; a fresh
			// slice, as the last one may be shared with a copy (afterFold).
			fs.content, fs.edits, fs.known = op.Content, slices.Clip(op.Edits), true
		} else if fs.known {
			fs.edits = append(slices.Clip(fs.edits), op.Edits...)
		}
	}
	if strings.Contains(op.Path, "/.claude/plans/") && fs.known {
		s.plan = len(fs.text())
	}
}

// text is the file's text with its pending edits applied (kept applied).
func (fs *fileState) text() string {
	text := fs.content.String()
	if len(fs.edits) > 0 {
		text = cclog.FileOp{Edits: fs.edits}.Apply(text)
		fs.edits = nil
	}
	fs.content = cclog.TextOf(text)
	return text
}

// afterFold: Claude Code clears readFileState, then re-reads the files it
// restored whole, so only those are candidates at the next fold.
func (s *session) afterFold(p Prediction) {
	keep := map[string]*fileState{}
	for _, f := range p.Files {
		if fs := s.files[f.Path]; fs != nil && f.Cap == CapWhole {
			keep[f.Path] = fs
		}
	}
	s.files = keep
	s.lastFold = len(s.reqs)
	s.pending = 0
	s.since = nil
}

// learn records what a fold measured: the summary's size and (automatic
// folds with a billed request after them) the base, billed cold less the
// parts the transcript shows.
func (s *session) learn(h *History, f *Fold) {
	p := h.project(s.cwd)
	if f.Summary > 0 && f.Fold.Trigger != importer.TriggerManual {
		p.summaries = append(p.summaries, float64(f.Summary))
		h.summaries = append(h.summaries, float64(f.Summary))
	}
	if f.Actual == nil || f.Summary == 0 {
		return
	}
	shown := float64(f.Summary) + float64(f.Prediction.Part("files").Tokens) + float64(f.Prediction.Part("plan+skills").Tokens)
	rest := float64(*f.Actual) - shown
	if f.Fold.Trigger == importer.TriggerManual {
		// A manual fold's extra output and the base are told apart only
		// once the project's base is known from an automatic fold.
		if len(p.bases) > 0 {
			p.manuals = append(p.manuals, max(rest-mean(p.bases), 0))
		}
		return
	}
	if rest > 0 {
		p.bases = append(p.bases, rest)
	}
}

func (s *session) model() string {
	if len(s.reqs) == 0 {
		return ""
	}
	return s.reqs[len(s.reqs)-1].Request.Model
}

// prefix is the cached system prompt + tools: what the first request after
// the last fold read; else the largest read of a restart (a request that
// read less than its predecessor's prompt: only the prefix survived); else
// what this version and model had in earlier sessions; else the first
// request's read, which is only the part of the system prompt cached across
// sessions (measured says false: the prefix is then a lower bound).
func (s *session) prefix(h *History) (p int64, measured bool) {
	model := s.model()
	key := s.version + "|" + model
	if s.lastFold >= 0 && s.lastFold < len(s.reqs) {
		if r := s.reqs[s.lastFold].Request; r.Usage.CacheRead > 0 {
			h.prefix[key] = r.Usage.CacheRead
			return r.Usage.CacheRead, true
		}
	}
	var best int64
	for i, e := range s.reqs {
		r := e.Request
		if i == 0 || r.Model != model {
			continue
		}
		// A restart that read no more than the first request did read only
		// what other sessions keep warm (a global part of the system
		// prompt): not this session's prefix.
		first := s.reqs[0].Request.Usage
		if r.Usage.CacheRead < s.reqs[i-1].Request.Usage.Prompt()-1000 && r.Usage.CacheRead > best && r.Usage.CacheRead <= first.Prompt() && r.Usage.CacheRead > first.CacheRead {
			best = r.Usage.CacheRead
		}
	}
	if best > 0 {
		h.prefix[key] = best
		return best, true
	}
	if v, ok := h.prefix[key]; ok {
		return v, true
	}
	if len(s.reqs) > 0 {
		return s.reqs[0].Request.Usage.CacheRead, false
	}
	return 0, false
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func minmax(xs []float64) (float64, float64) {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

func part(name string, pred, lo, hi float64, note string) Part {
	return Part{Name: name, Tokens: int64(math.Round(pred)), Low: int64(math.Round(math.Min(lo, pred))), High: int64(math.Round(math.Max(hi, pred))), Note: note}
}

func (s *session) predict(h *History, trigger string, at time.Time) Prediction {
	var p Prediction
	var measured bool
	p.Prefix, measured = s.prefix(h)
	p.Window, p.Threshold = cclog.AutoCompact(s.model(), s.env.Getenv)
	cpt := s.cpt()
	proj := h.project(s.cwd)

	// 1. The summary: its size in this project, else the user's, else a prior.
	switch {
	case len(proj.summaries) > 0:
		lo, hi := minmax(proj.summaries)
		p.Parts = append(p.Parts, part("summary", mean(proj.summaries), lo*0.85, hi*1.15, fmt.Sprintf("learned from %d fold(s) of this project", len(proj.summaries))))
	case len(h.summaries) > 0:
		lo, hi := minmax(h.summaries)
		p.Parts = append(p.Parts, part("summary", mean(h.summaries), lo*0.75, hi*1.35, fmt.Sprintf("from %d fold(s) of other projects", len(h.summaries))))
	default:
		p.Parts = append(p.Parts, part("summary", defaultSummary, defaultSummaryLow, defaultSummaryHigh, "never seen: the default"))
	}

	// 2. The restored files, by the mtime recorded (Claude Code 2.1.332);
	// the set by access time (older versions) widens the band.
	p.Files = s.restore(cpt, false)
	alt := s.restore(cpt, true)
	pred, lo, hi := sumFiles(p.Files, cpt)
	note := fmt.Sprintf("%d file(s), numbered text %.2f B/token (%d samples)", len(p.Files), cpt, len(s.samples))
	if !sameSet(p.Files, alt) {
		_, alo, ahi := sumFiles(alt, cpt)
		lo, hi = math.Min(lo, alo), math.Max(hi, ahi)
		note += "; the access-order set differs"
	}
	p.Parts = append(p.Parts, part("files", pred, lo, hi, note))

	// 3. The plan file and invoked skills.
	if ps := s.planSkills(cpt); ps > 0 {
		p.Parts = append(p.Parts, part("plan+skills", ps, ps, ps, fmt.Sprintf("plan %v, %d skill(s)", s.plan > 0, len(s.skills))))
	}

	// 4. The base the transcript does not show.
	p.Parts = append(p.Parts, s.base(proj, cpt, p.Prefix, measured, p.Window))

	// 5. A manual /compact's own output.
	if trigger == importer.TriggerManual {
		if len(proj.manuals) > 0 {
			lo, hi := minmax(proj.manuals)
			p.Parts = append(p.Parts, part("manual", mean(proj.manuals), lo*0.8, hi*1.2, fmt.Sprintf("learned from %d manual fold(s)", len(proj.manuals))))
		} else {
			p.Parts = append(p.Parts, part("manual", manualExtra, 0, manualHigh, "never seen: the default"))
		}
	}
	for _, x := range p.Parts {
		p.Cold += x.Tokens
		p.Low += x.Low
		p.High += x.High
	}
	p.Call = s.call(proj, at)
	return p
}

// sumFiles is the files' predicted tokens and band: a file near the cap
// counts whole in the prediction and the high end, as a note in the low.
func sumFiles(fs []File, cpt float64) (pred, lo, hi float64) {
	for _, f := range fs {
		pred += float64(f.Tokens)
		hi += float64(f.Tokens)
		if f.Cap == CapAmbiguous {
			lo += noteTokens(f.Path, cpt)
		} else {
			lo += float64(f.Tokens)
		}
	}
	return pred, lo, hi
}

// noteTokens is the one-line note of a file over the cap ("Note: PATH was
// read before the last conversation was summarized, but the contents are
// too large to include…").
func noteTokens(path string, cpt float64) float64 {
	return float64(len(path)*2+180) / cpt
}

func sameSet(a, b []File) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, f := range a {
		m[f.Path] = true
	}
	for _, f := range b {
		if !m[f.Path] {
			return false
		}
	}
	return true
}

// memoryFile says Claude Code never restores the file: CLAUDE.md and
// memory files, rules, the plan file.
func memoryFile(p string) bool {
	b := p[strings.LastIndexAny(p, `/\`)+1:]
	return b == "CLAUDE.md" || b == "CLAUDE.local.md" || strings.Contains(p, "/.claude/plans/") ||
		(strings.Contains(p, "/.claude/rules/") && strings.HasSuffix(p, ".md"))
}

// maxFileRead bounds what the predictor reads of one file: past it, the
// file is far over the cap whatever its text.
const maxFileRead = 1 << 20

func (s *session) restore(cpt float64, byAccess bool) []File {
	type cand struct {
		fs    *fileState
		mtime time.Time
	}
	var cands []cand
	for _, fs := range s.files {
		if memoryFile(fs.path) {
			continue
		}
		c := cand{fs: fs, mtime: fs.written}
		if byAccess {
			c.mtime = fs.access
		} else if s.env.Files != nil {
			if _, mt, ok := s.env.Files.Stat(fs.path); ok {
				c.mtime = mt
			}
		}
		cands = append(cands, c)
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if !a.mtime.Equal(b.mtime) {
			return a.mtime.After(b.mtime)
		}
		if !a.fs.access.Equal(b.fs.access) {
			return a.fs.access.After(b.fs.access)
		}
		return a.fs.path < b.fs.path
	})
	if len(cands) > maxFilesToRestore {
		cands = cands[:maxFilesToRestore]
	}
	var out []File
	used := 0.0
	for _, c := range cands {
		f, ok := s.sizeFile(c.fs, cpt)
		if !ok {
			continue // never seen whole nor in part
		}
		t := float64(f.Tokens) * cpt / ccCharsPerToken // Claude Code's own budget test, at len/4
		if used+t > postCompactBudget {
			continue
		}
		used += t
		out = append(out, f)
	}
	return out
}

// sizeFile decides one restored file: its text from disk when it exists,
// else from the transcript (whole, or scaled from partial reads).
func (s *session) sizeFile(fs *fileState, cpt float64) (File, bool) {
	f := File{Path: fs.path, Source: "transcript"}
	var content string
	known, fromDisk := fs.known, false
	var rawBytes, lines float64
	// A path that does not exist here is read from the transcript: the
	// session ran on another machine, or its log was imported (a file
	// deleted since is not told apart: Claude Code would drop it).
	if s.env.Files != nil {
		if size, _, ok := s.env.Files.Stat(fs.path); ok {
			if text, ok := s.env.Files.Read(fs.path, maxFileRead); ok {
				content, known, fromDisk, f.Source = text, true, true, "disk"
			} else {
				f.Source, f.Cap = "disk", CapNote
				f.RawTokens = size / 4
				f.Tokens = int64(math.Round(noteTokens(fs.path, cpt)))
				return f, true
			}
		}
	}
	switch {
	case known:
		if !fromDisk {
			content = fs.text()
		}
		rawBytes = float64(len(content))
		lines = float64(strings.Count(content, "\n") + 1)
	case fs.partLines > 0 && fs.total > 0:
		rawBytes = float64(fs.partBytes) / float64(fs.partLines) * float64(fs.total)
		lines = float64(fs.total)
		f.Source = "partial"
	default:
		return f, false
	}
	raw := math.Max(rawBytes/ccCharsPerToken, (rawBytes+lines*numberPrefixBytes)/cpt-2*lines)
	attach := (rawBytes + lines*numberPrefixBytes + float64(len(fs.path)) + 150) / cpt
	f.RawTokens = int64(math.Round(raw))
	f.Tokens, f.Cap = int64(math.Round(attach)), CapWhole
	switch {
	case raw > maxTokensPerFile*(1+capAmbiguity):
		f.Tokens, f.Cap = int64(math.Round(noteTokens(fs.path, cpt))), CapNote
	case raw > maxTokensPerFile*(1-capAmbiguity) || f.Source == "partial" && raw > maxTokensPerFile/2:
		f.Cap = CapAmbiguous
	}
	return f, true
}

func (s *session) planSkills(cpt float64) float64 {
	var ps float64
	if s.plan > 0 {
		ps += float64(s.plan)/cpt + 20
	}
	sk := make([]skill, 0, len(s.skills))
	for _, v := range s.skills {
		sk = append(sk, v)
	}
	sort.Slice(sk, func(i, j int) bool { return sk[i].at.After(sk[j].at) })
	used := 0.0
	for _, v := range sk {
		t := math.Min(float64(v.bytes)/ccCharsPerToken, maxTokensPerSkill)
		if used+t > skillsBudget {
			continue
		}
		used += t
		ps += math.Min(float64(v.bytes), ccCharsPerToken*maxTokensPerSkill) / cpt
	}
	return ps
}

// base is what the transcript does not show: the user context (CLAUDE.md
// files), the SessionStart(compact) hooks' output, re-announced tools.
func (s *session) base(proj *project, cpt float64, prefix int64, measured bool, window int64) Part {
	if len(proj.bases) > 0 {
		lo, hi := minmax(proj.bases)
		return part("base", mean(proj.bases), lo*0.9, hi*1.1, fmt.Sprintf("learned from %d fold(s) of this project", len(proj.bases)))
	}
	claudeMD := s.claudeMD()
	if len(s.reqs) > 0 && prefix > 0 && measured {
		// The session's first request wrote the same base, the startup-only
		// skill listing (≤ 1 % of the window) and the first prompt. Without
		// a measured prefix the tools would count as base: not used.
		first := s.reqs[0].Request
		startup := float64(first.Usage.Prompt()-prefix) - float64(s.firstUser)/cpt
		if startup > 0 {
			listing := float64(window) * skillListingPercent
			lo := math.Max(math.Max(startup-listing, claudeMD), 0)
			return part("base", lo, lo, math.Max(startup, lo), fmt.Sprintf("the first request's %.0f less the skill listing (≤ %.0f)", startup, listing))
		}
	}
	if claudeMD > 0 {
		return part("base", claudeMD+500, claudeMD, claudeMD+2000, "CLAUDE.md on disk, hooks unknown")
	}
	return part("base", defaultBase, defaultBaseLow, defaultBaseHigh, "never seen: the default")
}

// claudeMD is the CLAUDE.md files Claude Code loads for cwd, in tokens at
// 4 characters (0 when the files are absent).
func (s *session) claudeMD() float64 {
	if s.env.Files == nil || s.cwd == "" {
		return 0
	}
	var n float64
	seen := map[string]bool{}
	read := func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		if t, ok := s.env.Files.Read(p, maxFileRead); ok {
			n += float64(len(t)) / ccCharsPerToken
		}
	}
	dir := strings.TrimRight(s.cwd, "/")
	for dir != "" {
		for _, name := range []string{"CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"} {
			read(dir + "/" + name)
		}
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			break
		}
		dir = dir[:i]
	}
	if s.env.Home != "" {
		read(strings.TrimRight(s.env.Home, "/") + "/.claude/CLAUDE.md")
	}
	return n
}

// call predicts the summary call at time at: warm, it reads the last
// prompt and writes its output, the pending content and the instruction;
// idle past the TTL (1 h when the session writes 1-hour entries, else
// 5 min) it writes all of it.
func (s *session) call(proj *project, at time.Time) SummaryCall {
	var c SummaryCall
	if len(s.reqs) == 0 {
		return c
	}
	last := s.reqs[len(s.reqs)-1]
	c.TTL = 5 * time.Minute
	if s.writes1h {
		c.TTL = time.Hour
	}
	c.Idle = max(at.Sub(last.At), 0)
	c.Warm = c.Idle < c.TTL
	out := math.Max(float64(last.Request.Usage.Output), float64(last.Bytes)/ccCharsPerToken)
	tail := int64(math.Round(out + float64(s.pending)/s.cpt() + defaultInstruction))
	prompt := last.Request.Usage.Prompt()
	if c.Warm {
		c.Read, c.Write = prompt, tail
	} else {
		c.Write = prompt + tail
	}
	c.Output = defaultSummary
	if len(proj.summaries) > 0 {
		c.Output = int64(math.Round(mean(proj.summaries)))
	}
	return c
}
