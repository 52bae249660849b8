package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"tollgate/app/home"
	"tollgate/guard/client/clienttest"
	"tollgate/storage"
	"tollgate/storage/sqlite"
)

// TestMain lets the test binary double as a `tollgate serve` child, so the
// kill -9 test kills a real, separate process running the real server.
func TestMain(m *testing.M) {
	if os.Getenv("TOLLGATE_TEST_CHILD") == "serve" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Exit(Serve(ctx, os.Args[1:], IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, "test-child", nil), os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func startChild(t *testing.T, dir string) (*exec.Cmd, home.APIInfo) {
	t.Helper()
	os.Remove(home.APIFilePath(dir))
	cmd := exec.Command(os.Args[0], "--home", dir, "--listen", "127.0.0.1:0")
	// Not following the machine's harness logs (serve does by default): the
	// child stores only what this test sends.
	cmd.Env = append(os.Environ(), "TOLLGATE_TEST_CHILD=serve", "TOLLGATE_WATCH=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if info, err := home.ReadAPIInfo(dir); err == nil && info.PID == cmd.Process.Pid {
			return cmd, info
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	t.Fatalf("child never wrote api.json:\n%s", out.String())
	return nil, home.APIInfo{}
}

func postRequest(client *http.Client, info home.APIInfo, session, id string) (int, error) {
	res, err := client.Do(clienttest.NewRequest("POST", info.URL+"/v1/sessions/"+session+"/requests", info.Token, map[string]any{
		"requestId": id, "profile": "deepseek-flash",
		"usage": map[string]int64{"inputTokens": 100, "cacheReadTokens": 5000, "outputTokens": 50},
	}))
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// Nothing acknowledged is lost when the process is killed under load, and
// retrying every request after a restart stores each exactly once.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	cmd, info := startChild(t, dir)

	const clients, perClient = 20, 400
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	killAt := make(chan struct{})
	var once sync.Once
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < perClient; i++ {
				id := fmt.Sprintf("c%d-%d", c, i)
				code, err := postRequest(client, info, fmt.Sprintf("s%d", c%5), id)
				if err != nil {
					return // the server is gone
				}
				if code == http.StatusCreated {
					mu.Lock()
					acked[id] = true
					if len(acked) == clients*perClient/3 {
						once.Do(func() { close(killAt) })
					}
					mu.Unlock()
				}
			}
		}(c)
	}
	<-killAt
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	wg.Wait()
	mu.Lock()
	ackedCount := len(acked)
	mu.Unlock()
	if ackedCount < clients*perClient/3 || ackedCount == clients*perClient {
		t.Fatalf("%d acknowledged: the kill did not land mid-stream", ackedCount)
	}

	// The restart finds a stale api.json (dead pid) and takes over.
	cmd2, info2 := startChild(t, dir)
	defer func() { cmd2.Process.Signal(syscall.SIGTERM); cmd2.Wait() }()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, home.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	present := map[string]int{}
	if err := db.ExportRequests(ctx, "", func(r storage.ExportedRequest) error { present[r.RequestID]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for id := range acked {
		if present[id] != 1 {
			t.Fatalf("acknowledged request %s is stored %d times after kill -9", id, present[id])
		}
	}
	for id, n := range present {
		if n != 1 {
			t.Fatalf("request %s stored %d times", id, n)
		}
	}

	// Every request retried (acknowledged or not): each stored once.
	for c := 0; c < clients; c++ {
		for i := 0; i < perClient; i++ {
			id := fmt.Sprintf("c%d-%d", c, i)
			if code, err := postRequest(client, info2, fmt.Sprintf("s%d", c%5), id); err != nil || code != http.StatusCreated {
				t.Fatalf("retry %s: %d %v", id, code, err)
			}
		}
	}
	var rows, distinct int
	db.SQL().QueryRow("SELECT COUNT(*), COUNT(DISTINCT session_id || '/' || request_id) FROM requests").Scan(&rows, &distinct)
	if rows != clients*perClient || distinct != rows {
		t.Fatalf("after retries: %d rows, %d distinct; want %d each", rows, distinct, clients*perClient)
	}
	var totals int64
	db.SQL().QueryRow("SELECT SUM(requests) FROM sessions").Scan(&totals)
	if totals != clients*perClient {
		t.Fatalf("session totals count %d requests, want %d", totals, clients*perClient)
	}
	t.Logf("%d acknowledged before kill -9, all present once; %d after retries", ackedCount, rows)
}
