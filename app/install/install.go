// Package install is `tollgate install --user`: it puts a source build
// where a desktop session finds it, without root:
//
//	~/.local/bin/tollgate                                the binary (a copy of this one)
//	$XDG_DATA_HOME/applications/tollgate.desktop         the menu entry (Exec = that copy)
//	$XDG_DATA_HOME/icons/hicolor/<size>/apps/tollgate.*  the icons
//	$XDG_CONFIG_HOME/autostart/tollgate.desktop          with --autostart: `tollgate --hidden` at login
//
// Every file and every folder it creates is listed in a manifest,
// $XDG_DATA_HOME/tollgate/installed.txt, with the SHA-256 of what it wrote.
// `--uninstall` removes exactly those: a listed file whose content changed
// since (someone else wrote it) is kept and reported, a folder is removed
// only when empty, and nothing outside the manifest is ever touched —
// neither the tollgate home (config, database, token) nor caches.
//
// Run from a binary the system's menu entry already starts (the Debian
// package's /usr/bin/tollgate), it copies nothing: --autostart then writes
// just the autostart entry, starting that binary.
//
// The entry and the icons are embedded from build/desktop, the same files
// the Debian package ships. No icon or menu cache is updated: desktop
// sessions watch ~/.local/share/applications, and a cache file would be
// something uninstall did not write.
package install

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"tollgate/app/home"
	"tollgate/build/desktop"
)

// InstallPaths are where a user install goes.
type InstallPaths struct {
	Bin       string // ~/.local/bin/tollgate
	Window    string // ~/.local/lib/tollgate/tollgate-window (found by home.WindowBinary from Bin)
	Entry     string // $XDG_DATA_HOME/applications/tollgate.desktop
	IconTheme string // $XDG_DATA_HOME/icons/hicolor
	Autostart string // $XDG_CONFIG_HOME/autostart/tollgate.desktop
	Manifest  string // $XDG_DATA_HOME/tollgate/installed.txt
}

// UserInstallPaths resolves the install locations from $HOME,
// $XDG_DATA_HOME and $XDG_CONFIG_HOME (relative XDG values are ignored,
// as the Base Directory Specification says).
func UserInstallPaths(getenv func(string) string) (InstallPaths, error) {
	userHome := getenv("HOME")
	if userHome == "" || !filepath.IsAbs(userHome) {
		return InstallPaths{}, fmt.Errorf("$HOME is %q: want an absolute path", userHome)
	}
	data := filepath.Join(userHome, ".local", "share")
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		data = d
	}
	config := filepath.Join(userHome, ".config")
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		config = d
	}
	return InstallPaths{
		Bin:       filepath.Join(userHome, ".local", "bin", desktop.AppID),
		Window:    filepath.Join(userHome, ".local", "lib", desktop.AppID, home.WindowName),
		Entry:     filepath.Join(data, "applications", desktop.AppID+".desktop"),
		IconTheme: filepath.Join(data, "icons", "hicolor"),
		Autostart: filepath.Join(config, "autostart", desktop.AppID+".desktop"),
		Manifest:  filepath.Join(data, "tollgate", "installed.txt"),
	}, nil
}

// UserAutostartPath is where `install --user --autostart` writes the XDG
// autostart entry (doctor looks there too).
func UserAutostartPath(getenv func(string) string) (string, error) {
	p, err := UserInstallPaths(getenv)
	return p.Autostart, err
}

// InstallOptions say what to install.
type InstallOptions struct {
	Paths  InstallPaths
	Source string // the binary to copy (this one)
	// WindowSource is the window binary to copy beside it (Paths.Window),
	// which the menu entry's `tollgate` execs; required unless SystemWide.
	WindowSource string
	Autostart    bool
	Home         string // --home to bake into Exec lines ("" = the default home)
	Force        bool   // overwrite files the manifest does not list
	// SystemWide: Source is installed system-wide (the Debian package's
	// menu entry starts it), so only the autostart entry is written, and
	// it starts Source.
	SystemWide bool
}

// InstallResult lists what an install or uninstall did.
type InstallResult struct {
	Written []string // files written, in order
	Removed []string // files and folders removed
	Kept    []string // listed files left in place, with the reason
}

// ---- the manifest ----

const manifestHeader = "# tollgate install --user: the files and folders it wrote. `tollgate install --user --uninstall` removes exactly these.\n# kind sha256 path\n"

type manifestEntry struct {
	Dir  bool
	Sum  string // hex SHA-256 of the content written; "-" for folders
	Path string
}

type manifest struct {
	entries []manifestEntry
}

func readManifest(path string) (*manifest, error) {
	m := &manifest{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading install manifest %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " ", 3)
		if len(parts) != 3 || (parts[0] != "file" && parts[0] != "dir") || !filepath.IsAbs(parts[2]) {
			return nil, fmt.Errorf("install manifest %s line %d: want `file SHA256 /path` or `dir - /path`, got %q", path, n, line)
		}
		m.entries = append(m.entries, manifestEntry{Dir: parts[0] == "dir", Sum: parts[1], Path: parts[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading install manifest %s: %w", path, err)
	}
	return m, nil
}

func (m *manifest) find(path string) (manifestEntry, bool) {
	for _, e := range m.entries {
		if e.Path == path {
			return e, true
		}
	}
	return manifestEntry{}, false
}

func (m *manifest) put(e manifestEntry) {
	for i := range m.entries {
		if m.entries[i].Path == e.Path {
			m.entries[i] = e
			return
		}
	}
	m.entries = append(m.entries, e)
}

func (m *manifest) drop(path string) {
	out := m.entries[:0]
	for _, e := range m.entries {
		if e.Path != path {
			out = append(out, e)
		}
	}
	m.entries = out
}

// write saves the manifest, or removes it (and its folder, when it is
// listed and empty) once it lists nothing.
func (m *manifest) write(path string) error {
	if len(m.entries) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing install manifest %s: %w", path, err)
		}
		return nil
	}
	var b strings.Builder
	b.WriteString(manifestHeader)
	for _, e := range m.entries {
		kind := "file"
		if e.Dir {
			kind = "dir"
		}
		fmt.Fprintf(&b, "%s %s %s\n", kind, e.Sum, e.Path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing install manifest %s: %w", path, err)
	}
	if err := home.WriteFileAtomic(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing install manifest %s: %w", path, err)
	}
	return nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sha256Bytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ---- the files ----

// desktopExecArg quotes one argument of an Exec key. The Desktop Entry
// Specification quotes an argument holding a reserved character in double
// quotes, inside which ", `, $ and \ take a backslash; the key's value is
// then escaped as a string, which doubles every backslash. A literal % is %%.
func desktopExecArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\><~|&;$*?#()`%") {
		return s
	}
	var q strings.Builder
	q.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '`', '$', '\\':
			q.WriteByte('\\')
		}
		q.WriteRune(r)
	}
	q.WriteByte('"')
	v := strings.ReplaceAll(q.String(), `\`, `\\`)
	return strings.ReplaceAll(v, "%", "%%")
}

// renderEntry rewrites the embedded entry's Exec and TryExec for an
// installed binary; the autostart variant starts it hidden in the tray.
func RenderEntry(bin, home string, autostart bool) ([]byte, error) {
	if strings.ContainsAny(bin+home, "\n\r") {
		return nil, fmt.Errorf("%q: a path with a line break cannot go in a .desktop entry", bin+home)
	}
	exec := desktopExecArg(bin)
	if home != "" {
		exec += " --home " + desktopExecArg(home)
	}
	if autostart {
		exec += " --hidden"
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(desktop.Entry()))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Exec="):
			line = "Exec=" + exec
		case strings.HasPrefix(line, "TryExec="):
			// TryExec takes a plain path, no quoting.
			line = "TryExec=" + strings.ReplaceAll(bin, `\`, `\\`)
		}
		out.WriteString(line + "\n")
	}
	if autostart {
		out.WriteString("X-GNOME-Autostart-enabled=true\n")
	}
	return out.Bytes(), sc.Err()
}

// installFile is one file an install writes.
type installFile struct {
	path string
	data []byte // nil: copy from src
	src  string
	mode os.FileMode
}

func (o InstallOptions) files() ([]installFile, error) {
	var files []installFile
	bin := o.Paths.Bin
	if o.SystemWide {
		bin = o.Source
	} else {
		entry, err := RenderEntry(bin, o.Home, false)
		if err != nil {
			return nil, err
		}
		if o.WindowSource == "" {
			return nil, fmt.Errorf("no window binary to install beside %s: %s opens the window with %s", o.Source, o.Paths.Entry, home.WindowName)
		}
		files = append(files,
			installFile{path: o.Paths.Bin, src: o.Source, mode: 0o755},
			installFile{path: o.Paths.Window, src: o.WindowSource, mode: 0o755},
			installFile{path: o.Paths.Entry, data: entry, mode: 0o644})
		icons, err := desktop.Icons()
		if err != nil {
			return nil, err
		}
		for _, ic := range icons {
			files = append(files, installFile{path: filepath.Join(o.Paths.IconTheme, filepath.FromSlash(ic.Path)), data: ic.Data, mode: 0o644})
		}
	}
	if o.Autostart {
		auto, err := RenderEntry(bin, o.Home, true)
		if err != nil {
			return nil, err
		}
		files = append(files, installFile{path: o.Paths.Autostart, data: auto, mode: 0o644})
	}
	return files, nil
}

// SystemEntry finds the system-wide menu entry that starts bin (the Debian
// package's /usr/share/applications/tollgate.desktop), in $XDG_DATA_DIRS.
func SystemEntry(bin string, getenv func(string) string) (string, bool) {
	dirs := getenv("XDG_DATA_DIRS")
	if dirs == "" {
		dirs = "/usr/local/share:/usr/share"
	}
	for _, dir := range filepath.SplitList(dirs) {
		if !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, "applications", desktop.AppID+".desktop")
		keys, err := ReadDesktopEntry(path)
		if err != nil {
			continue
		}
		args := DesktopExecFields(keys["Exec"])
		if len(args) == 0 {
			continue
		}
		if exe, err := exec.LookPath(args[0]); err == nil && home.SameFile(exe, bin) {
			return path, true
		}
	}
	return "", false
}

// owned says whether path may be (over)written: it does not exist, or the
// manifest lists it and it still holds what was written there.
func (m *manifest) owned(path string) (bool, string) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, ""
	}
	if err != nil {
		return false, err.Error()
	}
	e, listed := m.find(path)
	if !listed || e.Dir {
		return false, "exists and was not written by `tollgate install`"
	}
	if !fi.Mode().IsRegular() {
		return false, "is no longer the file `tollgate install` wrote (now a " + fi.Mode().Type().String() + ")"
	}
	sum, err := sha256File(path)
	if err != nil {
		return false, err.Error()
	}
	if sum != e.Sum {
		return false, "changed since `tollgate install` wrote it"
	}
	return true, ""
}

// mkdirs creates dir and its missing parents, recording each one it created.
func mkdirs(dir string, m *manifest) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating %s: %w", missing[i], err)
		}
		m.put(manifestEntry{Dir: true, Sum: "-", Path: missing[i]})
	}
	return nil
}

// InstallUser writes the files and records them. It checks every target
// first and writes nothing when one belongs to someone else (unless Force).
func InstallUser(o InstallOptions) (InstallResult, error) {
	var res InstallResult
	m, err := readManifest(o.Paths.Manifest)
	if err != nil {
		return res, err
	}
	files, err := o.files()
	if err != nil {
		return res, err
	}
	src, err := os.Open(o.Source)
	if err != nil {
		return res, fmt.Errorf("reading the binary to install: %w", err)
	}
	src.Close()

	var refused []string
	for _, f := range files {
		if f.src != "" && home.SameFile(f.src, f.path) {
			continue // installing from the installed copy: nothing to copy
		}
		if ok, why := m.owned(f.path); !ok && !o.Force {
			refused = append(refused, f.path+" "+why)
		}
	}
	if len(refused) > 0 {
		return res, fmt.Errorf("not overwriting files tollgate did not write (rerun with --force to replace them):\n  %s", strings.Join(refused, "\n  "))
	}

	save := func() error { return m.write(o.Paths.Manifest) }
	if err := mkdirs(filepath.Dir(o.Paths.Manifest), m); err != nil {
		return res, err
	}
	for _, f := range files {
		if f.src != "" && home.SameFile(f.src, f.path) {
			continue // run from the installed copy: it is in place
		}
		if err := mkdirs(filepath.Dir(f.path), m); err != nil {
			save()
			return res, err
		}
		data := f.data
		if f.src != "" {
			if data, err = os.ReadFile(f.src); err != nil {
				save()
				return res, fmt.Errorf("reading the binary to install %s: %w", f.src, err)
			}
		}
		// Listed before it is written: an interrupted install can still be undone.
		m.put(manifestEntry{Sum: sha256Bytes(data), Path: f.path})
		if err := save(); err != nil {
			return res, err
		}
		if err := home.WriteFileAtomic(f.path, data, f.mode); err != nil {
			return res, fmt.Errorf("writing %s: %w", f.path, err)
		}
		res.Written = append(res.Written, f.path)
	}
	return res, save()
}

// UninstallUser removes what the manifest lists: every file that still
// holds what was written, then every listed folder that is empty, deepest
// first. A listed file that changed since is left in place, reported in
// Kept and stays listed; a folder something else now uses is left and
// forgotten. With onlyAutostart, just the autostart entry (and the folders
// install created for it). Once no file is listed, the manifest goes too,
// with the folders install created for it.
func UninstallUser(paths InstallPaths, onlyAutostart bool) (InstallResult, error) {
	var res InstallResult
	m, err := readManifest(paths.Manifest)
	if err != nil || len(m.entries) == 0 {
		return res, err
	}
	for _, e := range append([]manifestEntry(nil), m.entries...) {
		if e.Dir || (onlyAutostart && e.Path != paths.Autostart) {
			continue
		}
		if _, err := os.Lstat(e.Path); errors.Is(err, fs.ErrNotExist) {
			m.drop(e.Path) // already gone
			continue
		}
		if ok, why := m.owned(e.Path); !ok {
			res.Kept = append(res.Kept, e.Path+" "+why+": left in place")
			continue
		}
		if err := os.Remove(e.Path); err != nil {
			res.Kept = append(res.Kept, fmt.Sprintf("%s: %v", e.Path, err))
			continue
		}
		m.drop(e.Path)
		res.Removed = append(res.Removed, e.Path)
	}

	// No file listed any more: the manifest goes first, then every folder.
	last := !m.holdsFileUnder(string(filepath.Separator))
	if last {
		if err := os.Remove(paths.Manifest); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("removing install manifest %s: %w", paths.Manifest, err)
		}
	}
	var dirs []manifestEntry
	for _, e := range m.entries {
		switch {
		case !e.Dir:
		case !last && within(paths.Manifest, e.Path):
			// holds the manifest, which stays
		case last || !onlyAutostart || within(paths.Autostart, e.Path):
			dirs = append(dirs, e)
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i].Path) > len(dirs[j].Path) })
	for _, e := range dirs {
		err := os.Remove(e.Path)
		switch {
		case err == nil:
			res.Removed = append(res.Removed, e.Path)
			m.drop(e.Path)
		case errors.Is(err, fs.ErrNotExist) || !m.holdsFileUnder(e.Path):
			m.drop(e.Path) // gone, or shared with files that are not ours
		}
	}
	if last {
		return res, nil
	}
	return res, m.write(paths.Manifest)
}

// within says whether path lies inside dir.
func within(path, dir string) bool {
	return strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// holdsFileUnder says whether the manifest still lists a file inside dir.
func (m *manifest) holdsFileUnder(dir string) bool {
	for _, e := range m.entries {
		if !e.Dir && within(e.Path, dir) {
			return true
		}
	}
	return false
}

// ReadDesktopEntry reads the [Desktop Entry] group's keys.
func ReadDesktopEntry(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys := map[string]string{}
	group := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			group = line
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && group == "[Desktop Entry]" {
			keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if group == "" {
		return nil, fmt.Errorf("%s has no [Desktop Entry] group", path)
	}
	return keys, nil
}

// DesktopExecFields splits an Exec value into arguments (the reverse of
// desktopExecArg): string unescaping, then double-quoted arguments; field
// codes (%f, %U, …) are dropped and %% is a literal %.
func DesktopExecFields(v string) []string {
	var un strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			switch v[i] {
			case 's':
				un.WriteByte(' ')
			case 'n':
				un.WriteByte('\n')
			case 't':
				un.WriteByte('\t')
			default:
				un.WriteByte(v[i])
			}
			continue
		}
		un.WriteByte(v[i])
	}
	s := un.String()
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quoted && ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case ch == '"':
			quoted, inArg = !quoted, true
		case !quoted && (ch == ' ' || ch == '\t'):
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case ch == '%' && i+1 < len(s):
			i++
			if s[i] == '%' {
				cur.WriteByte('%')
				inArg = true
			}
		default:
			cur.WriteByte(ch)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
