package cxlog

import (
	"bytes"
	"path/filepath"
	"strings"

	"tollgate/app/importer"
)

// Name is Codex's harness name: sessions.harness, --harness, and the
// prefix of its session ids.
const Name = "codex"

func init() {
	importer.Register(importer.Format{
		Name: Name, Label: "Codex", Order: 20,
		Roots:       Roots,
		IsLog:       isRollout,
		Detect:      detect,
		DetectOrder: 30,
		SessionLine: "session_meta",
		NewParser:   func(o importer.Options) (importer.LineParser, error) { return newCodexParser(o) },
	})
}

// Roots are where Codex keeps its rollouts: $CODEX_HOME/sessions, else
// ~/.codex/sessions (in YYYY/MM/DD folders).
func Roots(getenv func(string) string, home string) []string {
	if v := getenv("CODEX_HOME"); v != "" {
		return []string{filepath.Join(v, "sessions")}
	}
	return []string{filepath.Join(home, ".codex", "sessions")}
}

// isRollout: Codex names its logs rollout-<time>-<uuid>.jsonl.
func isRollout(path string) bool {
	name := filepath.Base(path)
	return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl")
}

// detect: a rollout starts with its session_meta line; one cut before it
// still has the rollout's name and its lines' payloads.
func detect(path string, head []byte) bool {
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return bytes.Contains(first, []byte(`"session_meta"`)) || strings.HasPrefix(filepath.Base(path), "rollout-") && bytes.Contains(head, []byte(`"payload"`))
}
