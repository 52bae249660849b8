package opencode

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/app/home"
	plugin "tollgate/integrations/opencode"
)

// tree lists every file under dir (slash paths) with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s", what, k)
		}
	}
}

func embedded(t *testing.T, name string) string {
	t.Helper()
	b, err := plugin.Files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// userFiles is a config folder with the user's own things in it.
func userFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "plugins"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugins", "notify.js"), []byte("export const Notify = async () => ({})\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(`{"plugin": ["opencode-wakatime"], "model": "x/y"}`), 0o644)
	return dir
}

func TestInstallWritesShimAndPluginThenUninstallRemovesOnlyThem(t *testing.T) {
	dir := userFiles(t)
	before := tree(t, dir)
	res, err := Install(InstallOptions{ConfigDir: dir})
	if err != nil || !res.Changed || res.ConfiguredIn != "" {
		t.Fatalf("install: %+v %v", res, err)
	}
	got := tree(t, dir)
	for _, f := range []string{"index.js", "lib/client.js", "lib/guard.js"} {
		if got["plugins/tollgate/"+f] != embedded(t, f) {
			t.Errorf("plugins/tollgate/%s is not the embedded file", f)
		}
	}
	shim := got["plugins/tollgate.js"]
	if !strings.Contains(shim, "export { TollgatePlugin } from './tollgate/index.js'") || strings.Contains(shim, "home:") {
		t.Fatalf("shim:\n%s", shim)
	}
	var m manifest
	if err := json.Unmarshal([]byte(got["plugins/tollgate/tollgate-install.json"]), &m); err != nil || len(m.Files) != 4 || m.Files["tollgate.js"] != digest([]byte(shim)) {
		t.Fatalf("manifest %+v %v", m, err)
	}
	if in := Inspect(dir); !in.Present || !in.Current || in.Problem != "" {
		t.Fatalf("inspect after install: %+v", in)
	}
	for k, v := range before {
		if got[k] != v {
			t.Errorf("install changed the user's %s", k)
		}
	}

	// Idempotent: nothing to do, nothing touched.
	st, _ := os.Stat(filepath.Join(dir, "plugins", "tollgate.js"))
	if res, err := Install(InstallOptions{ConfigDir: dir}); err != nil || res.Changed {
		t.Fatalf("second install: %+v %v", res, err)
	}
	if st2, _ := os.Stat(filepath.Join(dir, "plugins", "tollgate.js")); !st2.ModTime().Equal(st.ModTime()) {
		t.Fatal("second install rewrote the shim")
	}

	un, err := Uninstall(dir)
	if err != nil || un.Removed != 4 {
		t.Fatalf("uninstall: %+v %v", un, err)
	}
	sameTree(t, "after uninstall", tree(t, dir), before)
	if un, err := Uninstall(dir); err != nil || un.Removed != 0 {
		t.Fatalf("second uninstall: %+v %v", un, err)
	}
	if in := Inspect(dir); in.Present {
		t.Fatalf("inspect after uninstall: %+v", in)
	}
}

// The shim OpenCode loads is a module that exports the plugin only
// (OpenCode calls every export), and with --home it passes tollgate's home
// as the plugin's option. Run with node when the machine has it.
func TestInstalledShimExportsOnlyThePlugin(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	dir := t.TempDir()
	tgHome := filepath.Join(t.TempDir(), "tg \"home\"")
	if _, err := Install(InstallOptions{ConfigDir: dir, Home: tgHome}); err != nil {
		t.Fatal(err)
	}
	// No tollgate at tgHome: the plugin runs unguarded and returns its hooks.
	script := `const m = await import(process.argv[1]);
const hooks = await m.TollgatePlugin({ client: {} }, {});
console.log(JSON.stringify({ keys: Object.keys(m), hooks: typeof hooks.event }))`
	out, err := exec.Command(node, "--input-type=module", "-e", script, filepath.Join(dir, "plugins", "tollgate.js")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != `{"keys":["TollgatePlugin"],"hooks":"function"}` {
		t.Fatalf("node: %v\n%s", err, out)
	}
	shim, _ := os.ReadFile(filepath.Join(dir, "plugins", "tollgate.js"))
	if want, _ := json.Marshal(tgHome); !strings.Contains(string(shim), "home: "+string(want)) {
		t.Fatalf("shim does not pass the home:\n%s", shim)
	}
}

func TestInstallRefusesWhatIsNotTollgates(t *testing.T) {
	t.Run("a shim that is not ours", func(t *testing.T) {
		dir := userFiles(t)
		os.WriteFile(filepath.Join(dir, "plugins", "tollgate.js"), []byte("export const Mine = async () => ({})\n"), 0o644)
		before := tree(t, dir)
		_, err := Install(InstallOptions{ConfigDir: dir})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "plugins", "tollgate.js")) || !strings.Contains(err.Error(), "not written by tollgate") {
			t.Fatalf("install: %v", err)
		}
		sameTree(t, "after refused install", tree(t, dir), before)
		if _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), "tollgate.js") {
			t.Fatalf("uninstall: %v", err)
		}
		sameTree(t, "after refused uninstall", tree(t, dir), before)
		if in := Inspect(dir); !in.Present || in.Current || !strings.Contains(in.Problem, "not written by tollgate") {
			t.Fatalf("inspect: %+v", in)
		}
	})
	t.Run("a file where the plugin folder goes", func(t *testing.T) {
		dir := userFiles(t)
		os.WriteFile(filepath.Join(dir, "plugins", "tollgate"), []byte("x"), 0o644)
		before := tree(t, dir)
		if _, err := Install(InstallOptions{ConfigDir: dir}); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "plugins", "tollgate")+" is not a folder") {
			t.Fatalf("install: %v", err)
		}
		sameTree(t, "after refused install", tree(t, dir), before)
	})
	t.Run("a FIFO where a plugin file goes", func(t *testing.T) {
		dir := userFiles(t)
		os.MkdirAll(filepath.Join(dir, "plugins", "tollgate", "lib"), 0o755)
		fifo := filepath.Join(dir, "plugins", "tollgate", "lib", "guard.js")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip(err)
		}
		if _, err := Install(InstallOptions{ConfigDir: dir}); err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
			t.Fatalf("install: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "plugins", "tollgate.js")); !os.IsNotExist(err) {
			t.Fatal("a refused install wrote the shim")
		}
	})
	t.Run("a symlink where the shim goes", func(t *testing.T) {
		dir := userFiles(t)
		os.Symlink(filepath.Join(dir, "plugins", "notify.js"), filepath.Join(dir, "plugins", "tollgate.js"))
		if _, err := Install(InstallOptions{ConfigDir: dir}); err == nil || !strings.Contains(err.Error(), "tollgate.js is a symbolic link") {
			t.Fatalf("install: %v", err)
		}
	})
	// A link where tollgate's folder (or one below it) goes: written
	// through, the plugin would land in another folder (a checkout's
	// integrations/opencode), and --uninstall would delete the link and
	// that folder's files.
	for _, sub := range []string{"tollgate", filepath.Join("tollgate", "lib")} {
		t.Run("a symlink where "+sub+" goes", func(t *testing.T) {
			dir := userFiles(t)
			elsewhere := t.TempDir()
			os.WriteFile(filepath.Join(elsewhere, "notes.txt"), []byte("mine\n"), 0o644)
			link := filepath.Join(dir, "plugins", sub)
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(elsewhere, link); err != nil {
				t.Fatal(err)
			}
			before, beforeElsewhere := tree(t, dir), tree(t, elsewhere)
			if _, err := Install(InstallOptions{ConfigDir: dir}); err == nil || !strings.Contains(err.Error(), link+" is a symbolic link") {
				t.Fatalf("install: %v", err)
			}
			if _, err := Uninstall(dir); sub == "tollgate" && (err == nil || !strings.Contains(err.Error(), link+" is a symbolic link")) {
				t.Fatalf("uninstall: %v", err)
			}
			sameTree(t, "after refused install and uninstall", tree(t, dir), before)
			sameTree(t, "the folder the link leads to", tree(t, elsewhere), beforeElsewhere)
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("the link is gone: %v", err)
			}
			if in := Inspect(dir); sub == "tollgate" && (!in.Present || in.Current || !strings.Contains(in.Problem, "symbolic link")) {
				t.Fatalf("inspect: %+v", in)
			}
		})
	}
	t.Run("a symlink where tollgate/lib goes, after an install", func(t *testing.T) {
		dir := userFiles(t)
		if _, err := Install(InstallOptions{ConfigDir: dir}); err != nil {
			t.Fatal(err)
		}
		lib := filepath.Join(dir, "plugins", "tollgate", "lib")
		elsewhere := t.TempDir()
		for _, f := range []string{"client.js", "guard.js"} {
			b, _ := os.ReadFile(filepath.Join(lib, f))
			os.WriteFile(filepath.Join(elsewhere, f), b, 0o644)
		}
		os.RemoveAll(lib)
		if err := os.Symlink(elsewhere, lib); err != nil {
			t.Fatal(err)
		}
		beforeElsewhere := tree(t, elsewhere)
		if _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), lib+" is a symbolic link") {
			t.Fatalf("uninstall: %v", err)
		}
		sameTree(t, "the folder the link leads to", tree(t, elsewhere), beforeElsewhere)
	})
	t.Run("a file changed since the install", func(t *testing.T) {
		dir := userFiles(t)
		if _, err := Install(InstallOptions{ConfigDir: dir}); err != nil {
			t.Fatal(err)
		}
		guard := filepath.Join(dir, "plugins", "tollgate", "lib", "guard.js")
		os.WriteFile(guard, []byte("// my fork\n"), 0o644)
		before := tree(t, dir)
		if _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), guard+" was changed") {
			t.Fatalf("uninstall: %v", err)
		}
		sameTree(t, "after refused uninstall", tree(t, dir), before)
		if _, err := Install(InstallOptions{ConfigDir: dir}); err == nil || !strings.Contains(err.Error(), guard+" was changed") {
			t.Fatalf("install: %v", err)
		}
		sameTree(t, "after refused install", tree(t, dir), before)
		if in := Inspect(dir); in.Current || !strings.Contains(in.Problem, guard+" was changed") {
			t.Fatalf("inspect: %+v", in)
		}
	})
	t.Run("a manifest naming a file that is not tollgate's", func(t *testing.T) {
		dir := userFiles(t)
		if _, err := Install(InstallOptions{ConfigDir: dir}); err != nil {
			t.Fatal(err)
		}
		mpath := filepath.Join(dir, "plugins", "tollgate", "tollgate-install.json")
		b, _ := os.ReadFile(mpath)
		var m manifest
		json.Unmarshal(b, &m)
		notify, _ := os.ReadFile(filepath.Join(dir, "plugins", "notify.js"))
		m.Files["notify.js"] = digest(notify)
		b, _ = json.Marshal(m)
		os.WriteFile(mpath, b, 0o644)
		before := tree(t, dir)
		if _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), mpath) || !strings.Contains(err.Error(), `"notify.js"`) {
			t.Fatalf("uninstall: %v", err)
		}
		sameTree(t, "after refused uninstall", tree(t, dir), before)
		os.WriteFile(mpath, []byte("{\"installedBy\": "), 0o644)
		if _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), mpath) {
			t.Fatalf("uninstall of a broken manifest: %v", err)
		}
	})
}

// A config that lists the plugin (or another plugin file of tollgate's that
// OpenCode's glob loads) means OpenCode loads it already: Install writes
// nothing and says where.
func TestInstallLeavesAnAlreadyConfiguredPluginAlone(t *testing.T) {
	cases := map[string]func(dir string) (where string, getenv func(string) string){
		"opencode.jsonc": func(dir string) (string, func(string) string) {
			p := filepath.Join(dir, "opencode.jsonc")
			os.WriteFile(p, []byte(`{
  // guarded
  "plugin": [["file:///opt/tollgate/integrations/opencode/index.js", {"home": "/x"}],],
}`), 0o644)
			return p, nil
		},
		"$OPENCODE_CONFIG": func(dir string) (string, func(string) string) {
			p := filepath.Join(t.TempDir(), "elsewhere.json")
			os.WriteFile(p, []byte(`{"plugin": ["file:///home/u/src/tollgate/integrations/opencode/index.js"]}`), 0o644)
			return p, func(k string) string {
				if k == "OPENCODE_CONFIG" {
					return p
				}
				return ""
			}
		},
		"a copy in plugin/": func(dir string) (string, func(string) string) {
			os.MkdirAll(filepath.Join(dir, "plugin"), 0o755)
			p := filepath.Join(dir, "plugin", "tollgate-guard.js")
			os.WriteFile(p, []byte("export { TollgatePlugin } from '/opt/tollgate/index.js'\n"), 0o644)
			return p, nil
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			dir := userFiles(t)
			where, getenv := setup(dir)
			before := tree(t, dir)
			res, err := Install(InstallOptions{ConfigDir: dir, Getenv: getenv})
			if err != nil || res.ConfiguredIn != where || res.Changed {
				t.Fatalf("install: %+v %v (want configured in %s)", res, err, where)
			}
			sameTree(t, "after install", tree(t, dir), before)
		})
	}
}

// An older tollgate's files (they match its manifest, not this binary's
// plugin) are reported as such, and --install replaces them, removing a
// file the plugin no longer has.
func TestInstallReplacesAnOlderTollgatesFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opencode")
	if _, err := Install(InstallOptions{ConfigDir: dir}); err != nil {
		t.Fatal(err)
	}
	l := layoutOf(dir)
	m, err := readManifest(l)
	if err != nil {
		t.Fatal(err)
	}
	older := map[string]string{"tollgate/lib/guard.js": "// guard 0.0.9\n", "tollgate/lib/old.js": "// gone in this version\n"}
	for rel, content := range older {
		os.WriteFile(l.abs(rel), []byte(content), 0o644)
		m.Files[rel] = digest([]byte(content))
	}
	b, _ := json.Marshal(m)
	os.WriteFile(l.manifest, b, 0o644)

	in := Inspect(dir)
	if in.Current || !strings.Contains(in.Problem, "older tollgate") || !strings.Contains(in.Problem, "tollgate hook opencode --install") {
		t.Fatalf("inspect: %+v", in)
	}
	st := Status(home.Probe{Home: t.TempDir(), Getenv: xdg(dir)})
	if !st.Installed || !strings.Contains(st.Detail, "older tollgate") || !strings.Contains(st.Detail, l.shim) {
		t.Fatalf("status: %+v", st)
	}
	res, err := Install(InstallOptions{ConfigDir: dir})
	if err != nil || !res.Changed {
		t.Fatalf("install over the older files: %+v %v", res, err)
	}
	if in := Inspect(dir); !in.Current {
		t.Fatalf("inspect after reinstall: %+v", in)
	}
	if _, err := os.Stat(l.abs("tollgate/lib/old.js")); !os.IsNotExist(err) {
		t.Fatalf("the older plugin's extra file is still there: %v", err)
	}
	if got, _ := os.ReadFile(l.abs("tollgate/lib/guard.js")); string(got) != embedded(t, "lib/guard.js") {
		t.Fatal("guard.js not replaced")
	}
}

// xdg is an environment whose OpenCode config folder is configDir (which
// must end in /opencode for the status to find it: it is given the parent).
func xdg(configDir string) func(string) string {
	return func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Dir(configDir)
		}
		return ""
	}
}

func TestStatusOfTheInstalledShim(t *testing.T) {
	cfgHome := t.TempDir()
	dir := filepath.Join(cfgHome, "opencode")
	tg := t.TempDir()
	p := home.Probe{Home: tg, Getenv: xdg(dir)}
	if st := Status(p); st.Installed || !strings.Contains(st.Detail, "run `tollgate hook opencode --install`") {
		t.Fatalf("before: %+v", st)
	}
	if _, err := Install(InstallOptions{ConfigDir: dir}); err != nil {
		t.Fatal(err)
	}
	st := Status(p)
	if !st.Installed || st.Verified || !strings.Contains(st.Detail, "installed in "+filepath.Join(dir, "plugins", "tollgate.js")) || !strings.Contains(st.Detail, "not seen yet") {
		t.Fatalf("installed: %+v", st)
	}
	home.WriteMarker(tg, Name, home.Marker{At: time.Now(), Version: "1.18.33"})
	if st := Status(p); !st.Installed || !strings.Contains(st.Detail, "installed in "+filepath.Join(dir, "plugins", "tollgate.js")+", seen ") || !strings.Contains(st.Detail, "OpenCode 1.18.33") {
		t.Fatalf("seen: %+v", st)
	}
	// Listed in opencode.json as well: two files, so OpenCode runs it twice.
	os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(`{"plugin": ["file:///src/tollgate/integrations/opencode/index.js"]}`), 0o644)
	if st := Status(p); !strings.Contains(st.Detail, "loads it twice") || !strings.Contains(st.Detail, "opencode.json") {
		t.Fatalf("twice: %+v", st)
	}
	// A file of the plugin missing.
	os.Remove(filepath.Join(dir, "opencode.json"))
	os.Remove(filepath.Join(dir, "plugins", "tollgate", "lib", "client.js"))
	if st := Status(p); !strings.Contains(st.Detail, "client.js is missing") {
		t.Fatalf("missing: %+v", st)
	}
}

// The plugin's marker says the file it ran from: after --uninstall that
// file is gone and the plugin is not installed, whatever the marker's
// date; a plugin that ran from a folder tollgate does not look at (a
// project's .opencode) is still reported, from there.
func TestStatusAfterUninstallAndFromElsewhere(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opencode")
	tg := t.TempDir()
	p := home.Probe{Home: tg, Getenv: xdg(dir)}
	if _, err := Install(InstallOptions{ConfigDir: dir}); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "plugins", "tollgate", "index.js")
	home.WriteMarker(tg, Name, home.Marker{At: time.Now(), Version: "1.18.33", From: ran})
	if st := Status(p); !st.Installed {
		t.Fatalf("installed and seen: %+v", st)
	}
	if _, err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	if st := Status(p); st.Installed || !strings.Contains(st.Detail, ran+", which is gone") || !strings.Contains(st.Detail, installCommand) {
		t.Fatalf("after uninstall: %+v", st)
	}
	project := filepath.Join(t.TempDir(), ".opencode", "plugins", "tollgate", "index.js")
	os.MkdirAll(filepath.Dir(project), 0o755)
	os.WriteFile(project, []byte("export const TollgatePlugin = async () => ({})\n"), 0o644)
	home.WriteMarker(tg, Name, home.Marker{At: time.Now(), From: project})
	if st := Status(p); !st.Installed || !strings.Contains(st.Detail, "configured in "+project+", seen ") {
		t.Fatalf("from a project's folder: %+v", st)
	}
}

// OpenCode also loads the plugin folders of ~/.opencode and
// $OPENCODE_CONFIG_DIR for every project: a copy there and one in the
// config folder run twice, and an install into one refuses to add the other.
func TestACopyInOpenCodeConfigDirIsSeen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opencode")
	other := t.TempDir()
	env := func(k string) string {
		switch k {
		case "XDG_CONFIG_HOME":
			return filepath.Dir(dir)
		case "OPENCODE_CONFIG_DIR":
			return other
		}
		return ""
	}
	if _, err := Install(InstallOptions{ConfigDir: other, Getenv: env}); err != nil {
		t.Fatal(err)
	}
	p := home.Probe{Home: t.TempDir(), Getenv: env}
	if st := Status(p); !st.Installed || !strings.Contains(st.Detail, filepath.Join(other, "plugins", "tollgate.js")) {
		t.Fatalf("installed in $OPENCODE_CONFIG_DIR: %+v", st)
	}
	res, err := Install(InstallOptions{ConfigDir: dir, Getenv: env})
	if err != nil || res.Changed || res.ConfiguredIn != filepath.Join(other, "plugins", "tollgate.js") {
		t.Fatalf("a second install: %+v %v", res, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "plugins", "tollgate.js")); !os.IsNotExist(err) {
		t.Fatal("a second copy was written")
	}
}

func TestInstallRefusesAHomeThatIsNotUTF8(t *testing.T) {
	dir := userFiles(t)
	before := tree(t, dir)
	if _, err := Install(InstallOptions{ConfigDir: dir, Home: "/x/tg\xff"}); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Fatalf("install: %v", err)
	}
	sameTree(t, "after a refused install", tree(t, dir), before)
}

// FuzzReadManifest: the manifest is a file on disk anyone may edit. No
// input panics, and one that is accepted names only tollgate's shim and
// files inside its folder (never the manifest itself), each with a sha256
// digest: an edited manifest cannot make --uninstall delete anything else.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"installedBy":"tollgate hook opencode --install","files":{"tollgate.js":"sha256:00","tollgate/index.js":"sha256:11"}}`))
	f.Add([]byte(`{"installedBy":"tollgate hook opencode --install","home":"/x","files":{"tollgate/../notify.js":"sha256:00"}}`))
	f.Add([]byte(`{"installedBy":"tollgate hook opencode --install","files":{"/etc/passwd":"sha256:00"}}`))
	f.Add([]byte(`{"installedBy": `))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		l := layoutOf(dir)
		os.MkdirAll(l.tree, 0o755)
		if err := os.WriteFile(l.manifest, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := readManifest(l)
		if err != nil {
			if !strings.Contains(err.Error(), l.manifest) {
				t.Fatalf("error does not name the manifest: %v", err)
			}
			return
		}
		for rel, sum := range m.Files {
			p := l.abs(rel)
			inTree := strings.HasPrefix(p, l.tree+string(filepath.Separator))
			if p != l.shim && !inTree || p == l.manifest || !strings.HasPrefix(sum, "sha256:") {
				t.Fatalf("accepted %q → %s (%q)", rel, p, sum)
			}
		}
	})
}

// An install cut short before its manifest (the plugin's files written,
// nothing else) is finished by the next --install: those files are
// byte-for-byte tollgate's.
func TestInstallFinishesAnInterruptedInstall(t *testing.T) {
	dir := userFiles(t)
	for _, f := range []string{"index.js", "lib/guard.js"} {
		p := filepath.Join(dir, "plugins", "tollgate", filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(embedded(t, f)), 0o644)
	}
	if res, err := Install(InstallOptions{ConfigDir: dir}); err != nil || !res.Changed {
		t.Fatalf("install: %+v %v", res, err)
	}
	if in := Inspect(dir); !in.Current {
		t.Fatalf("inspect: %+v", in)
	}
}
