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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"tollgate/app/home"
	"tollgate/build/desktop"
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
