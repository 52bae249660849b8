package follow

import (
	"context"
	"net/http"
	"sort"
	"time"

	"tollgate/app/importer"
	"tollgate/app/imports"
	"tollgate/guard/api"
)

// History states.
const (
	HistoryScanning  = "scanning"  // looking for what exists
	HistoryImporting = "importing" // importing it in the background
	HistoryDone      = "done"      // everything found is imported (or nothing was found)
)

// History is the first-start import: what the scan found that the database
// had not read, and how far its import is.
type History struct {
	State string  `json:"state"`
	Found []Found `json:"found"` // by harness, the most bytes first
	// Progress sums the chunks' imports.Progress; BytesTotal is the
	// found bytes.
	Progress   imports.Progress `json:"progress"`
	StartedAt  *time.Time       `json:"startedAt,omitempty"`
	FinishedAt *time.Time       `json:"finishedAt,omitempty"`
	// ETASeconds is the time left at the rate so far; -1 while unknown.
	ETASeconds float64 `json:"etaSeconds"`
	// Failed counts files that could not be imported (their errors are in
	// the log and the folders' status).
	Failed int `json:"failed"`
}

// Found is what the scan found of one harness.
type Found struct {
	Harness  string `json:"harness"`
	Sessions int    `json:"sessions"` // sessionsIn: subagent files are part of a session
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
}

// LastRead is a folder's last file import that brought something.
type LastRead struct {
	File string `json:"file"`
	// Line is the number of the last line read (0 for a compressed log).
	Line     int64     `json:"line"`
	Session  string    `json:"session"`
	At       time.Time `json:"at"`
	Bytes    int64     `json:"bytes"`
	Requests int       `json:"requests"`
	Folds    int       `json:"folds"`
}

// Imported is EventImported's body.
type Imported struct {
	Sessions []string `json:"sessions"`
	Requests int      `json:"requests"`
	Updated  int      `json:"updated"`
	Folds    int      `json:"folds"`
}

// FolderStatus is one followed folder, as the Integrations page shows it.
type FolderStatus struct {
	Harness string `json:"harness"` // "" detects per file
	Dir     string `json:"dir"`
	Exists  bool   `json:"exists"`
	// Watched counts the folders under Dir inotify watches; Refused those
	// the kernel refused, Capped those past Options.MaxWatches (the least
	// recently modified): both are rescanned every minute instead.
	Watched int       `json:"watched"`
	Refused int       `json:"refused"`
	Capped  int       `json:"capped"`
	Files   int       `json:"files"`
	Last    *LastRead `json:"last,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// Status is GET /v1/follow.
type Status struct {
	Enabled bool           `json:"enabled"`
	Folders []FolderStatus `json:"folders"`
	History History        `json:"history"`
}

// Status is what is followed now. A nil Follower (watch: false) says so.
func (f *Follower) Status() Status {
	if f == nil {
		return Status{Enabled: false, Folders: []FolderStatus{}, History: History{State: HistoryDone, Found: []Found{}, ETASeconds: -1}}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := Status{Enabled: true, Folders: make([]FolderStatus, len(f.folders)), History: f.history}
	for i, fo := range f.folders {
		st.Folders[i] = FolderStatus{Harness: fo.root.Harness, Dir: fo.root.Dir, Exists: fo.exists, Files: fo.files, Last: fo.last, Error: fo.lastErr}
	}
	for dir, i := range f.watched {
		if i >= 0 && dir != "" {
			st.Folders[i].Watched++
		}
	}
	for dir := range f.refused {
		if i := f.rootOf(dir); i >= 0 {
			st.Folders[i].Refused++
		}
	}
	for _, i := range f.capped {
		st.Folders[i].Capped++
	}
	return st
}

// Handler serves Route.
func Handler(status func() Status) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, status())
	})
}

// foundFile is a file of a history and the sessions it holds.
type foundFile struct {
	imports.FileInfo
	sessions int
}

// sessionsIn is how many sessions a found log holds, as the banner counts
// them: a log of lines is one, unless it is a subagent's (its format's
// Subagent: a Claude Code subagent's or summary call's transcript, a
// Gemini CLI subagent's file belong to their parent's session); a
// database holds many (its Sessions, read-only and bounded, as the import
// reads it); a log whose harness is told per file counts none ("3 other
// logs").
func sessionsIn(ctx context.Context, file imports.FileInfo) int {
	f, ok := importer.Lookup(file.Harness)
	switch {
	case !ok:
		return 0
	case f.Database != nil:
		if n, err := f.Database.Sessions(ctx, file.Path); err == nil {
			return n
		}
		return 0
	case f.Subagent != nil && f.Subagent(file.Path):
		return 0
	}
	return 1
}

// summarize is the History of a backlog before its import starts.
func summarize(backlog []foundFile) History {
	h := History{State: HistoryDone, Found: []Found{}, ETASeconds: -1}
	by := map[string]*Found{}
	var total int64
	for _, file := range backlog {
		name := file.Harness
		if name == "" {
			name = "other"
		}
		fd := by[name]
		if fd == nil {
			fd = &Found{Harness: name}
			by[name] = fd
		}
		fd.Files++
		fd.Bytes += file.Size
		fd.Sessions += file.sessions
		total += file.Size
	}
	for _, fd := range by {
		h.Found = append(h.Found, *fd)
	}
	sort.Slice(h.Found, func(i, j int) bool {
		if h.Found[i].Bytes != h.Found[j].Bytes {
			return h.Found[i].Bytes > h.Found[j].Bytes
		}
		return h.Found[i].Harness < h.Found[j].Harness
	})
	h.Progress = imports.Progress{FilesTotal: len(backlog), BytesTotal: total}
	if len(backlog) > 0 {
		h.State = HistoryImporting
	}
	return h
}

// historyRun is the running sum over a history's chunks.
type historyRun struct {
	// batch shares the fold predictor's traces across the chunks.
	batch     *imports.Batch
	start     time.Time
	filesDone int
	bytesDone int64
	requests  int
	folds     int
	lastSent  time.Time
}

// historyEvery bounds how often progress goes out.
const historyEvery = 250 * time.Millisecond

func (f *Follower) startHistory() *historyRun {
	now := time.Now().UTC()
	f.mu.Lock()
	f.history.StartedAt = &now
	f.history.FinishedAt = nil
	f.mu.Unlock()
	return &historyRun{start: now, batch: imports.NewBatch()}
}

func (f *Follower) importChunk(ctx context.Context, run *historyRun, chunk []imports.FileInfo) {
	srcs := make([]imports.Source, len(chunk))
	for i, file := range chunk {
		srcs[i] = imports.Source{Path: file.Path, Harness: file.Harness}
	}
	res, err := run.batch.Files(ctx, f.opts.DB, f.opts.Settings, srcs, func(p imports.Progress) {
		f.progress(run, p, false)
	})
	if err != nil && ctx.Err() == nil {
		f.log.Warn("importing the harness logs' history", "err", err)
	}
	if ctx.Err() != nil {
		return // the rest is read again on the next start
	}
	for _, file := range chunk {
		run.bytesDone += file.Size
	}
	run.filesDone += len(chunk)
	run.requests += res.Requests
	run.folds += res.Folds
	f.mu.Lock()
	f.history.Failed += res.Failed
	f.mu.Unlock()
	f.account(ctx, res)
	f.progress(run, imports.Progress{}, true)
}

// progress folds a chunk's progress into the history's and sends it at most
// every historyEvery (always at a chunk's end).
func (f *Follower) progress(run *historyRun, p imports.Progress, force bool) {
	now := time.Now()
	if !force && now.Sub(run.lastSent) < historyEvery {
		return
	}
	run.lastSent = now
	f.mu.Lock()
	h := &f.history
	done := run.bytesDone + min(p.BytesDone, max(p.BytesTotal, 0))
	h.Progress.BytesDone = min(done, h.Progress.BytesTotal)
	h.Progress.FilesDone = min(run.filesDone+p.FilesDone, h.Progress.FilesTotal)
	h.Progress.Requests = run.requests + p.Requests
	h.Progress.Folds = run.folds + p.Folds
	h.Progress.File = p.File
	h.ETASeconds = eta(now.Sub(run.start), h.Progress.BytesDone, h.Progress.BytesTotal)
	snap := cloneHistory(*h)
	f.mu.Unlock()
	f.publish(EventHistory, snap)
}

// eta is the time left at the rate so far: -1 until a second has passed
// and some bytes are done (an early rate says little).
func eta(elapsed time.Duration, done, total int64) float64 {
	if elapsed < time.Second || done <= 0 {
		return -1
	}
	left := float64(total-done) * elapsed.Seconds() / float64(done)
	return max(left, 0)
}

// finishHistory marks the history done, unless files were added to it
// since the worker last looked (then it reports false and goes on).
func (f *Follower) finishHistory(run *historyRun) bool {
	now := time.Now().UTC()
	f.mu.Lock()
	if len(f.backlog) > 0 {
		f.mu.Unlock()
		return false
	}
	h := &f.history
	h.State = HistoryDone
	h.FinishedAt = &now
	h.ETASeconds = 0
	h.Progress.BytesDone = h.Progress.BytesTotal
	h.Progress.FilesDone = h.Progress.FilesTotal
	h.Progress.Requests, h.Progress.Folds = run.requests, run.folds
	h.Progress.File = ""
	snap := cloneHistory(*h)
	f.mu.Unlock()
	f.log.Info("imported the harness logs' history", "files", snap.Progress.FilesTotal, "bytes", snap.Progress.BytesTotal,
		"requests", run.requests, "folds", run.folds, "failed", snap.Failed, "took", now.Sub(run.start).Round(time.Millisecond))
	f.publish(EventHistory, snap)
	return true
}

func cloneHistory(h History) History {
	h.Found = append([]Found(nil), h.Found...)
	return h
}
