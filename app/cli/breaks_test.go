package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/home"
	"tollgate/app/imports"
	"tollgate/guard/api"
	"tollgate/storage/sqlite"
	"tollgate/test/shareddata"
)

func TestBreaksCommand(t *testing.T) {
	dir := t.TempDir()
	settings, err := loadSettings(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, home.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imports.Files(ctx, db, settings, []imports.Source{{Path: filepath.Join(shareddata.Dir(t), "claude-code")}}, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Exit(Breaks(ctx, append([]string{"--home", dir}, args...), IO{Stdout: &out, Stderr: &errb}), &errb)
		return code, out.String(), errb.String()
	}
	const s = "claude-code:4d5611e5-241a-462a-8d15-5122611a9569"
	code, out, errs := run("--session", s)
	if code != 0 || strings.Count(out, "\n") < 6 || !strings.Contains(out, "task-notification") || !strings.Contains(out, "4 h 11 min") ||
		!strings.Contains(out, "4 breaks re-billed 256178 tokens") {
		t.Fatalf("session text: %d %q %q", code, out, errs)
	}
	code, out, _ = run("--session", s, "--format", "json")
	var list api.SessionBreaks
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Breaks) != 4 || list.Breaks[3].Cause != "prefix" {
		t.Fatalf("session json: %d %q", code, out)
	}
	// The transcripts are from February 2026: a long enough period holds them.
	code, out, _ = run("--days", "3660")
	if code != 0 || !strings.Contains(out, "7 breaks") || !strings.Contains(out, "prefix") || !strings.Contains(out, "258c7280") {
		t.Fatalf("summary: %d %q", code, out)
	}
	code, out, _ = run("--days", "3660", "--format", "json")
	var sum api.BreakSummary
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Breaks != 7 || len(sum.ByCause) != 3 || sum.Days != 3660 {
		t.Fatalf("summary json: %d %q", code, out)
	}
	for _, bad := range [][]string{{"--days", "0"}, {"--format", "xml"}, {"--limit", "0"}, {"extra"}} {
		if code, _, errs := run(bad...); code != 2 || errs == "" {
			t.Errorf("%v: %d %q", bad, code, errs)
		}
	}
	if code, _, errs := run("--session", "nope"); code == 0 || !strings.Contains(errs, `session "nope"`) {
		t.Errorf("unknown session: %d %q", code, errs)
	}
}
