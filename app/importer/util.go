package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/bits"
	"time"
)

// Kinds of input between two requests of a thread, as bits of a parser's
// state; a lower bit is more telling (StartedByName). The values are
// stored in the import state of every log (the imports table), so a
// database goes on where it stopped: never renumber them.
const (
	StartCompaction uint16 = 1 << iota
	StartNotification
	StartPrompt
	StartAnswer
	StartInterrupt
	StartHook
	StartMeta
	StartToolResult
)

var startedByNames = [...]string{StartedByCompaction, StartedByNotification, StartedByPrompt, StartedByAnswer,
	StartedByInterrupt, StartedByHook, StartedByMeta, StartedByToolResult}

// StartedByName names the most telling kind of input in k, a set of
// Start… bits ("" when k is empty).
func StartedByName(k uint16) string {
	if k == 0 {
		return ""
	}
	return startedByNames[bits.TrailingZeros16(k)]
}

// IsUUID reports whether s is a UUID in its 36-character text form (the
// session ids Claude Code and Codex name their logs by).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// FoldID derives a rewrite id from the session and the fold's own id in
// the log, so the same fold imported from a copy of the log is one row
// (the rule of every format, the registered ones too).
func FoldID(session, local string) string {
	h := sha256.Sum256([]byte(session + "\x00" + local))
	return "r_imp_" + hex.EncodeToString(h[:10])
}

// ParseTime reads a log's RFC 3339 time (UTC); "" is the zero time. Its
// error names the value, for the LineError the driver wraps it in.
func ParseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339", v)
	}
	return t.UTC(), nil
}
