package ccfold

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
	"tollgate/pricing"
)

// memFiles is a FileSource over a map: the session's files "on disk".
type memFiles map[string]memFile

type memFile struct {
	text  string
	mtime time.Time
}

func (m memFiles) Stat(path string) (int64, time.Time, bool) {
	f, ok := m[path]
	return int64(len(f.text)), f.mtime, ok
}

func (m memFiles) Read(path string, limit int64) (string, bool) {
	f, ok := m[path]
	if !ok || int64(len(f.text)) > limit {
		return "", false
	}
	return f.text, true
}

// build writes a synthetic trace: a session whose first request read the
// 12k other sessions keep warm and wrote the rest of its 20k prefix, then
// the steps given.
type build struct {
	t0  time.Time
	now time.Time
	tr  cclog.Trace
	n   int
	// prompt is the last request's prompt size.
	prompt int64
}

func newBuild() *build {
	b := &build{t0: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), tr: cclog.Trace{Cwd: "/p", Version: "2.1.332"}}
	b.now = b.t0
	b.user("hello", false)
	b.request(12_000, 24_000, 100)
	return b
}

func (b *build) tick() time.Time {
	b.now = b.now.Add(10 * time.Second)
	b.n++
	return b.now
}

func (b *build) request(read, prompt int64, outBytes int) *importer.Request {
	at := b.tick()
	u := pricing.Usage{CacheRead: read, CacheWrite: prompt - read, Output: int64(outBytes / 4)}
	r := &importer.Request{ID: fmt.Sprintf("m%d", b.n), At: at, Purpose: importer.PurposeConversation, Model: "claude-opus-4-6", Usage: u}
	b.tr.Events = append(b.tr.Events, cclog.TraceEvent{Kind: cclog.TraceRequest, Line: b.n, At: at, Request: r, Bytes: outBytes})
	b.prompt = prompt
	return r
}

func (b *build) user(text string, meta bool) {
	at := b.tick()
	b.tr.Events = append(b.tr.Events, cclog.TraceEvent{Kind: cclog.TraceUser, Line: b.n, At: at, Bytes: len(text), Meta: meta})
}

func (b *build) op(op cclog.FileOp, resultBytes int) {
	at := b.tick()
	ev := cclog.TraceEvent{Kind: cclog.TraceUser, Line: b.n, At: at, Bytes: resultBytes, Files: []cclog.FileOp{op}, Results: 1}
	if op.Tool == "Read" {
		ev.Reads = 1
		ev.ReadBytes = op.Content.Len()
	}
	b.tr.Events = append(b.tr.Events, ev)
}

func lines(n, width int) string {
	var sb strings.Builder
	for i := range n {
		s := fmt.Sprintf("line %d ", i)
		sb.WriteString(s + strings.Repeat("x", max(width-len(s)-1, 0)) + "\n")
	}
	return sb.String()
}

func read(path, text string) cclog.FileOp {
	n := strings.Count(text, "\n") + 1
	return cclog.FileOp{Tool: "Read", Path: path, Content: cclog.TextOf(text), HasContent: true, StartLine: 1, NumLines: n, TotalLines: n}
}

func write(path, text string) cclog.FileOp {
	return cclog.FileOp{Tool: "Write", Path: path, Content: cclog.TextOf(text), HasContent: true}
}

func fileNames(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path+":"+f.Cap)
	}
	return out
}

// The restored-file rules, each on its own.
func TestRestoredFiles(t *testing.T) {
	small := lines(40, 40) // ~1.6 kB: whole
	cases := []struct {
		name  string
		steps func(b *build)
		files memFiles // nil: absent
		want  []string
	}{
		{"five most recent by mtime: a written file outranks later reads", func(b *build) {
			b.op(write("/p/w.go", small), 100)
			for i := range 5 {
				b.op(read(fmt.Sprintf("/p/r%d.go", i), small), len(small))
			}
		}, nil, []string{"/p/w.go:whole", "/p/r4.go:whole", "/p/r3.go:whole", "/p/r2.go:whole", "/p/r1.go:whole"}},
		{"at most five", func(b *build) {
			for i := range 7 {
				b.op(write(fmt.Sprintf("/p/w%d.go", i), small), 100)
			}
		}, nil, []string{"/p/w6.go:whole", "/p/w5.go:whole", "/p/w4.go:whole", "/p/w3.go:whole", "/p/w2.go:whole"}},
		{"over the 5,000-token cap: a note", func(b *build) {
			b.op(read("/p/big.go", lines(800, 40)), 100) // ~32 kB
		}, nil, []string{"/p/big.go:note"}},
		{"near the cap: ambiguous", func(b *build) {
			b.op(read("/p/mid.go", lines(500, 40)), 100) // 20 kB ≈ 5,000 tokens at 4 B
		}, nil, []string{"/p/mid.go:ambiguous"}},
		{"CLAUDE.md and the plan file are never restored", func(b *build) {
			b.op(read("/p/CLAUDE.md", small), 100)
			b.op(write("/home/u/.claude/plans/plan.md", small), 100)
			b.op(read("/p/a.go", small), 100)
		}, nil, []string{"/p/a.go:whole"}},
		{"an edit applies to originalFile", func(b *build) {
			op := cclog.FileOp{Tool: "Edit", Path: "/p/e.go", Content: cclog.TextOf("a\nOLD\nc\n"), HasContent: true, Edits: []cclog.Edit{{Old: "OLD", New: lines(60, 40)}}}
			b.op(op, 100)
		}, nil, []string{"/p/e.go:whole"}},
		{"partial reads only: scaled from what was seen", func(b *build) {
			part := lines(100, 40)
			b.op(cclog.FileOp{Tool: "Read", Path: "/p/huge.go", Content: cclog.TextOf(part), HasContent: true, StartLine: 1, NumLines: 100, TotalLines: 2000}, len(part))
		}, nil, []string{"/p/huge.go:note"}},
		{"on disk: the disk's text and mtime decide", func(b *build) {
			b.op(write("/p/a.go", small), 100)
			b.op(write("/p/b.go", small), 100)
		}, memFiles{
			"/p/a.go": {lines(800, 40), time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, // grown on disk, touched last
			"/p/b.go": {small, time.Date(2026, 3, 1, 10, 0, 30, 0, time.UTC)},
		}, []string{"/p/a.go:note", "/p/b.go:whole"}},
		{"files not on this disk: from the transcript, after those on disk", func(b *build) {
			b.op(write("/p/elsewhere.go", lines(800, 40)), 100)
			b.op(write("/p/here.go", small), 100)
		}, memFiles{"/p/here.go": {small, time.Date(2026, 3, 1, 12, 1, 0, 0, time.UTC)}}, []string{"/p/here.go:whole", "/p/elsewhere.go:note"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuild()
			c.steps(b)
			var env Env
			if c.files != nil {
				env.Files = c.files
			}
			p := Predict(&b.tr, nil, env, importer.TriggerAuto, b.now)
			if got := strings.Join(fileNames(p.Files), " "); got != strings.Join(c.want, " ") {
				t.Fatalf("restored %s, want %s", got, strings.Join(c.want, " "))
			}
			fp := p.Part("files")
			var sum int64
			for _, f := range p.Files {
				sum += f.Tokens
				if f.Cap == CapNote && f.Tokens > 200 {
					t.Errorf("%s: a note of %d tokens", f.Path, f.Tokens)
				}
			}
			if fp.Tokens != sum || fp.Low > fp.Tokens || fp.High < fp.Tokens {
				t.Errorf("files part %+v, files sum %d", fp, sum)
			}
			for _, f := range p.Files {
				if f.Cap == CapAmbiguous && fp.Low >= fp.High {
					t.Errorf("an ambiguous file leaves no band: %+v", fp)
				}
			}
		})
	}
}

// A file's whole text costs its numbered rendering at the session's own
// bytes per token, calibrated from requests that added mostly Read results.
func TestCalibration(t *testing.T) {
	b := newBuild()
	for i := range 3 {
		text := lines(100, 40)
		b.op(read(fmt.Sprintf("/p/c%d.go", i), text), len(text)+900) // + the "%6d→" prefixes
		// the request after adds 4,900 bytes at 3 B/token + the last output
		b.request(b.prompt, b.prompt+4900/3+25, 100)
	}
	p := Predict(&b.tr, nil, Env{}, importer.TriggerAuto, b.now)
	if !strings.Contains(p.Part("files").Note, "3.00 B/token (3 samples)") {
		t.Fatalf("calibration: %s", p.Part("files").Note)
	}
	f := p.Files[0]
	want := (4000.0 + 101*9 + float64(len(f.Path)) + 150) / 3
	if math.Abs(float64(f.Tokens)-want) > 2 {
		t.Errorf("file tokens %d, want ≈ %.0f", f.Tokens, want)
	}
}

// The summary: a default with a wide band until the project has folded;
// then what its folds measured, with a narrow band. The base: from the
// first request, then learned from the billed fold.
func TestLearning(t *testing.T) {
	h := NewHistory()
	b := newBuild()
	b.op(write("/p/a.go", lines(40, 40)), 100)
	b.request(20_000, 170_000, 400)
	fold := &importer.Fold{Trigger: importer.TriggerAuto, PreTokens: 170_500}
	b.tr.Events = append(b.tr.Events, cclog.TraceEvent{Kind: cclog.TraceBoundary, At: b.tick(), Fold: fold})
	b.tr.Events = append(b.tr.Events, cclog.TraceEvent{Kind: cclog.TraceSummary, At: b.tick(), Bytes: 16_000})
	actual := int64(9_000)
	fold.ActualCold = &actual
	b.request(20_000, 29_000, 100)
	b.op(write("/p/b.go", lines(40, 40)), 100)
	b.request(29_000, 150_000, 100)

	folds := Replay(&b.tr, h, Env{})
	if len(folds) != 1 {
		t.Fatalf("%d folds", len(folds))
	}
	first := folds[0].Prediction.Part("summary")
	if first.Tokens != defaultSummary || first.Low != defaultSummaryLow || first.High != defaultSummaryHigh {
		t.Errorf("first summary %+v, want the default", first)
	}
	if base := folds[0].Prediction.Part("base"); !strings.Contains(base.Note, "first request") {
		t.Errorf("first base %+v", base)
	}
	if folds[0].Summary != 4_000 {
		t.Errorf("summary measured %d, want 4000", folds[0].Summary)
	}
	p := Predict(&b.tr, NewHistory(), Env{}, importer.TriggerAuto, b.now)
	if s := p.Part("summary"); s.Tokens != 4_000 || s.Low != 3_400 || s.High != 4_600 {
		t.Errorf("learned summary %+v, want 4000 [3400, 4600]", s)
	}
	base := p.Part("base")
	wantBase := actual - 4_000 - folds[0].Prediction.Part("files").Tokens
	if base.Tokens != wantBase || !strings.Contains(base.Note, "learned") {
		t.Errorf("learned base %+v, want %d", base, wantBase)
	}
	// After the fold only the files restored whole are candidates, and
	// the prefix is what the request after the fold read.
	if got := fileNames(p.Files); len(got) != 2 {
		t.Errorf("files after the fold: %v", got)
	}
	if p.Prefix != 20_000 {
		t.Errorf("prefix %d", p.Prefix)
	}
	if p.High > 2*p.Low {
		t.Errorf("band [%d, %d] wider than 2×", p.Low, p.High)
	}
}

// The summary call: warm, it reads the last prompt and writes the tail;
// idle past the TTL it writes everything; a session writing 1-hour entries
// has a 1-hour TTL.
func TestSummaryCall(t *testing.T) {
	b := newBuild()
	b.request(20_000, 120_000, 4_000)
	last := b.now
	b.user(strings.Repeat("y", 4_000), false)
	cases := []struct {
		name    string
		idle    time.Duration
		oneHour bool
		warm    bool
		expired time.Duration
	}{
		{"warm", 2 * time.Minute, false, true, 0},
		{"idle past the TTL", 14 * time.Minute, false, false, 9 * time.Minute},
		{"1-hour TTL, expired", 75 * time.Minute, true, false, 15 * time.Minute},
		{"1-hour cache still warm", 14 * time.Minute, true, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := b.tr
			tr.Events = append([]cclog.TraceEvent(nil), b.tr.Events...)
			if c.oneHour {
				r := *tr.Events[0+2].Request
				r.Usage.CacheWrite1h, r.Usage.CacheWrite = r.Usage.CacheWrite, 0
				tr.Events[2].Request = &r
			}
			p := Predict(&tr, nil, Env{}, importer.TriggerAuto, last.Add(c.idle))
			call := p.Call
			if call.Warm != c.warm || call.Expired() != c.expired {
				t.Fatalf("%+v: warm %v expired %s", call, call.Warm, call.Expired())
			}
			tail := int64(1_000 + 4_000/4 + defaultInstruction) // output + pending + instruction
			if c.warm {
				if call.Read != 120_000 || call.Write != tail {
					t.Errorf("warm call read %d write %d, want 120000 / %d", call.Read, call.Write, tail)
				}
			} else if call.Read != 0 || call.Write != 120_000+tail {
				t.Errorf("cold call read %d write %d, want 0 / %d", call.Read, call.Write, 120_000+tail)
			}
		})
	}
}

// A manual compaction adds its own output: a default until the project
// has shown one beside a known base.
func TestManualExtra(t *testing.T) {
	b := newBuild()
	a := Predict(&b.tr, nil, Env{}, importer.TriggerAuto, b.now)
	m := Predict(&b.tr, nil, Env{}, importer.TriggerManual, b.now)
	if m.Cold != a.Cold+manualExtra || m.Low != a.Low || m.High != a.High+manualHigh {
		t.Errorf("manual %d [%d, %d], auto %d [%d, %d]", m.Cold, m.Low, m.High, a.Cold, a.Low, a.High)
	}
	// An automatic fold teaches the base, then a manual one its extra.
	fold := func(trigger string, actual int64) {
		b.request(20_000, 170_000, 400)
		f := &importer.Fold{Trigger: trigger, PreTokens: 170_500, ActualCold: &actual}
		b.tr.Events = append(b.tr.Events, cclog.TraceEvent{Kind: cclog.TraceBoundary, At: b.tick(), Fold: f})
		b.tr.Events = append(b.tr.Events, cclog.TraceEvent{Kind: cclog.TraceSummary, At: b.tick(), Bytes: 16_000})
		b.request(20_000, 20_000+actual, 100)
	}
	fold(importer.TriggerAuto, 7_000)   // base 3,000
	fold(importer.TriggerManual, 8_500) // extra 1,500
	p := Predict(&b.tr, nil, Env{}, importer.TriggerManual, b.now)
	if x := p.Part("manual"); x.Tokens != 1_500 || !strings.Contains(x.Note, "learned") {
		t.Errorf("manual part %+v, want the 1,500 learned", x)
	}
	if x := p.Part("base"); x.Tokens != 3_000 {
		t.Errorf("base %+v, want 3,000 (the manual fold teaches no base)", x)
	}
}

// The base from CLAUDE.md on disk when the session shows no first request
// to measure it from.
func TestBaseFromClaudeMD(t *testing.T) {
	tr := cclog.Trace{Cwd: "/home/u/p"}
	files := memFiles{"/home/u/p/CLAUDE.md": {strings.Repeat("z", 4_000), time.Now()}, "/home/u/.claude/CLAUDE.md": {strings.Repeat("z", 2_000), time.Now()}}
	p := Predict(&tr, nil, Env{Files: files, Home: "/home/u"}, importer.TriggerAuto, time.Now())
	if base := p.Part("base"); base.Low != 1_500 || base.Tokens != 2_000 {
		t.Errorf("base %+v, want 1500 of CLAUDE.md + hooks", base)
	}
	p = Predict(&tr, nil, Env{}, importer.TriggerAuto, time.Now())
	if base := p.Part("base"); base.Tokens != defaultBase {
		t.Errorf("base %+v, want the default", base)
	}
}

// The cached prefix: a restart's read when it read more than the first
// request (which could read only what other sessions keep warm); else not
// measured, and the base is not taken from the first request.
func TestPrefixFromARestart(t *testing.T) {
	for _, c := range []struct {
		name     string
		restart  int64
		prefix   int64
		measured bool
	}{
		{"a restart reads the session's prefix", 21_000, 21_000, true},
		{"a restart that reads only the global part", 12_000, 12_000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &build{t0: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), tr: cclog.Trace{Cwd: "/p"}}
			b.now = b.t0
			b.user("hello", false)
			b.request(12_000, 26_000, 100) // read the global part, wrote the rest
			b.request(26_000, 60_000, 100)
			b.request(c.restart, 61_000, 100) // after an idle gap
			p := Predict(&b.tr, nil, Env{}, importer.TriggerAuto, b.now)
			base := p.Part("base")
			if p.Prefix != c.prefix || strings.Contains(base.Note, "first request") != c.measured {
				t.Errorf("prefix %d, base %+v", p.Prefix, base)
			}
		})
	}
}
