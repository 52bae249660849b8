package opencode

// Installing the plugin into OpenCode's global config folder.
//
// How OpenCode 1.18.33 loads plugins from a config folder — read in the
// JavaScript embedded in the pinned binary (test/harness/node_modules/
// opencode-linux-x64/bin/opencode, `opencode-ai` 1.18.33) and in
// sst/opencode (now anomalyco/opencode) packages/opencode/src/config/
// {plugin,paths,config}.ts and src/plugin/index.ts, 2026-12-01:
//
//   - The folders: Config.loadInstanceState walks ConfigPaths.directories —
//     Global.Path.config ($XDG_CONFIG_HOME/opencode, else
//     ~/.config/opencode), each .opencode folder from the project up to the
//     worktree, ~/.opencode, then $OPENCODE_CONFIG_DIR — and for each calls
//     ConfigPlugin.load(dir): Glob.scan("{plugin,plugins}/*.{ts,js}",
//     {cwd: dir, absolute, dot, symlink}). Not recursive: a file in a
//     subfolder of plugins/ is not loaded; .mjs is not loaded.
//   - Each file becomes a spec file://<path>, merged with the "plugin" lists
//     of opencode.json/opencode.jsonc/config.json ($OPENCODE_CONFIG too) and
//     deduplicated on the exact file URL (deduplicatePluginOrigins): the
//     same module listed in opencode.json and found in plugins/ loads once,
//     but two files (the checkout's index.js and this shim) load twice.
//   - A module's exports (plugin/index.ts, getLegacyPlugins): unless its
//     default export is an {id, server} object, every distinct value of
//     Object.values(module) must be a function (or {server}) and is called
//     as a plugin; anything else throws "Plugin export is not a function".
//
// So Install writes the plugin's files into plugins/tollgate/ (a subfolder
// the glob skips) and one small module, plugins/tollgate.js, that imports
// the plugin from there and exports only it: OpenCode loads the plugin
// exactly once, from the shim. A manifest beside the files
// (plugins/tollgate/tollgate-install.json) records the SHA-256 of each file
// written, so --uninstall deletes only files that are still what tollgate
// wrote, a later --install may replace them, and Status can tell an older
// tollgate's install from this binary's.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"tollgate/app/home"
	"tollgate/app/importer/jsonl"
	plugin "tollgate/integrations/opencode"
)

// Where Install writes, relative to OpenCode's config folder.
const (
	pluginsFolder = "plugins"
	shimName      = "tollgate.js"           // in plugins/: what OpenCode loads
	treeName      = "tollgate"              // plugins/tollgate/: the plugin itself
	manifestName  = "tollgate-install.json" // in plugins/tollgate/
	installedBy   = "tollgate hook opencode --install"
)

// maxManifest bounds the read of the manifest (a few hundred bytes).
const maxManifest = 64 << 10

// Dir is OpenCode's global config folder: $XDG_CONFIG_HOME/opencode, else
// ~/.config/opencode (OpenCode's Global.Path.config, xdg-basedir).
func Dir(getenv func(string) string) (string, error) {
	d, err := home.HarnessDir(getenv, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "opencode"), nil
}

// InstallOptions say where Install writes and what the shim passes on.
type InstallOptions struct {
	ConfigDir string              // OpenCode's config folder (Dir)
	Home      string              // tollgate's home for the plugin ("" = its default: $TOLLGATE_HOME, else ~/.config/tollgate)
	Getenv    func(string) string // for $OPENCODE_CONFIG (nil = none)
}

// InstallResult says what Install did.
type InstallResult struct {
	// ConfiguredIn is set when OpenCode already loads tollgate's plugin
	// from elsewhere (a "plugin" entry, or another file in plugin/ or
	// plugins/): Install then writes nothing, so it never loads twice.
	ConfiguredIn string
	Changed      bool   // false: the same files were there already
	Shim         string // plugins/tollgate.js
	Folder       string // plugins/tollgate
}

// manifest is plugins/tollgate/tollgate-install.json.
type manifest struct {
	InstalledBy string `json:"installedBy"`
	// Home is what --home the shim passes on, so Status can rebuild the
	// shim this binary would write and compare.
	Home string `json:"home,omitempty"`
	// Files maps each written file (slash path relative to plugins/) to
	// "sha256:<hex>" of the bytes written.
	Files map[string]string `json:"files"`
}

// layout is the paths of an install in one config folder.
type layout struct {
	plugins, shim, tree, manifest string
}

func layoutOf(configDir string) layout {
	p := filepath.Join(configDir, pluginsFolder)
	tree := filepath.Join(p, treeName)
	return layout{plugins: p, shim: filepath.Join(p, shimName), tree: tree, manifest: filepath.Join(tree, manifestName)}
}

// abs is a manifest key's path on disk.
func (l layout) abs(rel string) string { return filepath.Join(l.plugins, filepath.FromSlash(rel)) }

// wanted is every file this binary installs, keyed like the manifest:
// the plugin's embedded files under tollgate/, and the shim.
func wanted(tollgateHome string) (map[string][]byte, error) {
	out := map[string][]byte{shimName: shimSource(tollgateHome)}
	err := fs.WalkDir(plugin.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := plugin.Files.ReadFile(p)
		out[path.Join(treeName, p)] = b
		return err
	})
	return out, err
}

// shimSource is plugins/tollgate.js: it exports the plugin only (OpenCode
// calls every export). With a home it passes it as the plugin's `home`
// option, under whatever options a caller gives.
func shimSource(tollgateHome string) []byte {
	var b strings.Builder
	b.WriteString("// tollgate's OpenCode plugin, written by `" + installedBy + "`\n")
	b.WriteString("// (`tollgate hook opencode --uninstall` removes it). OpenCode loads each\n")
	b.WriteString("// .js file at the top of this folder, not those in its subfolders: this\n")
	b.WriteString("// one loads the plugin kept in ./tollgate/, so it runs once.\n")
	if tollgateHome == "" {
		b.WriteString("export { TollgatePlugin } from './tollgate/index.js'\n")
		return []byte(b.String())
	}
	// encoding/json escapes U+2028 and U+2029, so its string is a JS string.
	lit, _ := json.Marshal(tollgateHome)
	b.WriteString("import { TollgatePlugin as plugin } from './tollgate/index.js'\n\n")
	b.WriteString("export const TollgatePlugin = (input, options) => plugin(input, { home: " + string(lit) + ", ...options })\n")
	return []byte(b.String())
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Install writes the plugin into OpenCode's config folder (see the top of
// this file). Everything is checked before anything is written: a path
// that is not a regular file (or folder) where tollgate writes, a file
// there that tollgate did not write or that was changed since, or a
// manifest that does not parse is refused, naming the path.
func Install(o InstallOptions) (InstallResult, error) {
	l := layoutOf(o.ConfigDir)
	res := InstallResult{Shim: l.shim, Folder: l.tree}
	if where := configuredElsewhere(o.ConfigDir, o.Getenv); where != "" {
		res.ConfiguredIn = where
		return res, nil
	}
	tgHome := o.Home
	if !utf8.ValidString(tgHome) {
		// The shim passes it as a JavaScript string: it would arrive changed.
		return res, fmt.Errorf("home %q is not valid UTF-8: the plugin could not find tollgate there", tgHome)
	}
	if tgHome != "" {
		a, err := filepath.Abs(tgHome)
		if err != nil {
			return res, err
		}
		tgHome = a
	}
	want, err := wanted(tgHome)
	if err != nil {
		return res, err
	}
	if err := checkFolders(l, slices.Collect(maps.Keys(want))); err != nil {
		return res, err
	}
	old, err := readManifest(l)
	if err != nil {
		return res, err
	}
	next := manifest{InstalledBy: installedBy, Home: tgHome, Files: map[string]string{}}
	var write, stale []string
	for rel, b := range want {
		next.Files[rel] = digest(b)
		cur, err := ownedContent(l, old, want, rel)
		switch {
		case err != nil:
			return res, err
		case cur == nil || !bytes.Equal(cur, b):
			write = append(write, rel)
		}
	}
	if old != nil {
		for rel := range old.Files {
			if _, ok := want[rel]; ok {
				continue
			}
			cur, err := ownedContent(l, old, want, rel)
			if err != nil {
				return res, err
			}
			if cur != nil {
				stale = append(stale, rel)
			}
		}
	}
	manifestBytes, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return res, err
	}
	manifestBytes = append(manifestBytes, '\n')
	if cur, _ := readRegular(l.manifest, maxManifest); len(write) == 0 && len(stale) == 0 && bytes.Equal(cur, manifestBytes) {
		return res, nil
	}
	// The plugin and its manifest first, the shim last: a first install cut
	// short leaves no shim, so OpenCode never meets a plugin that is not all
	// there. (An upgrade cut short can leave old and new files under the
	// old shim; running --install again finishes it.)
	slices.Sort(write)
	shimToo := false
	for _, rel := range write {
		if rel == shimName {
			shimToo = true
			continue
		}
		if err := writeFile(l.abs(rel), want[rel]); err != nil {
			return res, err
		}
	}
	if err := writeFile(l.manifest, manifestBytes); err != nil {
		return res, err
	}
	if shimToo {
		if err := writeFile(l.shim, want[shimName]); err != nil {
			return res, err
		}
	}
	for _, rel := range stale {
		if err := removeFile(l.abs(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, err
		}
		removeEmptyDirs(l, rel)
	}
	res.Changed = true
	return res, nil
}

// writeFile writes one file atomically (temp file and rename), making its
// folder.
func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return home.WriteFileAtomic(p, b, 0o644)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// UninstallResult says what Uninstall did.
type UninstallResult struct {
	Removed int    // files removed (0: nothing of tollgate's was there)
	Shim    string // plugins/tollgate.js
}

// Uninstall removes what Install wrote, and only that: every file the
// manifest lists must still hold what tollgate wrote (a changed one is
// refused, naming it, and nothing is removed). Folders are removed when
// empty; plugins/ itself stays.
func Uninstall(configDir string) (UninstallResult, error) {
	l := layoutOf(configDir)
	res := UninstallResult{Shim: l.shim}
	// Not read through a link: its manifest would be another folder's.
	if err := checkFolders(l, []string{path.Join(treeName, manifestName)}); err != nil {
		return res, err
	}
	m, err := readManifest(l)
	if err != nil {
		return res, err
	}
	if m == nil {
		if _, err := os.Lstat(l.shim); err == nil {
			return res, fmt.Errorf("%s was not written by tollgate (no %s beside it): remove it yourself if it is tollgate's", l.shim, l.manifest)
		}
		return res, nil
	}
	want, err := wanted(m.Home)
	if err != nil {
		return res, err
	}
	if err := checkFolders(l, slices.Collect(maps.Keys(m.Files))); err != nil {
		return res, err
	}
	var present []string
	for rel := range m.Files {
		cur, err := ownedContent(l, m, want, rel)
		if err != nil {
			return res, err
		}
		if cur != nil {
			present = append(present, rel)
		}
	}
	// The shim first: OpenCode stops loading the plugin before its files go.
	slices.Sort(present)
	slices.SortFunc(present, func(a, b string) int { return boolCmp(b == shimName, a == shimName) })
	for _, rel := range present {
		err := removeFile(l.abs(rel))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, err
		}
		if err == nil {
			res.Removed++
		}
		removeEmptyDirs(l, rel)
	}
	if err := removeFile(l.manifest); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	removeEmptyDirs(l, path.Join(treeName, manifestName))
	return res, nil
}

// removeEmptyDirs removes rel's folders below plugins/ that are now empty.
// rmdir(2), not os.Remove: it refuses a folder that is not empty and never
// deletes a symbolic link in a folder's place.
func removeEmptyDirs(l layout, rel string) {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if syscall.Rmdir(l.abs(d)) != nil {
			return
		}
	}
}

// removeFile removes a file tollgate wrote, and only a file: unlink(2)
// refuses a folder, and checkFolders has refused a symbolic link on the
// way to it.
func removeFile(p string) error {
	if err := syscall.Unlink(p); err != nil {
		return &fs.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

// readManifest reads plugins/tollgate/tollgate-install.json: nil when there
// is none; an error naming it when it is not a regular file, does not parse
// or lists a path outside tollgate's two names.
func readManifest(l layout) (*manifest, error) {
	b, err := readRegular(l.manifest, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", l.manifest, err)
	}
	if m.InstalledBy != installedBy {
		return nil, fmt.Errorf("%s: installedBy is %q, not %q: not tollgate's manifest", l.manifest, m.InstalledBy, installedBy)
	}
	for rel, sum := range m.Files {
		// A manifest names only tollgate's shim and files in its folder: a
		// hand-edited one cannot make --uninstall delete anything else.
		if !fs.ValidPath(rel) || (rel != shimName && !strings.HasPrefix(rel, treeName+"/")) || rel == path.Join(treeName, manifestName) {
			return nil, fmt.Errorf("%s: files: %q is not a file tollgate installs", l.manifest, rel)
		}
		if !strings.HasPrefix(sum, "sha256:") {
			return nil, fmt.Errorf("%s: files[%q]: %q is not a sha256: digest", l.manifest, rel, sum)
		}
	}
	return &m, nil
}

// ownedContent is the file at rel if tollgate may replace or delete it:
// nil when it does not exist; its bytes when they are exactly what this
// binary writes there (want: an install interrupted before its manifest
// was written leaves such files), or when the manifest lists it with those
// bytes' digest. Anything else is an error naming the path.
func ownedContent(l layout, m *manifest, want map[string][]byte, rel string) ([]byte, error) {
	p := l.abs(rel)
	b, err := readRegular(p, maxPluginFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if w, ok := want[rel]; ok && bytes.Equal(w, b) {
		return b, nil
	}
	if m != nil {
		if sum, ok := m.Files[rel]; ok {
			if sum == digest(b) {
				return b, nil
			}
			return nil, fmt.Errorf("%s was changed since tollgate installed it: move it away (or put back what tollgate wrote) and run again", p)
		}
	}
	return nil, fmt.Errorf("%s exists and was not written by tollgate: move it away and run again", p)
}

// maxPluginFile bounds the read of a file where the plugin goes (the
// plugin's largest file is some 40 kB).
const maxPluginFile = 4 << 20

// checkFolders refuses anything but a real folder where Install and
// Uninstall go below plugins/ (rels are paths relative to it): a file in
// the way, or a symbolic link — written through, it would put tollgate's
// files in (and take them out of) a folder that is not tollgate's, a
// checkout's integrations/opencode say. plugins/ itself may be a link (a
// dotfiles setup): nothing tollgate removes is above its own folder.
func checkFolders(l layout, rels []string) error {
	dirs := map[string]bool{l.plugins: true}
	for _, rel := range rels {
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs[l.abs(d)] = true
		}
	}
	// Sorted, a parent before its children: the error names the file that
	// is in the way, not a folder below it.
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		stat := os.Lstat
		if d == l.plugins {
			stat = os.Stat
		}
		fi, err := stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: tollgate installs OpenCode's plugin into a folder of its own there; move the link away and run again", d)
		case !fi.IsDir():
			return fmt.Errorf("%s is not a folder: tollgate installs OpenCode's plugin there; move it away and run again", d)
		}
	}
	return nil
}

// readRegular reads a regular file of at most limit bytes where tollgate
// puts the plugin (jsonl.ReadRegular, never through a symbolic link):
// fs.ErrNotExist when absent, an error naming it and saying what to do
// otherwise, so a FIFO or device put there never hangs GET /v1/engines.
func readRegular(p string, limit int64) ([]byte, error) {
	b, err := jsonl.ReadRegular(p, limit, true)
	switch {
	case errors.Is(err, jsonl.ErrSymlink), errors.Is(err, jsonl.ErrNotRegular):
		return nil, fmt.Errorf("%w: tollgate installs OpenCode's plugin there; move it away and run again", err)
	case errors.Is(err, jsonl.ErrTooLarge):
		return nil, fmt.Errorf("%w: not a file tollgate wrote", err)
	}
	return b, err
}
