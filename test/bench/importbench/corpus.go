package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// A corpus is the real Claude Code transcripts of the shared data folder
// (main transcripts and their subagents), copied a number of times into a
// Claude Code config folder (<root>/.claude/projects/<project>/<session>.jsonl,
// <session>/subagents/agent-*.jsonl), each copy with fresh session,
// message, request and line ids, so that both tollgate and ccusage count
// every copy as new sessions and requests (both deduplicate by ids).
//
// The ids are derived from the copy number and the old id by SHA-256, so
// the same source and copy count give the same bytes; an id keeps its
// length, so every copy has its source's size.

// idPattern matches the ids a transcript carries: line and session uuids,
// Anthropic message ids and request ids.
var idPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|msg_[0-9A-Za-z]{8,}|req_[0-9A-Za-z]{8,}`)

// sourceFile is one transcript of the shared data, with where its ids are.
type sourceFile struct {
	rel     string // path under the session's project folder, with the session id as "{S}"
	data    []byte
	ids     [][]int // idPattern matches
	project string
	session string
}

type corpusStats struct {
	Files, Copies int
	Bytes         int64
}

// loadSources reads the Claude Code transcripts under dataDir/claude-code.
func loadSources(dataDir string) ([]sourceFile, error) {
	root := filepath.Join(dataDir, "claude-code")
	mains, err := filepath.Glob(filepath.Join(root, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(mains) == 0 {
		return nil, fmt.Errorf("%s: no Claude Code transcripts (*.jsonl)", root)
	}
	sort.Strings(mains)
	var out []sourceFile
	for _, main := range mains {
		data, err := os.ReadFile(main)
		if err != nil {
			return nil, err
		}
		session, cwd, err := firstSession(main, data)
		if err != nil {
			return nil, err
		}
		project := projectFolder(cwd)
		out = append(out, sourceFile{rel: "{S}.jsonl", data: data, ids: idPattern.FindAllIndex(data, -1), project: project, session: session})
		// The session's subagents live in <file name without .jsonl>/subagents.
		sub := strings.TrimSuffix(main, ".jsonl")
		err = filepath.WalkDir(sub, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && p == sub {
					return filepath.SkipDir
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(sub, p)
			out = append(out, sourceFile{rel: filepath.Join("{S}", rel), data: data, ids: idPattern.FindAllIndex(data, -1), project: project, session: session})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// firstSession reads a transcript's session id and working directory
// from its first line that has them.
func firstSession(path string, data []byte) (session, cwd string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var l struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.SessionID != "" && l.Cwd != "" {
			return l.SessionID, l.Cwd, nil
		}
	}
	return "", "", fmt.Errorf("%s: no line with sessionId and cwd", path)
}

// projectFolder is Claude Code's folder name for a working directory:
// every character but a letter or digit becomes '-'.
func projectFolder(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newID is old's id in copy k: the same shape and length.
func newID(k int, old string) string {
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], uint64(k))
	h := sha256.New()
	h.Write(seed[:])
	h.Write([]byte(old))
	sum := h.Sum(nil)
	if len(old) == 36 && old[8] == '-' {
		x := hex.EncodeToString(sum[:16])
		return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
	}
	prefix := old[:4] // msg_ or req_
	b := []byte(prefix)
	for i := 4; i < len(old); i++ {
		if (i-4)%32 == 0 && i > 4 {
			next := sha256.Sum256(sum)
			sum = next[:]
		}
		b = append(b, base62[int(sum[(i-4)%32])%len(base62)])
	}
	return string(b)
}

// writeCorpus writes copies of the sources under root/.claude/projects
// (root is emptied first) and says what it wrote.
func writeCorpus(root string, sources []sourceFile, copies int) (corpusStats, error) {
	if err := os.RemoveAll(root); err != nil {
		return corpusStats{}, err
	}
	projects := filepath.Join(root, ".claude", "projects")
	st := corpusStats{Copies: copies}
	var buf []byte
	for k := range copies {
		mapped := map[string]string{}
		for _, src := range sources {
			buf = buf[:0]
			last := 0
			for _, m := range src.ids {
				buf = append(buf, src.data[last:m[0]]...)
				old := string(src.data[m[0]:m[1]])
				id, ok := mapped[old]
				if !ok {
					id = newID(k, old)
					mapped[old] = id
				}
				buf = append(buf, id...)
				last = m[1]
			}
			buf = append(buf, src.data[last:]...)
			session, ok := mapped[src.session]
			if !ok {
				session = newID(k, src.session)
				mapped[src.session] = session
			}
			path := filepath.Join(projects, src.project, strings.ReplaceAll(src.rel, "{S}", session))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return st, err
			}
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				return st, err
			}
			st.Files++
			st.Bytes += int64(len(buf))
		}
	}
	return st, nil
}
