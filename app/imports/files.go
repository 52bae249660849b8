package imports

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tollgate/app/importer"
	_ "tollgate/app/harness/dsh"  // registers the "dsh" line format
	"tollgate/app/harness/gemini" // registers the "gemini" line format
	"tollgate/app/importer/jsonl"
	"tollgate/app/harness/opencode/ocdb"
)

// Root is a folder a harness keeps its logs in.
type Root struct {
	Harness string
	Dir     string
}

// DefaultRoots lists where the harnesses keep their logs, in the order
// they are imported: Claude Code ($CLAUDE_CONFIG_DIR/projects — a
// comma-separated list is accepted —, else ~/.claude/projects and
// ~/.config/claude/projects), Codex ($CODEX_HOME/sessions, else
// ~/.codex/sessions), dsh ($DSH_HOME/sessions, else
// ~/.local/share/dsh/sessions), Gemini CLI ($GEMINI_CLI_HOME/.gemini/tmp,
// else ~/.gemini/tmp: GEMINI_CLI_HOME stands for the home folder), then
// OpenCode's database (the folder of $XDG_DATA_HOME/opencode/opencode.db,
// else ~/.local/share/opencode). getenv is os.Getenv in production.
func DefaultRoots(getenv func(string) string, home string) []Root {
	var roots []Root
	if v := getenv("CLAUDE_CONFIG_DIR"); v != "" {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				roots = append(roots, Root{importer.ClaudeCode, filepath.Join(d, "projects")})
			}
		}
	} else {
		roots = append(roots, Root{importer.ClaudeCode, filepath.Join(home, ".claude", "projects")},
			Root{importer.ClaudeCode, filepath.Join(home, ".config", "claude", "projects")})
	}
	if v := getenv("CODEX_HOME"); v != "" {
		roots = append(roots, Root{importer.Codex, filepath.Join(v, "sessions")})
	} else {
		roots = append(roots, Root{importer.Codex, filepath.Join(home, ".codex", "sessions")})
	}
	if v := getenv("DSH_HOME"); v != "" {
		roots = append(roots, Root{importer.DSH, filepath.Join(v, "sessions")})
	} else {
		roots = append(roots, Root{importer.DSH, filepath.Join(home, ".local", "share", "dsh", "sessions")})
	}
	geminiHome := home
	if v := getenv("GEMINI_CLI_HOME"); v != "" {
		geminiHome = v
	}
	roots = append(roots, Root{gemini.Harness, filepath.Join(geminiHome, ".gemini", "tmp")})
	return append(roots, Root{ocdb.Harness, filepath.Dir(ocdb.DefaultPath(getenv, home))})
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
// *.jsonl[.zstd|.zst] for dsh, chats/**/*.jsonl for Gemini CLI (its
// tmp folder holds other files too), the folder's opencode.db for OpenCode.
// A folder that does not exist yields nothing.
// Claude Code main transcripts come before subagent transcripts, so a
// session's own rows are numbered first.
func Walk(dir, harness string) ([]FileInfo, error) {
	if harness == ocdb.Harness {
		return walkOpenCode(dir) // one database, not a folder of logs (opencode.go)
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
		case importer.ClaudeCode:
			if !strings.HasSuffix(d.Name(), ".jsonl") {
				return nil
			}
		case importer.Codex:
			if !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(d.Name(), ".jsonl") {
				return nil
			}
		case gemini.Harness:
			if !isGeminiChat(path) {
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

// IsGeminiChat reports whether path is where Gemini CLI keeps a session
// (the follower's filter matches Walk's with it).
func IsGeminiChat(path string) bool { return isGeminiChat(path) }

// isGeminiChat: Gemini CLI keeps sessions in <project>/chats/session-*.jsonl
// and a subagent's in <project>/chats/<parent session>/<id>.jsonl.
func isGeminiChat(path string) bool {
	if !strings.HasSuffix(path, ".jsonl") {
		return false
	}
	dir := filepath.Dir(path)
	return filepath.Base(dir) == "chats" || filepath.Base(filepath.Dir(dir)) == "chats"
}

// isGeminiSubagent: a Gemini CLI subagent's session lives in a folder named
// after its parent session, inside chats.
func isGeminiSubagent(path string) bool {
	return strings.HasSuffix(path, ".jsonl") && filepath.Base(filepath.Dir(filepath.Dir(path))) == "chats"
}

// detect tells which harness wrote a log (importer.Detect), asking the
// formats registered from their own packages first: a Gemini CLI session's
// first line names a "sessionId", as Claude Code's lines do.
func detect(path string, head []byte) string {
	if gemini.Detect(path, head) {
		return gemini.Harness
	}
	return importer.Detect(path, head)
}

// SortFiles orders files by path, with subagent transcripts (Claude Code's,
// Gemini CLI's) after the others.
func SortFiles(files []FileInfo) {
	sub := func(path string) bool {
		return importer.ClaudeRole(path) != importer.PurposeConversation || isGeminiSubagent(path)
	}
	sort.SliceStable(files, func(i, j int) bool {
		si, sj := sub(files[i].Path), sub(files[j].Path)
		if si != sj {
			return !si
		}
		return files[i].Path < files[j].Path
	})
}
