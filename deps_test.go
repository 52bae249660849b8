package main

// The import rules of ARCHITECTURE.md ("Allowed imports"), enforced in the
// spirit of Tailscale's tstest/deptest: every package of the module is
// listed by `go list`, and each of its imports must be allowed by the first
// row whose pattern matches it. A package no row names fails too, so a new
// room has to say what it may import.

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// depRule says what the packages matching pattern may import: module
// packages (exact paths, or a prefix ending in "/..."), and outside
// modules (path prefixes). The standard library is always allowed.
type depRule struct {
	pattern  string
	module   []string
	external []string
}

const mod = "tollgate"

// depRules are checked in order: the first matching pattern decides.
var depRules = []depRule{
	// The bottom: pure computation, no I/O, no dependencies.
	{pattern: "pricing", module: nil},
	// Records and their errors; no database code, no cgo.
	{pattern: "storage", module: []string{"pricing"}},
	{pattern: "storage/sqlite", module: []string{"storage", "pricing"}, external: []string{"github.com/mattn/go-sqlite3"}},
	// The wire types, and the client harnesses link.
	{pattern: "guard/api", module: []string{"storage", "pricing"}},
	{pattern: "guard/client", module: []string{"guard/api", "pricing"}},
	{pattern: "guard/client/clienttest", module: []string{"guard/api", "guard/client"}},
	// The gate: it talks to its store through an interface it owns.
	{pattern: "guard", module: []string{"guard/api", "storage", "pricing"}},

	// The rooms of app/. A harness integration and the simulator reach
	// tollgate only through guard/client, like any harness.
	{pattern: "app/home"},
	{pattern: "app/importer/jsonl", external: []string{"github.com/klauspost/compress/"}},
	{pattern: "app/harness/claudecode/cctool", module: []string{"app/importer/jsonl"}},
	// encoding/json's reading of the file tools, the decoders' tests' reference.
	{pattern: "app/harness/claudecode/cctool/cctooltest"},
	// The importer core: records, the driver and the Format registry; it
	// never imports a harness folder (each registers itself).
	{pattern: "app/importer", module: []string{"app/importer/jsonl", "pricing"}},
	// What the formats' tests check alike in their real samples.
	{pattern: "app/importer/importertest", module: []string{"app/importer"}},
	{pattern: "app/harness/claudecode/testcorpus"},
	{pattern: "app/harness/claudecode/cclog", module: []string{"app/harness/claudecode/cctool", "app/importer", "app/importer/jsonl", "pricing"}},
	{pattern: "app/harness/codex/cxlog", module: []string{"app/importer", "app/importer/jsonl", "pricing"}},
	{pattern: "app/harness/claudecode/ccfold", module: []string{"app/harness/claudecode/cclog", "app/importer"}},
	{pattern: "app/harness/dsh", module: []string{"app/harness", "app/importer", "app/importer/jsonl", "app/home", "guard/api", "pricing"}},
	{pattern: "app/harness/gemini", module: []string{"app/harness", "app/importer", "app/importer/jsonl", "app/home", "guard/api", "pricing"}},
	{pattern: "app/harness/opencode/ocdb", module: []string{"app/importer", "pricing"}, external: []string{"github.com/mattn/go-sqlite3"}},
	// The command-hook skeleton the Claude Code and Codex hooks share.
	{pattern: "app/harness/hookio", module: []string{"app/harness", "app/home", "app/importer", "guard/api", "guard/client"}},
	{pattern: "app/harness/claudecode", module: []string{"app/harness", "app/harness/hookio", "guard/client", "guard/api", "pricing", "app/importer", "app/harness/claudecode/ccfold", "app/harness/claudecode/cclog", "app/home"}},
	{pattern: "app/harness/reasonix", module: []string{"app/harness", "guard/client", "guard/api", "pricing", "app/importer", "app/home"}, external: []string{"github.com/pelletier/go-toml/"}},
	{pattern: "app/harness/codex", module: []string{"app/harness", "app/harness/hookio", "guard/client", "guard/api", "pricing", "app/importer", "app/importer/jsonl", "app/harness/codex/cxlog", "app/home"}, external: []string{"github.com/pelletier/go-toml/"}},
	// The OpenCode plugin's installer writes the plugin the binary embeds.
	{pattern: "app/harness/opencode", module: []string{"app/harness", "app/home", "app/importer/jsonl", "guard/api", "integrations/opencode"}},
	{pattern: "app/sim", module: []string{"guard/client", "guard/api", "pricing", "app/importer", "app/home"}},
	// The registry of the integrations: it never imports a harness folder.
	{pattern: "app/harness", module: []string{"app/home", "guard/api", "guard/client"}},
	// Every harness folder, linked into the binary by the composition root.
	{pattern: "app/harness/all", module: []string{"app/harness/claudecode", "app/harness/codex", "app/harness/dsh", "app/harness/gemini", "app/harness/opencode", "app/harness/opencode/ocdb", "app/harness/reasonix"}},
	{pattern: "app/config", module: []string{"app/home", "app/importer", "pricing"}, external: []string{"github.com/spf13/viper", "gopkg.in/yaml.v3"}},
	{pattern: "app/imports", module: []string{"app/importer", "app/importer/jsonl", "app/config", "app/home", "guard", "guard/api", "storage", "storage/sqlite", "pricing"}},
	// Following the harnesses' log folders: inotify, then app/imports.
	{pattern: "app/follow", module: []string{"app/imports", "app/importer", "app/config", "guard/api", "storage/sqlite"}, external: []string{"github.com/fsnotify/fsnotify"}},
	{pattern: "app/install", module: []string{"app/home", "build/desktop"}},
	{pattern: "app/desktop/sessionbus", external: []string{"github.com/godbus/dbus/"}},
	// A throwaway session bus for the tests of the tray, the notifications and doctor.
	{pattern: "app/desktop/sessionbus/bustest", external: []string{"github.com/godbus/dbus/"}},
	{pattern: "app/desktop", module: []string{"app/desktop/sessionbus", "guard", "guard/api", "pricing"},
		external: []string{"github.com/wailsapp/wails/v2/pkg/", "fyne.io/systray", "github.com/godbus/dbus/"}},
	{pattern: "app/doctor", module: []string{"app/home", "app/config", "app/harness",
		"app/install", "app/desktop/sessionbus", "guard/api", "storage/sqlite", "build/desktop", "pricing"}, external: []string{"github.com/godbus/dbus/"}},
	// OpenTelemetry in (OTLP receiver) and out (Prometheus, OTLP push).
	{pattern: "app/telemetry", module: []string{"app/config", "app/harness", "app/home", "app/importer", "guard", "guard/api", "storage", "pricing"},
		external: []string{"go.opentelemetry.io/", "github.com/prometheus/"}},
	// The composition root: everything but the window and the commands.
	{pattern: "app", module: []string{"app/config", "app/doctor", "app/follow", "app/harness", "app/harness/all", "app/home", "app/importer", "app/imports",
		"app/sim", "app/telemetry", "guard", "guard/api", "guard/client", "storage", "storage/sqlite", "pricing"}},
	{pattern: "app/apptest", module: []string{"app", "app/config"}},
	// The commands may call any room (not the window: only main links Wails' root).
	{pattern: "app/cli", module: []string{"app", "app/config", "app/doctor", "app/follow", "app/harness",
		"app/home", "app/imports", "app/install", "app/sim", "app/importer", "guard/api", "guard/client", "storage/sqlite", "pricing", "build/desktop"}},
	// main: two binaries (launch.go without tags, window.go with the
	// desktop tags); only the window binary links Wails, app/desktop and
	// GTK (TestCLIBinaryLinksNoWindow).
	{pattern: "", module: []string{"app", "app/cli", "app/desktop", "app/home", "frontend"}, external: []string{"github.com/wailsapp/wails/v2"}},

	// Assets and test programs.
	{pattern: "frontend"},
	{pattern: "build/desktop"},
	{pattern: "integrations/opencode"},
	{pattern: "test/harness"},
	{pattern: "test/shareddata"},
	{pattern: "test/wanterr"},
	{pattern: "test/harness/cmd/fakeprovider", module: []string{"test/harness"}},
	{pattern: "test/bench/importbench", module: []string{"storage/sqlite", "storage", "pricing"}, external: []string{"github.com/mattn/go-sqlite3"}},
}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-json"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rel is a module package's path below the module ("" for the root).
func rel(path string) (string, bool) {
	if path == mod {
		return "", true
	}
	r, ok := strings.CutPrefix(path, mod+"/")
	return r, ok
}

func allowed(list []string, path string) bool {
	for _, a := range list {
		if a == path || strings.HasSuffix(a, "/") && strings.HasPrefix(path, a) {
			return true
		}
	}
	return false
}

func TestDependencies(t *testing.T) {
	std := map[string]bool{}
	for _, p := range goList(t, "std") {
		std[p.ImportPath] = true
	}
	pkgs := goList(t, "./...")
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		name, ok := rel(p.ImportPath)
		if !ok {
			t.Fatalf("%s is not in module %s", p.ImportPath, mod)
		}
		i := slices.IndexFunc(depRules, func(r depRule) bool { return r.pattern == name })
		if i < 0 {
			t.Errorf("%s: no row in depRules says what it may import (add one, and to ARCHITECTURE.md)", p.ImportPath)
			continue
		}
		rule := depRules[i]
		for _, imp := range p.Imports {
			switch r, inModule := rel(imp); {
			case std[imp] || imp == "C":
			case inModule:
				if !slices.Contains(rule.module, r) {
					t.Errorf("%s imports %s, which its row does not allow", p.ImportPath, imp)
				}
			case !allowed(rule.external, imp):
				t.Errorf("%s imports %s, which its row does not allow", p.ImportPath, imp)
			}
		}
		// The lower rooms never reach up into the app, not even through
		// another package.
		if name == "pricing" || strings.HasPrefix(name, "storage") || strings.HasPrefix(name, "guard") {
			for _, d := range p.Deps {
				if r, ok := rel(d); ok && (r == "app" || strings.HasPrefix(r, "app/")) {
					t.Errorf("%s depends on %s: nothing under guard/, storage/ or pricing/ may", p.ImportPath, d)
				}
			}
		}
	}
}

// The rules must be able to fail: a row that forbids what a package
// imports is caught.
func TestDependencyRulesCatchAViolation(t *testing.T) {
	if allowed([]string{"github.com/godbus/dbus/"}, "github.com/mattn/go-sqlite3") {
		t.Fatal("an unlisted module was allowed")
	}
	if !allowed([]string{"github.com/godbus/dbus/"}, "github.com/godbus/dbus/v5") {
		t.Fatal("a listed prefix was refused")
	}
	if r, ok := rel("tollgate/app/cli"); !ok || r != "app/cli" {
		t.Fatal(r, ok)
	}
}

// desktopTags are the window binary's build tags (Makefile TAGS).
const desktopTags = "desktop,production,webkit2_41"

// The command-line binary, which harnesses exec as a hook, must not link
// the window: no Wails root package, no app/desktop, no tray, nothing that
// pulls GTK. The window binary (built with desktopTags) does, and its main
// still keeps to the root row of depRules.
func TestCLIBinaryLinksNoWindow(t *testing.T) {
	windowOnly := []string{mod + "/app/desktop", "github.com/wailsapp/wails/v2", "fyne.io/systray"}
	cli := goList(t, ".")
	if len(cli) != 1 {
		t.Fatalf("go list . found %d packages", len(cli))
	}
	for _, d := range cli[0].Deps {
		if slices.Contains(windowOnly, d) {
			t.Errorf("the tollgate binary (no tags) depends on %s; only tollgate-window may", d)
		}
	}
	window := goList(t, "-tags", desktopTags, ".")
	if len(window) != 1 {
		t.Fatalf("go list -tags %s . found %d packages", desktopTags, len(window))
	}
	for _, want := range windowOnly {
		if !slices.Contains(window[0].Deps, want) {
			t.Errorf("the window binary (-tags %s) does not depend on %s", desktopTags, want)
		}
	}
	root := depRules[slices.IndexFunc(depRules, func(r depRule) bool { return r.pattern == "" })]
	for _, imp := range window[0].Imports {
		if r, inModule := rel(imp); inModule && !slices.Contains(root.module, r) || !inModule && strings.Contains(imp, ".") && !allowed(root.external, imp) {
			t.Errorf("the window binary's main imports %s, which the root row does not allow", imp)
		}
	}
}
