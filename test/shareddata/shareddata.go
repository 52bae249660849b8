// Package shareddata finds the real harness logs and OTLP captures the
// tests read (../shared/data beside the checkout; never copied into the
// repository). It is for tests only.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir is the real session data (../shared/data beside the
// repository's checkout, found from the go.mod above the test's folder).
// A test that needs it is skipped where the clone has none: synthetic logs
// cover the formats there.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = filepath.Dir(dir)
	}
	data := filepath.Join(filepath.Dir(dir), "shared", "data")
	if _, err := os.Stat(data); err != nil {
		t.Skipf("real session data not found at %s (it sits beside the repository as ../shared/data)", data)
	}
	return data
}
