package importer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Options say what to parse and where the previous pass stopped.
type Options struct {
	// Harness is ClaudeCode, Codex or DSH.
	Harness string
	// Path is the file's path, or an upload's name: it names the file in
	// errors and, for Claude Code, tells a main transcript from a subagent's
	// (…/<session>/subagents/agent-*.jsonl) and gives the session id.
	Path string
	// State is what the previous pass over this file returned (nil: the
	// input starts at the beginning of the file).
	State json.RawMessage
	// AtEOF says the input ends for good (an upload, or a file that is no
	// longer written): a last line without a newline is then read too, if
	// it is a whole JSON object. Otherwise it is left for the next pass, as
	// a writer may still be writing it.
	AtEOF bool
	// Live reads a transcript its harness is writing, for a hook that must
	// answer now: a line that cannot be read is skipped and counted in
	// Result.Skipped instead of failing the pass, and (Claude Code) the
	// content written after the main thread's last request is measured in
	// Result.PendingBytes.
	Live bool
	// Limits bound what one pass reads (zero fields: the defaults).
	Limits Limits
	// Trace (Claude Code main transcripts) also builds Result.Trace, the
	// structure a fold predictor replays. Every line is then decoded: ask
	// for it only when predicting.
	Trace bool
}

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

// Result is one pass over a file.
type Result struct {
	Batch
	// State is to be handed back in Options.State with the next pass.
	State json.RawMessage
	// Skipped counts unreadable lines passed over (Options.Live only).
	Skipped int
	// PendingBytes is, with Options.Live, the size of the message content
	// (raw JSON bytes) on the main thread after its last request: what the
	// next request will add to the prompt.
	PendingBytes int64
	// Trace is the main thread's structure (Options.Trace, Claude Code).
	Trace *ClaudeTrace
}

// pendingMeter is a parser that measures pending content (Options.Live).
type pendingMeter interface{ pendingBytes() int64 }

// parser turns lines into records. Implementations keep everything they
// need across passes in their state.
type parser interface {
	// line handles one complete line (no newline); n is its 1-based number
	// in the file.
	line(b []byte, n int) error
	// finish returns the pass's session and records.
	finish() (Session, []Record)
	// state is carried to the next pass; lines is the count so far.
	state(lines int) (json.RawMessage, error)
}

// baseState is the part of every parser's state the driver reads.
type baseState struct {
	Lines int `json:"lines"`
}

func newParser(opts Options) (parser, int, error) {
	var base baseState
	if len(opts.State) > 0 {
		if err := json.Unmarshal(opts.State, &base); err != nil {
			return nil, 0, fmt.Errorf("%s: import state: %w", opts.Path, err)
		}
	}
	var p parser
	var err error
	switch opts.Harness {
	case ClaudeCode:
		p, err = newClaudeParser(opts)
	case Codex:
		p, err = newCodexParser(opts)
	case DSH:
		p, err = newDSHParser(opts)
	default:
		return nil, 0, fmt.Errorf("%s: unknown harness %q (want %s, %s or %s)", opts.Path, opts.Harness, ClaudeCode, Codex, DSH)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: import state: %w", opts.Path, err)
	}
	return p, base.Lines, nil
}

// IsZstd reports whether a path names a zstd-framed log.
func IsZstd(path string) bool {
	return strings.HasSuffix(path, ".zstd") || strings.HasSuffix(path, ".zst")
}

// Parse reads a log from r, which starts where the previous pass stopped
// (or at the file's start), and returns its records. A zstd-framed log
// (IsZstd(opts.Path)) is read frame by frame and Consumed counts
// compressed bytes up to the end of the last frame whose lines were read.
//
// A line that cannot be read is a *LineError naming the file and the line;
// the pass is then worthless as a whole (the caller stores nothing of it).
func Parse(r io.Reader, opts Options) (*Result, error) {
	p, lines, err := newParser(opts)
	if err != nil {
		return nil, err
	}
	lim := opts.Limits.withDefaults(IsZstd(opts.Path))
	d := driver{p: p, path: opts.Path, lines: lines, atEOF: opts.AtEOF, live: opts.Live, lim: lim}
	r = &limitedReader{r: r, n: lim.Input, path: opts.Path, max: lim.Input}
	if IsZstd(opts.Path) {
		err = d.zstd(r)
	} else {
		err = d.plain(r)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{}
	res.Harness = opts.Harness
	res.Session, res.Records = p.finish()
	res.Lines = d.lines - lines
	res.Consumed = d.consumed
	res.Skipped = d.skipped
	if m, ok := p.(pendingMeter); ok && opts.Live {
		res.PendingBytes = m.pendingBytes()
	}
	if cp, ok := p.(*claudeParser); ok && cp.trace != nil {
		tr := cp.trace.tr
		res.Trace = &tr
	}
	res.State, err = p.state(d.lines)
	if err != nil {
		return nil, err
	}
	return res, nil
}

type driver struct {
	p        parser
	path     string
	lines    int
	consumed int64
	atEOF    bool
	live     bool
	skipped  int
	lim      Limits
}

// chunkSize is how much is read at a time; a longer line grows the buffer.
const chunkSize = 4 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

func (d *driver) plain(r io.Reader) error {
	var buf []byte
	if l, ok := r.(*limitedReader).r.(interface{ Len() int }); ok && l.Len() < chunkSize {
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
	if len(bytes.TrimSpace(rest)) == 0 {
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
	if err := d.p.line(line[lo:hi], d.lines); err != nil {
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
		size, skippable, err := zstdFrameSize(data[pos:])
		if errors.Is(err, errShortFrame) {
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

var errShortFrame = errors.New("incomplete frame")

// zstdFrameSize returns the size of the frame at the start of b (RFC 8878
// §3.1), without decoding it.
func zstdFrameSize(b []byte) (size int, skippable bool, err error) {
	if len(b) < 4 {
		return 0, false, errShortFrame
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic&0xFFFFFFF0 == 0x184D2A50 {
		if len(b) < 8 {
			return 0, true, errShortFrame
		}
		n := int64(binary.LittleEndian.Uint32(b[4:]))
		if int64(len(b)) < 8+n {
			return 0, true, errShortFrame
		}
		return int(8 + n), true, nil
	}
	if magic != 0xFD2FB528 {
		return 0, false, errors.New("not a zstd frame (bad magic number)")
	}
	i := 4
	if len(b) < i+1 {
		return 0, false, errShortFrame
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
			return 0, false, errShortFrame
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
			return 0, false, errShortFrame
		}
		if last {
			break
		}
	}
	if fhd&0x04 != 0 {
		i += 4 // content checksum
	}
	if len(b) < i {
		return 0, false, errShortFrame
	}
	return i, false, nil
}

// claudeRole tells a Claude Code main transcript from a subagent's.
func claudeRole(path string) string {
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "agent-acompact"):
		return PurposeCompaction
	case strings.HasPrefix(base, "agent-"):
		return PurposeSubagent
	}
	return PurposeConversation
}
