package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// OpenRegular opens a log for reading, refusing what is not a regular file:
// a FIFO would block the open (and the import with it) until a writer came,
// and /dev/zero or a socket never ends. The open does not block (O_NONBLOCK,
// which a regular file ignores), and the check is on the opened file, so a
// path swapped after a directory walk is caught too.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s), not read", path, fileKind(st.Mode()))
	}
	return f, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return m.Type().String()
}

// ContextReader reads r until ctx ends, then fails with ctx's error: a
// reader of a large file gives up when the one who asked has gone.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Detect tells which harness wrote a log, from its name and its first
// bytes (for a zstd log, the name alone: only dsh writes them). It returns
// "" when it cannot tell.
func Detect(path string, head []byte) string {
	base := filepath.Base(path)
	if IsZstd(path) {
		return DSH
	}
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	switch {
	case bytes.Contains(first, []byte(`"dsh.session"`)):
		return DSH
	case bytes.Contains(first, []byte(`"session_meta"`)) || strings.HasPrefix(base, "rollout-") && bytes.Contains(head, []byte(`"payload"`)):
		return Codex
	case bytes.Contains(head, []byte(`"sessionId"`)) || bytes.Contains(first, []byte(`"file-history-snapshot"`)) ||
		bytes.Contains(first, []byte(`"type":"summary"`)):
		return ClaudeCode
	}
	return ""
}

// Root is a folder a harness keeps its logs in.
type Root struct {
	Harness string
	Dir     string
}

// DefaultRoots lists where the harnesses keep their logs, in the order
// they are imported: Claude Code ($CLAUDE_CONFIG_DIR/projects — a
// comma-separated list is accepted —, else ~/.claude/projects and
// ~/.config/claude/projects), Codex ($CODEX_HOME/sessions, else
// ~/.codex/sessions) and dsh ($DSH_HOME/sessions, else
// ~/.local/share/dsh/sessions). getenv is os.Getenv in production.
func DefaultRoots(getenv func(string) string, home string) []Root {
	var roots []Root
	if v := getenv("CLAUDE_CONFIG_DIR"); v != "" {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				roots = append(roots, Root{ClaudeCode, filepath.Join(d, "projects")})
			}
		}
	} else {
		roots = append(roots, Root{ClaudeCode, filepath.Join(home, ".claude", "projects")},
			Root{ClaudeCode, filepath.Join(home, ".config", "claude", "projects")})
	}
	if v := getenv("CODEX_HOME"); v != "" {
		roots = append(roots, Root{Codex, filepath.Join(v, "sessions")})
	} else {
		roots = append(roots, Root{Codex, filepath.Join(home, ".codex", "sessions")})
	}
	if v := getenv("DSH_HOME"); v != "" {
		roots = append(roots, Root{DSH, filepath.Join(v, "sessions")})
	} else {
		roots = append(roots, Root{DSH, filepath.Join(home, ".local", "share", "dsh", "sessions")})
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

// IsLogName reports whether a file name can be a log this package reads.
func IsLogName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zstd") || strings.HasSuffix(name, ".jsonl.zst")
}

// Walk lists the logs under dir (a folder or a single file) for a harness
// ("" = any): *.jsonl for Claude Code, rollout-*.jsonl for Codex,
// *.jsonl[.zstd|.zst] for dsh. A folder that does not exist yields nothing.
// Claude Code main transcripts come before subagent transcripts, so a
// session's own rows are numbered first.
func Walk(dir, harness string) ([]FileInfo, error) {
	st, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s), not read", dir, fileKind(st.Mode()))
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
		if d.IsDir() || !IsLogName(d.Name()) {
			return nil
		}
		if !d.Type().IsRegular() {
			// A FIFO or socket named *.jsonl is not a log; a symlink is
			// one if it leads to a regular file.
			if st, err := os.Stat(path); d.Type()&fs.ModeSymlink == 0 || err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		switch harness {
		case ClaudeCode:
			if !strings.HasSuffix(d.Name(), ".jsonl") {
				return nil
			}
		case Codex:
			if !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
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

// SortFiles orders files by path, with subagent transcripts after the
// others.
func SortFiles(files []FileInfo) {
	sort.SliceStable(files, func(i, j int) bool {
		si, sj := claudeRole(files[i].Path) != PurposeConversation, claudeRole(files[j].Path) != PurposeConversation
		if si != sj {
			return !si
		}
		return files[i].Path < files[j].Path
	})
}
