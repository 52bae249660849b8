package home

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeExe(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}

// The window binary is found next to the CLI (build/bin) or in
// <prefix>/lib/tollgate (the Debian package, install --user); next to it
// wins; a file that is not executable does not count; a missing one is an
// error naming every place looked at.
func TestWindowBinaryPlaces(t *testing.T) {
	root := t.TempDir()
	cli := filepath.Join(root, "usr/bin/tollgate")
	writeExe(t, cli, 0o755)

	_, err := WindowBinary(cli)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "usr/bin/tollgate-window")) ||
		!strings.Contains(err.Error(), filepath.Join(root, "usr/lib/tollgate/tollgate-window")) {
		t.Fatalf("missing window: err = %v, want both places named", err)
	}

	lib := filepath.Join(root, "usr/lib/tollgate/tollgate-window")
	writeExe(t, lib, 0o644)
	if w, err := WindowBinary(cli); err == nil {
		t.Errorf("a non-executable window binary was taken: %s", w)
	}
	if err := os.Chmod(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if w, err := WindowBinary(cli); err != nil || w != lib {
		t.Errorf("packaged layout: %q %v, want %s", w, err, lib)
	}

	beside := filepath.Join(root, "usr/bin/tollgate-window")
	writeExe(t, beside, 0o755)
	if w, err := WindowBinary(cli); err != nil || w != beside {
		t.Errorf("beside the CLI: %q %v, want %s", w, err, beside)
	}
}

// A symlink to the CLI (say in /usr/local/bin) finds the window next to
// the file it points at.
func TestWindowBinaryThroughSymlink(t *testing.T) {
	root := t.TempDir()
	cli := filepath.Join(root, "build/bin/tollgate")
	writeExe(t, cli, 0o755)
	window := filepath.Join(root, "build/bin/tollgate-window")
	writeExe(t, window, 0o755)
	link := filepath.Join(root, "links/tollgate")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cli, link); err != nil {
		t.Fatal(err)
	}
	if w, err := WindowBinary(link); err != nil || w != window {
		t.Errorf("through a symlink: %q %v, want %s", w, err, window)
	}
}

// The window process names the CLI as "this tollgate" (hooks, doctor,
// integration checks): beside it, or <prefix>/bin for <prefix>/lib/tollgate;
// any other binary is itself.
func TestCLIFor(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct{ window, cli string }{
		{"build/bin/tollgate-window", "build/bin/tollgate"},
		{"usr/lib/tollgate/tollgate-window", "usr/bin/tollgate"},
	} {
		window, cli := filepath.Join(root, tc.window), filepath.Join(root, tc.cli)
		writeExe(t, window, 0o755)
		// No CLI installed: still the CLI's place, never the window binary
		// (a hook naming it would load GTK on every call).
		if got := CLIFor(window); got != cli {
			t.Errorf("no CLI installed: CLIFor(%s) = %s, want where the CLI belongs, %s", tc.window, got, cli)
		}
		writeExe(t, cli, 0o755)
		if got := CLIFor(window); got != cli {
			t.Errorf("CLIFor(%s) = %s, want %s", tc.window, got, cli)
		}
	}
	if other := filepath.Join(root, "usr/bin/tollgate"); CLIFor(other) != other {
		t.Errorf("CLIFor of the CLI is %s", CLIFor(other))
	}
}
