package ccfold

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
)

// OSFiles reads regular files whole up to the limit, and nothing else.
func TestOSFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.go")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	var fs OSFiles
	if size, got, ok := fs.Stat(p); !ok || size != 100 || !got.Equal(mt) {
		t.Fatalf("stat %d %v %v", size, got, ok)
	}
	if text, ok := fs.Read(p, 100); !ok || len(text) != 100 {
		t.Fatalf("read %d %v", len(text), ok)
	}
	if _, ok := fs.Read(p, 99); ok {
		t.Fatal("read past the limit")
	}
	for _, q := range []string{dir, filepath.Join(dir, "none")} {
		if _, _, ok := fs.Stat(q); ok {
			t.Fatalf("stat %s: ok", q)
		}
		if _, ok := fs.Read(q, 1<<20); ok {
			t.Fatalf("read %s: ok", q)
		}
	}
}

// EarlierSessions learns only from transcripts beside the session that
// ended before it began.
func TestEarlierSessions(t *testing.T) {
	data := sharedData(t)
	dir := t.TempDir()
	copyTo := func(name string) string {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	older := copyTo("258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	later := copyTo("4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
	tr, err := ReadTrace(later)
	if err != nil {
		t.Fatal(err)
	}
	h := EarlierSessions(later, Start(tr))
	if len(h.summaries) != 1 || h.summaries[0] != 3642 {
		t.Fatalf("learned summaries %v, want the older session's", h.summaries)
	}
	// The older session learns nothing from the later one.
	otr, err := ReadTrace(older)
	if err != nil {
		t.Fatal(err)
	}
	if h := EarlierSessions(older, Start(otr)); len(h.summaries) != 0 || len(h.prefix) != 0 {
		t.Fatalf("learned from a later session: %+v", h)
	}
	if h := EarlierSessions(filepath.Join(dir, "none.jsonl"), time.Now()); len(h.summaries) != 0 {
		t.Fatal("a missing path taught something")
	}
}

// HasFold finds a boundary anywhere, across the reads' seams too.
func TestHasFold(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		at   int
		want bool
	}{{0, true}, {256<<10 - 5, true}, {600 << 10, true}, {-1, false}} {
		text := []byte(strings.Repeat("x", 700<<10))
		if c.at >= 0 {
			copy(text[c.at:], `"compact_boundary"`)
		}
		p := filepath.Join(dir, "t.jsonl")
		if err := os.WriteFile(p, text, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := HasFold(p); got != c.want {
			t.Errorf("boundary at %d: %v", c.at, got)
		}
	}
	if HasFold(filepath.Join(dir, "none")) {
		t.Error("a missing file has a fold")
	}
}

// A FIFO where a restored file or CLAUDE.md is expected is refused at once:
// opening it for reading would block until a writer came.
func TestOSFilesRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "CLAUDE.md")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan bool, 1)
	go func() {
		_, ok := OSFiles{}.Read(path, 1<<20)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a FIFO was read as a file")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}

// FuzzContainsFoldKey holds the tail-first search to bytes.Contains.
func FuzzContainsFoldKey(f *testing.F) {
	for _, s := range []string{`{"subtype":"compact_boundary"}`, `_boundary"`, `"compact_boundary`, `x"compact"compact_boundary"`,
		`"compac_boundary" "compact_boundary"`, `"compact_boundary""compact_boundary"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := containsFoldKey(b), bytes.Contains(b, foldKey); got != want {
			t.Fatalf("%q: %v, bytes.Contains %v", b, got, want)
		}
	})
}

// askedTranscripts records which transcripts EarlierSessionsFrom looks at.
type askedTranscripts struct{ asked map[string]bool }

func (a *askedTranscripts) HasFold(path string) bool {
	a.asked[path] = true
	return false
}

func (a *askedTranscripts) Trace(path string) (*cclog.Trace, error) {
	a.asked[path] = true
	return &cclog.Trace{}, nil
}

// listed is askedTranscripts that lists folders too (an import's cache).
type listed struct{ *askedTranscripts }

func (listed) Candidates(dir string) []Candidate { return Candidates(dir) }

// What an import keeps (MayLearnFrom) covers every transcript
// EarlierSessions reads for any session of the folder, whether or not the
// reader lists the folder itself.
func TestMayLearnFromCoversEarlierSessions(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 14 {
		p := filepath.Join(dir, fmt.Sprintf("s%02d.jsonl", i))
		// sizes vary so that the byte bound, not only the count, decides
		size := 1 << (10 + i%4)
		if i == 3 {
			size = historyFileBytes + 1 // too large to learn from
		}
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		mod := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration((i*5)%14) * time.Hour)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	cands := Candidates(dir)
	kept := 0
	for _, p := range paths {
		if MayLearnFrom(cands, p) {
			kept++
		}
	}
	if kept != historySessions+1 {
		t.Fatalf("%d transcripts kept, want %d", kept, historySessions+1)
	}
	for _, self := range paths {
		plain := &askedTranscripts{asked: map[string]bool{}}
		EarlierSessionsFrom(self, time.Now(), plain)
		viaList := &askedTranscripts{asked: map[string]bool{}}
		EarlierSessionsFrom(self, time.Now(), listed{viaList})
		if !reflect.DeepEqual(plain.asked, viaList.asked) {
			t.Fatalf("%s: read %v, with a listing %v", self, plain.asked, viaList.asked)
		}
		if len(plain.asked) == 0 {
			t.Fatalf("%s: nothing read", self)
		}
		for p := range plain.asked {
			if !MayLearnFrom(cands, p) {
				t.Errorf("%s learns from %s, which an import would not keep", self, p)
			}
		}
	}
}
