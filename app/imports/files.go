package imports

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
)

// Root is a folder a harness keeps its logs in.
type Root struct {
	Harness string
	Dir     string
}

// DefaultRoots lists where the harnesses keep their logs (each format's
// Roots), in the formats' order. getenv is os.Getenv in production.
func DefaultRoots(getenv func(string) string, home string) []Root {
	var roots []Root
	for _, f := range importer.Formats() {
		if f.Roots == nil {
			continue
		}
		for _, dir := range f.Roots(getenv, home) {
			roots = append(roots, Root{f.Name, dir})
		}
	}
	return roots
}

// FileInfo is a log file found on disk.
type FileInfo struct {
	Path    string
	Harness string // "" when the walk could not tell (Detect decides)
	Size    int64
	ModTime int64 // unix nanoseconds
}

// IsLog is the walk's filter for one file, which the follower shares: a
// log's name, and for a harness one of its logs (Format.IsLog).
func IsLog(harness, path string) bool {
	if !importer.IsLogName(filepath.Base(path)) {
		return false
	}
	f, ok := importer.Lookup(harness)
	return !ok || f.IsLog == nil || f.IsLog(path)
}

// Walk lists the logs under dir (a folder or a single file) for a harness
// ("" = any): the files IsLog takes, or a Database format's one file. A
// folder that does not exist yields nothing. Main logs come before
// subagents' (SortFiles), so a session's own rows are numbered first.
func Walk(dir, harness string) ([]FileInfo, error) {
	if f, ok := importer.Lookup(harness); ok && f.Database != nil {
		return walkDatabase(f, dir) // one database, not a folder of logs (database.go)
	}
	st, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if lst, err := os.Lstat(dir); err == nil && lst.Mode()&fs.ModeSymlink != 0 && st.IsDir() {
		// A folder that is a symlink (a dotfiles-managed or moved
		// ~/.claude/projects): filepath.WalkDir does not enter a symlinked
		// root, so walk where it leads; files are named by that path.
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s), not read", dir, jsonl.FileKind(st.Mode()))
		}
		return []FileInfo{{Path: dir, Harness: harness, Size: st.Size(), ModTime: st.ModTime().UnixNano()}}, nil
	}
	var out []FileInfo
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // unreadable subfolder: skip it
		}
		if d.IsDir() || !IsLog(harness, path) {
			return nil
		}
		if !d.Type().IsRegular() {
			// A FIFO or socket named *.jsonl is not a log; a symlink is
			// one if it leads to a regular file.
			if st, err := os.Stat(path); d.Type()&fs.ModeSymlink == 0 || err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished meanwhile
		}
		out = append(out, FileInfo{Path: path, Harness: harness, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", dir, err)
	}
	SortFiles(out)
	return out, nil
}

// SortFiles orders files by path, with subagents' logs
// (importer.IsSubagent) after the others.
func SortFiles(files []FileInfo) {
	sort.SliceStable(files, func(i, j int) bool {
		si, sj := importer.IsSubagent(files[i].Path), importer.IsSubagent(files[j].Path)
		if si != sj {
			return !si
		}
		return files[i].Path < files[j].Path
	})
}
