package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"tollgate/app/config"
	"tollgate/app/follow"
	"tollgate/app/harness/claudecode/testcorpus"
	"tollgate/guard/client/clienttest"
)

// userWithClaudeLogs is a $HOME whose ~/.claude/projects holds a generated
// corpus of about size bytes; the harnesses' other variables are unset.
func userWithClaudeLogs(t testing.TB, size int64) (string, testcorpus.Stats) {
	t.Helper()
	user := t.TempDir()
	st, err := testcorpus.ClaudeCode(filepath.Join(user, ".claude"), testcorpus.Options{Bytes: size, SessionBytes: 3 << 20, Seed: 17})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", user)
	for _, v := range []string{"CLAUDE_CONFIG_DIR", "CODEX_HOME", "DSH_HOME"} {
		t.Setenv(v, "")
	}
	return user, st
}

func startFollowing(t testing.TB, home string) *Service {
	t.Helper()
	svc, err := Start(context.Background(), StartOptions{Home: home, Flags: config.Flags{Listen: "127.0.0.1:0"}, Version: "test", Follow: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	return svc
}

func TestServeFollowsTheHarnessLogsUnlessWatchIsOff(t *testing.T) {
	user, stats := userWithClaudeLogs(t, 2<<20)
	svc := startFollowing(t, t.TempDir())
	var st follow.Status
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if code, raw := apiCall(t, svc, "GET", "/v1/follow", nil, &st); code != 200 {
			t.Fatalf("GET /v1/follow: %d %s", code, raw)
		}
		if st.History.State == follow.HistoryDone {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !st.Enabled || st.History.State != follow.HistoryDone || len(st.History.Found) != 1 || st.History.Found[0].Sessions != stats.Sessions {
		t.Fatalf("status %+v", st)
	}
	var dirs []string
	for _, f := range st.Folders {
		dirs = append(dirs, f.Dir)
		if f.Dir == filepath.Join(user, ".claude", "projects") && (f.Files != stats.Files || f.Watched == 0 || f.Last == nil) {
			t.Errorf("the Claude Code folder: %+v", f)
		}
	}
	if !slices.Contains(dirs, filepath.Join(user, ".claude", "projects")) || !slices.Contains(dirs, filepath.Join(user, ".codex", "sessions")) {
		t.Errorf("followed %v", dirs)
	}
	var list struct{ Sessions []any }
	apiCall(t, svc, "GET", "/v1/sessions?limit=100", nil, &list)
	if len(list.Sessions) != stats.Sessions {
		t.Errorf("%d sessions listed after the history import; the corpus has %d", len(list.Sessions), stats.Sessions)
	}

	// watch: false in config.yaml: nothing is followed, nothing imported.
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("watch: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	off := startFollowing(t, home)
	time.Sleep(300 * time.Millisecond) // what a follower would have imported by now, were there one
	apiCall(t, off, "GET", "/v1/follow", nil, &st)
	apiCall(t, off, "GET", "/v1/sessions", nil, &list)
	if st.Enabled || len(st.Folders) != 0 || len(list.Sessions) != 0 {
		t.Errorf("watch: false: status %+v, %d sessions", st, len(list.Sessions))
	}
}

// BenchmarkRecordDuringHistoryImport: what a harness's recorded request
// waits while the first-start history import runs (one client recording
// one request at a time through the API) against the same client once the
// import is done: the history is imported in small chunks so that the
// gate's writes are not held behind one large transaction.
func BenchmarkRecordDuringHistoryImport(b *testing.B) {
	_, stats := userWithClaudeLogs(b, 64<<20)
	client := &http.Client{}
	var during, idle []time.Duration
	var importTook time.Duration
	seq := 0
	record := func(svc *Service) time.Duration {
		seq++
		body := fmt.Sprintf(`{"requestId":"r%d","profile":"deepseek-flash","provider":"deepseek","model":"deepseek-flash","usage":{"inputTokens":1200,"cacheReadTokens":250000,"outputTokens":900}}`, seq)
		req := clienttest.NewRequest("POST", svc.URL+"/v1/sessions/live/requests", svc.Token(), body)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			b.Fatalf("status %d", res.StatusCode)
		}
		return time.Since(start)
	}
	for b.Loop() {
		svc := startFollowing(b, b.TempDir())
		start := time.Now()
		for svc.follower.Status().History.State != follow.HistoryDone {
			during = append(during, record(svc))
			time.Sleep(5 * time.Millisecond)
		}
		importTook += time.Since(start)
		for range 200 {
			idle = append(idle, record(svc))
			time.Sleep(5 * time.Millisecond)
		}
		svc.Close(context.Background())
	}
	pct := func(d []time.Duration, p float64) float64 {
		if len(d) == 0 {
			return 0
		}
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(during, 0.5), "ms-p50-importing")
	b.ReportMetric(pct(during, 0.99), "ms-p99-importing")
	b.ReportMetric(pct(during, 1), "ms-max-importing")
	b.ReportMetric(pct(idle, 0.5), "ms-p50-idle")
	b.ReportMetric(pct(idle, 0.99), "ms-p99-idle")
	b.ReportMetric(float64(stats.Bytes)/(1<<20)/importTook.Seconds()*float64(b.N), "history-MB/s")
}
