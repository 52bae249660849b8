package doctor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"tollgate/app/home"
	"tollgate/build/desktop"
)

// The checks of this binary, the window binary and the libraries the
// window links.

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
