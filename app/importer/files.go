package importer

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"tollgate/app/importer/jsonl"
)

// OpenRegular opens a log for reading, refusing what is not a regular file
// (jsonl.OpenRegular).
func OpenRegular(path string) (*os.File, error) { return jsonl.OpenRegular(path) }

// ContextReader reads r until ctx ends (jsonl.ContextReader).
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return jsonl.ContextReader(ctx, r) }

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
