package imports

import (
	"testing"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"

	_ "tollgate/app/harness/all" // every harness's format, as the binary links them
)

// claudePredictor is Claude Code's fold predictor, for the tests of the
// trace cache it reads through.
func claudePredictor(t testing.TB) importer.Predictor {
	t.Helper()
	f, ok := importer.Lookup(cclog.Name)
	if !ok || f.Predictor == nil {
		t.Fatal("Claude Code's format has no predictor registered")
	}
	return f.Predictor
}

// traceOf is the cache's trace of path as Claude Code's trace.
func traceOf(c *traceCache, path string) (*cclog.Trace, error) {
	tr, err := c.Trace(path)
	t, _ := tr.(*cclog.Trace)
	return t, err
}
