package desktop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/apptest"
)

// The window writes an export through the trusted chain into the file the
// dialog chose; a route that is not an export is refused.
func TestWriteExport(t *testing.T) {
	svc, _ := apptest.Start(t, "auto")
	file := filepath.Join(t.TempDir(), "tollgate.csv")
	if err := writeExport(context.Background(), svc.Server.TrustedHandler(), "/v1/export?format=csv", file); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(b), "session,") {
		t.Fatalf("%q %v", b, err)
	}
	if err := writeExport(context.Background(), svc.Server.TrustedHandler(), "/v1/export?format=xml", filepath.Join(t.TempDir(), "x")); err == nil {
		t.Fatal("a failing export wrote a file")
	}
	for _, bad := range [][]any{nil, {"x"}, {map[string]any{"path": "/v1/sessions"}}} {
		if _, err := parseExportRequest(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	r, err := parseExportRequest([]any{map[string]any{"id": "1", "path": "/v1/export?format=json", "filename": "../../etc/x.json"}})
	if err != nil || r.Filename != "x.json" {
		t.Fatalf("%+v %v", r, err)
	}
}
