package jsonl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ReadRegular reads a regular file to its limit and refuses, naming the
// file, what would hang or grow: a FIFO, a link (with noLinks), a file
// over the limit; an absent file is fs.ErrNotExist.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(`{"a":1}`), 0o600)
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink(ok, link)
	for _, c := range []struct {
		path    string
		limit   int64
		noLinks bool
		want    error
	}{
		{ok, 64, true, nil},
		{link, 64, false, nil},
		{link, 64, true, ErrSymlink},
		{fifo, 64, false, ErrNotRegular},
		{ok, 3, false, ErrTooLarge},
		{filepath.Join(dir, "none.json"), 64, false, fs.ErrNotExist},
	} {
		b, err := ReadRegular(c.path, c.limit, c.noLinks)
		switch {
		case c.want == nil && (err != nil || string(b) != `{"a":1}`):
			t.Errorf("%s: %q, %v", c.path, b, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.path, err, c.want)
		case c.want != nil && c.want != fs.ErrNotExist && (len(err.Error()) < len(c.path) || err.Error()[:len(c.path)] != c.path):
			t.Errorf("%s: %v does not start with the file's name", c.path, err)
		}
	}
}
