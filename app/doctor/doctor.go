// Package doctor is `tollgate doctor` (and GET /v1/doctor, the
// Integrations page's panel): it checks what a guard needs to be in place
// and says how to fix what is not.
//
// Every check ends in one status:
//
//	ok     in place
//	info   nothing to do (e.g. a harness that is not installed here)
//	warn   works, but less well than it could (no tray host, no display,
//	       no autostart, an integration not set up): never fails doctor
//	error  something tollgate needs is missing or broken: doctor exits 1
//
// Only the checks marked Needed can end in error: the libraries the window
// links (WebKitGTK 4.1, GTK 3), a valid config, a private token file, a
// running tollgate whose api.json is fresh, a healthy database, an
// installed integration that resolves to this binary, and an autostart
// entry that starts an existing binary. Each warn and error carries Fix,
// the shell command that fixes it (for an integration not set up: the
// command that sets it up).
package doctor

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/godbus/dbus/v5"

	"tollgate/app/config"
	"tollgate/app/desktop/sessionbus"
	"tollgate/app/harness"
	"tollgate/app/harness/claudecode"
	"tollgate/app/harness/codex"
	"tollgate/app/harness/opencode"
	"tollgate/app/harness/reasonix"
	"tollgate/app/home"
	"tollgate/app/install"
	"tollgate/build/desktop"
	"tollgate/guard/api"
	"tollgate/storage/sqlite"
)

// Doctor statuses.
const (
	DoctorOK    = "ok"
	DoctorInfo  = "info"
	DoctorWarn  = "warn"
	DoctorError = "error"
)

// DoctorCheck is one line of the report.
type DoctorCheck struct {
	ID     string         `json:"id"`
	Title  string         `json:"title"`
	Status string         `json:"status"`
	Needed bool           `json:"needed"` // an error here fails doctor
	Detail string         `json:"detail"`
	Fix    string         `json:"fix,omitempty"`
	Facts  map[string]any `json:"facts,omitempty"`
}

// DoctorReport is the whole screen: `tollgate doctor --json` prints it and
// GET /v1/doctor answers it.
type DoctorReport struct {
	OK        bool           `json:"ok"` // no check ended in error
	Home      string         `json:"home"`
	Binary    string         `json:"binary"`
	Version   string         `json:"version"`
	CheckedAt time.Time      `json:"checkedAt"`
	Counts    map[string]int `json:"counts"` // per status: ok, info, warn, error
	Checks    []DoctorCheck  `json:"checks"`
}

// DoctorOptions are what the checks read beyond the home; zero values
// mean the real thing.
type DoctorOptions struct {
	// Version of this binary ("" inside a service: the version api.json names).
	Version string
	// DB is the service's open database (GET /v1/doctor); nil opens the
	// file read-only.
	DB *sqlite.DB
	// Self is this binary (default os.Executable()).
	Self string
	// LookupLib resolves a shared library soname (default: the ld.so
	// cache, `ldconfig -p`, and $LD_LIBRARY_PATH).
	LookupLib func(soname string) (string, error)
	// Timeout bounds each network or D-Bus round trip (default 3 s).
	Timeout time.Duration
}

// Doctor runs every check against home.
func Doctor(ctx context.Context, dir string, opts DoctorOptions) DoctorReport {
	d := newDoctor(dir, opts)
	checks := []func(context.Context) DoctorCheck{
		d.checkBinary,
		d.checkWindowBinary,
		d.libCheck("webkitgtk", "WebKitGTK 4.1", "libwebkit2gtk-4.1.so.0", "libwebkit2gtk-4.1-0"),
		d.libCheck("gtk", "GTK 3", "libgtk-3.so.0", "libgtk-3-0"),
		d.checkDisplay,
		d.checkTray,
		d.checkNotifications,
		d.checkConfig,
		d.checkToken,
		d.checkDatabase,
		d.checkAPI,
		d.checkGuard,
	}
	rep := DoctorReport{Home: dir, Binary: d.self, CheckedAt: time.Now().UTC(), Counts: map[string]int{}}
	for _, c := range checks {
		rep.Checks = append(rep.Checks, c(ctx))
	}
	rep.Checks = append(rep.Checks, d.checkIntegrations()...)
	rep.Checks = append(rep.Checks, d.checkAutostart())
	rep.Version = d.version
	rep.OK = true
	for _, c := range rep.Checks {
		rep.Counts[c.Status]++
		if c.Status == DoctorError {
			rep.OK = false
		}
	}
	for _, s := range []string{DoctorOK, DoctorInfo, DoctorWarn, DoctorError} {
		rep.Counts[s] += 0
	}
	return rep
}

type doctor struct {
	home    string
	opts    DoctorOptions
	self    string
	version string
	cmd     string // how a fix command names this binary
	homeArg string // " --home DIR" unless home is the default
	sudo    string // "sudo " unless root
	timeout time.Duration

	// what the API check learnt, for the guard check
	health *doctorHealth
	live   bool
}

type doctorHealth struct {
	Status  string `json:"status"`
	Version string `json:"version"`
	Armed   bool   `json:"armed"`
	Engines int    `json:"engines"`
	Mode    string `json:"mode"`
}

func newDoctor(dir string, opts DoctorOptions) *doctor {
	d := &doctor{home: dir, opts: opts, self: opts.Self, version: opts.Version, timeout: opts.Timeout, sudo: "sudo "}
	if d.timeout <= 0 {
		d.timeout = 3 * time.Second
	}
	if d.self == "" {
		if exe, err := home.Executable(); err == nil {
			d.self = exe
		}
	}
	if d.opts.LookupLib == nil {
		d.opts.LookupLib = newLibLookup().lookup
	}
	if os.Geteuid() == 0 {
		d.sudo = ""
	}
	d.cmd = home.ShellQuote(d.self)
	if p, err := exec.LookPath(desktop.AppID); err == nil && home.SameFile(p, d.self) {
		d.cmd = desktop.AppID
	}
	if d.self == "" {
		d.cmd = desktop.AppID
	}
	if def, err := defaultHome(); err != nil || filepath.Clean(def) != filepath.Clean(dir) {
		d.homeArg = " --home " + home.ShellQuote(dir)
	}
	if d.version == "" {
		if info, err := home.ReadAPIInfo(dir); err == nil && info.PID == os.Getpid() {
			d.version = info.Version
		}
	}
	return d
}

// defaultHome is the home with no --home and no $TOLLGATE_HOME.
func defaultHome() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "tollgate"), nil
}

func (d *doctor) hasDisplay() bool {
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// startCommand starts tollgate on this home: the tray app where there is a
// display, the headless server elsewhere.
func (d *doctor) startCommand() string {
	if d.hasDisplay() {
		return d.cmd + d.homeArg + " --hidden &"
	}
	return d.cmd + " serve" + d.homeArg + " &"
}

// ---- the binary and the libraries ----

func (d *doctor) checkBinary(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "binary", Title: "This binary", Status: DoctorOK}
	v := d.version
	if v == "" {
		v = "(version unknown)"
	}
	c.Facts = map[string]any{"path": d.self, "version": d.version}
	onPath, err := exec.LookPath(desktop.AppID)
	switch {
	case err != nil:
		c.Status = DoctorInfo
		c.Detail = fmt.Sprintf("tollgate %s at %s; `tollgate` is not on your PATH", v, d.self)
		c.Fix = d.cmd + " install --user"
	case !home.SameFile(onPath, d.self):
		c.Status = DoctorWarn
		c.Detail = fmt.Sprintf("tollgate %s at %s, but `tollgate` on your PATH is %s, another binary: hooks and commands you type run that one", v, d.self, onPath)
		c.Fix = d.cmd + " install --user --force"
	default:
		c.Detail = fmt.Sprintf("tollgate %s at %s (on PATH)", v, d.self)
	}
	return c
}

// checkWindowBinary finds the window binary `tollgate` with no verb execs
// (home.WindowBinary). Without it every command and `tollgate serve` still
// work, so it is a warning, not a failure.
func (d *doctor) checkWindowBinary(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "window", Title: "Window binary"}
	if d.self == "" {
		c.Status = DoctorInfo
		c.Detail = "this binary's path is unknown, so its window binary was not looked for"
		return c
	}
	window, err := home.WindowBinary(d.self)
	if err != nil {
		c.Status = DoctorWarn
		c.Detail = err.Error() + "; the commands and `tollgate serve` work without it, the window does not open"
		c.Fix = "make build"
		if strings.HasPrefix(d.self, "/usr/") {
			c.Fix = d.sudo + "apt-get install --reinstall tollgate"
		}
		return c
	}
	c.Status = DoctorOK
	c.Detail = home.WindowName + " at " + window + " (`tollgate` with no verb starts it)"
	c.Facts = map[string]any{"path": window}
	return c
}

func (d *doctor) libCheck(id, title, soname, pkg string) func(context.Context) DoctorCheck {
	return func(context.Context) DoctorCheck {
		c := DoctorCheck{ID: id, Title: title, Needed: true}
		path, err := d.opts.LookupLib(soname)
		if err != nil {
			c.Status = DoctorError
			c.Detail = fmt.Sprintf("%s not found (%v): the desktop window cannot start", soname, err)
			c.Fix = d.sudo + "apt-get install " + pkg
			return c
		}
		c.Status = DoctorOK
		c.Detail = soname + " → " + path
		c.Facts = map[string]any{"soname": soname, "path": path}
		return c
	}
}

// libLookup resolves sonames as the dynamic linker would find them:
// $LD_LIBRARY_PATH, then the ld.so cache (`ldconfig -p`), or, when
// ldconfig cannot run, the standard library folders.
type libLookup struct {
	once  sync.Once
	cache map[string]string
	err   error
}

func newLibLookup() *libLookup { return &libLookup{} }

func (l *libLookup) lookup(soname string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if p := filepath.Join(dir, soname); dir != "" && fileExists(p) {
			return p, nil
		}
	}
	l.once.Do(func() { l.cache, l.err = ldconfigCache() })
	if l.err == nil {
		if p, ok := l.cache[soname]; ok {
			return p, nil
		}
		return "", errors.New("not in the ld.so cache (`ldconfig -p`)")
	}
	for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		if p := filepath.Join(dir, soname); fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("not in the standard library folders (ldconfig: %v)", l.err)
}

func ldconfigCache() (map[string]string, error) {
	var out []byte
	var err error
	for _, bin := range []string{"ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		if out, err = exec.Command(bin, "-p").Output(); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return parseLdconfig(out, runtime.GOARCH), nil
}

// parseLdconfig reads `ldconfig -p` lines (`\tlibfoo.so.1 (libc6,x86-64) =>
// /lib/…/libfoo.so.1`), keeping the first entry of this architecture.
func parseLdconfig(out []byte, goarch string) map[string]string {
	want := map[string]string{"amd64": "x86-64", "arm64": "AArch64"}[goarch]
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(line, " (")
		if !ok {
			continue
		}
		flags, path, ok := strings.Cut(rest, ") => ")
		if !ok || (want != "" && !strings.Contains(flags, want)) {
			continue
		}
		if _, seen := m[name]; !seen {
			m[name] = path
		}
	}
	return m
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ---- the desktop session ----

func (d *doctor) checkDisplay(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "display", Title: "Display", Status: DoctorOK}
	x, wl := os.Getenv("DISPLAY"), os.Getenv("WAYLAND_DISPLAY")
	var found, missing []string
	if wl != "" {
		sock := wl
		if !filepath.IsAbs(sock) {
			sock = filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), wl)
		}
		if fileExists(sock) {
			found = append(found, "Wayland "+wl)
		} else {
			missing = append(missing, fmt.Sprintf("WAYLAND_DISPLAY=%s but %s does not exist", wl, sock))
		}
	}
	if x != "" {
		if sock, ok := x11Socket(x); !ok || fileExists(sock) {
			found = append(found, "X11 "+x)
		} else {
			missing = append(missing, fmt.Sprintf("DISPLAY=%s but %s does not exist", x, sock))
		}
	}
	if len(found) > 0 {
		c.Detail = strings.Join(found, ", ")
		return c
	}
	c.Status = DoctorWarn
	if len(missing) > 0 {
		c.Detail = strings.Join(missing, "; ") + ": no display server there. "
	} else {
		c.Detail = "no $DISPLAY or $WAYLAND_DISPLAY: "
	}
	c.Detail += "the window cannot open; the browser UI works without one"
	c.Fix = d.cmd + " serve" + d.homeArg
	return c
}

// x11Socket is the local socket of an X display (":0", ":0.0", "unix:1");
// ok is false for a remote display, which cannot be checked from here.
func x11Socket(display string) (string, bool) {
	host, num, ok := strings.Cut(display, ":")
	if !ok || (host != "" && host != "unix") {
		return "", false
	}
	num, _, _ = strings.Cut(num, ".")
	if _, err := strconv.Atoi(num); err != nil {
		return "", false
	}
	return "/tmp/.X11-unix/X" + num, true
}

// busName reports whether name has an owner on the session bus (or, with
// activatable, could be started by it).
func (d *doctor) busName(ctx context.Context, name string, activatable bool) (bool, error) {
	conn, err := sessionbus.Connect(dbus.WithContext(ctx))
	if err != nil {
		return false, err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var has bool
	if err := conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err != nil {
		return false, fmt.Errorf("asking the session D-Bus: %w", err)
	}
	if has || !activatable {
		return has, nil
	}
	var names []string
	if err := conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
		return false, nil
	}
	for _, n := range names {
		if n == name {
			return true, nil
		}
	}
	return false, nil
}

func (d *doctor) checkTray(ctx context.Context) DoctorCheck {
	c := DoctorCheck{ID: "tray", Title: "Tray host", Status: DoctorOK}
	const watcher = "org.kde.StatusNotifierWatcher"
	ok, err := d.busName(ctx, watcher, false)
	if ok {
		c.Detail = watcher + " runs on the session bus: the tray icon shows"
		return c
	}
	c.Status = DoctorWarn
	why := "no tray host (" + watcher + ") on the session bus"
	if err != nil {
		why = err.Error()
	}
	c.Detail = why + ": no tray icon; a hidden tollgate (--hidden) opens its window only when a question arrives or when started again"
	desk := strings.ToUpper(os.Getenv("XDG_CURRENT_DESKTOP"))
	switch {
	case strings.Contains(desk, "XFCE"):
		c.Fix = d.sudo + "apt-get install xfce4-statusnotifier-plugin   # then add it to a panel"
	case strings.Contains(desk, "KDE"), strings.Contains(desk, "LXQT"):
		c.Fix = "# " + desk + " has a tray host built in: log in to a desktop session and run doctor there"
	default: // GNOME, Debian's default desktop, needs the AppIndicator extension
		c.Fix = d.sudo + "apt-get install gnome-shell-extension-appindicator && gnome-extensions enable ubuntu-appindicators@ubuntu.com"
	}
	return c
}

func (d *doctor) checkNotifications(ctx context.Context) DoctorCheck {
	c := DoctorCheck{ID: "notifications", Title: "Notifications", Status: DoctorOK}
	const service = "org.freedesktop.Notifications"
	ok, err := d.busName(ctx, service, true)
	if ok {
		c.Detail = service + " is available: a question raises a desktop notification"
		return c
	}
	c.Status = DoctorWarn
	why := "no notification service (" + service + ") on the session bus"
	if err != nil {
		why = err.Error()
	}
	c.Detail = why + ": questions still open the window, without a desktop notification"
	c.Fix = d.sudo + "apt-get install notification-daemon"
	return c
}

// ---- the home ----

func (d *doctor) checkConfig(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "config", Title: "Configuration", Needed: true, Status: DoctorOK}
	file := filepath.Join(d.home, "config.yaml")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		c.Detail = file + " does not exist yet: the defaults apply (written with comments on first start)"
		return c
	}
	cfg, err := config.LoadConfig(d.home, config.Flags{})
	if err != nil {
		c.Status = DoctorError
		c.Detail = err.Error()
		c.Fix = "${EDITOR:-nano} " + home.ShellQuote(file) + "   # or start over with the defaults: mv " + home.ShellQuote(file) + " " + home.ShellQuote(file+".bak")
		var ce *config.ConfigError
		if errors.As(err, &ce) {
			env := "TOLLGATE_" + strings.ToUpper(ce.Key)
			if os.Getenv(env) != "" {
				c.Detail += " (from $" + env + ", which overrides the file)"
				c.Fix = "unset " + env
			}
		}
		return c
	}
	c.Detail = fmt.Sprintf("%s: mode %s, listen %s, %d %s", file, cfg.Mode, cfg.Listen, len(cfg.Profiles), plural(len(cfg.Profiles), "profile", "profiles"))
	c.Facts = map[string]any{"file": file, "mode": cfg.Mode, "listen": cfg.Listen, "profiles": len(cfg.Profiles)}
	return c
}

func (d *doctor) checkToken(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "token", Title: "Token file", Needed: true, Status: DoctorOK}
	path := home.TokenPath(d.home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Status = DoctorInfo
		c.Detail = path + " does not exist yet: it is created on first start"
		c.Fix = d.cmd + " token" + d.homeArg
		return c
	}
	if err != nil {
		c.Status = DoctorError
		c.Detail = err.Error()
		c.Fix = "ls -l " + home.ShellQuote(path)
		return c
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		c.Status = DoctorError
		c.Detail = fmt.Sprintf("%s is mode %04o, want 0600: other users can read the API token", path, perm)
		c.Fix = "chmod 600 " + home.ShellQuote(path)
		return c
	}
	b, err := os.ReadFile(path)
	tok := strings.TrimSpace(string(b))
	if _, herr := hex.DecodeString(tok); err != nil || herr != nil || len(tok) != 64 {
		c.Status = DoctorError
		c.Detail = path + " is not 64 hex characters"
		if err != nil {
			c.Detail = err.Error()
		}
		c.Fix = d.cmd + " token --rotate" + d.homeArg
		return c
	}
	// The owner token answers questions and changes settings: it must be
	// private too.
	owner := home.OwnerTokenPath(d.home)
	if fi, err := os.Stat(owner); err == nil && fi.Mode().Perm()&0o077 != 0 {
		c.Status = DoctorError
		c.Detail = fmt.Sprintf("%s is mode %04o, want 0600: other users can read the owner token", owner, fi.Mode().Perm())
		c.Fix = "chmod 600 " + home.ShellQuote(owner)
		return c
	}
	c.Detail = path + " is private (0600)"
	return c
}

func (d *doctor) checkDatabase(ctx context.Context) DoctorCheck {
	c := DoctorCheck{ID: "database", Title: "Database", Needed: true, Status: DoctorOK}
	path := home.DBPath(d.home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Detail = path + " does not exist yet: it is created on first start"
		return c
	}
	if err != nil {
		c.Status = DoctorError
		c.Detail = err.Error()
		c.Fix = "ls -l " + home.ShellQuote(path)
		return c
	}
	size := fi.Size()
	var wal int64
	if wfi, err := os.Stat(path + "-wal"); err == nil {
		wal = wfi.Size()
	}
	c.Facts = map[string]any{"path": path, "sizeBytes": size, "walBytes": wal}

	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	version, err := d.inspectDB(cctx, path)
	if err != nil {
		c.Status = DoctorError
		c.Detail = fmt.Sprintf("%s: %v", path, err)
		// Keep the damaged file for recovery (sqlite3 .recover); the next
		// start creates an empty database.
		stop := ""
		if info, err := home.ReadAPIInfo(d.home); err == nil && home.ProcessAlive(info.PID) {
			stop = fmt.Sprintf("kill %d; ", info.PID)
		}
		c.Fix = stop + "mv " + home.ShellQuote(path) + " " + home.ShellQuote(path+".damaged") + " && " + d.startCommand()
		return c
	}
	c.Facts["schemaVersion"] = version
	c.Detail = fmt.Sprintf("%s: integrity ok, schema version %d, %s", path, version, humanBytes(size))
	if wal > 0 {
		c.Detail += " (+ " + humanBytes(wal) + " write-ahead log)"
	}
	return c
}

// inspectDB checks integrity and reads the schema version, on the service's
// handle when there is one, else read-only (doctor never migrates or writes
// a database).
func (d *doctor) inspectDB(ctx context.Context, path string) (int, error) {
	if d.opts.DB != nil {
		if err := d.opts.DB.IntegrityCheck(ctx); err != nil {
			return 0, err
		}
		return d.opts.DB.SchemaVersion(ctx)
	}
	return sqlite.Inspect(ctx, path)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// ---- the running tollgate ----

func (d *doctor) checkAPI(ctx context.Context) DoctorCheck {
	c := DoctorCheck{ID: "api", Title: "API", Needed: true, Status: DoctorError}
	path := home.APIFilePath(d.home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Detail = "tollgate is not running on " + d.home + " (no api.json): harnesses proceed unguarded"
		c.Fix = d.startCommand()
		return c
	}
	info, err := home.ReadAPIInfo(d.home)
	if err != nil {
		c.Detail = err.Error()
		c.Fix = "rm " + home.ShellQuote(path) + " && " + d.startCommand()
		return c
	}
	c.Facts = map[string]any{"url": info.URL, "pid": info.PID, "version": info.Version}
	if !home.ProcessAlive(info.PID) {
		c.Detail = fmt.Sprintf("%s is stale: it names pid %d, which has exited (tollgate did not exit cleanly); harnesses find no tollgate", path, info.PID)
		c.Fix = "rm " + home.ShellQuote(path) + " && " + d.startCommand()
		return c
	}
	restart := fmt.Sprintf("kill %d && sleep 1 && %s", info.PID, d.startCommand())
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		c.Detail = fmt.Sprintf("%s is mode %04o, want 0600: other users can read the API token", path, perm)
		c.Fix = "chmod 600 " + home.ShellQuote(path)
		return c
	}
	h, err := d.getHealth(ctx, info)
	if err != nil {
		c.Detail = fmt.Sprintf("pid %d is alive but %s/v1/health does not answer: %v", info.PID, info.URL, err)
		c.Fix = restart
		return c
	}
	d.health, d.live = &h, true
	if b, err := os.ReadFile(home.TokenPath(d.home)); err == nil && strings.TrimSpace(string(b)) != info.Token {
		c.Detail = fmt.Sprintf("%s names a token other than %s: harnesses that read one of them get 401", path, home.TokenPath(d.home))
		c.Fix = restart
		return c
	}
	c.Facts["mode"], c.Facts["armed"], c.Facts["engines"] = h.Mode, h.Armed, h.Engines
	c.Status = DoctorOK
	c.Detail = fmt.Sprintf("tollgate %s (pid %d) answers at %s; mode %s", h.Version, info.PID, info.URL, h.Mode)
	if d.version != "" && h.Version != d.version {
		c.Status = DoctorWarn
		c.Detail += fmt.Sprintf("; it runs version %s, this binary is %s: restart it to run this one", h.Version, d.version)
		c.Fix = restart
	}
	return c
}

func (d *doctor) getHealth(ctx context.Context, info home.APIInfo) (doctorHealth, error) {
	var h doctorHealth
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, strings.TrimRight(info.URL, "/")+"/v1/health", nil)
	if err != nil {
		return h, err
	}
	req.Header.Set("Authorization", "Bearer "+info.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return h, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		return h, errors.New("401: it does not accept the token api.json names")
	case res.StatusCode != http.StatusOK:
		return h, fmt.Errorf("HTTP %d", res.StatusCode)
	}
	if err := json.Unmarshal(body, &h); err != nil || h.Status != "ok" {
		return h, fmt.Errorf("unexpected answer %.80q", body)
	}
	return h, nil
}

func (d *doctor) checkGuard(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "guard", Title: "Guard", Status: DoctorInfo}
	if !d.live {
		c.Detail = "unknown: tollgate is not answering (see API)"
		return c
	}
	c.Facts = map[string]any{"armed": d.health.Armed, "engines": d.health.Engines, "mode": d.health.Mode}
	if d.health.Armed {
		c.Status = DoctorOK
		parts := []string{"armed: Cache: " + d.health.Mode, fmt.Sprintf("%d %s connected", d.health.Engines, plural(d.health.Engines, "engine", "engines"))}
		for _, in := range harness.Integrations(d.home) {
			if in.Installed && in.Verified {
				parts = append(parts, in.Name+" hook installed")
			}
		}
		c.Detail = strings.Join(parts, " · ")
		return c
	}
	c.Status = DoctorWarn
	c.Detail = "not armed: no harness engine holds a lease and no hook integration is installed, so no rewrite is guarded (below: how to set one up)"
	c.Fix = d.cmd + " hook claude-code --install" + d.homeArg
	return c
}

// ---- integrations (ARCHITECTURE.md, "Integrations"), as harness.Integrations(home) reports them ----

func (d *doctor) checkIntegrations() []DoctorCheck {
	var out []DoctorCheck
	for _, in := range harness.Integrations(d.home) {
		c := DoctorCheck{ID: "integration." + in.Name, Detail: in.Detail, Status: DoctorOK}
		if in.Note != "" {
			c.Detail += " (" + in.Note + ")"
		}
		facts := map[string]any{"installed": in.Installed, "verified": in.Verified}
		if in.LastDecision != "" {
			facts["lastDecision"] = in.LastDecision
		}
		c.Facts = facts
		switch in.Name {
		case harness.ClaudeCode:
			c.Title, c.Needed = "Claude Code", true
			c.Fix = d.cmd + " hook claude-code --install" + d.homeArg
			dir, _ := claudecode.ConfigDir(os.Getenv)
			d.grade(&c, in, dir, "Claude Code")
		case harness.Reasonix:
			c.Title, c.Needed = "Reasonix", true
			plugin := filepath.Join(d.home, "integrations", "reasonix-plugin")
			c.Fix = d.cmd + " ext reasonix --install" + d.homeArg + " && reasonix plugin install " + home.ShellQuote(plugin) + " --yes --replace"
			dir, _ := reasonix.Home(os.Getenv)
			d.grade(&c, in, dir, "Reasonix")
		case harness.DSH:
			c.Title = "dsh"
			if !in.Installed {
				c.Status = DoctorInfo // a plugin inside dsh: nothing to run from here
			}
		case harness.Codex:
			c.Title = "Codex"
			c.Fix = d.cmd + " hook codex --install" + d.homeArg
			dir, _ := codex.Dir(os.Getenv)
			d.grade(&c, in, dir, "Codex")
		case harness.Gemini:
			// Imported and priced, never gated: nothing to fix from here.
			c.Title, c.Status = "Gemini CLI", DoctorInfo
			facts["state"] = in.State
		case harness.OpenCode:
			// Like Codex, except that the plugin never verifies (it arms
			// the guard through its engine lease while OpenCode runs, not
			// by being installed): installed is ok, installed needing the
			// user (an older tollgate's files, a second copy) a warning.
			c.Title = "OpenCode"
			c.Fix = d.cmd + " hook opencode --install" + d.homeArg
			dir, _ := opencode.Dir(os.Getenv)
			_, needsFix := opencode.Assess(home.Probe{Home: d.home, Self: d.self, Getenv: os.Getenv})
			switch {
			case in.Installed && needsFix:
				c.Status = DoctorWarn
				if opencode.Inspect(dir).Current {
					// Its files are right: the problem is a second copy.
					c.Fix = d.cmd + " hook opencode --uninstall"
				}
			case in.Installed:
			default:
				d.grade(&c, in, dir, "OpenCode")
			}
		default:
			c.Title, c.Status = in.Name, DoctorInfo
		}
		if c.Status == DoctorOK {
			c.Fix = ""
		}
		out = append(out, c)
	}
	return out
}

// grade sets an installable integration's status: verified is ok;
// installed but not resolving to this binary is an error (the harness runs
// a hook that is not this tollgate, or none); not installed is a warning
// where the harness's folder exists and info where it does not.
func (d *doctor) grade(c *DoctorCheck, in api.Integration, harnessDir, harness string) {
	switch {
	case in.Verified:
		c.Status = DoctorOK
	case in.Installed:
		c.Status = DoctorError
	case harnessDir != "" && fileExists(harnessDir):
		c.Status = DoctorWarn
		c.Detail = harness + " is set up here (" + harnessDir + ") but tollgate's integration is not installed: its compactions are not guarded"
	default:
		c.Status = DoctorInfo
		c.Detail = harness + " is not set up here (no " + harnessDir + ")"
	}
}

// ---- autostart ----

func (d *doctor) checkAutostart() DoctorCheck {
	c := DoctorCheck{ID: "autostart", Title: "Autostart", Needed: true}
	fix := d.cmd + " install --user --autostart"
	if d.homeArg != "" {
		fix += d.homeArg
	}
	var candidates []string
	if p, err := install.UserAutostartPath(os.Getenv); err == nil {
		candidates = append(candidates, p)
	}
	dirs := os.Getenv("XDG_CONFIG_DIRS")
	if dirs == "" {
		dirs = "/etc/xdg"
	}
	for _, dir := range filepath.SplitList(dirs) {
		if filepath.IsAbs(dir) {
			candidates = append(candidates, filepath.Join(dir, "autostart", desktop.AppID+".desktop"))
		}
	}
	for _, path := range candidates {
		keys, err := install.ReadDesktopEntry(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		c.Facts = map[string]any{"file": path}
		if err != nil {
			c.Status, c.Detail, c.Fix = DoctorError, err.Error(), fix+" --force"
			return c
		}
		if strings.EqualFold(keys["Hidden"], "true") || strings.EqualFold(keys["X-GNOME-Autostart-enabled"], "false") {
			c.Status = DoctorWarn
			c.Detail = path + " is disabled (Hidden=true or X-GNOME-Autostart-enabled=false): tollgate does not start at login"
			c.Fix = fix + " --force"
			return c
		}
		args := install.DesktopExecFields(keys["Exec"])
		if len(args) == 0 {
			c.Status, c.Detail, c.Fix = DoctorError, path+": no Exec line", fix+" --force"
			return c
		}
		bin, err := exec.LookPath(args[0])
		if err != nil {
			c.Status = DoctorError
			c.Detail = fmt.Sprintf("%s starts %s, which does not exist: tollgate does not start at login", path, args[0])
			c.Fix = fix
			return c
		}
		c.Facts["exec"] = keys["Exec"]
		c.Status = DoctorOK
		c.Detail = fmt.Sprintf("%s starts `%s` at login", path, strings.Join(append([]string{bin}, args[1:]...), " "))
		return c
	}
	c.Status = DoctorWarn
	c.Detail = "no autostart entry: tollgate does not start with your session, so a harness that compacts before you open it runs unguarded"
	c.Fix = fix
	return c
}

// ---- the command and the route ----

// PrintDoctor writes the report as one terminal screen.
func PrintDoctor(w io.Writer, rep DoctorReport) {
	v := rep.Version
	if v == "" {
		v = "?"
	}
	fmt.Fprintf(w, "tollgate doctor · home %s · tollgate %s (%s)\n\n", rep.Home, v, rep.Binary)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range rep.Checks {
		mark := map[string]string{DoctorOK: "ok", DoctorInfo: "-", DoctorWarn: "warn", DoctorError: "FAIL"}[c.Status]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Title, c.Detail)
		if c.Fix != "" && c.Status != DoctorOK {
			label := "fix:"
			if c.Status == DoctorInfo {
				label = "to set up:"
			}
			fmt.Fprintf(tw, "\t\t%s %s\n", label, c.Fix)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	switch {
	case !rep.OK:
		fmt.Fprintf(w, "%d needed %s missing or broken (FAIL), %d %s. Run the fix lines, then `tollgate doctor` again.\n",
			rep.Counts[DoctorError], plural(rep.Counts[DoctorError], "thing is", "things are"), rep.Counts[DoctorWarn], plural(rep.Counts[DoctorWarn], "warning", "warnings"))
	case rep.Counts[DoctorWarn] > 0:
		fmt.Fprintf(w, "Everything tollgate needs is in place; %d %s above would make it better.\n", rep.Counts[DoctorWarn], plural(rep.Counts[DoctorWarn], "warning", "warnings"))
	default:
		fmt.Fprintln(w, "Everything is in place.")
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// DoctorHandler serves GET /v1/doctor: the report as JSON (always 200; the
// report's "ok" says whether doctor would exit 0).
func DoctorHandler(dir string, opts DoctorOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep := Doctor(r.Context(), dir, opts)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(rep)
	})
}
