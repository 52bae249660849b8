// Package importertest holds what the tests of the harnesses' log formats
// check alike in the real samples (each format's testdata/sample): reading a
// sample's lines, and the folds with the actual cold tokens of the request
// after each. Only tests import it.
package importertest

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"tollgate/app/importer"
)

// ReadLines reads the JSON Lines file at path and decodes each of its lines
// into a T; a line that does not decode fails t. It returns the file's bytes
// with the lines.
func ReadLines[T any](t testing.TB, path string) ([]byte, []T) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []T
	for i, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var v T
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("%s: line %d does not parse: %v", path, i+1, err)
		}
		lines = append(lines, v)
	}
	return b, lines
}

// Folds returns the folds among records, in order. A fold that a
// main-conversation request follows must carry that request's actual cold
// tokens (importer.Fold.SetActual); one that does not fails t.
func Folds(t testing.TB, records []importer.Record) []*importer.Fold {
	t.Helper()
	var folds []*importer.Fold
	for i, r := range records {
		f := r.Fold
		if f == nil {
			continue
		}
		folds = append(folds, f)
		if followed(records[i+1:]) && (f.ActualCold == nil || f.ActualRequest == "") {
			t.Errorf("fold %s (line %d) is followed by a request, yet has no actual cold tokens", f.ID, f.Line)
		}
	}
	return folds
}

// followed says whether records hold a main-conversation request.
func followed(records []importer.Record) bool {
	for _, r := range records {
		if r.Request != nil && r.Request.Purpose == importer.PurposeConversation {
			return true
		}
	}
	return false
}

// Cold is a fold's actual cold tokens as the tests log them, -1 when it has
// none.
func Cold(f *importer.Fold) int64 {
	if f.ActualCold == nil {
		return -1
	}
	return *f.ActualCold
}
