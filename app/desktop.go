package app

import (
	"context"
	"html"
	"net/http"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"
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

// Window is the desktop window's glue to a running Service.
type Window struct {
	svc     *Service
	emitter *wailsEmitter
	hidden  bool
}

// NewWindow prepares the window for svc. hidden starts it in the tray only.
func NewWindow(svc *Service, hidden bool) *Window {
	return &Window{svc: svc, emitter: &wailsEmitter{}, hidden: hidden}
}

// Emitter is where guard events for the window go.
func (w *Window) Emitter() Emitter { return w.emitter }

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
		AssetServer:      &assetserver.Options{Handler: w.svc.Server.TrustedHandler()},
		OnStartup: func(ctx context.Context) {
			w.emitter.setContext(ctx)
			w.svc.SetRaise(func() {
				wruntime.WindowUnminimise(ctx)
				wruntime.WindowShow(ctx)
			})
			// SIGTERM and Ctrl-C: Wails installs its own handler that quits the
			// GTK loop, after which wails.Run returns and the service closes
			// (api.json removed). A second handler here would quit GTK twice
			// from two threads and crash it.
		},
		OnShutdown: func(ctx context.Context) {
			w.svc.SetRaise(nil)
			w.emitter.setContext(nil)
		},
		Linux: &linux.Options{ProgramName: "tollgate", WebviewGpuPolicy: linux.WebviewGpuPolicyNever},
	}
}

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
