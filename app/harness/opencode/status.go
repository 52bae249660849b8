package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"tollgate/app/home"
	"tollgate/guard/api"
)

// Name is the integration's name. The plugin (integrations/opencode)
// guards through an engine lease while OpenCode runs, like dsh's: it turns
// OpenCode's automatic compaction off while tollgate answers and asks once
// the context crosses OpenCode's threshold — when the session goes idle, or
// before its next model request (ARCHITECTURE.md, "OpenCode").
const Name = "opencode"

// openCodeConfigMax bounds the read of OpenCode's global config file.
const openCodeConfigMax = 1 << 20

// installCommand is what the user runs to install or refresh the plugin.
const installCommand = "tollgate hook opencode --install"

// Status reports whether OpenCode loads tollgate's plugin: installed by
// Install (and whether its files are this binary's), listed in OpenCode's
// config, or a plugin file of tollgate's in its plugin folders; and when
// the plugin was last seen running. It never arms the guard by itself
// (Verified stays false): the plugin does, through its engine lease, while
// OpenCode runs.
func Status(p home.Probe) api.Integration {
	in, _ := Assess(p)
	return in
}

// Assess is Status, and whether the plugin is installed but needs the
// user (an older tollgate's files, a changed or missing file, a second
// copy that makes OpenCode run it twice): doctor grades that a warning.
func Assess(p home.Probe) (in api.Integration, needsFix bool) {
	in = api.Integration{Name: Name}
	dir, err := Dir(p.Getenv)
	if err != nil {
		dir = ""
	}
	var where, problem string
	verb := "configured in "
	installed := Inspect(dir)
	configured := configuredElsewhere(dir, p.Getenv)
	switch {
	case installed.Present && configured != "":
		where, verb = installed.Shim, "installed in "
		problem = "also configured in " + configured + ", so OpenCode loads it twice: remove one (`tollgate hook opencode --uninstall` removes the installed copy)"
	case installed.Present:
		where, verb, problem = installed.Shim, "installed in ", installed.Problem
	default:
		where = configured
	}
	m, seenErr := home.ReadMarker(p.Home, Name)
	if where == "" && seenErr == nil && m.From != "" {
		// Seen, and nowhere tollgate looks: from a folder of OpenCode's it
		// does not read (a project's .opencode), or from a file since
		// removed (--uninstall).
		if _, err := os.Stat(m.From); err != nil {
			in.Detail = "not installed: the plugin last ran " + m.At.Local().Format("2006-01-02 15:04") + " from " + m.From +
				", which is gone; run `" + installCommand + "`"
			return in, false
		}
		where = m.From
	}
	switch {
	case where == "" && seenErr != nil:
		in.Detail = "not installed: run `" + installCommand + "`; the plugin registers an engine while OpenCode runs"
		return in, false
	case problem != "":
		in.Installed = where != ""
		in.Detail = "plugin " + verb + where + ": " + problem
		return in, true
	case seenErr != nil:
		in.Installed = true
		in.Detail = "plugin " + verb + where + "; not seen yet: it arms the guard once OpenCode starts while tollgate runs"
		return in, false
	}
	in.Installed = true
	in.Detail = "plugin seen "
	if where != "" {
		in.Detail = "plugin " + verb + where + ", seen "
	}
	in.Detail += m.At.Local().Format("2006-01-02 15:04")
	if m.Version != "" {
		in.Detail += " (OpenCode " + m.Version + ")"
	}
	in.Detail += "; it arms the guard while OpenCode runs (engine lease); declining leaves the history whole and asks again after the next turn above OpenCode's threshold"
	return in, false
}

// Installation is what Inspect found of Install's files.
type Installation struct {
	Present bool   // the shim or the manifest is there
	Current bool   // every file is this binary's
	Shim    string // plugins/tollgate.js
	// Problem says what is wrong and what to run ("" when Current or not
	// Present): an older tollgate's files, a file changed or missing.
	Problem string
}

// Inspect compares Install's files in OpenCode's config folder with the
// ones this binary would write.
func Inspect(configDir string) Installation {
	l := layoutOf(configDir)
	in := Installation{Shim: l.shim}
	if configDir == "" {
		return in
	}
	_, shimErr := os.Lstat(l.shim)
	if err := checkFolders(l, []string{path.Join(treeName, manifestName)}); err != nil {
		in.Present, in.Problem = true, err.Error()
		return in
	}
	m, err := readManifest(l)
	switch {
	case err != nil:
		in.Present, in.Problem = true, err.Error()
		return in
	case m == nil && shimErr != nil:
		return in
	case m == nil:
		in.Present = true
		in.Problem = "not written by tollgate (no " + l.manifest + " beside it); remove it and run `" + installCommand + "`"
		return in
	}
	in.Present = true
	want, err := wanted(m.Home)
	if err != nil {
		in.Problem = err.Error()
		return in
	}
	older := false
	for _, rel := range slices.Sorted(maps.Keys(want)) {
		b, err := readRegular(l.abs(rel), maxPluginFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			in.Problem = l.abs(rel) + " is missing: run `" + installCommand + "` again"
			return in
		case err != nil:
			in.Problem = err.Error()
			return in
		case bytes.Equal(b, want[rel]):
		case m.Files[rel] == digest(b):
			older = true
		default:
			in.Problem = l.abs(rel) + " was changed since tollgate installed it: put it back with `" + installCommand + "` (move the changed file away first)"
			return in
		}
	}
	for rel := range m.Files {
		if _, ok := want[rel]; !ok {
			older = true
		}
	}
	if older {
		in.Problem = "installed by an older tollgate (its files differ from this tollgate's plugin): run `" + installCommand + "` again"
		return in
	}
	in.Current = true
	return in
}

// configuredElsewhere names where OpenCode loads tollgate's plugin from
// other than Install's shim ("" when nowhere): a config that lists it —
// $OPENCODE_CONFIG, then opencode.json, opencode.jsonc and config.json in
// the config folder — or a .js/.ts file named *tollgate* at the top of the
// plugin/ or plugins/ folder of the config folder, ~/.opencode or
// $OPENCODE_CONFIG_DIR (what OpenCode's glob loads, for every project;
// an install made there with --config-dir too). A project's own .opencode
// folder is not looked at: the marker the plugin writes when it runs shows
// those.
func configuredElsewhere(dir string, getenv func(string) string) string {
	var files []string
	if getenv != nil {
		if f := getenv("OPENCODE_CONFIG"); f != "" {
			files = append(files, f)
		}
	}
	if dir != "" {
		files = append(files, filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc"), filepath.Join(dir, "config.json"))
	}
	for _, f := range files {
		if listsTollgatePlugin(f) {
			return f
		}
	}
	folders := []string{dir}
	if getenv != nil {
		if h := getenv("HOME"); h != "" {
			folders = append(folders, filepath.Join(h, ".opencode"))
		}
		folders = append(folders, getenv("OPENCODE_CONFIG_DIR"))
		if g, err := Dir(getenv); err == nil && g != dir {
			folders = append(folders, g) // an install made with --config-dir elsewhere
		}
	}
	shim := ""
	if dir != "" {
		shim = layoutOf(dir).shim
	}
	for _, d := range folders {
		if d == "" {
			continue
		}
		for _, sub := range []string{"plugin", "plugins"} {
			entries, _ := os.ReadDir(filepath.Join(d, sub))
			for _, e := range entries {
				name := strings.ToLower(e.Name())
				p := filepath.Join(d, sub, e.Name())
				if p == shim || e.IsDir() || !strings.Contains(name, "tollgate") || !(strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".ts")) {
					continue
				}
				return p
			}
		}
	}
	return ""
}

// listsTollgatePlugin reports whether an OpenCode config (JSON with
// comments) has a "plugin" entry naming tollgate's plugin: a spec string,
// or [spec, options].
func listsTollgatePlugin(path string) bool {
	// Opened without blocking and read only when regular: a FIFO named
	// like a config never hangs the Integrations page.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, openCodeConfigMax+1))
	if err != nil || len(b) > openCodeConfigMax {
		return false
	}
	var cfg struct {
		Plugin []json.RawMessage `json:"plugin"`
	}
	if json.Unmarshal(StripJSONC(b), &cfg) != nil {
		return false
	}
	for _, raw := range cfg.Plugin {
		var spec string
		if json.Unmarshal(raw, &spec) != nil {
			var pair []json.RawMessage
			if json.Unmarshal(raw, &pair) != nil || len(pair) == 0 || json.Unmarshal(pair[0], &spec) != nil {
				continue
			}
		}
		if s := strings.ToLower(spec); strings.Contains(s, "tollgate") || strings.Contains(s, "integrations/opencode") {
			return true
		}
	}
	return false
}

// StripJSONC turns JSON with comments and trailing commas (OpenCode's
// opencode.jsonc) into JSON: comments outside strings become spaces, and a
// comma before a closing bracket is dropped.
func StripJSONC(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out = append(out, c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i += 2
			for i+1 < len(b) && (b[i] != '*' || b[i+1] != '/') {
				i++
			}
			i++
			out = append(out, ' ')
		case c == ']' || c == '}':
			trimmed := bytes.TrimRight(out, " \t\r\n")
			if len(trimmed) > 0 && trimmed[len(trimmed)-1] == ',' {
				out = append(trimmed[:len(trimmed)-1], c)
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}
