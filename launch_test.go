//go:build !desktop

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets the tests run this test binary as `tollgate` itself: with
// TOLLGATE_TEST_MAIN=1 it is main(), nothing else.
func TestMain(m *testing.M) {
	if os.Getenv("TOLLGATE_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// cliCopy copies this test binary to dir/usr/bin/tollgate, so that
// os.Executable, and the window lookup beside it, see that path.
func cliCopy(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(dir, "usr/bin/tollgate")
	if err := os.MkdirAll(filepath.Dir(cli), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(cli, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return cli
}

// `tollgate` with no verb execs the window binary from ../lib/tollgate in
// the same process (the PID the single-instance lock records), with its
// arguments and environment; without a window binary it says where it
// looked and exits 1, and the verbs still work.
func TestNoVerbExecsTheWindowBinary(t *testing.T) {
	dir := t.TempDir()
	cli := cliCopy(t, dir)
	window := filepath.Join(dir, "usr/lib/tollgate/tollgate-window")
	if err := os.MkdirAll(filepath.Dir(window), 0o755); err != nil {
		t.Fatal(err)
	}
	// The stand-in window writes what it was started with: its PID, its
	// arguments, one variable of the environment.
	script := "#!/bin/sh\nprintf '%s\\n' \"$$\" \"$TOLLGATE_PASSED\" \"$@\" >\"$WINDOW_OUT\"\nexit 7\n"
	if err := os.WriteFile(window, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "window.out")
	start := func(args ...string) (*exec.Cmd, string, error) {
		cmd := exec.Command(cli, args...)
		cmd.Env = append(os.Environ(), "TOLLGATE_TEST_MAIN=1", "TOLLGATE_PASSED=through", "WINDOW_OUT="+out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return cmd, stderr.String(), err
	}

	cmd, stderr, err := start("--hidden", "--home", "a home with spaces")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("tollgate --hidden: %v (want the window's own exit status 7)\n%s", err, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(cmd.Process.Pid) + "\nthrough\n--hidden\n--home\na home with spaces\n"
	if string(got) != want {
		t.Errorf("the window was started with\n%q\nwant (same PID, args and environment passed through)\n%q", got, want)
	}

	if err := os.Remove(window); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = start("--hidden")
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("without a window binary: %v, want exit 1\n%s", err, stderr)
	}
	for _, want := range []string{"tollgate-window is missing", window, filepath.Join(dir, "usr/bin/tollgate-window"), "tollgate serve"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the error does not say %q:\n%s", want, stderr)
		}
	}
	if _, stderr, err := start("version"); err != nil || stderr != "" {
		t.Errorf("tollgate version without a window binary: %v %s", err, stderr)
	}
}
