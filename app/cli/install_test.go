package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/home"
	"tollgate/app/install"
)

// `tollgate install --user` on this test binary, in a temporary $HOME: it
// refuses while no window binary sits beside it, then installs both, the
// autostart entry starts this home hidden, and uninstalling twice removes
// everything once and then says there is nothing left.
func TestInstallCommandRoundTrip(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", root)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_DIRS", filepath.Join(root, "no-system-entries"))
	var out, errb strings.Builder
	stdio := IO{Stdout: &out, Stderr: &errb}
	run := func(args ...string) int { return Exit(Install(context.Background(), args, stdio), &errb) }
	if code := run("--autostart"); code != 2 || !strings.Contains(errb.String(), "only --user") {
		t.Errorf("without --user: %d %s", code, errb.String())
	}
	self, _ := os.Executable()
	besideSelf := filepath.Join(filepath.Dir(self), home.WindowName)
	if _, err := os.Stat(besideSelf); err == nil {
		t.Fatalf("%s exists already; this test puts its own there", besideSelf)
	}
	errb.Reset()
	if code := run("--user", "--autostart"); code != 1 || !strings.Contains(errb.String(), "the window binary tollgate-window is missing") {
		t.Errorf("install without a window binary: %d %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(root, ".local")); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote files (%v)", err)
	}
	if err := os.WriteFile(besideSelf, []byte("#!/bin/sh\n# the window\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(besideSelf) })
	if code := run("--user", "--autostart", "--home", filepath.Join(root, "tg home")); code != 0 {
		t.Fatalf("install: %d\n%s%s", code, out.String(), errb.String())
	}
	bin := filepath.Join(root, ".local/bin/tollgate")
	a, _ := os.ReadFile(self)
	b, _ := os.ReadFile(bin)
	if len(a) == 0 || string(a) != string(b) {
		t.Error("the installed binary is not this one")
	}
	window := filepath.Join(root, ".local/lib/tollgate/tollgate-window")
	if w, _ := os.ReadFile(window); string(w) != "#!/bin/sh\n# the window\n" {
		t.Errorf("the installed window binary holds %q", w)
	}
	if found, err := home.WindowBinary(bin); err != nil || found != window {
		t.Errorf("the installed tollgate finds its window at %q (%v), want %s", found, err, window)
	}
	auto, _ := install.ReadDesktopEntry(filepath.Join(root, ".config/autostart/tollgate.desktop"))
	if args := install.DesktopExecFields(auto["Exec"]); strings.Join(args, "|") != bin+"|--home|"+filepath.Join(root, "tg home")+"|--hidden" {
		t.Errorf("autostart Exec %q → %q", auto["Exec"], args)
	}
	if !strings.Contains(out.String(), "removes exactly those") {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	if code := run("--user", "--uninstall"); code != 0 {
		t.Fatalf("uninstall: %d\n%s%s", code, out.String(), errb.String())
	}
	for _, p := range []string{bin, window, filepath.Join(root, ".config/autostart/tollgate.desktop"), filepath.Join(root, ".local/share/applications/tollgate.desktop")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	out.Reset()
	if code := run("--user", "--uninstall"); code != 0 || !strings.Contains(out.String(), "nothing to remove") {
		t.Errorf("second uninstall: %d %s", code, out.String())
	}
}

// A flag doctor does not know is a usage error (exit 2).
func TestDoctorBadFlag(t *testing.T) {
	var out, errb strings.Builder
	if code := Exit(Doctor(context.Background(), []string{"--bogus"}, IO{Stdout: &out, Stderr: &errb}, "test"), &errb); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
}
