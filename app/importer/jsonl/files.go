package jsonl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens a log for reading, refusing what is not a regular file:
// a FIFO would block the open (and the import with it) until a writer came,
// and /dev/zero or a socket never ends. The open does not block (O_NONBLOCK,
// which a regular file ignores), and the check is on the opened file, so a
// path swapped after a directory walk is caught too.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file (%s), not read", path, FileKind(st.Mode()))
	}
	return f, nil
}

// FileKind names what a file that is not regular is, for errors.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return m.Type().String()
}

// ContextReader reads r until ctx ends, then fails with ctx's error: a
// reader of a large file gives up when the one who asked has gone.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// What ReadRegular refuses, wrapped in an error that names the file.
var (
	ErrSymlink    = errors.New("a symbolic link")
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("larger than the limit")
)

// ReadRegular reads a small file a person or a program may have put
// anything at (a harness's settings, a plugin's files): the regular file
// at path, at most limit bytes. It is opened without blocking (and, with
// noLinks, without following a symbolic link) and looked at once open, so
// a FIFO or a device put there, even between a look and the open, never
// hangs the caller, and a file that grows is read only to the limit. An
// absent file is fs.ErrNotExist; what it refuses wraps ErrSymlink,
// ErrNotRegular or ErrTooLarge in an error that names the file.
func ReadRegular(path string, limit int64, noLinks bool) ([]byte, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noLinks {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if noLinks && errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is %w", path, ErrSymlink)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %w (%s)", path, ErrNotRegular, FileKind(fi.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is %w of %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}
