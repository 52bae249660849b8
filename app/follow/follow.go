// Package follow keeps the dashboard live without a second command: the
// window and `tollgate serve` follow the log folders of every harness on
// the machine (imports.DefaultRoots, plus watch.folders in config.yaml),
// import what exists in the background on start (the history, with its
// progress and an estimate on the event stream), then import each line as
// the harness appends it. Change is noticed by inotify (fsnotify), not by
// rescanning; a slow rescan is only the safety net for a watch the kernel
// refused. Everything is stored through app/imports, whose per-file offsets
// make an interrupted import resume where it stopped
// (ARCHITECTURE.md, "Following the logs").
package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"tollgate/app/config"
	"tollgate/app/importer"
	"tollgate/app/imports"
	"tollgate/storage/sqlite"
)

// Events on the guard's event stream (SSE in the browser, Wails events in
// the window), and the status route.
const (
	// EventHistory carries the first-start import's History.
	EventHistory = "history.progress"
	// EventImported says the logs brought new rows (an Imported): views
	// showing those sessions read them again.
	EventImported = "logs.imported"
	// Route is the status of the following: GET, any reader may call it.
	Route = "GET /v1/follow"
)

// Defaults of Options.
const (
	// DefaultDebounce gathers the writes of a burst (a harness writes a
	// request as several lines) into one import, and bounds how long an
	// appended line waits: the import starts at most this long after the
	// first write.
	DefaultDebounce = 150 * time.Millisecond
	// DefaultRescan is the safety net's period: inotify tells of every
	// change, so the rescan only catches what a refused watch missed.
	DefaultRescan = 10 * time.Minute
	// refusedRescan is the period while some folder has no watch (the
	// kernel's fs.inotify.max_user_watches was reached).
	refusedRescan = time.Minute
	// DefaultChunkBytes bounds one history import call (past one file per
	// core, so the parse stays parallel): each call stores in transactions
	// no larger than its files, so the gate's own writes (a recorded
	// request, a decided rewrite) wait at most one chunk's commit.
	// BenchmarkRecordDuringHistoryImport (app, 3 MB sessions): a request
	// recorded during the import waits ~1-2 ms at the median and 80-145 ms
	// at worst (8 MB chunks of 512 kB sessions: ~110 ms; 2 MB: 35-55 ms).
	// BenchmarkHistoryImport: the chunks cost ~1.2x the CPU of one call.
	DefaultChunkBytes = 2 << 20
	// chunkFiles bounds the files of one history call, for the same reason.
	chunkFiles = 32
	// DefaultMaxWatches bounds the folders watched under one root. inotify
	// watches are a per-user budget every program shares (editors, file
	// managers, sync clients), 8192 on kernels before 5.11; a Claude Code
	// user of some years has a folder per project and one or two per
	// session that ran subagents, and all but the latest never change
	// again. Past the bound the most recently modified folders are watched
	// and the rest are left to the one-minute rescan.
	DefaultMaxWatches = 2048
)

// Options say what to follow and where to store it.
type Options struct {
	DB       *sqlite.DB
	Settings *config.Settings
	// Roots are the folders to follow: the harnesses' own that exist and
	// the configured ones.
	Roots []imports.Root
	// Publish sends an event to the UI; nil sends nothing.
	Publish func(event string, data any)
	Log     *slog.Logger
	// Zero means the Default above.
	Debounce   time.Duration
	Rescan     time.Duration
	ChunkBytes int64
	// Pause is waited between two history chunks (0: none): what lets the
	// gate's writer in under a long history import.
	Pause time.Duration
	// MaxWatches bounds the folders watched under one root (0:
	// DefaultMaxWatches).
	MaxWatches int
}

// Roots are the folders tollgate follows for this configuration: the
// harnesses' own folders (imports.DefaultRoots) and watch.folders; none
// when watch is off. getenv and home are os.Getenv and the user's home.
func Roots(w config.Watch, getenv func(string) string, home string) []imports.Root {
	if !w.Enabled {
		return nil
	}
	var out []imports.Root
	seen := map[string]bool{}
	add := func(r imports.Root) {
		if !seen[r.Dir] {
			seen[r.Dir] = true
			out = append(out, r)
		}
	}
	for _, r := range imports.DefaultRoots(getenv, home) {
		add(r)
	}
	for _, f := range w.Folders {
		add(imports.Root{Harness: f.Harness, Dir: f.Path})
	}
	return out
}

// Follower follows the roots until Close.
type Follower struct {
	opts    Options
	log     *slog.Logger
	watcher *fsnotify.Watcher
	cancel  context.CancelFunc
	done    sync.WaitGroup
	wake    chan struct{}

	mu      sync.Mutex
	folders []*folder         // one per root, in Roots order
	watched map[string]int    // watched directory → index of its root
	sizes   map[string]int64  // log file → size when last seen
	pending map[string]bool   // written since the last flush, waiting out the debounce
	ready   map[string]bool   // past the debounce: to import now
	timer   *time.Timer       // the debounce, nil when idle
	refused map[string]string // directories the kernel would not watch → why
	// capped are the directories past a root's MaxWatches (→ its index),
	// left to the rescan; watchedMod is a watched directory's modification
	// time when it was watched: the oldest makes room for a new one.
	capped     map[string]int
	watchedMod map[string]time.Time
	history    History
	backlog    []imports.FileInfo // history files not yet handed to an import
	// historyFiles are all the files of the history under way.
	historyFiles []foundFile
	// marks count the lines of the logs read: the worker keeps them, a
	// removal seen by the watcher drops them.
	marks map[string]lineMark
}

type folder struct {
	root    imports.Root
	exists  bool
	files   int
	last    *LastRead
	lastErr string
	watches int  // folders watched under the root
	told    bool // a refused watch was logged (the rest are counted in the status)
}

// Start scans the roots, starts watching them and begins the history
// import in the background. It fails only when inotify cannot be had at
// all; a root that cannot be read is reported in its status.
func Start(ctx context.Context, opts Options) (*Follower, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.Rescan <= 0 {
		opts.Rescan = DefaultRescan
	}
	if opts.ChunkBytes <= 0 {
		opts.ChunkBytes = DefaultChunkBytes
	}
	if opts.MaxWatches <= 0 {
		opts.MaxWatches = DefaultMaxWatches
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("following the harness logs: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Follower{
		opts: opts, log: opts.Log, watcher: w, cancel: cancel,
		wake:    make(chan struct{}, 1),
		watched: map[string]int{}, sizes: map[string]int64{},
		pending: map[string]bool{}, ready: map[string]bool{}, refused: map[string]string{}, marks: map[string]lineMark{},
		capped: map[string]int{}, watchedMod: map[string]time.Time{},
		history: History{State: HistoryScanning, Found: []Found{}},
	}
	seen := map[string]bool{}
	for _, r := range opts.Roots {
		// A root that is (or lies under) a symlink is followed where it
		// leads: filepath.WalkDir does not enter a symlinked root, inotify
		// watches the real folders, and two names for one folder
		// (~/.config/claude → ~/.claude) are followed once, not imported
		// twice. One that does not exist yet keeps its name.
		if real, err := filepath.EvalSymlinks(r.Dir); err == nil {
			r.Dir = real
		}
		if seen[r.Dir] {
			continue
		}
		seen[r.Dir] = true
		f.folders = append(f.folders, &folder{root: r})
	}
	f.done.Add(2)
	go func() { defer f.done.Done(); f.watch(ctx) }()
	go func() { defer f.done.Done(); f.work(ctx) }()
	return f, nil
}

// Close stops following and waits for an import in flight to end; what it
// had not stored is read again on the next start.
func (f *Follower) Close() {
	f.cancel()
	f.watcher.Close()
	f.done.Wait()
	f.mu.Lock()
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
}

// scan watches every folder under the roots and lists their logs. The
// first scan's files that the database has not read to their end are the
// history.
func (f *Follower) scan(ctx context.Context, first bool) {
	var states map[string]sqlite.ImportState
	if first {
		var err error
		if states, err = f.opts.DB.ImportStates(ctx); err != nil {
			f.log.Error("following the harness logs: reading what was imported", "err", err)
			states = map[string]sqlite.ImportState{}
		}
	}
	var backlog []imports.FileInfo
	for i, fo := range f.folders {
		f.reach(i)
		files, err := imports.Walk(fo.root.Dir, fo.root.Harness)
		f.mu.Lock()
		fo.exists = dirExists(fo.root.Dir)
		if err != nil {
			fo.lastErr = err.Error()
			f.mu.Unlock()
			continue
		}
		fo.files = len(files)
		for _, file := range files {
			old, seen := f.sizes[file.Path]
			f.sizes[file.Path] = file.Size
			switch {
			case first:
				file.Harness = fo.root.Harness
				if f.isHistory(states, file) {
					backlog = append(backlog, file)
				}
			case !seen || old != file.Size:
				f.pending[file.Path] = true // missed by inotify: the safety net
			}
		}
		f.mu.Unlock()
	}
	if first {
		f.addHistory(ctx, backlog)
		f.mu.Lock()
		n := len(f.pending)
		f.mu.Unlock()
		if n > 0 {
			f.flushSoon()
		}
	} else {
		f.mu.Lock()
		n := len(f.pending)
		f.mu.Unlock()
		if n > 0 {
			f.flushSoon()
		}
	}
}

// isHistory says whether a file found at the start (or in a root that came
// back) is history: what the database has not read to its end. A
// harness's database (importer.Database: OpenCode's) is imported session
// by session (its states are "<db>#<session>") and only what changed is
// read: one import, queued as pending, not a history, unless none of it
// was imported. Called with f.mu held.
func (f *Follower) isHistory(states map[string]sqlite.ImportState, file imports.FileInfo) bool {
	if database(file.Harness) != nil {
		if importedAny(states, file.Path+"#") {
			f.pending[file.Path] = true
			return false
		}
		return true
	}
	st, ok := states[file.Path]
	return !ok || st.Offset != file.Size
}

// importedAny reports whether any import state's path starts with prefix.
func importedAny(states map[string]sqlite.ImportState, prefix string) bool {
	for p := range states {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// maxAncestors is how far up from a root that does not exist yet its
// nearest existing folder is watched: ~/.claude/projects through ~ when
// Claude Code was never run (the rescan finds what is further away).
const maxAncestors = 3

// reach watches root i and every folder below it; while it does not
// exist, its nearest existing ancestor instead, so a harness's first
// session is seen when its folders appear. It reports whether the root
// exists. A level created between a look and its watch would send no
// event, so after each watch the next level is looked for again.
func (f *Follower) reach(i int) bool {
	dir := f.folders[i].root.Dir
	for range maxAncestors + 1 {
		if dirExists(dir) {
			f.watchTree(i, dir)
			return true
		}
		anc, next := filepath.Dir(dir), dir
		for depth := 1; depth < maxAncestors && !dirExists(anc) && anc != filepath.Dir(anc); depth++ {
			anc, next = filepath.Dir(anc), anc
		}
		if !dirExists(anc) || anc == filepath.Dir(anc) {
			return false // too far from anything that exists, or only / is left
		}
		f.addWatch(i, anc, time.Now())
		if !dirExists(next) {
			return false // watched: its Create will come
		}
	}
	return dirExists(dir)
}

// isAncestor reports whether dir is a folder above path.
func isAncestor(dir, path string) bool {
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// watchTree adds a watch on dir and every folder below it, the most
// recently modified first, up to the root's MaxWatches. A database's
// folder is watched alone: the database sits at the top, and the folders
// below (OpenCode's snapshots, logs, binaries) hold no log and could be
// thousands.
//
// A folder made inside one before that one's watch was added sends no
// event (mkdir -p of Codex's year/month/day folders: the walk can list
// the month before the day exists, and the month's watch comes after the
// day): the tree is walked again after its watches are in place, until a
// walk finds no folder it has not yet added.
func (f *Follower) watchTree(root int, dir string) {
	rootDir := f.folders[root].root.Dir
	if database(f.folders[root].root.Harness) != nil {
		if dir == rootDir {
			f.addWatch(root, dir, time.Now())
		}
		return
	}
	if dir == rootDir {
		// The whole tree is looked at again: what was left to the rescan
		// is judged anew (a folder that went quiet may give way).
		f.mu.Lock()
		for d, r := range f.capped {
			if r == root {
				delete(f.capped, d)
			}
		}
		f.mu.Unlock()
	}
	added := map[string]bool{}
	for range maxTreeWalks {
		dirs := newFolders(dir, rootDir, added)
		if testHookWalked != nil {
			testHookWalked(dir)
		}
		if len(dirs) == 0 {
			return
		}
		for _, d := range dirs {
			added[d.dir] = true
			f.addWatch(root, d.dir, d.mod)
		}
	}
}

// testHookWalked, set by tests only, runs after each of watchTree's walks,
// before the watches are added.
var testHookWalked func(dir string)

// maxTreeWalks bounds watchTree's walks of one tree: a folder made after
// its parent's watch sends its own event.
const maxTreeWalks = 4

type agedFolder struct {
	dir string
	mod time.Time
}

// newFolders lists the folders of dir's tree that are not in added: the
// root first (its new project folders), then the most recently modified.
func newFolders(dir, rootDir string, added map[string]bool) []agedFolder {
	var dirs []agedFolder
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // unreadable or vanished: the rescan tries again
		}
		if added[path] {
			return nil // added by an earlier walk; its folders are still walked
		}
		var mod time.Time
		if info, err := d.Info(); err == nil {
			mod = info.ModTime()
		}
		dirs = append(dirs, agedFolder{path, mod})
		return nil
	})
	sort.SliceStable(dirs, func(i, j int) bool {
		if (dirs[i].dir == rootDir) != (dirs[j].dir == rootDir) {
			return dirs[i].dir == rootDir
		}
		return dirs[i].mod.After(dirs[j].mod)
	})
	return dirs
}

// addWatch watches dir (modified at mod) for root. Past the root's
// MaxWatches, the watched folder modified longest ago (never the root)
// gives way to a newer one; an older one is left to the rescan.
func (f *Follower) addWatch(root int, dir string, mod time.Time) {
	f.mu.Lock()
	if _, ok := f.watched[dir]; ok {
		f.watchedMod[dir] = mod
		f.mu.Unlock()
		return
	}
	var evict string
	if f.folders[root].watches >= f.opts.MaxWatches {
		var oldest time.Time
		for d, r := range f.watched {
			if r == root && d != f.folders[root].root.Dir && (evict == "" || f.watchedMod[d].Before(oldest)) {
				evict, oldest = d, f.watchedMod[d]
			}
		}
		if evict == "" || !oldest.Before(mod) {
			f.capped[dir] = root
			f.mu.Unlock()
			return
		}
		delete(f.watched, evict)
		delete(f.watchedMod, evict)
		f.folders[root].watches--
		f.capped[evict] = root
	}
	f.mu.Unlock()
	if evict != "" {
		f.watcher.Remove(evict) // already gone: nothing to undo
	}
	if err := f.watcher.Add(dir); err != nil {
		f.mu.Lock()
		if !f.folders[root].told {
			// One line per root: past the kernel's limit every folder
			// after this one is refused too; the status counts them.
			f.folders[root].told = true
			f.log.Warn("following the harness logs: the kernel refused to watch a folder; it and any others refused are rescanned every minute instead (raise fs.inotify.max_user_watches)",
				"root", f.folders[root].root.Dir, "dir", dir, "err", err)
		}
		f.refused[dir] = err.Error()
		f.mu.Unlock()
		return
	}
	f.mu.Lock()
	f.watched[dir] = root
	f.watchedMod[dir] = mod
	f.folders[root].watches++
	delete(f.refused, dir)
	delete(f.capped, dir)
	f.mu.Unlock()
}

// rootOf is the index of the root path lies under (the longest), or -1.
func (f *Follower) rootOf(path string) int {
	best, bestLen := -1, -1
	for i, fo := range f.folders {
		d := fo.root.Dir
		if (path == d || strings.HasPrefix(path, d+string(filepath.Separator))) && len(d) > bestLen {
			best, bestLen = i, len(d)
		}
	}
	return best
}

// watch turns inotify's events into files to import, and runs the
// safety-net rescan.
func (f *Follower) watch(ctx context.Context) {
	f.scan(ctx, true)
	f.signal()
	period := func() time.Duration {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.refused) > 0 || len(f.capped) > 0 {
			return min(f.opts.Rescan, refusedRescan)
		}
		return f.opts.Rescan
	}
	rescan := time.NewTimer(period())
	defer rescan.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-f.watcher.Events:
			if !ok {
				return
			}
			f.event(ctx, ev)
		case err, ok := <-f.watcher.Errors:
			if !ok {
				return
			}
			// An overflowed queue lost events: look at everything again.
			f.log.Warn("following the harness logs: inotify", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				f.scan(ctx, false)
			}
		case <-rescan.C:
			f.scan(ctx, false)
			rescan.Reset(period())
		}
	}
}

func (f *Follower) event(ctx context.Context, ev fsnotify.Event) {
	path := ev.Name
	if ev.Has(fsnotify.Create) {
		// A root, or a folder above one, appeared: a root that now exists
		// is watched and what it already holds is a history.
		appeared := false
		for i, fo := range f.folders {
			if fo.root.Dir != path && !isAncestor(path, fo.root.Dir) {
				continue
			}
			appeared = true
			f.mu.Lock()
			known := fo.exists
			f.mu.Unlock()
			if !known && f.reach(i) {
				f.historyTree(ctx, i, fo.root.Dir)
			}
		}
		if appeared {
			return
		}
	}
	root := f.rootOf(path)
	if root < 0 {
		return
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		f.mu.Lock()
		if r, ok := f.watched[path]; ok {
			delete(f.watched, path) // inotify dropped it; a new folder of that name is added on its Create
			delete(f.watchedMod, path)
			f.folders[r].watches--
		}
		delete(f.capped, path)
		if _, ok := f.sizes[path]; ok {
			delete(f.sizes, path)
			f.folders[root].files--
		}
		delete(f.pending, path)
		delete(f.ready, path)
		delete(f.marks, path)
		delete(f.refused, path)
		gone := path == f.folders[root].root.Dir
		if gone {
			// The root itself went (a restore, a moved folder): nothing
			// watches for its return, so watch its nearest existing folder
			// again; its Create then makes it a history, as at the start.
			f.folders[root].exists = false
		}
		f.mu.Unlock()
		if gone {
			f.reach(root)
		}
		return
	}
	if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
		return // chmod: nothing to read
	}
	if ev.Has(fsnotify.Create) {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			// A new project or subagents folder: watch it, and read what was
			// written into it before the watch was in place.
			f.watchTree(root, path)
			f.markTree(root, path)
			return
		}
	}
	harness := f.folders[root].root.Harness
	if db := database(harness); db != nil {
		// The harness writes the write-ahead log first and the database at
		// checkpoints: either means new rows in the database beside it.
		if filepath.Dir(path) != f.folders[root].root.Dir {
			return
		}
		switch filepath.Base(path) {
		case db.File, db.File + "-wal":
			path = filepath.Join(filepath.Dir(path), db.File)
		default:
			return
		}
	} else if !imports.IsLog(harness, path) {
		return
	}
	f.mu.Lock()
	if _, ok := f.sizes[path]; !ok {
		f.sizes[path] = -1
		f.folders[root].files++
	}
	f.pending[path] = true
	f.mu.Unlock()
	f.flushSoon()
}

// addHistory makes files (found at the start, or in a root that appeared
// with logs in it: a restore, a synced folder) a history to import in the
// background with its progress: a new one when none is under way, else
// part of the one that is.
func (f *Follower) addHistory(ctx context.Context, files []imports.FileInfo) {
	found := make([]foundFile, len(files))
	for i, file := range files {
		found[i] = foundFile{file, sessionsIn(ctx, file)} // OpenCode's is a read: not under f.mu
	}
	f.mu.Lock()
	if f.history.State != HistoryImporting {
		f.historyFiles = nil
		f.history = History{Found: []Found{}, ETASeconds: -1}
	}
	f.historyFiles = append(f.historyFiles, found...)
	f.backlog = append(f.backlog, files...)
	sum := summarize(f.historyFiles)
	h := &f.history
	h.State, h.Found = sum.State, sum.Found
	h.Progress.FilesTotal, h.Progress.BytesTotal = sum.Progress.FilesTotal, sum.Progress.BytesTotal
	snap := cloneHistory(*h)
	f.mu.Unlock()
	f.publish(EventHistory, snap)
	f.signal()
}

// historyTree imports the logs of a root that just appeared as a history:
// those the database has not read to their end. A root that comes back
// (moved away and back, a restore of the same folder) holds logs imported
// before; they are not announced as found again.
func (f *Follower) historyTree(ctx context.Context, root int, dir string) {
	files, err := imports.Walk(dir, f.folders[root].root.Harness)
	if err != nil {
		f.mu.Lock()
		f.folders[root].lastErr = err.Error()
		f.mu.Unlock()
		return
	}
	states, err := f.opts.DB.ImportStates(ctx)
	if err != nil {
		f.log.Error("following the harness logs: reading what was imported", "err", err)
		states = map[string]sqlite.ImportState{}
	}
	var history []imports.FileInfo
	f.mu.Lock()
	f.folders[root].exists = true
	for _, file := range files {
		file.Harness = f.folders[root].root.Harness
		if _, ok := f.sizes[file.Path]; !ok {
			f.folders[root].files++
		}
		f.sizes[file.Path] = file.Size
		if f.isHistory(states, file) {
			history = append(history, file)
		}
	}
	pending := len(f.pending)
	f.mu.Unlock()
	if len(history) > 0 {
		f.addHistory(ctx, history)
	}
	if pending > 0 {
		f.flushSoon()
	}
}

// markTree queues the logs already under a folder that just appeared.
func (f *Follower) markTree(root int, dir string) {
	files, err := imports.Walk(dir, f.folders[root].root.Harness)
	if err != nil || len(files) == 0 {
		return
	}
	f.mu.Lock()
	for _, file := range files {
		if _, ok := f.sizes[file.Path]; !ok {
			f.folders[root].files++
		}
		f.sizes[file.Path] = file.Size
		f.pending[file.Path] = true
	}
	f.mu.Unlock()
	f.flushSoon()
}

// database is the Database a harness keeps its logs in, or nil.
func database(harness string) *importer.Database {
	if f, ok := importer.Lookup(harness); ok {
		return f.Database
	}
	return nil
}

// flushSoon starts the debounce unless it runs: the files written until it
// ends are imported together.
func (f *Follower) flushSoon() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		return
	}
	f.timer = time.AfterFunc(f.opts.Debounce, func() {
		f.mu.Lock()
		for p := range f.pending {
			f.ready[p] = true
		}
		clear(f.pending)
		f.timer = nil
		f.mu.Unlock()
		f.signal()
	})
}

func (f *Follower) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// work is the one goroutine that imports: appended lines first (they are
// what the user is looking at), history chunks in between.
func (f *Follower) work(ctx context.Context) {
	var hist *historyRun
	for {
		if ctx.Err() != nil {
			return
		}
		f.mu.Lock()
		var live []string
		for p := range f.ready {
			live = append(live, p)
		}
		clear(f.ready)
		var chunk []imports.FileInfo
		if len(live) == 0 && len(f.backlog) > 0 {
			chunk, f.backlog = takeChunk(f.backlog, f.opts.ChunkBytes)
		}
		f.mu.Unlock()
		switch {
		case len(live) > 0:
			f.importLive(ctx, live)
			continue
		case len(chunk) > 0:
			if hist == nil {
				hist = f.startHistory()
			}
			f.importChunk(ctx, hist, chunk)
			if f.opts.Pause > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(f.opts.Pause):
				}
			}
			continue
		}
		if hist != nil && f.finishHistory(hist) {
			hist = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
	}
}

// takeChunk splits the next files off the backlog: one per core at least
// (each call parses its files in parallel), at most chunkFiles, and past
// those no more than limit bytes.
func takeChunk(backlog []imports.FileInfo, limit int64) (chunk, rest []imports.FileInfo) {
	var n int
	var bytes int64
	for n < len(backlog) && n < chunkFiles && (n < runtime.GOMAXPROCS(0) || bytes+backlog[n].Size <= limit) {
		bytes += backlog[n].Size
		n++
	}
	return backlog[:n], backlog[n:]
}

func (f *Follower) importLive(ctx context.Context, paths []string) {
	slices.Sort(paths)
	srcs := make([]imports.Source, 0, len(paths))
	for _, p := range paths {
		f.mu.Lock()
		root := f.rootOf(p)
		f.mu.Unlock()
		if root < 0 {
			continue
		}
		srcs = append(srcs, imports.Source{Path: p, Harness: f.folders[root].root.Harness})
	}
	res, err := imports.Files(ctx, f.opts.DB, f.opts.Settings, srcs, nil)
	if err != nil && ctx.Err() == nil {
		f.log.Warn("following the harness logs: import", "err", err)
	}
	f.account(ctx, res)
}

// account remembers what each file brought (the Integrations page's "last
// read") and tells the views.
func (f *Follower) account(ctx context.Context, res imports.Result) {
	now := time.Now().UTC()
	newest := map[*folder]imports.FileResult{}
	// The size the rescan compares with is what the import stored up to,
	// not a stat taken afterwards: a line appended between the import's
	// read and that stat would otherwise look read, and in a folder the
	// kernel refused to watch it would stay missing until the next start.
	read := make(map[string]int64, len(res.Files))
	for _, r := range res.Files {
		if r.Err == nil {
			if st, ok, err := f.opts.DB.ImportStateOf(ctx, r.Path); err == nil && ok {
				read[r.Path] = st.Offset
			}
		}
	}
	f.mu.Lock()
	for _, r := range res.Files {
		root := f.rootOf(r.Path)
		if root < 0 {
			continue
		}
		fo := f.folders[root]
		if r.Err != nil {
			fo.lastErr = r.Error
			if _, ok := f.sizes[r.Path]; ok {
				f.sizes[r.Path] = -1 // failed: the rescan tries it again
			}
			continue
		}
		if n, ok := read[r.Path]; ok {
			f.sizes[r.Path] = n
		} else if st, err := os.Stat(r.Path); err == nil {
			f.sizes[r.Path] = st.Size()
		}
		if r.Unchanged {
			continue
		}
		fo.lastErr = ""
		fo.last = &LastRead{File: r.Path, Session: r.Session, At: now, Bytes: r.Bytes, Requests: r.Requests, Folds: r.Folds}
		newest[fo] = r
	}
	f.mu.Unlock()
	// The line each folder's last read ended at, for the Integrations page.
	for fo, r := range newest {
		line := f.lineOf(ctx, r)
		f.mu.Lock()
		if fo.last != nil && fo.last.File == r.Path {
			last := *fo.last
			last.Line = line
			fo.last = &last
		}
		f.mu.Unlock()
	}
	if res.Requests+res.Updated+res.Folds > 0 {
		f.publish(EventImported, Imported{Sessions: res.Sessions, Requests: res.Requests, Updated: res.Updated, Folds: res.Folds})
	}
}

// lineMark is how many lines a log has before an offset: the next count
// starts there, so following a log counts only what it gained.
type lineMark struct{ offset, lines int64 }

// lineOf is the number of the last line an import read of a plain JSON
// Lines log (0 for a compressed one, whose offset is not in lines). Only
// the worker calls it.
func (f *Follower) lineOf(ctx context.Context, r imports.FileResult) int64 {
	if !strings.HasSuffix(r.Path, ".jsonl") {
		return 0
	}
	st, ok, err := f.opts.DB.ImportStateOf(ctx, r.Path)
	if err != nil || !ok {
		return 0
	}
	f.mu.Lock() // the watcher drops a removed file's mark
	m := f.marks[r.Path]
	f.mu.Unlock()
	if r.Restarted || m.offset > st.Offset {
		m = lineMark{}
	}
	file, err := importer.OpenRegular(r.Path)
	if err != nil {
		return 0
	}
	defer file.Close()
	buf := make([]byte, 64<<10)
	for m.offset < st.Offset {
		n, err := file.ReadAt(buf[:min(int64(len(buf)), st.Offset-m.offset)], m.offset)
		m.lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		m.offset += int64(n)
		if err != nil {
			break
		}
	}
	f.mu.Lock()
	f.marks[r.Path] = m
	f.mu.Unlock()
	return m.lines
}

func (f *Follower) publish(event string, data any) {
	if f.opts.Publish != nil {
		f.opts.Publish(event, data)
	}
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}
