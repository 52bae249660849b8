package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

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
