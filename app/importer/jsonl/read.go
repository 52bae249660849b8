package jsonl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Limits bound one pass over a log, checked as the bytes arrive, so a
// hostile upload (a zstd bomb, a file with no newline) ends with an error
// naming the file and the limit instead of growing without end.
type Limits struct {
	// Input is the most bytes read from the reader (the file as stored,
	// compressed or not).
	Input int64
	// Line is the longest line; for a zstd log also the most decoded bytes
	// held between frame boundaries that end a line.
	Line int64
	// Decoded is the most bytes a zstd log may decode to in one pass.
	Decoded int64
}

// The default limits. A Claude Code line carrying a pasted image is a few
// MiB, the largest real transcripts a few hundred MiB; dsh flushes a frame
// every few lines. The zstd input is read into memory, so it is held lower.
const (
	DefaultInputLimit     = 2 << 30
	DefaultZstdInputLimit = 256 << 20
	DefaultLineLimit      = 64 << 20
	DefaultDecodedLimit   = 4 << 30
)

func (l Limits) withDefaults(zstd bool) Limits {
	if l.Input <= 0 {
		l.Input = DefaultInputLimit
		if zstd {
			l.Input = DefaultZstdInputLimit
		}
	}
	if l.Line <= 0 {
		l.Line = DefaultLineLimit
	}
	if l.Decoded <= 0 {
		l.Decoded = DefaultDecodedLimit
	}
	return l
}

// LimitError is a limit a pass ran into.
type LimitError struct {
	File  string
	What  string // "input", "line", "decoded"
	Limit int64
}

func (e *LimitError) Error() string {
	switch e.What {
	case "line":
		return fmt.Sprintf("%s: a line is longer than the limit of %s", e.File, sizeString(e.Limit))
	case "decoded":
		return fmt.Sprintf("%s: decompresses to more than the limit of %s", e.File, sizeString(e.Limit))
	}
	return fmt.Sprintf("%s: larger than the limit of %s", e.File, sizeString(e.Limit))
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitedReader fails with a LimitError once more than n bytes arrive.
type limitedReader struct {
	r    io.Reader
	n    int64 // bytes left
	path string
	max  int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, &LimitError{File: l.path, What: "input", Limit: l.max}
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, &LimitError{File: l.path, What: "input", Limit: l.max}
	}
	return n, err
}

// IsZstd reports whether a path names a zstd-framed log.
func IsZstd(path string) bool {
	return strings.HasSuffix(path, ".zstd") || strings.HasSuffix(path, ".zst")
}

// Options say how to read a log.
type Options struct {
	// Path names the log in errors; a name ending .zst or .zstd is read as
	// zstd frames.
	Path string
	// Line is the number of lines before r starts (a pass resumes after the
	// lines the previous one read).
	Line int
	// AtEOF: the input ends for good, so a last line without a newline is
	// read too when it is a whole JSON object (else it is left for the next
	// pass, as a writer may still be writing it).
	AtEOF bool
	// Live: a line that cannot be read is skipped and counted, not fatal.
	Live   bool
	Limits Limits
	// Head, when set, sees the bytes of the first read before any line is
	// handed over: the whole input when whole is true (it ended within
	// that read). A zstd log's is nil and not whole.
	Head func(b []byte, whole bool)
}

// Stats say what a read consumed.
type Stats struct {
	Lines    int   // the line count after the read (Options.Line plus what was read)
	Consumed int64 // bytes up to the end of the last complete line (zstd: frame)
	Skipped  int   // unreadable lines passed over (Options.Live)
}

// Read feeds every complete line of r that is a JSON object to line, with
// its 1-based number; blank lines are passed over. A line that is not an
// object, or that line refuses, ends the read with a *LineError naming the
// file and line (with Options.Live it is skipped and counted instead); a
// limit ends it with a *LimitError.
func Read(r io.Reader, o Options, line func(b []byte, n int) error) (Stats, error) {
	zstd := IsZstd(o.Path)
	lim := o.Limits.withDefaults(zstd)
	d := driver{line: line, path: o.Path, lines: o.Line, atEOF: o.AtEOF, live: o.Live, lim: lim, head: o.Head}
	r = &limitedReader{r: r, n: lim.Input, path: o.Path, max: lim.Input}
	var err error
	if zstd {
		err = d.zstd(r)
	} else {
		err = d.plain(r)
	}
	return Stats{Lines: d.lines, Consumed: d.consumed, Skipped: d.skipped}, err
}

// LineError is a line that could not be read.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

type driver struct {
	line     func(b []byte, n int) error
	path     string
	lines    int
	consumed int64
	atEOF    bool
	live     bool
	skipped  int
	lim      Limits
	head     func(b []byte, whole bool) // Options.Head, until called
}

// ChunkSize is how much is read at a time (the first read is what
// Options.Head sees); a longer line grows the buffer.
// At 1 MB the reads of a 295 MB import are ~300 system calls, nothing
// beside its parsing; 4 MB per worker (and in the pool) would be a tenth
// of its peak memory.
const ChunkSize = 1 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

func (d *driver) plain(r io.Reader) error {
	var buf []byte
	if l, ok := r.(*limitedReader).r.(interface{ Len() int }); ok && l.Len() < ChunkSize {
		buf = make([]byte, l.Len()+1) // a small upload or test input
	} else {
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		buf = *bp
	}
	n := 0 // bytes in buf
	for {
		if n == len(buf) {
			if int64(n) > d.lim.Line {
				return &LimitError{File: d.path, What: "line", Limit: d.lim.Line}
			}
			grown := make([]byte, min(2*int64(len(buf)), d.lim.Line+1))
			copy(grown, buf[:n])
			buf = grown
		}
		m, err := io.ReadFull(r, buf[n:])
		n += m
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		var le *LimitError
		if errors.As(err, &le) {
			return le
		}
		if err != nil && !eof {
			return fmt.Errorf("reading %s: %w", d.path, err)
		}
		if d.head != nil {
			d.head(buf[:n], eof)
			d.head = nil
		}
		last := bytes.LastIndexByte(buf[:n], '\n')
		if last >= 0 {
			if err := d.lines_(buf[:last+1]); err != nil {
				return err
			}
			n = copy(buf, buf[last+1:n])
		}
		if int64(n) > d.lim.Line {
			return &LimitError{File: d.path, What: "line", Limit: d.lim.Line}
		}
		if eof {
			return d.tail(buf[:n])
		}
	}
}

// tail handles bytes after the last newline at the end of the input.
func (d *driver) tail(rest []byte) error {
	// Only JSON's own whitespace is blank: bytes.TrimSpace would also eat a
	// form feed, which a later pass then reads as part of a line, so a log
	// read in two passes would not read as it does in one.
	if len(bytes.TrimLeft(rest, " \t\r\n")) == 0 {
		d.consumed += int64(len(rest))
		return nil
	}
	if !d.atEOF || !json.Valid(rest) {
		return nil // still being written: the next pass reads it
	}
	return d.lines_(rest)
}

// lines_ feeds every line of chunk (which ends with a newline, or is the
// final unterminated line) to the parser.
func (d *driver) lines_(chunk []byte) error {
	for len(chunk) > 0 {
		end := bytes.IndexByte(chunk, '\n')
		var line []byte
		if end < 0 {
			line, chunk = chunk, nil
		} else {
			line, chunk = chunk[:end], chunk[end+1:]
		}
		if int64(len(line)) > d.lim.Line {
			return &LimitError{File: d.path, What: "line", Limit: d.lim.Line}
		}
		d.consumed += int64(len(line))
		if end >= 0 {
			d.consumed++
		}
		d.lines++
		if err := d.one(line); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) one(line []byte) error {
	err := d.frame(line)
	if err != nil && d.live {
		d.skipped++ // a line being written, or corrupt: the hook answers without it
		return nil
	}
	return err
}

func (d *driver) frame(line []byte) error {
	// Every line of these logs is one JSON object: check the frame cheaply
	// here, and let the parser decode the lines that matter to it.
	lo, hi := 0, len(line)
	for lo < hi && isSpace(line[lo]) {
		lo++
	}
	for hi > lo && isSpace(line[hi-1]) {
		hi--
	}
	if lo == hi {
		return nil
	}
	if line[lo] != '{' || line[hi-1] != '}' {
		return &LineError{File: d.path, Line: d.lines, Err: errors.New("not a JSON object (truncated or corrupt line)")}
	}
	if err := d.line(line[lo:hi], d.lines); err != nil {
		return &LineError{File: d.path, Line: d.lines, Err: err}
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

var zstdDecoders = sync.Pool{New: func() any {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return err
	}
	return dec
}}

// zstd reads a sequence of zstd frames. Frames are found by walking their
// headers and block headers, so a frame still being written (incomplete) is
// left for the next pass, and the offset stays at a frame boundary. Lines
// may span frames: the offset only advances past a frame whose decoded
// content, together with the frames before it, ends with a newline.
func (d *driver) zstd(r io.Reader) error {
	if d.head != nil {
		d.head(nil, false)
		d.head = nil
	}
	data, err := io.ReadAll(r)
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", d.path, err)
	}
	got := zstdDecoders.Get()
	dec, ok := got.(*zstd.Decoder)
	if !ok {
		return fmt.Errorf("zstd: %v", got)
	}
	defer func() {
		_ = dec.Reset(nil)
		zstdDecoders.Put(dec)
	}()

	var pending []byte // decoded bytes since the last committed frame
	var decoded int64
	pos := 0
	committed := 0
	for pos < len(data) {
		size, skippable, err := FrameSize(data[pos:])
		if errors.Is(err, ErrShortFrame) {
			break // being written
		}
		if err != nil {
			return &LineError{File: d.path, Line: d.lines + 1, Err: fmt.Errorf("zstd frame at byte %d: %w", d.consumed+int64(pos), err)}
		}
		frame := data[pos : pos+size]
		pos += size
		if skippable {
			if len(pending) == 0 {
				committed = pos
			}
			continue
		}
		pending, err = d.decodeFrame(dec, frame, pending, &decoded)
		if err != nil {
			var le *LimitError
			if errors.As(err, &le) {
				return le
			}
			return &LineError{File: d.path, Line: d.lines + 1, Err: fmt.Errorf("zstd frame at byte %d: %w", d.consumed+int64(pos-size), err)}
		}
		if len(pending) > 0 && pending[len(pending)-1] == '\n' {
			if err := d.linesZ(pending); err != nil {
				return err
			}
			pending = pending[:0]
			committed = pos
		}
	}
	if len(pending) > 0 && d.atEOF && pos == len(data) && json.Valid(bytes.TrimSpace(pending)) {
		if err := d.linesZ(pending); err != nil {
			return err
		}
		committed = pos
	}
	d.consumed = int64(committed)
	return nil
}

// decodeFrame appends one frame's content to pending, a chunk at a time,
// failing as soon as pending would pass the line limit or the pass's
// decoded total the decoded limit.
func (d *driver) decodeFrame(dec *zstd.Decoder, frame, pending []byte, decoded *int64) ([]byte, error) {
	if err := dec.Reset(bytes.NewReader(frame)); err != nil {
		return pending, err
	}
	const step = 256 << 10
	for {
		if int64(len(pending)) > d.lim.Line {
			return pending, &LimitError{File: d.path, What: "line", Limit: d.lim.Line}
		}
		if *decoded > d.lim.Decoded {
			return pending, &LimitError{File: d.path, What: "decoded", Limit: d.lim.Decoded}
		}
		if cap(pending)-len(pending) < step {
			grown := make([]byte, len(pending), 2*cap(pending)+step)
			copy(grown, pending)
			pending = grown
		}
		n, err := dec.Read(pending[len(pending):min(cap(pending), len(pending)+step)])
		pending = pending[:len(pending)+n]
		*decoded += int64(n)
		if errors.Is(err, io.EOF) {
			return pending, nil
		}
		if err != nil {
			return pending, err
		}
	}
}

// linesZ feeds decoded lines; consumption is counted in compressed bytes
// by the caller.
func (d *driver) linesZ(chunk []byte) error {
	saved := d.consumed
	err := d.lines_(chunk)
	d.consumed = saved
	return err
}

// ErrShortFrame: the input ends inside a frame (still being written).
var ErrShortFrame = errors.New("incomplete frame")

// FrameSize returns the size of the zstd frame at the start of b (RFC 8878
// §3.1), without decoding it.
func FrameSize(b []byte) (size int, skippable bool, err error) {
	if len(b) < 4 {
		return 0, false, ErrShortFrame
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&0xFFFFFFF0 == 0x184D2A50 {
		if len(b) < 8 {
			return 0, true, ErrShortFrame
		}
		n := int64(binary.LittleEndian.Uint32(b[4:]))
		if int64(len(b)) < 8+n {
			return 0, true, ErrShortFrame
		}
		return int(8 + n), true, nil
	}
	if magic != 0xFD2FB528 {
		return 0, false, errors.New("not a zstd frame (bad magic number)")
	}
	i := 4
	if len(b) < i+1 {
		return 0, false, ErrShortFrame
	}
	fhd := b[i]
	i++
	if fhd&0x08 != 0 {
		return 0, false, errors.New("reserved bit set in frame header")
	}
	single := fhd&0x20 != 0
	if !single {
		i++ // window descriptor
	}
	i += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
	switch fhd >> 6 {
	case 0:
		if single {
			i++
		}
	case 1:
		i += 2
	case 2:
		i += 4
	case 3:
		i += 8
	}
	for {
		if len(b) < i+3 {
			return 0, false, ErrShortFrame
		}
		h := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
		i += 3
		last := h&1 != 0
		size := int(h >> 3)
		switch (h >> 1) & 3 {
		case 0, 2: // raw, compressed
			i += size
		case 1: // RLE
			i++
		case 3:
			return 0, false, errors.New("reserved block type")
		}
		if len(b) < i {
			return 0, false, ErrShortFrame
		}
		if last {
			break
		}
	}
	if fhd&0x04 != 0 {
		i += 4 // content checksum
	}
	if len(b) < i {
		return 0, false, ErrShortFrame
	}
	return i, false, nil
}
