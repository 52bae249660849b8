package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

// foldID derives a rewrite id from the session and the fold's own id in
// the log, so the same fold imported from a copy of the log is one row.
func foldID(session, local string) string {
	h := sha256.Sum256([]byte(session + "\x00" + local))
	return "r_imp_" + hex.EncodeToString(h[:10])
}
