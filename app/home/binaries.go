package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tollgate ships as two binaries (ARCHITECTURE.md, "Two binaries"): the
// command-line `tollgate`, built without the desktop tags so that a hook a
// harness execs on every compaction does not load GTK and WebKit, and the
// window binary, built with them. `tollgate` with no verb execs the window
// binary, which it finds with WindowBinary.
const (
	// CLIName is the command-line binary: every verb, no GTK linked.
	CLIName = "tollgate"
	// WindowName is the window binary (desktop tags: GTK, WebKitGTK).
	WindowName = "tollgate-window"
)

// windowPlaces are where the window binary may sit, relative to the folder
// of the CLI binary: next to it (build/bin, a tarball), or in
// <prefix>/lib/tollgate beside <prefix>/bin (the Debian package's
// /usr/lib/tollgate, `install --user`'s ~/.local/lib/tollgate), which keeps
// a helper that is not meant to be typed off the PATH.
func windowPlaces(cliDir string) []string {
	return []string{
		filepath.Join(cliDir, WindowName),
		filepath.Join(filepath.Dir(cliDir), "lib", CLIName, WindowName),
	}
}

// WindowBinary finds the window binary that belongs to the CLI binary cli
// (an absolute path, symlinks resolved by the caller or not): the first of
// windowPlaces that is an executable file. The error names every place
// looked at.
func WindowBinary(cli string) (string, error) {
	places := windowPlaces(filepath.Dir(cli))
	if r, err := filepath.EvalSymlinks(cli); err == nil && filepath.Dir(r) != filepath.Dir(cli) {
		// A symlinked tollgate (say /usr/local/bin → a build folder) finds
		// the window next to the file it points at too.
		places = append(places, windowPlaces(filepath.Dir(r))...)
	}
	for _, p := range places {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("the window binary %s is missing: looked for %s (build both with `make build`, or reinstall the package)",
		WindowName, strings.Join(places, " and "))
}

// CLIFor maps the window binary back to the CLI binary beside it, the one
// hooks and commands run; any other path is returned as it is. The window
// process verifies and installs hooks with it (a hook must never name the
// window binary: that would load GTK on every compaction).
func CLIFor(exe string) string {
	if filepath.Base(exe) != WindowName {
		return exe
	}
	dir := filepath.Dir(exe)
	candidates := []string{filepath.Join(dir, CLIName)}
	if filepath.Base(dir) == CLIName && filepath.Base(filepath.Dir(dir)) == "lib" {
		candidates = append(candidates, filepath.Join(filepath.Dir(filepath.Dir(dir)), "bin", CLIName))
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	// No CLI beside it: still name the CLI where it would be, never the
	// window binary — a hook naming it would load GTK on every call. The
	// integration checks then report the missing binary by name.
	return candidates[len(candidates)-1]
}

// Executable is this tollgate's command-line binary: os.Executable with
// symlinks resolved, mapped from the window binary to the CLI binary
// (CLIFor). Hooks, doctor and the integration checks use it as "this
// tollgate".
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if exe == "" {
		return "", errors.New("os.Executable returned no path")
	}
	return CLIFor(exe), nil
}
