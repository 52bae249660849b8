// Package desktop is the window's glue: the Wails options and lifecycle,
// the tray, desktop notifications and the export save dialog. Only main
// runs it (wails.Run); it reaches the guard in-process.
package desktop

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"tollgate/guard"
	"tollgate/pricing"
)

// Emitter sends a named event to the UI. The window's implementation wraps
// runtime.EventsEmit, which aborts the process outside a Wails context, so
// tests use a fake.
type Emitter interface {
	Emit(name string, data any)
}

// wailsEmitter emits through the Wails runtime once the window has started.
type wailsEmitter struct {
	mu  sync.RWMutex
	ctx context.Context
}

func (e *wailsEmitter) setContext(ctx context.Context) {
	e.mu.Lock()
	e.ctx = ctx
	e.mu.Unlock()
}

func (e *wailsEmitter) Emit(name string, data any) {
	e.mu.RLock()
	ctx := e.ctx
	e.mu.RUnlock()
	if ctx != nil {
		wruntime.EventsEmit(ctx, name, data)
	}
}

// windowControl moves the native window. The Wails runtime functions need
// a live Wails context, so tests use a fake.
type windowControl interface {
	Raise() // un-minimise and show
	Hide()
	Quit()
}

type wailsControl struct{ ctx context.Context }

func (c wailsControl) Raise() {
	wruntime.WindowUnminimise(c.ctx)
	wruntime.WindowShow(c.ctx)
}
func (c wailsControl) Hide() { wruntime.WindowHide(c.ctx) }
func (c wailsControl) Quit() { wruntime.Quit(c.ctx) }

// modeAPI is the part of the guard API the tray reads and changes.
type modeAPI interface {
	Mode() (TrayState, error) // Pending is left 0
	SetGlobalMode(mode string) error
}

// Events the window glue reacts to (the guard's names, ARCHITECTURE.md, "The API"), and the
// one the page sends about its focus (frontend/src/transport.ts).
const (
	eventRewritePending = "rewrite.pending"
	eventRewriteDecided = "rewrite.decided"
	eventModeChanged    = "mode.changed"
	eventEnginesChanged = "engines.changed"
	eventWindowFocus    = "window.focus"
)

// Window is the desktop window's glue to a running Service: it forwards
// guard events to the page, raises the window and notifies the desktop when
// a question arrives, and keeps the tray icon in step.
type Window struct {
	srv      *guard.Server
	setRaise func(func())
	hidden   bool
	log      *slog.Logger

	emitter  *wailsEmitter
	emit     Emitter // = emitter outside tests
	notifier Notifier
	api      modeAPI
	// async runs slow side effects (D-Bus, in-process API calls) off the
	// guard's publishing goroutine; tests run them inline.
	async func(func())

	mu       sync.Mutex
	ui       windowControl
	focused  bool
	pending  map[string]struct{}
	state    TrayState
	tray     *Tray
	stopTray func()
	detach   func()
	quitting bool
	refresh  chan struct{}
	done     chan struct{}

	stopSignals func()
}

// NewWindow prepares the window for a running guard; setRaise installs (or,
// with nil, removes) the function that brings the window to the front.
// hidden starts it in the tray only.
func NewWindow(srv *guard.Server, setRaise func(func()), hidden bool) *Window {
	w := newWindow(slog.Default(), hidden)
	w.srv, w.setRaise = srv, setRaise
	if srv != nil {
		w.api = guardModes{srv}
	}
	w.notifier = NewDBusNotifier(w.log, w.raise)
	return w
}

func newWindow(log *slog.Logger, hidden bool) *Window {
	e := &wailsEmitter{}
	return &Window{
		log: log, hidden: hidden, emitter: e, emit: e,
		async:   func(f func()) { go f() },
		pending: map[string]struct{}{},
		state:   TrayState{Mode: "ask"},
		refresh: make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
}

// Emitter is where guard events for the window go.
func (w *Window) Emitter() Emitter { return w.emit }

// Options are the Wails options: the window's requests reach the guard's
// trusted chain through AssetServer.Handler, so fetch('/v1/…') in the window
// and in a browser hit the same Go handler.
func (w *Window) Options() *options.App {
	return &options.App{
		Title:            "tollgate",
		Width:            1200,
		Height:           800,
		MinWidth:         420,
		MinHeight:        360,
		StartHidden:      w.hidden,
		BackgroundColour: &options.RGBA{R: 246, G: 247, B: 249, A: 255},
		AssetServer:      &assetserver.Options{Handler: w.srv.TrustedHandler()},
		OnStartup:        w.onStartup,
		OnDomReady:       w.onDomReady,
		OnBeforeClose:    w.onBeforeClose,
		OnShutdown:       w.onShutdown,
		Linux: &linux.Options{
			ProgramName:      "tollgate",
			Icon:             trayIcon(TrayState{Mode: "ask", Armed: true}),
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	}
}

func (w *Window) onStartup(ctx context.Context) {
	w.emitter.setContext(ctx)
	w.mu.Lock()
	w.ui = wailsControl{ctx}
	w.mu.Unlock()
	w.setRaise(w.raise)
	// The page says when the user is looking at it: a question then needs
	// no desktop notification.
	wruntime.EventsOn(ctx, eventWindowFocus, func(data ...any) {
		if len(data) > 0 {
			if f, ok := data[0].(bool); ok {
				w.setFocused(f)
			}
		}
	})
	// Exports are saved through a dialog (export.go).
	wruntime.EventsOn(ctx, eventExportSave, func(data ...any) { go w.saveExport(ctx, data) })
	// SIGTERM and Ctrl-C close the window the clean way, so the service
	// shuts down and api.json is removed. Wails installed its own handler
	// before OnStartup; it calls Quit too, racing this one (two quits, a
	// GTK assertion) and, worse, reaching OnBeforeClose before quitting is
	// set, which would hide the window to the tray instead of exiting.
	// Reset drops it, so exactly one handler quits, the way a Quit from the
	// tray does.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; ok {
			w.log.Info("signal received: closing the window")
			w.quit()
		}
	}()
	w.stopSignals = func() { signal.Stop(sigs); close(sigs) }

	go w.refreshLoop()
	w.requestRefresh()
	go w.startTray()
}

// onDomReady attaches the page to the guard: from now on it receives every
// event and counts as a question provider. A reload attaches again, so
// questions already waiting reach the new page too.
func (w *Window) onDomReady(ctx context.Context) {
	detach := w.srv.AttachWindow(w.forward)
	w.mu.Lock()
	old := w.detach
	w.detach = detach
	w.mu.Unlock()
	if old != nil {
		old()
	}
}

// onBeforeClose hides the window to the tray instead of quitting, when a
// tray exists to bring it back; the window keeps answering questions from
// there (it raises itself when one arrives).
func (w *Window) onBeforeClose(ctx context.Context) (prevent bool) {
	w.mu.Lock()
	keep := w.tray != nil && !w.quitting
	ui := w.ui
	w.mu.Unlock()
	if keep && ui != nil {
		ui.Hide()
		w.setFocused(false)
		return true
	}
	return false
}

func (w *Window) onShutdown(ctx context.Context) {
	w.mu.Lock()
	detach, stopTray := w.detach, w.stopTray
	w.detach, w.stopTray, w.tray = nil, nil, nil
	w.ui = nil
	w.mu.Unlock()
	if detach != nil {
		detach()
	}
	if stopTray != nil {
		stopTray()
	}
	close(w.done)
	if n, ok := w.notifier.(*DBusNotifier); ok {
		n.Withdraw()
		n.Close()
	}
	w.setRaise(nil)
	w.emitter.setContext(nil)
	if w.stopSignals != nil {
		w.stopSignals()
	}
}

// forward is the guard's emit function for this window (AttachWindow).
// It runs on the publisher's goroutine, so anything slow goes async.
func (w *Window) forward(name string, data any) {
	w.emit.Emit(name, data)
	switch name {
	case eventRewritePending:
		id, note := describeQuestion(data)
		w.mu.Lock()
		_, seen := w.pending[id]
		w.pending[id] = struct{}{}
		focused := w.focused
		w.mu.Unlock()
		w.updateTray()
		if seen {
			return // a replay for a reloaded page: already raised and notified
		}
		w.async(func() {
			w.raise()
			if !focused {
				if err := w.notifier.Notify(note.summary, note.body); err != nil {
					w.log.Debug("question not notified", "rewrite", id, "err", err)
				}
			}
		})
	case eventRewriteDecided:
		id, _ := describeQuestion(data)
		w.mu.Lock()
		delete(w.pending, id)
		left := len(w.pending)
		w.mu.Unlock()
		w.updateTray()
		if left == 0 {
			w.async(w.notifier.Withdraw)
		}
	case eventModeChanged, eventEnginesChanged:
		w.requestRefresh()
	}
}

func (w *Window) raise() {
	w.mu.Lock()
	ui := w.ui
	w.mu.Unlock()
	if ui != nil {
		ui.Raise()
	}
}

func (w *Window) quit() {
	w.mu.Lock()
	w.quitting = true
	ui := w.ui
	w.mu.Unlock()
	if ui != nil {
		ui.Quit()
	}
}

func (w *Window) setFocused(f bool) {
	w.mu.Lock()
	w.focused = f
	w.mu.Unlock()
}

// requestRefresh asks the refresh loop to read the mode again; requests
// arriving while one is queued fold into it.
func (w *Window) requestRefresh() {
	select {
	case w.refresh <- struct{}{}:
	default:
	}
}

func (w *Window) refreshLoop() {
	for {
		select {
		case <-w.done:
			return
		case <-w.refresh:
			w.refreshMode()
		}
	}
}

// refreshMode reads the global mode and whether it is armed through the
// API, in-process.
func (w *Window) refreshMode() {
	if w.api == nil {
		return
	}
	s, err := w.api.Mode()
	if err != nil {
		w.log.Debug("tray: reading the mode", "err", err)
		return
	}
	w.mu.Lock()
	w.state.Mode, w.state.Armed = s.Mode, s.Armed
	w.mu.Unlock()
	w.updateTray()
}

func (w *Window) updateTray() {
	w.mu.Lock()
	s := w.state
	s.Pending = len(w.pending)
	t := w.tray
	w.mu.Unlock()
	if t != nil {
		t.Update(s)
	}
}

// startTray shows the tray icon where a tray host runs; elsewhere the app
// runs without one and says so once.
func (w *Window) startTray() {
	ok, err := trayHostPresent()
	if !ok {
		args := []any{}
		if err != nil {
			args = append(args, "err", err)
		}
		if w.hidden {
			w.log.Info("no system tray host (StatusNotifierWatcher); started hidden, the window opens when a question arrives or when tollgate starts again", args...)
		} else {
			w.log.Info("no system tray host (StatusNotifierWatcher); running without a tray icon", args...)
		}
		return
	}
	backend, stop := startSystray(trayActions{
		Open: w.raise,
		SetMode: func(mode string) {
			if w.api == nil {
				return
			}
			if err := w.api.SetGlobalMode(mode); err != nil {
				w.log.Warn("tray: switching the mode", "mode", mode, "err", err)
			}
		},
		Quit: w.quit,
	}, w.log)
	t := newTray(backend)
	w.mu.Lock()
	if w.ui == nil { // shut down meanwhile
		w.mu.Unlock()
		stop()
		return
	}
	w.tray, w.stopTray = t, stop
	w.mu.Unlock()
	w.updateTray()
	w.log.Info("tray icon shown")
}

// questionNote is the desktop notification for a question.
type questionNote struct{ summary, body string }

// describeQuestion reads the rewrite id (and, for rewrite.pending, the
// notification text) from an event's payload, whatever Go type carries it.
func describeQuestion(data any) (string, questionNote) {
	var raw []byte
	switch d := data.(type) {
	case json.RawMessage:
		raw = d
	case []byte:
		raw = d
	default:
		raw, _ = json.Marshal(data)
	}
	var ev struct {
		Rewrite string `json:"rewrite"`
		Session string `json:"session"`
		Harness string `json:"harness"`
		Trigger string `json:"trigger"`
		Quote   *struct {
			ContextTokens int64   `json:"contextTokens"`
			ColdTokens    int64   `json:"coldTokens"`
			ColdShare     float64 `json:"coldShare"`
			CacheExpired  bool    `json:"cacheExpired"`
			CostUSD       struct {
				BreakPremium float64 `json:"breakPremium"`
			} `json:"costUSD"`
		} `json:"quote"`
	}
	_ = json.Unmarshal(raw, &ev) // a payload we cannot read still gets a generic note
	who := ev.Harness
	if who == "" {
		who = "A harness"
	}
	note := questionNote{summary: "Allow a context rewrite?"}
	if ev.Trigger == "context-overflow" {
		note.summary = "Context overflow: allow a rewrite?"
	}
	where := who
	if ev.Session != "" {
		where += " · session " + ev.Session
	}
	switch q := ev.Quote; {
	case q == nil:
		note.body = where + " wants to rewrite its context. Answer in tollgate."
	case q.CacheExpired:
		note.body = fmt.Sprintf("%s at %s: the cache already expired, so this rewrite costs nothing extra. Answer in tollgate.",
			where, pricing.FormatTokens(q.ContextTokens))
	default:
		note.body = fmt.Sprintf("%s at %s: breaks the cache, %s re-read in full (%.0f%%) · $%.2f. Answer in tollgate.",
			where, pricing.FormatTokens(q.ContextTokens), pricing.FormatTokens(q.ColdTokens), q.ColdShare*100, q.CostUSD.BreakPremium)
	}
	return ev.Rewrite, note
}

// guardModes reads and sets the mode on the guard itself: the tray is part
// of this process, so it asks the guard directly rather than through HTTP.
type guardModes struct{ srv *guard.Server }

func (g guardModes) Mode() (TrayState, error) {
	m := g.srv.ModeState("", "")
	return TrayState{Mode: m.Mode, Armed: m.Armed}, nil
}

func (g guardModes) SetGlobalMode(mode string) error { return g.srv.SetGlobalMode(mode) }

// ErrorWindowOptions show a start-up failure (an invalid config value, say)
// in a window, because a desktop user launched from a menu sees no terminal.
func ErrorWindowOptions(err error) *options.App {
	page := `<!doctype html><html><head><meta charset="utf-8"><title>tollgate</title></head>
<body style="font-family:'DejaVu Sans',sans-serif;margin:2em;color:#1d2330;background:#f6f7f9">
<h1 style="color:#b3261e;font-size:20px">tollgate cannot start</h1>
<pre id="start-error" style="white-space:pre-wrap;background:#fff;border:1px solid #dde1e8;padding:12px">` +
		html.EscapeString(err.Error()) + `</pre>
<p>Fix the value named above and start tollgate again.</p></body></html>`
	return &options.App{
		Title:  "tollgate",
		Width:  760,
		Height: 360,
		AssetServer: &assetserver.Options{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.Write([]byte(page))
		})},
		Linux: &linux.Options{ProgramName: "tollgate", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	}
}
