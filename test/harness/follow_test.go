package harness

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The real Claude Code 2.1.332 — no hook, no telemetry — run against the
// fake provider while `tollgate serve` follows its log folders (issue 17):
// each turn's requests are in tollgate as Claude Code writes them, without
// an import, and equal what importing the transcripts afterwards brings
// into a fresh home. The second turn (-c) appends to the same transcript.
func TestClaudeCodeFollowedLive(t *testing.T) {
	w := startWorld(t, true, "TOLLGATE_WATCH=true")
	e, p, work, tg := w.e, w.p, w.work, w.tg
	projects := filepath.Join(w.home, ".claude-config", "projects")
	claude := append(w.environ, "ANTHROPIC_BASE_URL="+p.URL, "ANTHROPIC_API_KEY=sk-ant-test-dummy")
	// What importing the transcripts into a fresh home brings: the figure
	// following them must reach.
	imported := func() int64 {
		out := e.runTollgate(t, nil, "tollgate import", "import", "--home", t.TempDir(), "--harness", "claude-code", projects)
		m := regexp.MustCompile(`: (\d+) requests,`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("tollgate import said %s", out)
		}
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		return n
	}
	followed := func() int64 {
		var list struct {
			Sessions []struct {
				ID       string `json:"id"`
				Requests int64  `json:"requests"`
			} `json:"sessions"`
		}
		tg.get(t, "/v1/sessions", &list)
		var n int64
		for _, s := range list.Sessions {
			if strings.HasPrefix(s.ID, "claude-code:") {
				n += s.Requests
			}
		}
		return n
	}
	var last int64
	for turn, args := range [][]string{{"-p", "hello there"}, {"-p", "-c", "and again, at more length"}} {
		if r := run(t, p, work, claude, e.claude, args...); r.code != 0 || r.reqs == 0 {
			t.Fatalf("claude: exit %d, %d requests", r.code, r.reqs)
		}
		want := imported()
		if want <= last {
			t.Fatalf("turn %d: the transcripts hold %d requests, %d before", turn+1, want, last)
		}
		start := time.Now()
		for followed() != want {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("turn %d: tollgate followed %d requests; importing the transcripts brings %d", turn+1, followed(), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
		files, _ := filepath.Glob(filepath.Join(projects, "*", "*.jsonl"))
		t.Logf("turn %d: %d requests followed (%v after the import finished counting); transcripts %v", turn+1, want, time.Since(start).Round(time.Millisecond), files)
		last = want
	}
	var st struct {
		Folders []struct {
			Dir   string
			Files int
			Last  *struct{ File string }
		}
	}
	tg.get(t, "/v1/follow", &st)
	for _, f := range st.Folders {
		if f.Dir == projects {
			if f.Files == 0 || f.Last == nil || !strings.HasPrefix(f.Last.File, projects) {
				t.Errorf("the followed folder: %+v", f)
			}
			return
		}
	}
	t.Errorf("%s is not followed: %s", projects, fmt.Sprint(st.Folders))
}
