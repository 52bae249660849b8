// Package app is tollgate's composition root: it reads the configuration,
// opens the database, starts the guard's listener, writes the discovery file,
// and glues the Wails window, tray and notifications to them.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"tollgate/guard"
	"tollgate/guard/client"
	"tollgate/pricing"
	"tollgate/storage"
	"tollgate/storage/sqlite"
)

// StartOptions say how to start a Service.
type StartOptions struct {
	Home    string
	Flags   Flags
	Version string
	Assets  fs.FS
	Desktop bool
	Logger  *slog.Logger
	// Routes are extra authenticated API routes (import, simulate).
	Routes map[string]http.Handler
}

// Service is one running tollgate: config, database, API listener.
type Service struct {
	Home   string
	Config *Config
	DB     *sqlite.DB
	Server *guard.Server
	URL    string

	log      *slog.Logger
	settings *Settings
	ln       net.Listener
	http     *http.Server
	lock     *os.File
	tokenMu  sync.RWMutex
	token    string
	serveErr chan error
	raise    func()
	raiseMu  sync.Mutex

	simRunning atomic.Bool
	// background is cancelled by Close: work the service started on its
	// own (a simulated session) stops with it.
	background context.Context
	stopWork   context.CancelFunc
}

// AlreadyRunningError says another tollgate owns this home.
type AlreadyRunningError struct {
	Info APIInfo
}

func (e *AlreadyRunningError) Error() string {
	if e.Info.URL == "" {
		return "another tollgate is starting on this home"
	}
	return fmt.Sprintf("tollgate is already running on this home (pid %d, %s)", e.Info.PID, e.Info.URL)
}

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
	lock, err := lockHome(opts.Home)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			lock.Close()
		}
	}()

	cfg, err := LoadConfig(opts.Home, opts.Flags)
	if err != nil {
		return nil, err
	}
	token, err := LoadOrCreateToken(opts.Home)
	if err != nil {
		return nil, err
	}
	db, err := sqlite.Open(ctx, DBPath(opts.Home))
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
		log: log, ln: ln, lock: lock, token: token,
		settings: NewSettings(cfg),
		serveErr: make(chan error, 1),
	}
	s.background, s.stopWork = context.WithCancel(context.Background())
	srv, err := guard.NewServer(ctx, guard.Options{
		Version:      opts.Version,
		Assets:       opts.Assets,
		Token:        s.currentToken,
		RotateToken:  s.rotateToken,
		BaseURL:      url,
		InsecureHost: guard.InsecureHostFor(cfg.Listen),
		Settings:     s.settings,
		Store:        db,
		Pricer:       gatePricer{s.settings},
		Reprice:      s.reprice,
		Routes:       IntegrationRoutes(s.routes(opts.Routes), opts.Home, func() client.Endpoint { return client.Endpoint{URL: url, Token: s.currentToken()} }, log),
		Integrations: func() []guard.Integration { return Integrations(opts.Home) },
		OnRaise:      s.onRaise(opts.Desktop),
		OnQuestion:   s.onRaise(opts.Desktop),
		Logger:       log,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.Server = srv
	s.http = &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() { s.serveErr <- s.http.Serve(ln) }()

	// The listener is accepting (Serve runs on a bound socket): publish it.
	if err := WriteAPIInfo(opts.Home, APIInfo{URL: url, Token: token, PID: os.Getpid(), Version: opts.Version, Desktop: opts.Desktop}); err != nil {
		s.http.Close()
		return nil, fmt.Errorf("writing %s: %w", APIFilePath(opts.Home), err)
	}
	ok = true
	log.Info("tollgate listening", "url", url, "home", opts.Home)
	return s, nil
}

func (s *Service) currentToken() string {
	s.tokenMu.RLock()
	defer s.tokenMu.RUnlock()
	return s.token
}

func (s *Service) rotateToken() (string, error) {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	tok, err := RotateToken(s.Home)
	if err != nil {
		return "", err
	}
	s.token = tok
	info, err := ReadAPIInfo(s.Home)
	if err == nil && info.PID == os.Getpid() {
		info.Token = tok
		if err := WriteAPIInfo(s.Home, info); err != nil {
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
func (s *Service) Settings() *Settings { return s.settings }

// Token is the current API token.
func (s *Service) Token() string { return s.currentToken() }

// Done is closed with the listener's error when it stops serving.
func (s *Service) Done() <-chan error { return s.serveErr }

// routes are the app's own API routes, beside any the caller adds.
func (s *Service) routes(extra map[string]http.Handler) map[string]http.Handler {
	r := map[string]http.Handler{
		"POST /v1/simulate": http.HandlerFunc(s.handleSimulate),
		"POST /v1/import":   http.HandlerFunc(s.handleImport),
		"GET /v1/doctor":    DoctorHandler(s.Home, DoctorOptions{DB: s.DB}),
	}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

// reprice re-prices stored requests with today's prices (an explicit
// action: history otherwise keeps the prices it was billed at).
func (s *Service) reprice(ctx context.Context, session string) (int64, int64, error) {
	return s.DB.Reprice(ctx, session, func(r storage.ExportedRequest) (storage.Cost, string, string, bool, error) {
		u := pricing.Usage{InputTokens: r.Usage.Input, CacheReadTokens: r.Usage.CacheRead, CacheWriteTokens: r.Usage.CacheWrite,
			CacheWrite1hTokens: r.Usage.CacheWrite1h, OutputTokens: r.Usage.Output}
		pu, err := s.settings.PriceUsage(r.Profile, r.Provider, r.Model, r.At, u)
		return pu.Cost, pu.Prices, string(pu.PricedBy), pu.OffPeak, err
	})
}

// Close stops the listener, removes api.json and closes the database.
func (s *Service) Close(ctx context.Context) error {
	s.stopWork()
	RemoveAPIInfo(s.Home, os.Getpid())
	s.Server.Close()
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	if cerr := s.DB.Close(); err == nil {
		err = cerr
	}
	s.lock.Close()
	return err
}

// lockHome takes the home's instance lock, or explains who holds it.
func lockHome(home string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(home, "tollgate.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening instance lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			// The holder writes api.json once it listens; give it a moment.
			var info APIInfo
			for i := 0; i < 50; i++ {
				if info, err = ReadAPIInfo(home); err == nil && ProcessAlive(info.PID) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			return nil, &AlreadyRunningError{Info: info}
		}
		return nil, fmt.Errorf("locking home: %w", err)
	}
	return f, nil
}
