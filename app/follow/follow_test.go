package follow

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"tollgate/app/config"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/claudecode/testcorpus"
	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/harness/gemini"
	"tollgate/app/harness/opencode/ocdb"
	"tollgate/app/importer"
	"tollgate/app/imports"
	"tollgate/storage/sqlite"
)

// world is a database, the settings to price with and a harness folder.
type world struct {
	db       *sqlite.DB
	settings *config.Settings
	root     string // a Claude Code projects folder
	dbPath   string

	mu     sync.Mutex
	events []string
	hist   []History
}

func newWorld(t testing.TB) *world {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.LoadConfig(filepath.Join(dir, "home"), config.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{settings: config.NewSettings(cfg), root: filepath.Join(dir, "claude", "projects"), dbPath: filepath.Join(dir, "tollgate.db")}
	if w.db, err = sqlite.Open(context.Background(), w.dbPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.db.Close() })
	return w
}

func (w *world) publish(event string, data any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, event)
	if h, ok := data.(History); ok {
		w.hist = append(w.hist, h)
	}
}

// start follows the world's root with no safety-net rescan to speak of:
// whatever the tests see arrived by inotify.
func (w *world) start(t testing.TB, opts Options) *Follower {
	t.Helper()
	opts.DB, opts.Settings, opts.Publish = w.db, w.settings, w.publish
	if opts.Roots == nil {
		opts.Roots = []imports.Root{{Harness: cclog.Name, Dir: w.root}}
	}
	if opts.Rescan == 0 {
		opts.Rescan = time.Hour
	}
	f, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// totals are the database's requests and cost.
func totals(t testing.TB, db *sqlite.DB) (int64, float64) {
	t.Helper()
	ts, err := db.Totals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	var cost float64
	for _, x := range ts {
		n += x.Requests
		cost += x.CostUSD
	}
	return n, cost
}

// waitFor polls cond until it holds or 20 s pass (a loaded machine under
// the race detector is slow; the figure that matters is the benchmark's).
func waitFor(t testing.TB, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 20*time.Second {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("waited 20 s for %s", what)
	return 0
}

// reference imports files into a database of their own: what following
// them must end with.
func reference(t testing.TB, w *world, root string) (int64, float64) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ref.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := imports.Files(context.Background(), db, w.settings, []imports.Source{{Path: root, Harness: cclog.Name}}, nil); err != nil {
		t.Fatal(err)
	}
	return totals(t, db)
}

// corpus writes a small generated Claude Code corpus (sessions with
// subagents and folds) into a folder of its own and returns its projects
// folder.
func corpus(t testing.TB, bytes, sessionBytes int64, seed uint64) (string, testcorpus.Stats) {
	t.Helper()
	dir := t.TempDir()
	st, err := testcorpus.ClaudeCode(dir, testcorpus.Options{Bytes: bytes, SessionBytes: sessionBytes, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "projects"), st
}

// mainTranscript is the corpus's first main transcript.
func mainTranscript(t testing.TB, projects string) string {
	t.Helper()
	var found string
	filepath.WalkDir(projects, func(p string, d fs.DirEntry, err error) error {
		if err == nil && found == "" && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && cclog.Role(p) == importer.PurposeConversation {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatal("the corpus has no main transcript")
	}
	return found
}

func splitLines(b []byte) [][]byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestAppendedLinesAreRecordedAsTheyAreWritten(t *testing.T) {
	w := newWorld(t)
	src, _ := corpus(t, 1, 400<<10, 1)
	transcript := mainTranscript(t, src)
	body, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(body)
	if err := os.MkdirAll(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	f := w.start(t, Options{})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })

	// A project folder and a transcript appear after the start: the new
	// folder is watched and the transcript's first half imported.
	project := filepath.Join(w.root, "-home-user-live")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(project, filepath.Base(transcript))
	half := len(lines) / 2
	if err := os.WriteFile(live, bytes.Join(lines[:half], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new transcript", func() bool { n, _ := totals(t, w.db); return n > 0 })

	// Then it grows a line at a time, the way Claude Code writes it.
	out, err := os.OpenFile(live, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var slowest time.Duration
	appended := 0
	for _, line := range lines[half:] {
		before, _ := totals(t, w.db)
		if _, err := out.Write(line); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(line, []byte(`"usage"`)) || !bytes.Contains(line, []byte(`"type":"assistant"`)) {
			continue
		}
		// An assistant line with usage may be a streamed snapshot of a
		// message already counted: wait only when the file was read to
		// its end, then look at whether it brought a request.
		size := fileSize(t, live)
		took := waitFor(t, "the appended line to be read", func() bool {
			st, ok, _ := w.db.ImportStateOf(context.Background(), live)
			return ok && st.Offset == size
		})
		if n, _ := totals(t, w.db); n > before {
			appended++
			slowest = max(slowest, took)
		}
	}
	if appended == 0 {
		t.Fatal("no appended line brought a request")
	}
	t.Logf("%d appended requests recorded, the slowest after %v", appended, slowest)

	n, cost := totals(t, w.db)
	wantN, wantCost := reference(t, w, project)
	if n != wantN || !near(cost, wantCost) {
		t.Errorf("following stored %d requests, $%.6f; importing the finished file stores %d, $%.6f", n, cost, wantN, wantCost)
	}
	st := f.Status()
	if len(st.Folders) != 1 || st.Folders[0].Files != 1 || st.Folders[0].Last == nil || st.Folders[0].Last.File != live || st.Folders[0].Watched < 2 {
		t.Fatalf("status %+v", st.Folders)
	}
	// The last line read, counted as the file grew, reaches its last line
	// (the lines after the last request are read too).
	waitFor(t, "the last line", func() bool {
		last := f.Status().Folders[0].Last
		return last != nil && last.Line == int64(len(lines))
	})
	w.mu.Lock()
	imported := slices.Contains(w.events, EventImported)
	w.mu.Unlock()
	if !imported {
		t.Error("no logs.imported event went out")
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestTruncatedAndRotatedTranscriptsAreReadAgain(t *testing.T) {
	w := newWorld(t)
	src, _ := corpus(t, 1, 300<<10, 2)
	body, err := os.ReadFile(mainTranscript(t, src))
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(body)
	project := filepath.Join(w.root, "-home-user-rot")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(project, "11111111-2222-3333-4444-555555555555.jsonl")
	if err := os.WriteFile(log, body, 0o644); err != nil {
		t.Fatal(err)
	}
	f := w.start(t, Options{})
	full, fullCost := reference(t, w, project)
	waitFor(t, "the history", func() bool { n, _ := totals(t, w.db); return n == full && f.Status().History.State == HistoryDone })

	// Truncated and written again shorter: imported again from its start,
	// and the rows it no longer has are not kept twice.
	if err := os.WriteFile(log, bytes.Join(lines[:len(lines)/3], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	size := fileSize(t, log)
	waitFor(t, "the truncated file", func() bool {
		st, ok, _ := w.db.ImportStateOf(context.Background(), log)
		return ok && st.Offset == size
	})

	// Rotated: moved away and a new file of the same name written.
	if err := os.Rename(log, log+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, body, 0o644); err != nil {
		t.Fatal(err)
	}
	size = fileSize(t, log)
	waitFor(t, "the rotated file", func() bool {
		st, ok, _ := w.db.ImportStateOf(context.Background(), log)
		return ok && st.Offset == size
	})
	if n, cost := totals(t, w.db); n != full || !near(cost, fullCost) {
		t.Errorf("after truncation and rotation: %d requests, $%.6f; want %d, $%.6f", n, cost, full, fullCost)
	}
	waitFor(t, "the last line of the rotated log", func() bool {
		last := f.Status().Folders[0].Last
		return last != nil && last.Line == int64(len(lines))
	})
}

func TestAFolderThatAppearsLaterIsFollowed(t *testing.T) {
	w := newWorld(t)
	// Claude Code is installed after tollgate started: only ~/.claude exists.
	if err := os.MkdirAll(filepath.Dir(w.root), 0o755); err != nil {
		t.Fatal(err)
	}
	f := w.start(t, Options{})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })
	if st := f.Status(); st.Folders[0].Exists {
		t.Fatalf("status says %s exists", w.root)
	}
	src, stats := corpus(t, 1<<20, 200<<10, 3)
	// The whole projects folder arrives at once (a rename, as a restore
	// would): what it holds is a history, imported with its progress.
	if err := os.Rename(src, w.root); err != nil {
		t.Fatal(err)
	}
	want, _ := reference(t, w, w.root)
	waitFor(t, "the folder that appeared", func() bool { n, _ := totals(t, w.db); return n == want })
	waitFor(t, "its history", func() bool { return f.Status().History.State == HistoryDone })
	h := f.Status().History
	if len(h.Found) != 1 || h.Found[0].Sessions != stats.Sessions || h.Found[0].Bytes != stats.Bytes || h.FinishedAt == nil || h.Progress.Requests == 0 {
		t.Errorf("the history of the folder that appeared: %+v; the corpus %+v", h, stats)
	}
	if st := f.Status(); !st.Folders[0].Exists || st.Folders[0].Files != stats.Files {
		t.Errorf("status %+v", st.Folders[0])
	}
}

func TestWatchOffFollowsNothing(t *testing.T) {
	if roots := Roots(config.Watch{Enabled: false, Folders: []config.WatchFolder{{Path: "/srv/logs"}}}, func(string) string { return "" }, "/home/u"); roots != nil {
		t.Errorf("watch off: roots %v", roots)
	}
	roots := Roots(config.Watch{Enabled: true, Folders: []config.WatchFolder{{Path: "/srv/logs", Harness: "codex"}, {Path: "/home/u/.codex/sessions"}}},
		func(string) string { return "" }, "/home/u")
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, r.Harness+":"+r.Dir)
	}
	for _, want := range []string{"claude-code:/home/u/.claude/projects", "codex:/home/u/.codex/sessions", "codex:/srv/logs"} {
		if !slices.Contains(dirs, want) {
			t.Errorf("roots %v lack %s", dirs, want)
		}
	}
	if strings.Count(strings.Join(dirs, " "), "/home/u/.codex/sessions") != 1 {
		t.Errorf("a configured folder that is a harness's own is followed twice: %v", dirs)
	}
	var off *Follower
	if st := off.Status(); st.Enabled || len(st.Folders) != 0 {
		t.Errorf("no follower: status %+v", st)
	}
}

func TestHistorySaysWhatItFoundAndReportsProgress(t *testing.T) {
	w := newWorld(t)
	src, stats := corpus(t, 3<<20, 300<<10, 4)
	if err := os.MkdirAll(filepath.Dir(w.root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, w.root); err != nil {
		t.Fatal(err)
	}
	want, wantCost := reference(t, w, w.root)
	f := w.start(t, Options{ChunkBytes: 256 << 10})
	waitFor(t, "the history", func() bool { return f.Status().History.State == HistoryDone })
	h := f.Status().History
	if len(h.Found) != 1 || h.Found[0].Harness != cclog.Name || h.Found[0].Sessions != stats.Sessions || h.Found[0].Files != stats.Files || h.Found[0].Bytes != stats.Bytes {
		t.Errorf("found %+v; the corpus has %+v", h.Found, stats)
	}
	if n, cost := totals(t, w.db); n != want || !near(cost, wantCost) {
		t.Errorf("history stored %d requests, $%.6f; want %d, $%.6f", n, cost, want, wantCost)
	}
	var hist []History
	waitFor(t, "the last history event", func() bool { // sent just after the state changes
		w.mu.Lock()
		hist = slices.Clone(w.hist)
		w.mu.Unlock()
		return len(hist) > 0 && hist[len(hist)-1].State == HistoryDone
	})
	if len(hist) < 3 || hist[0].State != HistoryImporting || hist[len(hist)-1].State != HistoryDone {
		t.Fatalf("history events %d, first %+v", len(hist), hist[0])
	}
	for i := 1; i < len(hist); i++ {
		if hist[i].Progress.BytesDone < hist[i-1].Progress.BytesDone || hist[i].Progress.BytesDone > hist[i].Progress.BytesTotal {
			t.Errorf("progress went from %+v to %+v", hist[i-1].Progress, hist[i].Progress)
		}
	}
	if last := hist[len(hist)-1]; last.Progress.BytesDone != stats.Bytes || last.Progress.Requests == 0 || last.FinishedAt == nil {
		t.Errorf("the last event %+v", last)
	}

	// A second start finds nothing new.
	f.Close()
	g := w.start(t, Options{})
	waitFor(t, "the second history", func() bool { return g.Status().History.State == HistoryDone })
	if h := g.Status().History; len(h.Found) != 0 || h.Progress.FilesTotal != 0 {
		t.Errorf("a second start found %+v", h)
	}
}

func TestETA(t *testing.T) {
	if got := eta(500*time.Millisecond, 10, 100); got != -1 {
		t.Errorf("before a second: %v", got)
	}
	if got := eta(2*time.Second, 0, 100); got != -1 {
		t.Errorf("nothing done: %v", got)
	}
	if got := eta(10*time.Second, 25, 100); got != 30 {
		t.Errorf("a quarter in 10 s: %v s left, want 30", got)
	}
}

// The helper process of TestKilledHistoryImportResumes: it follows a root
// until it is killed.
func TestHelperFollowUntilKilled(t *testing.T) {
	dbPath, root := os.Getenv("FOLLOW_HELPER_DB"), os.Getenv("FOLLOW_HELPER_ROOT")
	if dbPath == "" {
		t.Skip("the helper of TestKilledHistoryImportResumes")
	}
	cfg, err := config.LoadConfig(os.Getenv("FOLLOW_HELPER_HOME"), config.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	// Small chunks with a pause: the parent has time to kill it mid-way.
	if _, err := Start(context.Background(), Options{DB: db, Settings: config.NewSettings(cfg), Roots: []imports.Root{{Harness: cclog.Name, Dir: root}},
		ChunkBytes: 1, Pause: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Minute)
	t.Fatal("not killed")
}

func TestKilledHistoryImportResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	w := newWorld(t)
	src, stats := corpus(t, 4<<20, 200<<10, 5)
	want, wantCost := reference(t, w, src)
	w.db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFollowUntilKilled$", "-test.count=1")
	// One core: a chunk is at least one file per core, and on a many-core
	// machine the small corpus would be stored in one chunk, leaving nothing
	// to resume.
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "FOLLOW_HELPER_DB="+w.dbPath, "FOLLOW_HELPER_ROOT="+src, "FOLLOW_HELPER_HOME="+filepath.Join(t.TempDir(), "home"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reader, err := sqlite.Open(context.Background(), w.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	imported := func() int {
		states, _ := reader.ImportStates(context.Background())
		return len(states)
	}
	waitFor(t, "the helper's first files", func() bool { return imported() >= 3 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	done := imported()
	reader.Close()
	if done >= stats.Files {
		t.Fatalf("the helper imported all %d files before it was killed: nothing to resume\n%s", stats.Files, out.String())
	}

	// The next start imports what is left, and only that.
	if w.db, err = sqlite.Open(context.Background(), w.dbPath); err != nil {
		t.Fatal(err)
	}
	f := w.start(t, Options{Roots: []imports.Root{{Harness: cclog.Name, Dir: src}}})
	waitFor(t, "the resumed history", func() bool { return f.Status().History.State == HistoryDone })
	h := f.Status().History
	if h.Progress.FilesTotal != stats.Files-done {
		t.Errorf("the resumed history had %d files to import; %d of %d were stored before the kill", h.Progress.FilesTotal, done, stats.Files)
	}
	if n, cost := totals(t, w.db); n != want || !near(cost, wantCost) {
		t.Errorf("after a kill -9 and a resume: %d requests, $%.6f; an import in one go stores %d, $%.6f", n, cost, want, wantCost)
	}
	t.Logf("killed after %d of %d files; resumed with %d", done, stats.Files, h.Progress.FilesTotal)
}

// BenchmarkAppendToRecorded: how long an appended request line takes to be
// in the database (the target is within 1 s): a transcript's lines are
// appended one at a time, each waited for until the follower has read the
// file to its end; ms/line is the mean over the lines that brought a
// request.
func BenchmarkAppendToRecorded(b *testing.B) {
	w := newWorld(b)
	src, _ := corpus(b, 1, 400<<10, 6)
	body, err := os.ReadFile(mainTranscript(b, src))
	if err != nil {
		b.Fatal(err)
	}
	lines := splitLines(body)
	if err := os.MkdirAll(w.root, 0o755); err != nil {
		b.Fatal(err)
	}
	w.start(b, Options{})
	var waited, slowest time.Duration
	recorded := 0
	for b.Loop() {
		live := filepath.Join(w.root, "p", fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", recorded))
		os.MkdirAll(filepath.Dir(live), 0o755)
		out, err := os.OpenFile(live, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range lines {
			before, _ := totals(b, w.db)
			start := time.Now()
			out.Write(line)
			if !bytes.Contains(line, []byte(`"usage"`)) {
				continue
			}
			size := fileSize(b, live)
			waitFor(b, "the line", func() bool {
				st, ok, _ := w.db.ImportStateOf(context.Background(), live)
				return ok && st.Offset == size
			})
			if n, _ := totals(b, w.db); n > before {
				took := time.Since(start)
				waited += took
				slowest = max(slowest, took)
				recorded++
			}
		}
		out.Close()
	}
	b.ReportMetric(float64(waited.Microseconds())/1000/float64(max(recorded, 1)), "ms/line")
	b.ReportMetric(float64(slowest.Microseconds())/1000, "ms-slowest")
}

// BenchmarkHistoryImport: the first-start history import of a generated
// Claude Code corpus (64 MB, 3 MB sessions with folds, subagents) against
// importing it in one imports.Files call, as `tollgate import` does: what
// the chunking that keeps the gate's writes short costs, by chunk size.
// Wall and CPU time (this process's rusage) of both, alternating in one
// run; history/plain is the ratio of the wall times.
func BenchmarkHistoryImport(b *testing.B) {
	src, _ := corpus(b, 64<<20, 3<<20, 17)
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, chunk := range []int64{2 << 20, 8 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("chunk=%dMB", chunk>>20), func(b *testing.B) {
			var history, plain, historyCPU, plainCPU time.Duration
			for b.Loop() {
				w := newWorld(b)
				start, c := time.Now(), cpu()
				if _, err := imports.Files(context.Background(), w.db, w.settings, []imports.Source{{Path: src, Harness: cclog.Name}}, nil); err != nil {
					b.Fatal(err)
				}
				plain, plainCPU = plain+time.Since(start), plainCPU+cpu()-c

				w = newWorld(b)
				start, c = time.Now(), cpu()
				f, err := Start(context.Background(), Options{DB: w.db, Settings: w.settings, Roots: []imports.Root{{Harness: cclog.Name, Dir: src}},
					Rescan: time.Hour, ChunkBytes: chunk})
				if err != nil {
					b.Fatal(err)
				}
				for f.Status().History.State != HistoryDone {
					time.Sleep(time.Millisecond)
				}
				history, historyCPU = history+time.Since(start), historyCPU+cpu()-c
				f.Close()
			}
			n := float64(b.N)
			b.ReportMetric(plain.Seconds()/n, "s-plain")
			b.ReportMetric(history.Seconds()/n, "s-history")
			b.ReportMetric(plainCPU.Seconds()/n, "cpu-s-plain")
			b.ReportMetric(historyCPU.Seconds()/n, "cpu-s-history")
			b.ReportMetric(history.Seconds()/plain.Seconds(), "history/plain")
		})
	}
}

// A real Codex rollout (../shared/data/codex) written into a day folder
// that Codex creates the same moment (sessions/YYYY/MM/DD): the new
// folders are watched and the rollout read as it grows.
func TestCodexRolloutInANewDayFolder(t *testing.T) {
	w, body, sessions := codexWorld(t)
	real := filepath.Join("..", "..", "..", "shared", "data", "codex", "crud.jsonl")
	f := w.start(t, Options{Roots: []imports.Root{{Harness: cxlog.Name, Dir: sessions}}})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })

	day := filepath.Join(sessions, "2026", "02", "01")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(day, "rollout-2026-02-01T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
	lines := splitLines(body)
	if err := os.WriteFile(rollout, bytes.Join(lines[:len(lines)/2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not a rollout: Codex keeps other files there too.
	if err := os.WriteFile(filepath.Join(day, "notes.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range lines[len(lines)/2:] {
		out.Write(line)
	}
	out.Close()
	size := fileSize(t, rollout)
	waitFor(t, "the rollout", func() bool {
		st, ok, _ := w.db.ImportStateOf(context.Background(), rollout)
		return ok && st.Offset == size
	})
	wantDB, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ref.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer wantDB.Close()
	if _, err := imports.Files(context.Background(), wantDB, w.settings, []imports.Source{{Path: real, Harness: cxlog.Name}}, nil); err != nil {
		t.Fatal(err)
	}
	want, wantCost := totals(t, wantDB)
	if n, cost := totals(t, w.db); n != want || want == 0 || !near(cost, wantCost) {
		t.Errorf("followed %d requests, $%.6f; the rollout imported at once: %d, $%.6f", n, cost, want, wantCost)
	}
	// The day's folder is watched once its watch is added, which may come
	// after the scan that found the rollout in it (the test read the
	// status at once and failed under load).
	waitFor(t, "1 rollout and 4 folders watched (sessions, year, month, day)", func() bool {
		st := f.Status().Folders[0]
		return st.Files == 1 && st.Watched == 4
	})
}

// A folder made inside a new one between the walk that listed the new
// folder's tree and the watch on it sends no event (mkdir -p of Codex's
// year/month/day: the day can come after the walk listed the month, and
// before the month's watch): the tree is walked again once its watches
// are in place, so a rollout written into the day later is followed at
// once, not at the next minute's rescan.
func TestAFolderMadeWhileItsParentIsWatchedIsWatched(t *testing.T) {
	w, body, sessions := codexWorld(t)
	year := filepath.Join(sessions, "2026")
	month := filepath.Join(year, "02")
	day := filepath.Join(month, "01")
	var made atomic.Bool
	testHookWalked = func(dir string) {
		// The walk listed 2026 and 02; the day comes now, before the
		// watches on them.
		if dir == year && dirExists(month) && made.CompareAndSwap(false, true) {
			if err := os.Mkdir(day, 0o755); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testHookWalked = nil }) // after the follower stops (cleanups run last first)
	f := w.start(t, Options{Roots: []imports.Root{{Harness: cxlog.Name, Dir: sessions}}})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })
	// 2026/02 arrives whole (one event, its month already in it when the
	// walk lists it): made elsewhere and moved in.
	staging := filepath.Join(t.TempDir(), "2026")
	if err := os.MkdirAll(filepath.Join(staging, "02"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staging, year); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the day folder made between the walk and the watches", made.Load)
	waitFor(t, "4 folders watched (sessions, year, month, day)", func() bool { return f.Status().Folders[0].Watched == 4 })
	rollout := filepath.Join(day, "rollout-2026-02-01T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")
	if err := os.WriteFile(rollout, body, 0o644); err != nil {
		t.Fatal(err)
	}
	size := fileSize(t, rollout)
	waitFor(t, "the rollout in the day folder", func() bool {
		st, ok, _ := w.db.ImportStateOf(context.Background(), rollout)
		return ok && st.Offset == size
	})
}

// codexWorld is a world with an empty Codex sessions folder, and the real
// rollout of ../shared/data/codex (the test is skipped without it).
func codexWorld(t *testing.T) (w *world, rollout []byte, sessions string) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "data", "codex", "crud.jsonl"))
	if err != nil {
		t.Skip("no ../shared/data/codex:", err)
	}
	w = newWorld(t)
	sessions = filepath.Join(t.TempDir(), "codex", "sessions")
	if err := os.MkdirAll(sessions, 0o755); err != nil {
		t.Fatal(err)
	}
	return w, body, sessions
}

// Claude Code run for the first time after tollgate started: none of
// ~/.claude/projects/<project> exists, and Claude Code makes the folders
// and writes its transcript in one go.
func TestAHarnessRunForTheFirstTimeIsFollowed(t *testing.T) {
	w := newWorld(t)
	user := t.TempDir()
	root := filepath.Join(user, ".claude", "projects")
	f := w.start(t, Options{Roots: []imports.Root{{Harness: cclog.Name, Dir: root}}})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })
	src, _ := corpus(t, 1, 200<<10, 7)
	body, err := os.ReadFile(mainTranscript(t, src))
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, "-home-user-first")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(project, "0b7c3d2e-1111-4222-8333-944455556666.jsonl")
	lines := splitLines(body)
	if err := os.WriteFile(log, bytes.Join(lines[:len(lines)/2], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first transcript", func() bool { n, _ := totals(t, w.db); return n > 0 })
	// And it goes on writing.
	out, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(bytes.Join(lines[len(lines)/2:], nil))
	out.Close()
	want, wantCost := reference(t, w, project)
	waitFor(t, "the rest of it", func() bool { n, _ := totals(t, w.db); return n == want })
	if _, cost := totals(t, w.db); !near(cost, wantCost) {
		t.Errorf("cost $%.6f, want $%.6f", cost, wantCost)
	}
	if st := f.Status().Folders[0]; !st.Exists || st.Files != 1 || st.Watched < 2 {
		t.Errorf("status %+v", st)
	}
}

// OpenCode keeps every session in one SQLite database at the top of its
// folder, beside thousands of snapshot folders that hold no log: the
// follower watches that folder alone and imports what a running OpenCode
// commits (to the write-ahead log first).
// openCodeSchema is OpenCode 1.18's three tables, the columns the importer reads.
const openCodeSchema = "CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL, " +
	"`directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL);" +
	"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);" +
	"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);"

func TestOpenCodeDatabaseIsFollowedWithOneWatch(t *testing.T) {
	w := newWorld(t)
	dir := filepath.Join(t.TempDir(), "opencode")
	for i := range 50 {
		if err := os.MkdirAll(filepath.Join(dir, "snapshot", fmt.Sprint(i), "objects"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "opencode.db")
	oc, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	oc.SetMaxOpenConns(1) // one connection holds the WAL open, as a running OpenCode does
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := oc.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(openCodeSchema)
	at := time.Now().Add(-time.Hour).UnixMilli()
	exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_1', 'p', 's', '/w', 'a title', '1.18.33', ?, ?)", at, at)
	n := 0
	answer := func() {
		n++
		at += 1000
		user, asst := fmt.Sprintf("msg_%04d", 2*n-1), fmt.Sprintf("msg_%04d", 2*n)
		exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, 'ses_1', ?, ?, ?)", user, at, at, `{"role":"user"}`)
		exec("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, 'ses_1', ?, ?, ?)", asst, at+1, at+1,
			fmt.Sprintf(`{"role":"assistant","parentID":%q,"providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":%d,"completed":%d},`+
				`"tokens":{"input":%d,"output":10,"reasoning":0,"cache":{"read":%d,"write":0}}}`, user, at+1, at+2, 100*n, 1000*n))
		exec("UPDATE session SET time_updated = ? WHERE id = 'ses_1'", at+2)
	}
	answer()
	requests := func() int64 {
		s, _ := w.db.Session(context.Background(), importer.SessionID(ocdb.Harness, "ses_1"))
		return s.Requests
	}
	f := w.start(t, Options{Roots: []imports.Root{{Harness: ocdb.Harness, Dir: dir}}})
	waitFor(t, "the history", func() bool { return requests() == 1 })
	// Written while followed: the WAL grows, the database file may not.
	answer()
	answer()
	waitFor(t, "the answers OpenCode committed", func() bool { return requests() == 3 })
	st := f.Status().Folders[0]
	if st.Watched != 1 || st.Files != 1 {
		t.Errorf("status %+v: want the database's folder alone watched, one file", st)
	}
}

// The follower's filter for one file is Walk's: Gemini CLI's tmp folder
// holds other .jsonl files beside its chats.
func TestWantedMatchesWalk(t *testing.T) {
	for path, want := range map[string]bool{
		"/h/.gemini/tmp/p/chats/session-1.jsonl":   true,
		"/h/.gemini/tmp/p/chats/parent/sub.jsonl":  true,
		"/h/.gemini/tmp/p/logs.jsonl":              false,
		"/h/.gemini/tmp/p/checkpoints/state.jsonl": false,
	} {
		if got := imports.IsLog(gemini.Harness, path); got != want {
			t.Errorf("imports.IsLog(gemini, %s) = %v, want %v", path, got, want)
		}
	}
	if !imports.IsLog(cxlog.Name, "/h/.codex/sessions/2026/01/01/rollout-x.jsonl") || imports.IsLog(cxlog.Name, "/h/.codex/sessions/notes.jsonl") {
		t.Error("codex rollouts")
	}
}

// ~/.claude/projects as a symlink (dotfiles, another disk), and a second
// name for the same folder: followed where it leads, once.
func TestASymlinkedRootIsFollowedOnce(t *testing.T) {
	w := newWorld(t)
	src, _ := corpus(t, 1, 400<<10, 1)
	real := filepath.Join(t.TempDir(), "disk", "projects")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, real); err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	one, two := filepath.Join(links, "claude-projects"), filepath.Join(links, "config-claude-projects")
	for _, l := range []string{one, two} {
		if err := os.Symlink(real, l); err != nil {
			t.Fatal(err)
		}
	}
	want, wantCost := reference(t, w, real)
	f := w.start(t, Options{Roots: []imports.Root{{Harness: cclog.Name, Dir: one}, {Harness: cclog.Name, Dir: two}}})
	waitFor(t, "the history", func() bool { return f.Status().History.State == HistoryDone })
	if n, cost := totals(t, w.db); n != want || want == 0 || !near(cost, wantCost) {
		t.Fatalf("followed %d requests, $%.6f; imported at once: %d, $%.6f", n, cost, want, wantCost)
	}
	if st := f.Status(); len(st.Folders) != 1 || st.Folders[0].Watched == 0 {
		t.Fatalf("status %+v: want one folder, watched", st.Folders)
	}
}

// The root is deleted, then comes back (a restore): followed again at
// once, not only at the 10-minute rescan.
func TestARootDeletedAndRecreatedIsFollowedAgain(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(w.root, 0o755); err != nil {
		t.Fatal(err)
	}
	f := w.start(t, Options{})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })
	if err := os.RemoveAll(w.root); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the root's removal", func() bool { return !f.Status().Folders[0].Exists })
	src, _ := corpus(t, 1<<20, 200<<10, 5)
	if err := os.Rename(src, w.root); err != nil {
		t.Fatal(err)
	}
	want, _ := reference(t, w, w.root)
	waitFor(t, "the recreated root's logs", func() bool { n, _ := totals(t, w.db); return n == want && want > 0 })
}

// A root moved away and back (a restore of the same folder) holds logs
// imported before: only what changed while it was away is history; the
// rest is not announced as found again.
func TestARootThatComesBackAnnouncesOnlyWhatChanged(t *testing.T) {
	w := newWorld(t)
	src, stats := corpus(t, 1<<20, 200<<10, 7)
	transcript := mainTranscript(t, src)
	body, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(body)
	half := len(lines) / 2
	if err := os.WriteFile(transcript, bytes.Join(lines[:half], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(w.root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, w.root); err != nil {
		t.Fatal(err)
	}
	f := w.start(t, Options{})
	waitFor(t, "the history", func() bool { return f.Status().History.State == HistoryDone })
	if h := f.Status().History; len(h.Found) != 1 || h.Found[0].Sessions != stats.Sessions {
		t.Fatalf("first history %+v; the corpus %+v", h.Found, stats)
	}

	away := filepath.Join(t.TempDir(), "projects")
	if err := os.Rename(w.root, away); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the root's removal", func() bool { return !f.Status().Folders[0].Exists })
	// While away, one transcript grows.
	grown := filepath.Join(away, strings.TrimPrefix(transcript, src))
	if err := os.WriteFile(grown, body, 0o644); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	before := len(w.hist)
	w.mu.Unlock()
	if err := os.Rename(away, w.root); err != nil {
		t.Fatal(err)
	}
	want, _ := reference(t, w, w.root)
	waitFor(t, "the grown transcript", func() bool { n, _ := totals(t, w.db); return n == want })
	waitFor(t, "the history of the return", func() bool { return f.Status().History.State == HistoryDone })
	w.mu.Lock()
	announced := append([]History(nil), w.hist[before:]...)
	w.mu.Unlock()
	if len(announced) == 0 {
		t.Fatal("the grown transcript was not announced as history")
	}
	if h := announced[0]; len(h.Found) != 1 || h.Found[0].Files != 1 || h.Found[0].Sessions != 1 {
		t.Errorf("the return announced %+v; want the one transcript that grew", h.Found)
	}
}

// The banner counts sessions, not files: a Gemini CLI subagent's file is a
// thread of its parent's session, and OpenCode's one database holds many.
func TestFoundCountsSessionsPerHarness(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "opencode.db")
	oc, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	if _, err := oc.Exec(openCodeSchema); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := oc.Exec("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'p', 's', '/w', 't', '1.18.33', 1, 1)", fmt.Sprint("ses_", i)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	var files []foundFile
	for _, file := range []imports.FileInfo{
		{Harness: gemini.Harness, Path: "/h/.gemini/tmp/p/chats/session-2026-12-01T10-00-abc.jsonl", Size: 10},
		{Harness: gemini.Harness, Path: "/h/.gemini/tmp/p/chats/3f2a9c1e-parent/9d8e7f6a-sub.jsonl", Size: 5},
		{Harness: ocdb.Harness, Path: path, Size: 100},
		{Harness: cxlog.Name, Path: "/h/.codex/sessions/2026/12/01/rollout-x.jsonl", Size: 7},
		{Harness: cclog.Name, Path: "/h/.claude/projects/p/0b5c.jsonl", Size: 3},
		{Harness: cclog.Name, Path: "/h/.claude/projects/p/0b5c/subagents/agent-a1.jsonl", Size: 2},
		{Harness: "", Path: "/logs/x.jsonl", Size: 1},
	} {
		files = append(files, foundFile{file, sessionsIn(ctx, file)})
	}
	got := map[string]Found{}
	for _, fd := range summarize(files).Found {
		got[fd.Harness] = fd
	}
	for harness, want := range map[string]Found{
		gemini.Harness: {Harness: gemini.Harness, Sessions: 1, Files: 2, Bytes: 15},
		ocdb.Harness:   {Harness: ocdb.Harness, Sessions: 3, Files: 1, Bytes: 100},
		cxlog.Name:     {Harness: cxlog.Name, Sessions: 1, Files: 1, Bytes: 7},
		cclog.Name:     {Harness: cclog.Name, Sessions: 1, Files: 2, Bytes: 5},
		"other":        {Harness: "other", Sessions: 0, Files: 1, Bytes: 1},
	} {
		if got[harness] != want {
			t.Errorf("%s: found %+v, want %+v", harness, got[harness], want)
		}
	}
}

// Past MaxWatches the most recently modified folders are watched and the
// rest are left to the rescan; a new folder takes the place of the one
// modified longest ago, and what is written in it arrives by inotify.
func TestWatchesPerRootAreCappedNewestFirst(t *testing.T) {
	w := newWorld(t)
	base := time.Now().Add(-48 * time.Hour)
	var dirs []string
	for i := range 6 {
		d := filepath.Join(w.root, fmt.Sprintf("-home-user-p%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for i, d := range dirs {
		at := base.Add(time.Duration(i) * time.Hour) // p5 is the newest
		if err := os.Chtimes(d, at, at); err != nil {
			t.Fatal(err)
		}
	}
	f := w.start(t, Options{MaxWatches: 4})
	waitFor(t, "the empty history", func() bool { return f.Status().History.State == HistoryDone })
	watchedNow := func() []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []string
		for d := range f.watched {
			out = append(out, filepath.Base(d))
		}
		sort.Strings(out)
		return out
	}
	if got, want := watchedNow(), []string{"-home-user-p3", "-home-user-p4", "-home-user-p5", "projects"}; !slices.Equal(got, want) {
		t.Fatalf("watched %v, want %v (the root and the three newest)", got, want)
	}
	if st := f.Status().Folders[0]; st.Watched != 4 || st.Capped != 3 {
		t.Fatalf("status %+v: want 4 watched, 3 capped", st)
	}

	// A new project: watched at once, in place of p3; its transcript is
	// read without waiting for the rescan (an hour in this test).
	src, _ := corpus(t, 1, 200<<10, 9)
	transcript := mainTranscript(t, src)
	project := filepath.Join(w.root, "-home-user-new")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new folder's watch", func() bool { return slices.Contains(watchedNow(), "-home-user-new") })
	if got, want := watchedNow(), []string{"-home-user-new", "-home-user-p4", "-home-user-p5", "projects"}; !slices.Equal(got, want) {
		t.Fatalf("watched %v, want %v", got, want)
	}
	body, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, filepath.Base(transcript)), body, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new transcript", func() bool { n, _ := totals(t, w.db); return n > 0 })
	if st := f.Status().Folders[0]; st.Watched != 4 || st.Capped != 4 {
		t.Errorf("status %+v: want 4 watched, 4 capped", st)
	}
}
