package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client"
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

// The HTTP hook with /dev/zero for a transcript and a FIFO for the
// project's CLAUDE.md answers at once and still asks the gate: the
// compaction is decided (auto: allowed) and recorded, nothing waits.
func TestClaudeHTTPHookWithDevZeroAnswers(t *testing.T) {
	for name, transcript := range map[string]string{"dev-zero": "/dev/zero", "real": writeTranscript(t)} {
		t.Run(name, func(t *testing.T) { hookAnswersAtOnce(t, "sess-"+name, transcript) })
	}
}

func hookAnswersAtOnce(t *testing.T, session, transcript string) {
	svc, _ := StartService.Start(t, "auto")
	cwd := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(cwd, "CLAUDE.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"session_id": session, "transcript_path": transcript, "cwd": cwd, "prompt_id": "p1",
		"hook_event_name": "PreCompact", "trigger": "auto"})
	req, _ := http.NewRequest("POST", svc.URL+"/v1/hooks/claude-code?timeout=30", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+svc.Token())
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("hook with /dev/zero: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if blocked, _ := answer(t, string(body)); res.StatusCode != 200 || blocked {
		t.Fatalf("status %d, answer %q: want the compaction allowed", res.StatusCode, body)
	}
	var series api.Series
	cl := client.New(client.Endpoint{URL: svc.URL, Token: svc.Token()}, nil)
	if err := cl.Get(context.Background(), "/v1/sessions/claude-code:"+session+"/series", &series); err != nil {
		t.Fatal(err)
	}
	if len(series.Folds) != 1 || series.Folds[0].Decision != "allow" || series.Folds[0].Reason != "auto" {
		t.Fatalf("folds %+v: want the question decided by the gate", series.Folds)
	}
}
