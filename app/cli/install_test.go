package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/install"
)

// `tollgate install --user` on this test binary, in a temporary $HOME: it
// installs, the autostart entry starts this home hidden, and uninstalling
// twice removes everything once and then says there is nothing left.
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
	if code := run("--user", "--autostart", "--home", filepath.Join(root, "tg home")); code != 0 {
		t.Fatalf("install: %d\n%s%s", code, out.String(), errb.String())
	}
	bin := filepath.Join(root, ".local/bin/tollgate")
	self, _ := os.Executable()
	a, _ := os.ReadFile(self)
	b, _ := os.ReadFile(bin)
	if len(a) == 0 || string(a) != string(b) {
		t.Error("the installed binary is not this one")
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
	for _, p := range []string{bin, filepath.Join(root, ".config/autostart/tollgate.desktop"), filepath.Join(root, ".local/share/applications/tollgate.desktop")} {
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
