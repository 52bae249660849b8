package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"tollgate/app/home"
	"tollgate/build/desktop"
)

// userTree is a temporary $HOME with some files of the user's own, so a
// round trip shows install and uninstall leave them alone.
func userTree(t *testing.T) (root string, getenv func(string) string) {
	t.Helper()
	root = t.TempDir()
	for path, body := range map[string]string{
		".local/share/applications/other.desktop":         "[Desktop Entry]\nName=other\n",
		".local/share/icons/hicolor/48x48/apps/other.png": "png",
		".config/autostart/other.desktop":                 "[Desktop Entry]\nName=other\n",
		".config/tollgate/config.yaml":                    "mode: ask\n",
		".bashrc":                                         "# mine\n",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": root}
	return root, func(k string) string { return env[k] }
}

// snapshot lists every path under root with its mode and content hash.
func snapshot(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := strings.TrimPrefix(p, root) + " " + fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(b)
			line += " " + hex.EncodeToString(s[:8])
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func sameTree(t *testing.T, before, after []string) {
	t.Helper()
	if strings.Join(before, "\n") != strings.Join(after, "\n") {
		t.Fatalf("the tree changed:\nbefore:\n  %s\nafter:\n  %s", strings.Join(before, "\n  "), strings.Join(after, "\n  "))
	}
}

// fakeBinary is a stand-in for the tollgate binary to copy.
func fakeBinary(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tollgate")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeWindow is a stand-in for the window binary, in a folder of its own.
func fakeWindow(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), home.WindowName)
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho window\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The menu entry's tollgate execs the window binary, so a user install
// without one is refused before anything is written.
func TestInstallRefusesWithoutTheWindowBinary(t *testing.T) {
	root, getenv := userTree(t)
	before := snapshot(t, root)
	paths, err := UserInstallPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "cli")})
	if err == nil || !strings.Contains(err.Error(), "no window binary") || !strings.Contains(err.Error(), home.WindowName) {
		t.Fatalf("err = %v, want a refusal naming %s", err, home.WindowName)
	}
	if after := snapshot(t, root); !slices.Equal(before, after) {
		t.Errorf("a refused install changed the tree: %v → %v", before, after)
	}
}

func TestInstallUninstallRoundTripLeavesNothingBehind(t *testing.T) {
	root, getenv := userTree(t)
	before := snapshot(t, root)
	paths, err := UserInstallPaths(getenv)
	if err != nil {
		t.Fatal(err)
	}
	bin := fakeBinary(t, "#!/bin/sh\necho tollgate\n")
	res, err := InstallUser(InstallOptions{Paths: paths, Source: bin, WindowSource: fakeWindow(t), Autostart: true})
	if err != nil {
		t.Fatal(err)
	}
	// What it wrote: the binary, the window binary, the entry, every icon,
	// the autostart entry.
	want := 3 + len(desktop.IconSizes()) + 1 + 1
	if len(res.Written) != want {
		t.Errorf("wrote %d files, want %d: %v", len(res.Written), want, res.Written)
	}
	if fi, err := os.Stat(filepath.Join(root, ".local/bin/tollgate")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("binary: %v %v", fi, err)
	}
	if fi, err := os.Stat(paths.Window); err != nil || fi.Mode().Perm() != 0o755 || paths.Window != filepath.Join(root, ".local/lib/tollgate/tollgate-window") {
		t.Errorf("window binary %s: %v %v", paths.Window, fi, err)
	}
	if w, err := home.WindowBinary(paths.Bin); err != nil || w != paths.Window {
		t.Errorf("the installed tollgate finds its window at %q (%v), want %s", w, err, paths.Window)
	}
	for _, size := range desktop.IconSizes() {
		if _, err := os.Stat(filepath.Join(root, ".local/share/icons/hicolor", desktop.IconPath(size))); err != nil {
			t.Error(err)
		}
	}
	entry, _ := ReadDesktopEntry(filepath.Join(root, ".local/share/applications/tollgate.desktop"))
	if entry["Exec"] != filepath.Join(root, ".local/bin/tollgate") || entry["TryExec"] != entry["Exec"] || entry["Icon"] != "tollgate" {
		t.Errorf("menu entry: %v", entry)
	}
	auto, _ := ReadDesktopEntry(filepath.Join(root, ".config/autostart/tollgate.desktop"))
	if auto["Exec"] != filepath.Join(root, ".local/bin/tollgate")+" --hidden" || auto["X-GNOME-Autostart-enabled"] != "true" {
		t.Errorf("autostart entry: %v", auto)
	}
	m, _ := os.ReadFile(paths.Manifest)
	for _, p := range res.Written {
		if !strings.Contains(string(m), " "+p+"\n") {
			t.Errorf("manifest does not list %s", p)
		}
	}

	// Installing again (an upgrade) replaces its own files without --force.
	bin2 := fakeBinary(t, "#!/bin/sh\necho tollgate 2\n")
	if _, err := InstallUser(InstallOptions{Paths: paths, Source: bin2, WindowSource: fakeWindow(t), Autostart: true}); err != nil {
		t.Fatalf("reinstall: %v", err)
	}

	res, err = UninstallUser(paths, false)
	if err != nil || len(res.Kept) > 0 {
		t.Fatalf("uninstall: %v, kept %v", err, res.Kept)
	}
	sameTree(t, before, snapshot(t, root))
}

func TestInstallRespectsXDGFolders(t *testing.T) {
	root, _ := userTree(t)
	data, config := filepath.Join(t.TempDir(), "data"), filepath.Join(t.TempDir(), "config")
	env := map[string]string{"HOME": root, "XDG_DATA_HOME": data, "XDG_CONFIG_HOME": config}
	paths, err := UserInstallPaths(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if paths.Entry != filepath.Join(data, "applications/tollgate.desktop") || paths.Autostart != filepath.Join(config, "autostart/tollgate.desktop") ||
		paths.IconTheme != filepath.Join(data, "icons/hicolor") || paths.Manifest != filepath.Join(data, "tollgate/installed.txt") ||
		paths.Bin != filepath.Join(root, ".local/bin/tollgate") {
		t.Errorf("%+v", paths)
	}
	// Relative XDG values are ignored (Base Directory Specification).
	env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"] = "rel/data", "rel/config"
	paths, _ = UserInstallPaths(func(k string) string { return env[k] })
	if paths.Entry != filepath.Join(root, ".local/share/applications/tollgate.desktop") || paths.Autostart != filepath.Join(root, ".config/autostart/tollgate.desktop") {
		t.Errorf("relative XDG values used: %+v", paths)
	}
	if _, err := UserInstallPaths(func(string) string { return "" }); err == nil {
		t.Error("no $HOME: want an error")
	}
}

func TestInstallRefusesFilesItDidNotWrite(t *testing.T) {
	root, getenv := userTree(t)
	paths, _ := UserInstallPaths(getenv)
	os.MkdirAll(filepath.Dir(paths.Bin), 0o755)
	os.WriteFile(paths.Bin, []byte("someone else's tollgate"), 0o755)
	before := snapshot(t, root)
	_, err := InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "ours"), WindowSource: fakeWindow(t)})
	if err == nil || !strings.Contains(err.Error(), paths.Bin) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want a refusal naming %s", err, paths.Bin)
	}
	sameTree(t, before, snapshot(t, root)) // nothing written

	// --force takes the file over; uninstall then removes it (it wrote it).
	if _, err := InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "ours"), WindowSource: fakeWindow(t), Force: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(paths.Bin); string(b) != "ours" {
		t.Errorf("binary %q", b)
	}
	if _, err := UninstallUser(paths, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(paths.Bin); !os.IsNotExist(err) {
		t.Errorf("forced binary not removed: %v", err)
	}
}

func TestUninstallKeepsFilesChangedSince(t *testing.T) {
	_, getenv := userTree(t)
	paths, _ := UserInstallPaths(getenv)
	if _, err := InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "bin"), WindowSource: fakeWindow(t), Autostart: true}); err != nil {
		t.Fatal(err)
	}
	edited := []byte("[Desktop Entry]\nName=mine now\n")
	os.WriteFile(paths.Entry, edited, 0o644)
	res, err := UninstallUser(paths, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 1 || !strings.Contains(res.Kept[0], paths.Entry) || !strings.Contains(res.Kept[0], "changed") {
		t.Fatalf("kept %v, want the edited entry", res.Kept)
	}
	if b, _ := os.ReadFile(paths.Entry); !bytes.Equal(b, edited) {
		t.Error("the edited entry was touched")
	}
	for _, p := range []string{paths.Bin, paths.Autostart} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed", p)
		}
	}
	// The manifest still lists the kept file, so nothing is forgotten.
	m, _ := os.ReadFile(paths.Manifest)
	if !strings.Contains(string(m), paths.Entry) || strings.Contains(string(m), paths.Bin) {
		t.Errorf("manifest after a partial uninstall:\n%s", m)
	}
	// A reinstall refuses to overwrite the edited file.
	if _, err := InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "bin"), WindowSource: fakeWindow(t)}); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("reinstall over an edited entry: %v", err)
	}
}

func TestUninstallAutostartOnly(t *testing.T) {
	root, getenv := userTree(t)
	before := snapshot(t, root)
	paths, _ := UserInstallPaths(getenv)
	if _, err := InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "bin"), WindowSource: fakeWindow(t), Autostart: true}); err != nil {
		t.Fatal(err)
	}
	res, err := UninstallUser(paths, true)
	if err != nil || len(res.Removed) != 1 || res.Removed[0] != paths.Autostart {
		t.Fatalf("removed %v, %v; want just the autostart entry", res.Removed, err)
	}
	if _, err := os.Stat(paths.Bin); err != nil {
		t.Errorf("binary gone with --autostart: %v", err)
	}
	if _, err := UninstallUser(paths, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, root))
}

// A binary the system's menu entry starts (the Debian package) is not
// copied: --autostart writes only the autostart entry, starting it.
func TestInstallNextToASystemWideInstall(t *testing.T) {
	root, getenv := userTree(t)
	before := snapshot(t, root)
	sys := t.TempDir()
	bin := fakeBinary(t, "system tollgate")
	entry, _ := RenderEntry(bin, "", false)
	os.MkdirAll(filepath.Join(sys, "applications"), 0o755)
	os.WriteFile(filepath.Join(sys, "applications/tollgate.desktop"), entry, 0o644)
	env := map[string]string{"XDG_DATA_DIRS": "/nonexistent:" + sys}
	path, ok := SystemEntry(bin, func(k string) string { return env[k] })
	if !ok || path != filepath.Join(sys, "applications/tollgate.desktop") {
		t.Fatalf("SystemEntry = %q %v", path, ok)
	}
	if _, ok := SystemEntry(fakeBinary(t, "another build"), func(k string) string { return env[k] }); ok {
		t.Error("a different binary matched the system entry")
	}

	paths, _ := UserInstallPaths(getenv)
	res, err := InstallUser(InstallOptions{Paths: paths, Source: bin, WindowSource: fakeWindow(t), Autostart: true, SystemWide: true})
	if err != nil || len(res.Written) != 1 || res.Written[0] != paths.Autostart {
		t.Fatalf("wrote %v, %v; want just the autostart entry", res.Written, err)
	}
	auto, _ := ReadDesktopEntry(paths.Autostart)
	if auto["Exec"] != bin+" --hidden" {
		t.Errorf("autostart Exec %q", auto["Exec"])
	}
	if _, err := UninstallUser(paths, false); err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, root))
}

func TestDesktopExecQuotingRoundTrip(t *testing.T) {
	for _, arg := range []string{
		"/usr/bin/tollgate", "/home/a b/.local/bin/tollgate", `/odd/"quoted"/x`, "/cost/$HOME/x",
		`/back\slash/x`, "/100%/x", "/tick`/x", "/semi;colon/x",
	} {
		v := desktopExecArg(arg) + " --hidden"
		got := DesktopExecFields(v)
		if len(got) != 2 || got[0] != arg || got[1] != "--hidden" {
			t.Errorf("%q → Exec=%s → %q", arg, v, got)
		}
	}
	if got := desktopExecArg("/usr/bin/tollgate"); got != "/usr/bin/tollgate" {
		t.Errorf("a plain path is quoted: %s", got)
	}
	if got := DesktopExecFields("tollgate %U --x"); strings.Join(got, "|") != "tollgate|--x" {
		t.Errorf("field codes: %q", got)
	}
}

func TestManifestRejectsGarbage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "installed.txt")
	os.WriteFile(p, []byte("file abc relative/path\n"), 0o644)
	if _, err := readManifest(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want one naming the file and line", err)
	}
}

// In a $HOME with nothing in it, install creates every folder up to the
// files (and the manifest's), and uninstall removes them all again — for a
// full install, an autostart-only uninstall, and next to a system install.
func TestRoundTripInAnEmptyHome(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		systemWide, autostart bool
		onlyAutostartFirst    bool
	}{
		{name: "full", autostart: true},
		{name: "full, autostart removed first", autostart: true, onlyAutostartFirst: true},
		{name: "system-wide, autostart only", systemWide: true, autostart: true},
		{name: "system-wide, autostart removed alone", systemWide: true, autostart: true, onlyAutostartFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			paths, _ := UserInstallPaths(func(k string) string { return map[string]string{"HOME": root}[k] })
			res, err := InstallUser(InstallOptions{Paths: paths, Source: fakeBinary(t, "bin"), WindowSource: fakeWindow(t), Autostart: tc.autostart, SystemWide: tc.systemWide})
			if err != nil || len(res.Written) == 0 {
				t.Fatalf("install: %v %v", res.Written, err)
			}
			if tc.onlyAutostartFirst {
				if res, err := UninstallUser(paths, true); err != nil || len(res.Kept) > 0 {
					t.Fatalf("uninstall --autostart: %v %v", err, res.Kept)
				}
				if _, err := os.Stat(paths.Autostart); !os.IsNotExist(err) {
					t.Fatalf("autostart entry still there: %v", err)
				}
			}
			if res, err := UninstallUser(paths, false); err != nil || len(res.Kept) > 0 {
				t.Fatalf("uninstall: %v %v", err, res.Kept)
			}
			if left := snapshot(t, root); len(left) != 1 { // the root itself
				t.Errorf("left behind:\n  %s", strings.Join(left, "\n  "))
			}
		})
	}
}
