package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/desktop/sessionbus/bustest"
	"tollgate/app/harness/claudecode"
	"tollgate/app/harness/opencode"
	"tollgate/app/home"
	"tollgate/app/install"
	"tollgate/guard/client/clienttest"

	"github.com/godbus/dbus/v5"
)

// doctorWorld is a desktop session in temporary folders: a Wayland socket,
// (where dbus-daemon exists) a private session bus with a tray host and a
// notification service, Claude Code's and Reasonix's folders, and a home.
type doctorWorld struct {
	dir     string // tollgate dir
	user    string // $HOME
	claude  string // $CLAUDE_CONFIG_DIR
	busOK   bool   // the private bus runs, with both names owned
	libs    func(string) (string, error)
	version string
}

func newDoctorWorld(t *testing.T) *doctorWorld {
	t.Helper()
	root := t.TempDir()
	w := &doctorWorld{
		dir: filepath.Join(root, "tg"), user: filepath.Join(root, "user"), claude: filepath.Join(root, "user", ".claude"),
		libs:    func(so string) (string, error) { return "/usr/lib/" + so, nil },
		version: "test",
	}
	for _, d := range []string{w.user, w.claude, filepath.Join(root, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", w.user)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(w.user, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(w.user, ".local", "share"))
	t.Setenv("XDG_CONFIG_DIRS", filepath.Join(root, "etc-xdg"))
	t.Setenv("XDG_CURRENT_DESKTOP", "GNOME")
	t.Setenv("CLAUDE_CONFIG_DIR", w.claude)
	t.Setenv("REASONIX_HOME", filepath.Join(w.user, ".reasonix"))
	for _, k := range []string{"TOLLGATE_HOME", "TOLLGATE_URL", "TOLLGATE_TOKEN", "TOLLGATE_MODE", "TOLLGATE_LISTEN", "TOLLGATE_ASKTIMEOUT", "TOLLGATE_DEFAULTPROFILE", "DISPLAY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	// A Wayland compositor's socket.
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(root, "run"))
	t.Setenv("WAYLAND_DISPLAY", "wayland-test")
	ln, err := net.Listen("unix", filepath.Join(root, "run", "wayland-test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })

	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(root, "no-bus"))
	if addr, ok := bustest.Start(t); ok {
		t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
		conn := bustest.Connect(t, addr)
		for _, name := range []string{"org.kde.StatusNotifierWatcher", "org.freedesktop.Notifications"} {
			if r, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
				t.Fatalf("owning %s: %v %v", name, r, err)
			}
		}
		w.busOK = true
	}
	return w
}

func (w *doctorWorld) opts() DoctorOptions {
	return DoctorOptions{Version: w.version, LookupLib: w.libs, Timeout: 2 * time.Second}
}

func (w *doctorWorld) run(t *testing.T) DoctorReport {
	t.Helper()
	return Doctor(context.Background(), w.dir, w.opts())
}

// installHook installs the Claude Code hook, pointing at this (test) binary.
func (w *doctorWorld) installHook(t *testing.T) {
	t.Helper()
	path, err := claudecode.SettingsPath(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := claudecode.Install(claudecode.InstallOptions{Settings: path, Home: w.dir, Timeout: claudecode.InstallTimeout}); err != nil {
		t.Fatalf("hook install: %v", err)
	}
}

// installAutostart writes the autostart entry `install --autostart` writes.
func (w *doctorWorld) installAutostart(t *testing.T, bin string) {
	t.Helper()
	paths, err := install.UserInstallPaths(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	entry, err := install.RenderEntry(bin, w.dir, true)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(paths.Autostart), 0o755)
	if err := os.WriteFile(paths.Autostart, entry, 0o644); err != nil {
		t.Fatal(err)
	}
}

// healthy sets up everything: a running tollgate, the hook, autostart.
func (w *doctorWorld) healthy(t *testing.T) testService {
	t.Helper()
	svc := startTestService(t, w.dir)
	w.installHook(t)
	self, _ := os.Executable()
	w.installAutostart(t, self)
	return svc
}

func check(t *testing.T, rep DoctorReport, id string) DoctorCheck {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", id, rep.Checks)
	return DoctorCheck{}
}

func (w *doctorWorld) cmd() string {
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	return home.ShellQuote(self)
}

func TestDoctorHealthyHome(t *testing.T) {
	w := newDoctorWorld(t)
	svc := w.healthy(t)
	rep := w.run(t)
	var text bytes.Buffer
	PrintDoctor(&text, rep)
	t.Logf("private session bus: %v\n%s", w.busOK, text.String())
	if !rep.OK || rep.Counts[DoctorError] != 0 {
		t.Fatalf("healthy home not OK:\n%s", text.String())
	}
	want := map[string]string{
		"webkitgtk": DoctorOK, "gtk": DoctorOK, "display": DoctorOK, "config": DoctorOK, "token": DoctorOK,
		"database": DoctorOK, "api": DoctorOK, "guard": DoctorOK, "integration.claude-code": DoctorOK,
		"integration.reasonix": DoctorInfo, "integration.dsh": DoctorInfo, "integration.codex": DoctorInfo, "integration.gemini": DoctorInfo, "autostart": DoctorOK,
	}
	if w.busOK {
		want["tray"], want["notifications"] = DoctorOK, DoctorOK
	}
	for id, status := range want {
		if c := check(t, rep, id); c.Status != status {
			t.Errorf("%s: %s (%s), want %s", id, c.Status, c.Detail, status)
		}
	}
	for _, c := range rep.Checks {
		if c.Status == DoctorOK && c.Fix != "" {
			t.Errorf("%s is ok but carries a fix %q", c.ID, c.Fix)
		}
	}
	api := check(t, rep, "api")
	if api.Facts["url"] != svc.URL || !strings.Contains(api.Detail, svc.URL) {
		t.Errorf("api check names %v, want %s", api.Facts["url"], svc.URL)
	}
	db := check(t, rep, "database")
	if v, _ := db.Facts["schemaVersion"].(int); v < 1 || !strings.Contains(db.Detail, "integrity ok") {
		t.Errorf("database: %+v", db)
	}
	if !strings.Contains(text.String(), "Everything tollgate needs is in place") && !strings.Contains(text.String(), "Everything is in place") {
		t.Errorf("summary line missing:\n%s", text.String())
	}
}

// TestDoctorBrokenStates breaks one thing at a time and checks the status
// and the exact fix doctor prints.
func TestDoctorBrokenStates(t *testing.T) {
	sudo := "sudo "
	if os.Geteuid() == 0 {
		sudo = ""
	}
	cases := []struct {
		name    string
		running bool // start a tollgate first
		breakIt func(t *testing.T, w *doctorWorld)
		id      string
		status  string
		fix     func(w *doctorWorld) string
		detail  string
	}{
		{
			name: "token file readable by others", running: true, id: "token", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { os.Chmod(home.TokenPath(w.dir), 0o644) },
			fix:     func(w *doctorWorld) string { return "chmod 600 " + home.ShellQuote(home.TokenPath(w.dir)) },
			detail:  "mode 0644, want 0600",
		},
		{
			name: "owner token readable by others", running: true, id: "token", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { os.Chmod(home.OwnerTokenPath(w.dir), 0o644) },
			fix:     func(w *doctorWorld) string { return "chmod 600 " + home.ShellQuote(home.OwnerTokenPath(w.dir)) },
			detail:  "owner token",
		},
		{
			name: "token file corrupt", running: true, id: "token", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { os.WriteFile(home.TokenPath(w.dir), []byte("nope\n"), 0o600) },
			fix:     func(w *doctorWorld) string { return w.cmd() + " token --rotate --home " + home.ShellQuote(w.dir) },
			detail:  "not 64 hex characters",
		},
		{
			name: "stale api.json with a dead pid", id: "api", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {
				writeStaleAPIInfo(t, w.dir, deadPID(t), "http://127.0.0.1:1")
			},
			fix: func(w *doctorWorld) string {
				return "rm " + home.ShellQuote(home.APIFilePath(w.dir)) + " && " + w.cmd() + " --home " + home.ShellQuote(w.dir) + " --hidden &"
			},
			detail: "is stale: it names pid",
		},
		{
			name: "api.json names a live pid that does not answer", id: "api", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {
				ln, _ := net.Listen("tcp", "127.0.0.1:0")
				addr := ln.Addr().String()
				ln.Close()
				writeStaleAPIInfo(t, w.dir, os.Getpid(), "http://"+addr)
			},
			fix: func(w *doctorWorld) string {
				return "kill " + strconv.Itoa(os.Getpid()) + " && sleep 1 && " + w.cmd() + " --home " + home.ShellQuote(w.dir) + " --hidden &"
			},
			detail: "does not answer",
		},
		{
			name: "not running", id: "api", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {},
			fix:     func(w *doctorWorld) string { return w.cmd() + " --home " + home.ShellQuote(w.dir) + " --hidden &" },
			detail:  "not running",
		},
		{
			name: "not running, no display", id: "api", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { os.Unsetenv("WAYLAND_DISPLAY") },
			fix:     func(w *doctorWorld) string { return w.cmd() + " serve --home " + home.ShellQuote(w.dir) + " &" },
			detail:  "not running",
		},
		{
			name: "api.json readable by others", running: true, id: "api", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { os.Chmod(home.APIFilePath(w.dir), 0o644) },
			fix:     func(w *doctorWorld) string { return "chmod 600 " + home.ShellQuote(home.APIFilePath(w.dir)) },
			detail:  "want 0600",
		},
		{
			name: "config is not YAML", id: "config", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { writeConfig(t, w.dir, "mode: [ask\nlisten: 127.0.0.1:0\n") },
			fix:     editConfigFix,
			detail:  "not valid YAML",
		},
		{
			name: "config has a bad value", id: "config", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { writeConfig(t, w.dir, "mode: sometimes\n") },
			fix:     editConfigFix,
			detail:  "mode: sometimes: want ask, auto or off",
		},
		{
			name: "environment overrides the config badly", id: "config", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {
				writeConfig(t, w.dir, "mode: ask\n")
				t.Setenv("TOLLGATE_MODE", "never")
			},
			fix:    func(w *doctorWorld) string { return "unset TOLLGATE_MODE" },
			detail: "from $TOLLGATE_MODE",
		},
		{
			name: "hook not installed", running: true, id: "integration.claude-code", status: DoctorWarn,
			breakIt: func(t *testing.T, w *doctorWorld) {
				path, _ := claudecode.SettingsPath(os.Getenv)
				if _, err := claudecode.Uninstall(path); err != nil {
					t.Fatalf("uninstall: %v", err)
				}
			},
			fix: func(w *doctorWorld) string {
				return w.cmd() + " hook claude-code --install --home " + home.ShellQuote(w.dir)
			},
			detail: "integration is not installed",
		},
		{
			name: "hook points at another binary", running: true, id: "integration.claude-code", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {
				path := filepath.Join(w.claude, "settings.json")
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				self, _ := os.Executable()
				b = bytes.ReplaceAll(b, []byte(self), []byte("/bin/true"))
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			fix: func(w *doctorWorld) string {
				return w.cmd() + " hook claude-code --install --home " + home.ShellQuote(w.dir)
			},
			detail: "not this tollgate",
		},
		{
			name: "database damaged", id: "database", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {
				os.MkdirAll(w.dir, 0o700)
				os.WriteFile(home.DBPath(w.dir), bytes.Repeat([]byte("not a database "), 400), 0o600)
			},
			fix: func(w *doctorWorld) string {
				return "mv " + home.ShellQuote(home.DBPath(w.dir)) + " " + home.ShellQuote(home.DBPath(w.dir)+".damaged") + " && " + w.cmd() + " --home " + home.ShellQuote(w.dir) + " --hidden &"
			},
			detail: "not a database",
		},
		{
			name: "autostart starts a binary that is gone", running: true, id: "autostart", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) { w.installAutostart(t, filepath.Join(w.user, "gone", "tollgate")) },
			fix: func(w *doctorWorld) string {
				return w.cmd() + " install --user --autostart --home " + home.ShellQuote(w.dir)
			},
			detail: "does not exist",
		},
		{
			name: "no autostart", running: true, id: "autostart", status: DoctorWarn,
			breakIt: func(t *testing.T, w *doctorWorld) {
				p, _ := install.UserAutostartPath(os.Getenv)
				os.Remove(p)
			},
			fix: func(w *doctorWorld) string {
				return w.cmd() + " install --user --autostart --home " + home.ShellQuote(w.dir)
			},
			detail: "no autostart entry",
		},
		{
			name: "WebKitGTK missing", running: true, id: "webkitgtk", status: DoctorError,
			breakIt: func(t *testing.T, w *doctorWorld) {
				w.libs = func(so string) (string, error) {
					if strings.HasPrefix(so, "libwebkit2gtk") {
						return "", os.ErrNotExist
					}
					return "/usr/lib/" + so, nil
				}
			},
			fix:    func(w *doctorWorld) string { return sudo + "apt-get install libwebkit2gtk-4.1-0" },
			detail: "libwebkit2gtk-4.1.so.0 not found",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newDoctorWorld(t)
			if tc.running {
				w.healthy(t)
			} else {
				w.installHook(t)
				self, _ := os.Executable()
				w.installAutostart(t, self)
			}
			tc.breakIt(t, w)
			rep := w.run(t)
			c := check(t, rep, tc.id)
			if c.Status != tc.status {
				t.Fatalf("%s: status %s (%s), want %s", tc.id, c.Status, c.Detail, tc.status)
			}
			if want := tc.fix(w); c.Fix != want {
				t.Errorf("%s: fix\n  %q\nwant\n  %q", tc.id, c.Fix, want)
			}
			if !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("%s: detail %q does not say %q", tc.id, c.Detail, tc.detail)
			}
			if rep.OK != (tc.status != DoctorError) {
				t.Errorf("report ok=%v with a %s", rep.OK, tc.status)
			}
			var text bytes.Buffer
			PrintDoctor(&text, rep)
			if !strings.Contains(text.String(), "fix: "+c.Fix+"\n") {
				t.Errorf("the screen does not print the fix %q:\n%s", c.Fix, text.String())
			}
		})
	}
}

// TestDoctorWarningsDoNotFail: no display, no session bus — the window
// and the tray are impossible, yet a running tollgate guards: exit 0.
func TestDoctorWarningsDoNotFail(t *testing.T) {
	w := newDoctorWorld(t)
	w.healthy(t)
	os.Unsetenv("WAYLAND_DISPLAY")
	t.Setenv("DISPLAY", ":4242")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	rep := w.run(t)
	for _, id := range []string{"display", "tray", "notifications"} {
		if c := check(t, rep, id); c.Status != DoctorWarn || c.Fix == "" || c.Needed {
			t.Errorf("%s: %+v, want a warning with a fix", id, c)
		}
	}
	if c := check(t, rep, "display"); !strings.Contains(c.Detail, "/tmp/.X11-unix/X4242 does not exist") || c.Fix != w.cmd()+" serve --home "+home.ShellQuote(w.dir) {
		t.Errorf("display: %+v", c)
	}
	if c := check(t, rep, "tray"); !strings.Contains(c.Fix, "gnome-shell-extension-appindicator") {
		t.Errorf("tray fix on GNOME: %q", c.Fix)
	}
	if !rep.OK {
		t.Errorf("warnings failed the report: %+v", rep.Counts)
	}
}

// TestDoctorReport prints what `tollgate doctor` shows a user: a failed
// report with the fix on a broken home, the JSON shape of --json, and an OK
// report once healthy (app/cli maps OK to the exit status).
func TestDoctorReport(t *testing.T) {
	w := newDoctorWorld(t)
	w.healthy(t)
	os.Chmod(home.TokenPath(w.dir), 0o640)
	rep := Doctor(context.Background(), w.dir, DoctorOptions{Version: "test"})
	var out bytes.Buffer
	PrintDoctor(&out, rep)
	if rep.OK {
		t.Fatalf("a world-readable token passed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "FAIL  Token file") || !strings.Contains(out.String(), "fix: chmod 600 "+home.ShellQuote(home.TokenPath(w.dir))) {
		t.Errorf("screen:\n%s", out.String())
	}
	b, _ := json.Marshal(rep)
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ok", "home", "binary", "version", "checkedAt", "counts", "checks"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("the JSON lacks %q", k)
		}
	}
	// Healthy again: OK, provided this machine has the libraries.
	os.Chmod(home.TokenPath(w.dir), 0o600)
	if _, err := newLibLookup().lookup("libwebkit2gtk-4.1.so.0"); err != nil {
		t.Skip("WebKitGTK 4.1 not installed here (make deps installs it); skipping the healthy run")
	}
	if rep := Doctor(context.Background(), w.dir, DoctorOptions{Version: "test"}); !rep.OK {
		out.Reset()
		PrintDoctor(&out, rep)
		t.Errorf("healthy:\n%s", out.String())
	}
}

// TestDoctorRoute: GET /v1/doctor on a running tollgate answers the report,
// behind the same token as the rest of the API.
func TestDoctorRoute(t *testing.T) {
	w := newDoctorWorld(t)
	svc := w.healthy(t)
	if res, _ := clienttest.Do(t, "GET", svc.URL+"/v1/doctor", "", nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", res.StatusCode)
	}
	res, raw := clienttest.Do(t, "GET", svc.URL+"/v1/doctor", svc.Token(), nil)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1/doctor: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var rep DoctorReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Home != w.dir || rep.Version != "test" || len(rep.Checks) < 15 {
		t.Errorf("report: home %s version %s, %d checks", rep.Home, rep.Version, len(rep.Checks))
	}
	for _, id := range []string{"api", "database", "config", "token", "integration.claude-code"} {
		if c := check(t, rep, id); c.Status != DoctorOK {
			t.Errorf("%s: %s %s", id, c.Status, c.Detail)
		}
	}
}

func TestParseLdconfig(t *testing.T) {
	out := []byte(`1234 libs found in cache ` + "`/etc/ld.so.cache'" + `
	libwebkit2gtk-4.1.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0
	libgtk-3.so.0 (libc6) => /lib/i386-linux-gnu/libgtk-3.so.0
	libgtk-3.so.0 (libc6,x86-64) => /lib/x86_64-linux-gnu/libgtk-3.so.0
Cache generated by: ldconfig (GNU libc) stable release version 2.36
`)
	m := parseLdconfig(out, "amd64")
	if m["libwebkit2gtk-4.1.so.0"] != "/lib/x86_64-linux-gnu/libwebkit2gtk-4.1.so.0" || m["libgtk-3.so.0"] != "/lib/x86_64-linux-gnu/libgtk-3.so.0" || len(m) != 2 {
		t.Errorf("%v", m)
	}
	// The real cache finds libc and not a made-up name.
	l := newLibLookup()
	if _, err := l.lookup("libc.so.6"); err != nil {
		t.Errorf("libc.so.6: %v", err)
	}
	if p, err := l.lookup("libtollgate-nonexistent.so.9"); err == nil {
		t.Errorf("found a made-up library at %s", p)
	}
}

func writeStaleAPIInfo(t *testing.T, dir string, pid int, url string) {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	if _, err := home.LoadOrCreateToken(dir); err != nil {
		t.Fatal(err)
	}
	if err := home.WriteAPIInfo(dir, home.APIInfo{URL: url, Token: strings.Repeat("ab", 32), PID: pid, Version: "test"}); err != nil {
		t.Fatal(err)
	}
}

func writeConfig(t *testing.T, dir, body string) {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestDoctorNeverLaunchesABus: with no session bus, doctor reports it and
// does not autolaunch one (dbus-launch would leave a daemon running).
func TestDoctorNeverLaunchesABus(t *testing.T) {
	w := newDoctorWorld(t)
	bin := t.TempDir()
	marker := filepath.Join(t.TempDir(), "launched")
	fake := "#!/bin/sh\ntouch " + home.ShellQuote(marker) + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "dbus-launch"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	os.Unsetenv("DBUS_SESSION_BUS_ADDRESS")
	t.Setenv("DISPLAY", ":4242")
	rep := w.run(t)
	if c := check(t, rep, "tray"); c.Status != DoctorWarn || !strings.Contains(c.Detail, "no session D-Bus") {
		t.Errorf("tray: %+v", c)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("doctor ran dbus-launch")
	}
}

// The window binary `tollgate` execs is reported: found beside this binary
// it is ok; missing it is a warning (the commands still work) with the fix
// for a source build, and never fails doctor on its own.
func TestDoctorWindowBinary(t *testing.T) {
	w := newDoctorWorld(t)
	bin := filepath.Join(t.TempDir(), "tollgate")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := w.opts()
	opts.Self = bin
	c := check(t, Doctor(context.Background(), w.dir, opts), "window")
	if c.Status != DoctorWarn || c.Needed || c.Fix != "make build" || !strings.Contains(c.Detail, "tollgate-window is missing") {
		t.Errorf("no window binary: %+v", c)
	}
	window := filepath.Join(filepath.Dir(bin), home.WindowName)
	if err := os.WriteFile(window, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c = check(t, Doctor(context.Background(), w.dir, opts), "window")
	if c.Status != DoctorOK || c.Facts["path"] != window || c.Fix != "" {
		t.Errorf("window binary beside tollgate: %+v", c)
	}
}

// OpenCode is graded like Codex, from the plugin's install in OpenCode's
// config folder: info without OpenCode, a warning where OpenCode is set up
// and the plugin is not installed (the fix names the install), ok once
// installed, a warning when an older tollgate's files are there.
func TestDoctorOpenCode(t *testing.T) {
	w := newDoctorWorld(t)
	w.healthy(t)
	c := check(t, w.run(t), "integration.opencode")
	if c.Status != DoctorInfo {
		t.Fatalf("no OpenCode: %+v", c)
	}
	dir := filepath.Join(w.user, ".config", "opencode")
	os.MkdirAll(dir, 0o700)
	c = check(t, w.run(t), "integration.opencode")
	if c.Status != DoctorWarn || !strings.HasSuffix(c.Fix, " hook opencode --install --home "+home.ShellQuote(w.dir)) {
		t.Fatalf("OpenCode set up, plugin not installed: %+v", c)
	}
	if _, err := opencode.Install(opencode.InstallOptions{ConfigDir: dir, Home: w.dir}); err != nil {
		t.Fatal(err)
	}
	if c = check(t, w.run(t), "integration.opencode"); c.Status != DoctorOK || c.Fix != "" {
		t.Fatalf("installed: %+v", c)
	}
	// A second copy listed in opencode.json: OpenCode would run it twice.
	os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(`{"plugin": ["file:///src/tollgate/integrations/opencode/index.js"]}`), 0o600)
	if c = check(t, w.run(t), "integration.opencode"); c.Status != DoctorWarn || !strings.Contains(c.Detail, "twice") || !strings.HasSuffix(c.Fix, " hook opencode --uninstall") {
		t.Fatalf("twice: %+v", c)
	}
}

// editConfigFix is the fix doctor prints for a config.yaml it cannot load:
// edit it, or move it aside and start over with the defaults.
func editConfigFix(w *doctorWorld) string {
	f := home.ShellQuote(filepath.Join(w.dir, "config.yaml"))
	return "${EDITOR:-nano} " + f + "   # or start over with the defaults: mv " + f + " " + home.ShellQuote(filepath.Join(w.dir, "config.yaml.bak"))
}
