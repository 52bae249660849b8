// Package guard is the gate: engine leases, the decision broker and the
// localhost HTTP API (/v1) that harnesses and the UI call.
//
// One handler serves three doors (ARCHITECTURE.md, "The API"): harness clients over TCP with a
// bearer token, the browser UI over TCP with a login cookie, and the Wails
// window in-process through AssetServer.Handler. The TCP doors pass the
// security layers in security.go; the window's chain is trusted.
package guard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"tollgate/guard/api"
)

// Options configure a Server.
type Options struct {
	Version string
	// Assets is the built frontend (frontend/dist). Static files are public:
	// they hold no secrets.
	Assets fs.FS
	// Token returns the current harness token (api.json).
	Token func() string
	// OwnerToken returns the owner token (<home>/owner.token; nil: none).
	OwnerToken func() string
	// RotateToken replaces the harness token and the owner token (and their
	// files) and returns the new harness token.
	RotateToken func() (string, error)
	// BaseURL is http://host:port of the TCP listener.
	BaseURL string
	// InsecureHost is a non-loopback listen host admitted by --insecure-listen.
	InsecureHost string
	// Settings reads and writes config.yaml's modes (and, when it also
	// implements SettingsEditor, the Settings page's profiles).
	Settings Settings
	// Store is the database.
	Store Store
	// Pricer prices requests and finds cache models.
	Pricer Pricer
	// Integrations lists installed hook integrations (nil: none).
	Integrations func() []api.Integration
	// Reprice re-prices stored requests of a session ("" = all).
	Reprice func(ctx context.Context, session string) (requests, sessions int64, err error)
	// Routes are extra authenticated routes: the app's import, simulate and
	// doctor actions and the integrations' own endpoints.
	Routes []Route
	// OnRaise brings the desktop window to the front (nil in serve mode).
	OnRaise func()
	// OnQuestion runs when a question starts waiting (the window raises).
	OnQuestion func()
	Logger     *slog.Logger
	Now        func() time.Time
}

// Route is an extra authenticated route. Its handler answers errors with
// WriteError, like every other route.
type Route struct {
	Pattern string // a ServeMux pattern: "POST /v1/import"
	Handler http.Handler
	// BodyLimit is the most bytes its body may hold (0: 1 MiB).
	BodyLimit int64
	// Harness: the harness token may call it too. Without it a write
	// (anything but GET) needs the owner (security.go, harnessWrites).
	Harness bool
}

// Server is the /v1 API and the static UI.
type Server struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	baseURL string
	policy  hostPolicy
	auth    authenticator
	logins  *loginNonces
	mux     *http.ServeMux
	// bodyLimits are the routes' body limits by pattern (absent: 1 MiB).
	bodyLimits map[string]int64
	// harnessWrites are the writes the harness token may send (security.go).
	harnessWrites map[string]bool
	patterns      map[string]bool
	engines       *engineRegistry

	settings Settings
	store    Store
	pricer   Pricer
	events   *hub
	broker   *broker
	stop     chan struct{}
	stopOnce sync.Once
}

// NewServer builds the routes. The listener's address must be known first:
// the cookie name and the Origin check depend on its port.
func NewServer(ctx context.Context, opts Options) (*Server, error) {
	if opts.Token == nil || opts.Settings == nil || opts.Store == nil || opts.Pricer == nil {
		return nil, errors.New("guard: Options.Token, Settings, Store and Pricer are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	_, port, err := net.SplitHostPort(strings.TrimPrefix(opts.BaseURL, "http://"))
	if err != nil {
		return nil, fmt.Errorf("guard: BaseURL %q: %w", opts.BaseURL, err)
	}
	s := &Server{
		opts:    opts,
		log:     opts.Logger,
		now:     now,
		baseURL: opts.BaseURL,
		policy:  hostPolicy{port: port, extraHostname: opts.InsecureHost},
		auth:    authenticator{token: opts.Token, ownerToken: opts.OwnerToken, cookieName: "tollgate_" + port, port: port},
		logins:  newLoginNonces(now),
		mux:     http.NewServeMux(),
		bodyLimits: map[string]int64{
			"POST /v1/sessions/{session}/requests": surfaceBodyLimit,
			"POST /v1/sessions/{session}/rewrites": surfaceBodyLimit,
		},
		harnessWrites: maps.Clone(harnessWrites),
		engines:       newEngineRegistry(now),
		settings:      opts.Settings,
		store:         opts.Store,
		pricer:        opts.Pricer,
		events:        newHub(opts.Logger),
		stop:          make(chan struct{}),
	}
	s.broker = newBroker(s)
	if err := s.broker.load(ctx); err != nil {
		return nil, fmt.Errorf("guard: loading state: %w", err)
	}
	s.routes()
	go s.watchLeases()
	return s, nil
}

// Close stops background work and ends open event streams.
func (s *Server) Close() {
	s.stopOnce.Do(func() { close(s.stop) })
}

// watchLeases announces engines whose lease ran out, so the pill turns to
// "not armed" without anyone asking.
func (s *Server) watchLeases() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.engines.mu.Lock()
			n := s.engines.expireLocked(s.now())
			s.engines.mu.Unlock()
			if n > 0 {
				s.enginesChanged()
			}
		}
	}
}

func (s *Server) routes() {
	s.patterns = map[string]bool{}
	m := routeRecorder{s.mux, s.patterns}
	m.HandleFunc("GET /v1/health", s.handleHealth)
	m.HandleFunc("POST /v1/login", s.handleNewLogin)
	m.HandleFunc("POST /v1/token/rotate", s.handleRotateToken)
	m.HandleFunc("POST /v1/window/raise", s.handleRaise)

	m.HandleFunc("POST /v1/engines", s.handleRegister)
	m.HandleFunc("GET /v1/engines", s.handleEngines)
	m.HandleFunc("POST /v1/engines/{id}/heartbeat", s.handleHeartbeat)
	m.HandleFunc("DELETE /v1/engines/{id}", s.handleUnregister)

	m.HandleFunc("POST /v1/sessions/{session}/requests", s.handleRecordRequest)
	m.HandleFunc("POST /v1/sessions/{session}/rewrites", s.handleRewrite)
	m.HandleFunc("GET /v1/rewrites/{id}", s.handleGetRewrite)
	m.HandleFunc("POST /v1/rewrites/{id}/answer", s.handleAnswer)
	m.HandleFunc("POST /v1/rewrites/{id}/outcome", s.handleOutcome)

	m.HandleFunc("GET /v1/mode", s.handleGetMode)
	m.HandleFunc("PUT /v1/mode", s.handlePutMode)
	m.HandleFunc("GET /v1/events", s.handleEvents)

	m.HandleFunc("GET /v1/sessions", s.handleSessions)
	m.HandleFunc("DELETE /v1/sessions", s.handleDeleteAll)
	m.HandleFunc("GET /v1/sessions/{id}", s.handleSession)
	m.HandleFunc("DELETE /v1/sessions/{id}", s.handleDeleteSession)
	m.HandleFunc("GET /v1/sessions/{id}/series", s.handleSeries)
	m.HandleFunc("GET /v1/sessions/{id}/export", s.handleExport)
	m.HandleFunc("GET /v1/export", s.handleExport)
	m.HandleFunc("GET /v1/spend", s.handleSpend)
	m.HandleFunc("GET /v1/sessions/{id}/breaks", s.handleSessionBreaks)
	m.HandleFunc("GET /v1/breaks", s.handleBreaks)

	m.HandleFunc("GET /v1/profiles", s.handleProfiles)
	m.HandleFunc("PUT /v1/profiles/{name}", s.handlePutProfile)
	m.HandleFunc("PUT /v1/settings", s.handlePutSettings)
	m.HandleFunc("POST /v1/reprice", s.handleReprice)
	for _, rt := range s.opts.Routes {
		m.Handle(rt.Pattern, rt.Handler)
		s.patterns[rt.Pattern] = true
		if rt.BodyLimit > 0 {
			s.bodyLimits[rt.Pattern] = rt.BodyLimit
		}
		if rt.Harness {
			s.harnessWrites[rt.Pattern] = true
		}
	}
	s.mux.HandleFunc("/v1/", s.handleUnrouted)
	s.mux.HandleFunc("/otlp/", s.handleUnrouted)
}

// authenticated says whether a path is served by the authenticated chain:
// the API, the OpenTelemetry receiver a harness exports to (/otlp/v1/logs,
// /otlp/v1/metrics: the harness sends the same bearer token), and the
// Prometheus scrape (/metrics, with authorization.credentials_file).
func authenticated(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/otlp/") || path == "/metrics"
}

// routeRecorder registers routes and remembers their patterns.
type routeRecorder struct {
	*http.ServeMux
	seen map[string]bool
}

func (r routeRecorder) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	r.seen[pattern] = true
	r.ServeMux.HandleFunc(pattern, h)
}

// Patterns lists the registered /v1 routes (the permission table's test
// checks it covers every one).
func (s *Server) Patterns() []string {
	return slices.Sorted(maps.Keys(s.patterns))
}

// handleUnrouted answers what no route takes: 405 with Allow when the path
// exists under another method, else 404.
func (s *Server) handleUnrouted(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = method
		if _, pattern := s.mux.Handler(probe); pattern != "/v1/" && pattern != "/otlp/" && pattern != "" {
			allowed = append(allowed, method)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use "+strings.Join(allowed, " or "))
		return
	}
	writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
}

// Handler is the chain for the TCP listener.
func (s *Server) Handler() http.Handler {
	api := s.auth.authenticate(s.permit(s.limitBody(s.mux)))
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case authenticated(r.URL.Path):
			api.ServeHTTP(w, r)
		case r.URL.Path == "/login":
			if r.Method != http.MethodGet {
				writeError(w, http.StatusMethodNotAllowed, "use GET /login?nonce=…")
				return
			}
			s.handleLogin(w, r)
		default:
			s.serveStatic(w, r)
		}
	})
	return securityHeaders(s.policy.checkHost(s.policy.checkOrigin(root)))
}

// TrustedHandler is the chain for the Wails window's AssetServer: the same
// routes, without Host, Origin or token checks (see security.go).
func (s *Server) TrustedHandler() http.Handler {
	api := s.limitBody(s.mux)
	return trusted(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authenticated(r.URL.Path) {
			api.ServeHTTP(w, r)
			return
		}
		s.serveStatic(w, r)
	}))
}

// serveStatic serves the built UI; unknown paths get index.html so the UI's
// own routes (#/sessions/…) survive a reload.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, "static files take GET")
		return
	}
	if s.opts.Assets == nil {
		writeError(w, http.StatusNotFound, "this build has no UI assets")
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	if st, err := fs.Stat(s.opts.Assets, name); err != nil || st.IsDir() {
		name = "index.html"
	}
	if name == "index.html" {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(w, r, s.opts.Assets, name)
}

// Health is the body of GET /v1/health.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
	Armed   bool   `json:"armed"`
	Engines int    `json:"engines"`
	Mode    string `json:"mode"`
}

func (s *Server) health() Health {
	n := s.engines.live()
	return Health{Status: "ok", Version: s.opts.Version, Armed: s.armed(n), Engines: n, Mode: s.settings.GlobalMode()}
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.health())
}

func (s *Server) handleRotateToken(w http.ResponseWriter, r *http.Request) {
	if s.opts.RotateToken == nil || IsWindow(r.Context()) {
		writeError(w, http.StatusForbidden, "rotate the token with `tollgate token --rotate`")
		return
	}
	tok, err := s.opts.RotateToken()
	if err != nil {
		s.log.Error("rotating token", "err", err)
		writeError(w, http.StatusInternalServerError, "rotating token: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": tok})
}

func (s *Server) handleRaise(w http.ResponseWriter, r *http.Request) {
	if s.opts.OnRaise == nil {
		writeError(w, http.StatusConflict, "this tollgate runs headless (tollgate serve); open "+s.baseURL)
		return
	}
	s.opts.OnRaise()
	w.WriteHeader(http.StatusNoContent)
}
