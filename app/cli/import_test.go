package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/testcorpus"
	"tollgate/app/imports"
	"tollgate/storage/sqlite"
)

func TestRunImportCommand(t *testing.T) {
	root := t.TempDir()
	if _, err := testcorpus.ClaudeCode(root, testcorpus.Options{Bytes: 1 << 20, SessionBytes: 700 << 10, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(root, "projects")
	dir := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Exit(Import(context.Background(), args, IO{Stdout: &out, Stderr: &errb}), &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("--home", dir, root)
	if code != 0 || !strings.Contains(out, "imported") || !strings.Contains(out, "folds in") {
		t.Fatalf("code %d out %q err %q", code, out, errs)
	}
	code, out, _ = run("--home", dir, root)
	if code != 0 || !strings.Contains(out, ": 0 requests, 0 updated, 0 folds") || !strings.Contains(out, "unchanged") {
		t.Fatalf("second run: %d %q", code, out)
	}
	if code, _, errs := run("--home", dir, "--harness", "vim", root); code != 2 || !strings.Contains(errs, "want one of claude-code, codex, dsh, gemini, opencode") {
		t.Fatalf("bad harness: %d %q", code, errs)
	}
	// No PATH: the harnesses' own folders, here empty.
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	t.Setenv("DSH_HOME", t.TempDir())
	if code, out, errs := run("--home", dir); code != 0 || !strings.Contains(out, "imported 0 files") {
		t.Fatalf("defaults: %d %q %q", code, out, errs)
	}
}

func TestProgressBar(t *testing.T) {
	s := renderBar(imports.Progress{FilesDone: 3, FilesTotal: 10, BytesDone: 150 << 20, BytesTotal: 300 << 20, Requests: 1234, Folds: 5}, 20)
	if s != "[==========>         ]  50% 150.0 MiB/300.0 MiB · 3/10 files · 1234 requests · 5 folds" {
		t.Fatalf("%q", s)
	}
	var buf bytes.Buffer
	b := newProgressBar(&buf) // not a terminal: plain lines at each tenth
	for done := int64(0); done <= 1<<30; done += 1 << 26 {
		b.update(imports.Progress{BytesDone: done, BytesTotal: 1 << 30, FilesTotal: 4})
	}
	b.done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 9 || lines[0] != "importing: 10% of 1.0 GiB, 0/4 files, 0 requests, 0 folds" || strings.Contains(buf.String(), "\x1b") {
		t.Fatalf("%q", buf.String())
	}
	buf.Reset()
	small := newProgressBar(&buf)
	small.update(imports.Progress{BytesDone: 1, BytesTotal: 10})
	if buf.Len() != 0 {
		t.Fatalf("small import reported progress: %q", buf.String())
	}
}

func runPrice(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Exit(Price(context.Background(), args, IO{Stdout: &out, Stderr: &errb}), &errb)
	return code, out.String(), errb.String()
}

func TestPriceCommandErrors(t *testing.T) {
	home := t.TempDir()
	if code, _, _ := runPrice("--home", home); code != 2 {
		t.Fatalf("no file: %d", code)
	}
	if code, _, errs := runPrice(filepath.Join(t.TempDir(), "none.jsonl"), "--home", home); code != 1 || !strings.Contains(errs, "none.jsonl") {
		t.Fatalf("missing file: %d %q", code, errs)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "session.jsonl")
	os.WriteFile(path, []byte(testcorpus.DSHPriceLog), 0o644)
	if code, _, errs := runPrice(path, "--fold", "9", "--home", home); code != 1 || !strings.Contains(errs, "the log has 2 folds") {
		t.Fatalf("--fold 9: %d %q", code, errs)
	}
	if code, _, errs := runPrice(path, "--format", "yaml", "--home", home); code != 2 || !strings.Contains(errs, `--format "yaml": want text or json`) {
		t.Fatalf("--format yaml: %d %q", code, errs)
	}
	if code, out, errs := runPrice(path, "--format", "json", "--home", home); code != 0 || !strings.HasPrefix(out, "{\n  \"session\": ") || !strings.Contains(out, `"predictedColdTokens": `) {
		t.Fatalf("--format json: %d %q %q", code, out, errs)
	}
	os.WriteFile(path, []byte(strings.SplitAfter(testcorpus.DSHPriceLog, "\n")[0]), 0o644)
	if code, out, _ := runPrice(path, "--home", home); code != 0 || !strings.Contains(out, "no fold to price") {
		t.Fatalf("no folds: %d %q", code, out)
	}
	if code, out, _ := runPrice(path, "--format", "json", "--home", home); code != 0 || !strings.Contains(out, `"folds": []`) {
		t.Fatalf("no folds, json: %d %q", code, out)
	}
}

// A FIFO named *.jsonl would hang `tollgate import` in open(2), deaf to
// SIGTERM; it is skipped in a folder and refused when named.
func TestImportCommandSkipsAFIFO(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type result struct {
		code     int
		out, err string
	}
	run := func(args ...string) result {
		done := make(chan result, 1)
		go func() {
			var out, errb bytes.Buffer
			code := Exit(Import(context.Background(), args, IO{Stdout: &out, Stderr: &errb}), &errb)
			done <- result{code, out.String(), errb.String()}
		}()
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("tollgate import %v still running after 10s", args)
		}
		return result{}
	}
	if r := run("--home", dir, root); r.code != 0 || !strings.Contains(r.out, "imported 0 files") {
		t.Fatalf("folder with a FIFO: %+v", r)
	}
	if r := run("--home", dir, fifo); r.code == 0 || !strings.Contains(r.err, "not a regular file") {
		t.Fatalf("the FIFO named: %+v", r)
	}
}

func TestImportWatchFollowsAppendedLines(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "1f0b6f3a-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl")
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"assistant","sessionId":"x","cwd":"/w","timestamp":"2026-02-12T16:02:%02d.000Z","requestId":"r%d","message":{"id":"m%d","model":"claude-opus-4-6","usage":{"input_tokens":1,"output_tokens":2}}}`+"\n", i, i, i)
	}
	if err := os.WriteFile(path, []byte(line(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Exit(Import(ctx, []string{"--home", home, "--harness", "claude-code", "--watch", dir}, IO{Stdout: &out, Stderr: &errb}), &errb)
	}()
	db, err := sqlite.Open(context.Background(), filepath.Join(home, "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sid := "claude-code:1f0b6f3a-1c1e-4c55-9d0e-3f1f2d0c9a11"
	requests := func() int64 { s, _ := db.Session(context.Background(), sid); return s.Requests }
	wait := func(n int64) {
		deadline := time.Now().Add(20 * time.Second)
		for requests() != n {
			if time.Now().After(deadline) {
				t.Fatalf("waited for %d requests, have %d", n, requests())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait(1)
	// Appended before or after the follower's watch is in place, the lines
	// are read: its first scan compares each file with its stored offset.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line(2) + line(3))
	f.Close()
	wait(3)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), sid+" +2 requests") {
		t.Errorf("stdout %q", out.String())
	}
}
