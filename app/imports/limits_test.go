package imports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zstdBomb: frames of RLE blocks that each decode to size bytes of zeros
// from a few KiB (RFC 8878 §3.1.1.2), with no content size in the header.
func zstdBomb(frames int, size int64) []byte {
	var out []byte
	for f := 0; f < frames; f++ {
		out = append(out, 0x28, 0xB5, 0x2F, 0xFD, 0x00, 13<<3)
		for left := size; left > 0; {
			n := min(left, 128<<10)
			left -= n
			h := uint32(1<<1) | uint32(n)<<3
			if left == 0 {
				h |= 1
			}
			out = append(out, byte(h), byte(h>>8), byte(h>>16), 0)
		}
	}
	return out
}

func uploadServer(t *testing.T) *httptest.Server {
	t.Helper()
	db, settings, _ := importEnv(t)
	ts := httptest.NewServer(&Handler{DB: db, Settings: settings, Publish: func(string, any) {}})
	t.Cleanup(ts.Close)
	return ts
}

func upload(t *testing.T, url string, files map[string][]byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for name, data := range files {
		w, _ := mw.CreateFormFile("file", name)
		w.Write(data)
	}
	mw.Close()
	res, err := http.Post(url, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// Six 512 MiB frames of zeros in 99 KB once took the server to 5 GB and
// out-of-memory; now the upload is refused at the line limit, naming the
// file and the limit.
func TestUploadedZstdBombIsRefused(t *testing.T) {
	ts := uploadServer(t)
	bomb := zstdBomb(6, 512<<20)
	if len(bomb) > 100<<10 {
		t.Fatalf("bomb of %d bytes", len(bomb))
	}
	code, body := upload(t, ts.URL, map[string][]byte{"bomb.jsonl.zst": bomb})
	if code != http.StatusBadRequest || !strings.Contains(body, "bomb.jsonl.zst") || !strings.Contains(body, "limit of 64 MiB") {
		t.Fatalf("%d %s", code, body)
	}
	// `tollgate import` of the same file reads it through the same limits.
	db, settings, _ := importEnv(t)
	path := filepath.Join(t.TempDir(), "bomb.jsonl.zst")
	os.WriteFile(path, bomb, 0o600)
	_, err := Files(context.Background(), db, settings, []Source{{Path: path}}, nil)
	if err == nil || !strings.Contains(err.Error(), path+": a line is longer than the limit of 64 MiB") {
		t.Fatalf("err = %v", err)
	}
}

// A FIFO named *.jsonl once hung `tollgate import` in open(2).
func TestImportSkipsWhatIsNotARegularFile(t *testing.T) {
	db, settings, _ := importEnv(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink to a log is still read; one to the FIFO is not.
	real := filepath.Join(t.TempDir(), "real.jsonl")
	os.WriteFile(real, dshLog("s-link"), 0o600)
	os.Symlink(real, filepath.Join(dir, "link.jsonl"))
	os.Symlink(fifo, filepath.Join(dir, "pipelink.jsonl"))
	done := make(chan error, 2)
	go func() {
		res, err := Files(context.Background(), db, settings, []Source{{Path: dir}}, nil)
		if err == nil && (len(res.Files) != 1 || res.Requests != 1) {
			err = fmt.Errorf("files %+v, want the FIFO skipped and the linked log read", res.Files)
		}
		done <- err
		_, err = Files(context.Background(), db, settings, []Source{{Path: fifo}}, nil)
		if err == nil || !strings.Contains(err.Error(), fifo+": not a regular file (a named pipe)") {
			done <- fmt.Errorf("FIFO named directly: err = %v", err)
			return
		}
		done <- nil
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("import of a folder holding a FIFO still running after 10s")
		}
	}
}

func dshLog(session string) []byte {
	return []byte(`{"type":"header","format":"dsh.session","version":1,"session":"` + session + `","provider":"deepseek","model":"deepseek-flash"}
{"type":"assistant/message","at":"2026-11-30T10:00:00Z","id":"m1","usage":{"inputTokens":1200,"cacheReadTokens":250000,"outputTokens":900}}
`)
}

// Spooled upload parts hold no descriptor while they wait: 300 files
// import under a limit of 200 open files, and 25,000 parts are refused by
// count, naming the limit, without running out of descriptors.
func TestManyPartUploadUnderLowDescriptorLimit(t *testing.T) {
	ts := uploadServer(t)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 200
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })

	files := map[string][]byte{}
	for i := range 300 {
		files[fmt.Sprintf("s%03d.jsonl", i)] = dshLog(fmt.Sprintf("s-%d", i))
	}
	code, body := upload(t, ts.URL, files)
	var got struct {
		Result Result `json:"result"`
	}
	json.Unmarshal([]byte(body), &got)
	if code != 200 || got.Result.Requests != 300 {
		t.Fatalf("300 files: %d %.400s", code, body)
	}
	many := map[string][]byte{}
	for i := range 25000 {
		many[fmt.Sprintf("m%05d.jsonl", i)] = []byte("\n")
	}
	code, body = upload(t, ts.URL, many)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "more than 10000 files") {
		t.Fatalf("25,000 parts: %d %.400s", code, body)
	}
}
