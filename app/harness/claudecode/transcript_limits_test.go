package claudecode

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The hook reads only regular files, within the importer's limits, and
// gives up when its caller has gone: /dev/zero once spun a core forever.
func TestReadTranscriptRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/dev/zero", fifo, t.TempDir()} {
		done := make(chan error, 1)
		go func() { _, err := readTranscript(context.Background(), path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: error %v, want it refused as not a regular file", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5s", path)
		}
	}
}

func TestReadTranscriptGivesUpWhenTheContextEnds(t *testing.T) {
	path := writeTranscript(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readTranscript(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	// A regular file of zeros (no newline) ends at the line limit, not in
	// memory.
	zeros := filepath.Join(t.TempDir(), "zeros.jsonl")
	f, err := os.Create(zeros)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := readTranscript(context.Background(), zeros); err == nil || !strings.Contains(err.Error(), "limit of 64 MiB") {
		t.Fatalf("error %v, want the line limit", err)
	}
}

func TestClaudeHTTPHookWithDevZeroAnswers(t *testing.T) {
	svc, _ := StartService.Start(t, "auto")
	body := hookJSON("sess-z", "/dev/zero", "p1", "auto")
	req, _ := http.NewRequest("POST", svc.URL+"/v1/hooks/claude-code?timeout=30", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+svc.Token())
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("hook with /dev/zero: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
}
