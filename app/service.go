// Package app starts and stops one tollgate: the instance lock, the
// configuration, the database, the guard's listener, the routes of the
// rooms below it, and the discovery file. It is the composition root and
// only that (ARCHITECTURE.md, "Rooms"): the window, the commands, the
// harness integrations, imports, doctor and the simulator live in their own
// packages under app/.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"tollgate/app/config"
	"tollgate/app/doctor"
	"tollgate/app/follow"
	"tollgate/app/harness"
	_ "tollgate/app/harness/all" // every harness registers its integration and log format
	"tollgate/app/home"
	"tollgate/app/imports"
	"tollgate/app/sim"
	"tollgate/app/telemetry"
	"tollgate/guard"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
	"tollgate/storage"
	"tollgate/storage/sqlite"
)

// StartOptions say how to start a Service.
type StartOptions struct {
	Home    string
	Flags   config.Flags
	Version string
	Assets  fs.FS
	Desktop bool
	Logger  *slog.Logger
	// Follow follows the harnesses' log folders (unless config.yaml's
	// watch: turns it off): the window and `tollgate serve` do, a
	// simulation and the tests' tollgates do not.
	Follow bool
}

// Service is one running tollgate: config, database, API listener.
type Service struct {
	Home   string
	Config *config.Config
	DB     *sqlite.DB
	Server *guard.Server
	URL    string
	// MetricsURL is the --metrics-listen page ("" without).
	MetricsURL string

	log      *slog.Logger
	settings *config.Settings
	ln       net.Listener
	http     *http.Server
	lock     *os.File
	tokenMu  sync.RWMutex
	token    string
	owner    string // the owner token (<home>/owner.token)
	serveErr chan error
	raise    func()
	raiseMu  sync.Mutex

	// telemetry receives the harnesses' OTLP exports; figures are what
	// the exports (Prometheus, OTLP push) count.
	telemetry *telemetry.Receiver
	figures   *telemetry.Figures
	metrics   *http.Server // --metrics-listen, nil without
	stopPush  func(context.Context) error

	// background is cancelled by Close: work the service started on its
	// own (a simulated session) stops with it.
	background context.Context
	stopWork   context.CancelFunc

	// follower imports what the harnesses append (nil: not following).
	follower *follow.Follower
}

// shutdownGrace is how long Close lets requests in flight finish before it
// closes what is left: a connection that was opened but never sent a
// request would otherwise hold Shutdown for its whole context.
const shutdownGrace = time.Second

// Start brings a tollgate up: everything a harness needs is in place when it
// returns, and api.json (written last) says so.
func Start(ctx context.Context, opts StartOptions) (*Service, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(opts.Home, 0o700); err != nil {
		return nil, fmt.Errorf("creating home %s: %w", opts.Home, err)
	}
	// One process per home. The flock is the arbiter (two processes starting
	// at the same moment cannot both win); api.json tells the loser whom it lost to.
	lock, err := home.Lock(opts.Home)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			lock.Close()
		}
	}()

	cfg, err := config.LoadConfig(opts.Home, opts.Flags)
	if err != nil {
		return nil, err
	}
	token, err := home.LoadOrCreateToken(opts.Home)
	if err != nil {
		return nil, err
	}
	owner, err := home.LoadOrCreateOwnerToken(opts.Home)
	if err != nil {
		return nil, err
	}
	db, err := sqlite.Open(ctx, home.DBPath(opts.Home))
	if err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			db.Close()
		}
	}()

	ln, err := guard.Listen(cfg.Listen, cfg.InsecureListen)
	if err != nil {
		return nil, err
	}
	url := "http://" + ln.Addr().String()
	s := &Service{
		Home: opts.Home, Config: cfg, DB: db, URL: url,
		log: log, ln: ln, lock: lock, token: token, owner: owner,
		settings: config.NewSettings(cfg),
		serveErr: make(chan error, 1),
	}
	s.background, s.stopWork = context.WithCancel(context.Background())
	s.telemetry = &telemetry.Receiver{Store: db, Settings: s.settings, Log: log,
		Publish: func(event string, data any) { s.Server.Publish(event, data) }}
	s.figures = &telemetry.Figures{Source: db, Receiver: s.telemetry, Armed: func() bool { return s.Server.Armed() }}
	srv, err := guard.NewServer(ctx, guard.Options{
		Version:      opts.Version,
		Assets:       opts.Assets,
		Token:        s.currentToken,
		OwnerToken:   s.ownerToken,
		RotateToken:  s.rotateToken,
		BaseURL:      url,
		InsecureHost: guard.InsecureHostFor(cfg.Listen),
		Settings:     s.settings,
		Store:        db,
		Pricer:       guardPricer{s.settings},
		Reprice:      s.reprice,
		Routes:       s.routes(),
		Integrations: func() []api.Integration { return s.integrations() },
		OnRaise:      s.onRaise(opts.Desktop),
		OnQuestion:   s.onRaise(opts.Desktop),
		Logger:       log,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.Server = srv
	if opts.Follow && cfg.Watch.Enabled {
		userHome, _ := os.UserHomeDir()
		f, err := follow.Start(s.background, follow.Options{DB: db, Settings: s.settings, Log: log,
			Roots:   follow.Roots(cfg.Watch, os.Getenv, userHome),
			Publish: func(event string, data any) { s.Server.Publish(event, data) }})
		if err != nil {
			// Without inotify the dashboard is live only by `tollgate import
			// --watch`; the guard itself does not need it.
			log.Error("not following the harness logs", "err", err)
		} else {
			s.follower = f
		}
	}

	s.http = srv.HTTPServer(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	limited := guard.LimitListener(ln, guard.DefaultConnLimits())
	go func() { s.serveErr <- s.http.Serve(limited) }()
	if cfg.MetricsListen != "" {
		if err := s.serveMetrics(cfg.MetricsListen); err != nil {
			s.stopFollowing()
			s.http.Close()
			return nil, err
		}
	}

	// export.otlp (or OTEL_EXPORTER_OTLP_*): push the figures to a team's
	// collector. A collector that is down costs a log line, never a start.
	push := telemetry.PushOptions{Endpoint: cfg.ExportOTLP.Endpoint, Headers: cfg.ExportOTLP.Headers, Interval: cfg.ExportOTLP.Interval,
		User: cfg.ExportOTLP.User, Version: opts.Version, Self: url}
	if telemetry.PushConfigured(push) {
		if stop, err := s.figures.Push(ctx, push); err != nil {
			log.Error("OTLP metric export not started", "err", err)
		} else {
			s.stopPush = stop
		}
	}

	// The listener is accepting (Serve runs on a bound socket): publish it.
	if err := home.WriteAPIInfo(opts.Home, home.APIInfo{URL: url, Token: token, PID: os.Getpid(), Version: opts.Version, Desktop: opts.Desktop}); err != nil {
		if s.stopPush != nil {
			s.stopPush(context.Background())
		}
		if s.metrics != nil {
			s.metrics.Close()
		}
		s.stopFollowing()
		s.http.Close()
		return nil, fmt.Errorf("writing %s: %w", home.APIFilePath(opts.Home), err)
	}
	ok = true
	log.Info("tollgate listening", "url", url, "home", opts.Home)
	return s, nil
}

// integrations are the harness integrations, each saying when its
// telemetry last arrived (telemetry never arms the guard: it reports, it
// does not ask). The receiver reads only registered integrations' events,
// so every harness it heard from is in the list.
func (s *Service) integrations() []api.Integration {
	out := harness.Integrations(s.Home)
	for i := range out {
		if t, ok := s.telemetry.LastEvent(out[i].Name); ok {
			out[i].Detail += "; receiving telemetry (last event " + t.Local().Format("2006-01-02 15:04:05") + ")"
		}
	}
	return out
}

// serveMetrics serves the Prometheus page, and only it, on a loopback
// address without a token (--metrics-listen).
func (s *Service) serveMetrics(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(telemetry.MetricsRoute, s.figures.PrometheusHandler())
	s.metrics = &http.Server{Handler: telemetry.LoopbackOnly(mux), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.MetricsURL = "http://" + ln.Addr().String() + "/metrics"
	go s.metrics.Serve(ln)
	return nil
}

// endpoint reaches this tollgate in-process, through the same handler
// chain (and the same token) as a harness over TCP, without a socket: the
// Claude Code HTTP hook and the simulator are harnesses too.
func (s *Service) endpoint() client.Endpoint {
	return client.Endpoint{URL: s.URL, Token: s.currentToken(), Transport: client.InProcess(s.Server.Handler())}
}

// routes are the rooms' own API routes beside the guard's.
func (s *Service) routes() []guard.Route {
	routes := []guard.Route{
		{Pattern: imports.Route, BodyLimit: imports.BodyLimit, Handler: &imports.Handler{DB: s.DB, Settings: s.settings,
			Publish: func(event string, data any) { s.Server.Publish(event, data) }}},
		// The simulator is the owner's demonstration: it sets its session's
		// mode, so it runs with the owner's token.
		{Pattern: sim.Route, Handler: &sim.Handler{Endpoint: s.ownerEndpoint, Background: s.background, Log: s.log,
			Model: func() (string, pricing.CacheModel, error) {
				profile := s.settings.DefaultProfile()
				model, _, err := s.settings.ResolveModel(profile, "", "deepseek-flash")
				return cmp.Or(profile, "deepseek-flash"), model, err
			}}},
		{Pattern: follow.Route, Handler: follow.Handler(func() follow.Status { return s.follower.Status() })},
		{Pattern: harnessesRoute, Handler: harnessesHandler()},
		{Pattern: "GET /v1/doctor", Handler: doctor.DoctorHandler(s.Home, doctor.DoctorOptions{DB: s.DB})},
		// A harness exports its telemetry with its own token; the scrape is a read.
		{Pattern: telemetry.LogsRoute, Harness: true, BodyLimit: telemetry.BodyLimit, Handler: s.telemetry.Logs()},
		{Pattern: telemetry.OTLPMetricsRoute, Harness: true, BodyLimit: telemetry.BodyLimit, Handler: s.telemetry.Metrics()},
		{Pattern: telemetry.MetricsRoute, Handler: s.figures.PrometheusHandler()},
	}
	// A harness's HTTP hook is a harness: its own token may call it.
	for _, in := range harness.Registered() {
		if r := in.HookRoute; r != nil {
			routes = append(routes, guard.Route{Pattern: r.Pattern, Harness: true, Handler: r.Handler(s.Home, s.endpoint, s.log)})
		}
	}
	return routes
}

func (s *Service) currentToken() string {
	s.tokenMu.RLock()
	defer s.tokenMu.RUnlock()
	return s.token
}

func (s *Service) ownerToken() string {
	s.tokenMu.RLock()
	defer s.tokenMu.RUnlock()
	return s.owner
}

// OwnerToken is the current owner token.
func (s *Service) OwnerToken() string { return s.ownerToken() }

// ownerEndpoint reaches this tollgate in-process as the owner.
func (s *Service) ownerEndpoint() client.Endpoint {
	return client.Endpoint{URL: s.URL, Token: s.ownerToken(), Transport: client.InProcess(s.Server.Handler())}
}

// rotateToken replaces both tokens (a leak of either is what rotation is
// for) and returns the new harness token; cookies die with them.
func (s *Service) rotateToken() (string, error) {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	owner, err := home.RotateOwnerToken(s.Home)
	if err != nil {
		return "", err
	}
	s.owner = owner
	tok, err := home.RotateToken(s.Home)
	if err != nil {
		return "", err
	}
	s.token = tok
	info, err := home.ReadAPIInfo(s.Home)
	if err == nil && info.PID == os.Getpid() {
		info.Token = tok
		if err := home.WriteAPIInfo(s.Home, info); err != nil {
			return "", err
		}
	}
	return tok, nil
}

// SetRaise installs the function that brings the window to the front.
func (s *Service) SetRaise(f func()) {
	s.raiseMu.Lock()
	s.raise = f
	s.raiseMu.Unlock()
}

func (s *Service) onRaise(desktop bool) func() {
	if !desktop {
		return nil
	}
	return func() {
		s.raiseMu.Lock()
		f := s.raise
		s.raiseMu.Unlock()
		if f != nil {
			f()
		}
	}
}

// Settings is the live, writable configuration.
func (s *Service) Settings() *config.Settings { return s.settings }

// Token is the current API token.
func (s *Service) Token() string { return s.currentToken() }

// Done is closed with the listener's error when it stops serving.
func (s *Service) Done() <-chan error { return s.serveErr }

// reprice re-prices stored requests with today's prices (an explicit
// action: history otherwise keeps the prices it was billed at).
func (s *Service) reprice(ctx context.Context, session string) (int64, int64, error) {
	return s.DB.Reprice(ctx, session, func(r storage.ExportedRequest) (sqlite.Repriced, error) {
		pu, err := s.settings.PriceUsage(r.Profile, r.Provider, r.Model, r.At, r.Usage)
		return sqlite.Repriced{Cost: pu.Cost, Prices: pu.Prices, PricedBy: string(pu.PricedBy), OffPeak: pu.OffPeak, TTLSeconds: pu.TTLSeconds}, err
	})
}

// Close stops the listener, removes api.json and closes the database. It
// gives requests in flight about a second (shutdownGrace, or less if ctx
// ends first), then closes every connection still open.
func (s *Service) Close(ctx context.Context) error {
	s.stopWork()
	s.stopFollowing()      // an import in flight ends before the database closes
	if s.stopPush != nil { // the last figures go out before the database closes
		pushCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := s.stopPush(pushCtx); err != nil {
			s.log.Warn("OTLP metric export: the last push failed", "err", err)
		}
		cancel()
	}
	home.RemoveAPIInfo(s.Home, os.Getpid())
	s.Server.Close()
	graceCtx, cancel := context.WithTimeout(ctx, shutdownGrace)
	defer cancel()
	err := s.http.Shutdown(graceCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil // what is left is closed below; that is the plan, not a failure
	}
	s.http.Close()
	if s.metrics != nil {
		s.metrics.Close()
	}
	if cerr := s.DB.Close(); err == nil {
		err = cerr
	}
	s.lock.Close()
	return err
}

func (s *Service) stopFollowing() {
	if s.follower != nil {
		s.follower.Close()
	}
}

// guardPricer prices for the guard with the profile lookup of
// ARCHITECTURE.md ("Pricing a request").
type guardPricer struct{ settings *config.Settings }

func (p guardPricer) PriceRequest(profile, provider, model string, at time.Time, u pricing.Usage) (guard.PricedRequest, error) {
	pu, err := p.settings.PriceUsage(profile, provider, model, at, u)
	if err != nil {
		return guard.PricedRequest{}, err
	}
	return guard.PricedRequest{Cost: pu.Cost, Prices: pu.Prices, PricedBy: string(pu.PricedBy), OffPeak: pu.OffPeak, TTLSeconds: pu.TTLSeconds}, nil
}

func (p guardPricer) CacheModel(profile, provider, model string) (pricing.CacheModel, error) {
	m, _, err := p.settings.ResolveModel(profile, provider, model)
	return m, err
}
