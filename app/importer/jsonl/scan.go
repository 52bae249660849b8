// Package jsonl reads JSON Lines logs for the importer: a bounded reader of
// lines (plain or zstd-framed, limits checked as the bytes arrive) and a
// scanner that decodes the fields of one line's object in place, without
// allocating for what it skips.
package jsonl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Scanner walks one JSON value in place, decoding only what a parser asks
// for and skipping the rest without allocating. It is deliberately small:
// strings are skipped with IndexByte, numbers are read as integers, and
// every structural error stops the walk with a message that says where.
//
// It never panics on any input (FuzzScanner checks it).
type Scanner struct {
	B   []byte // the line
	I   int    // the offset of the next byte
	Err error  // the first syntax error; every method is a no-op after it
}

var errSyntax = errors.New("malformed JSON")

func (s *Scanner) Fail(format string, args ...any) {
	if s.Err == nil {
		s.Err = fmt.Errorf("%w at byte %d: %s", errSyntax, s.I+1, fmt.Sprintf(format, args...))
	}
	s.I = len(s.B)
}

func (s *Scanner) Ws() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\r', '\n':
			s.I++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.Ws()
	if s.I < len(s.B) {
		return s.B[s.I]
	}
	return 0
}

// expect consumes byte c (after spaces). The byte is nearly always next
// (logs are compact JSON): that case is small enough to inline, so the
// scanner's most frequent call (7 % of an import's instructions, callgrind)
// costs a compare.
func (s *Scanner) Expect(c byte) bool {
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return s.expectAfterSpaces(c)
}

func (s *Scanner) expectAfterSpaces(c byte) bool {
	if s.Peek() != c {
		if s.I < len(s.B) {
			s.Fail("want %q, found %q", c, s.B[s.I])
		} else {
			s.Fail("want %q, found the end of the line", c)
		}
		return false
	}
	s.I++
	return true
}

// stringRaw reads a string and returns its bytes between the quotes, still
// escaped, and whether it holds a backslash.
func (s *Scanner) StringRaw() (raw []byte, escaped bool) {
	raw, escaped = s.StringBytes()
	return raw, escaped || bytes.IndexByte(raw, '\\') >= 0
}

// StringBytes reads a string and returns its bytes between the quotes,
// still escaped; escapedQuote says it holds an escaped quote, and false
// says nothing about other escapes. It is StringRaw without the second
// search for a backslash, for a caller that skips the string or compares
// it with a plain key.
func (s *Scanner) StringBytes() (raw []byte, escapedQuote bool) {
	if !s.Expect('"') {
		return nil, false
	}
	start := s.I
	for {
		j := bytes.IndexByte(s.B[s.I:], '"')
		if j < 0 {
			s.Fail("unterminated string")
			return nil, false
		}
		end := s.I + j
		// An odd run of backslashes before the quote escapes it.
		k := end - 1
		for k >= start && s.B[k] == '\\' {
			k--
		}
		s.I = end + 1
		if (end-1-k)%2 == 0 {
			return s.B[start:end], escapedQuote
		}
		escapedQuote = true
	}
}

// str reads a string value; an escaped one is unescaped (allocating).
func (s *Scanner) Str() string {
	raw, esc := s.StringRaw()
	if s.Err != nil {
		return ""
	}
	if !esc {
		return string(raw)
	}
	out, ok := Unescape(raw)
	if !ok {
		s.Fail("bad string escape")
		return ""
	}
	return out
}

// StrBytes is Str without its allocation for a string with no escape: the
// string's bytes in the line, valid while the line is.
func (s *Scanner) StrBytes() []byte {
	raw, esc := s.StringRaw()
	if s.Err != nil || !esc {
		return raw
	}
	out, ok := Unescape(raw)
	if !ok {
		s.Fail("bad string escape")
		return nil
	}
	return unsafe.Slice(unsafe.StringData(out), len(out))
}

// Unescape decodes a JSON string's text between its quotes as
// encoding/json does (a surrogate without its pair and a byte that is not
// UTF-8 become U+FFFD; a control character or an unknown escape is an
// error), in one pass, where encoding/json.Unmarshal validates, scans and
// unescapes a file's text three times over (the importer's largest cost
// when it traces). FuzzUnescape holds the two to the same results.
func Unescape(raw []byte) (string, bool) {
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		// Copy the run of plain ASCII up to the next escape at once.
		j := i + plainRun(raw[i:])
		b = append(b, raw[i:j]...)
		if i = j; i == len(raw) {
			break
		}
		c := raw[i]
		switch {
		case c == '\\':
			if i+1 >= len(raw) {
				return "", false
			}
			switch e := raw[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(raw[i+2:])
				if r < 0 {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if r2 := hex4(raw[i+2:]); r2 >= 0 {
							if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
								b = utf8.AppendRune(b, d)
								i += 6
								continue
							}
						} else {
							return "", false
						}
					}
					r = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, raw[i:i+size]...)
			}
			i += size
		}
	}
	if len(b) == 0 {
		return "", true
	}
	// b is never written again: the string takes its bytes instead of a
	// copy (a traced file's text was allocated twice, half an import's
	// garbage).
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// plainRun is the length of b's leading run of bytes Unescape copies as
// they are: printable ASCII other than a backslash or a quote. It tests
// eight bytes a step (a file's text is long runs between escapes; a
// byte-at-a-time loop makes Unescape the import's costliest function, 13 %
// of its instructions under callgrind on real transcripts), then takes the
// run's end from the lowest marked byte of the word that has it.
// FuzzUnescape holds Unescape to encoding/json.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
		bs    = ones * '\\'
		quote = ones * '"'
		space = ones * ' '
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// A high bit marks a byte ≥ 0x80; (v - ones) &^ v & highs marks
		// the bytes of v that are 0, and (x - space) &^ x & highs those
		// of x below ' ' — exactly up to the first one: a borrow carries
		// only from a marked byte into the bytes above it, so the lowest
		// mark (little-endian: the earliest byte) is always true.
		y, z := x^bs, x^quote
		if m := x&highs | (x-space)&^x&highs | (y-ones)&^y&highs | (z-ones)&^z&highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '\\' || c == '"' || c < ' ' || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// hex4 reads the four hex digits of a \u escape; -1 when they are not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// strLen reads a string and returns the length of its decoded text in
// bytes (escapes counted as what they stand for, approximately: \uXXXX as
// one to three bytes). It never allocates.
func (s *Scanner) StrLen() int {
	if n, ok := s.strLenOnePass(); ok {
		return n
	}
	raw, esc := s.StringRaw()
	if !esc {
		return len(raw)
	}
	return escapedLen(raw)
}

// strLenOnePass is StrLen in one walk from quote or backslash to the next
// (eight bytes a step), where finding the end, then a backslash, then
// measuring walked a message's text three times. Escapes taken pairwise
// from the left end the string where StringBytes's count of backslashes
// does; a \u whose four bytes hold a quote or a backslash (or the end) is
// where escapedLen's count and the string's end could part: it reads
// nothing and says false, and StrLen reads the string as before.
func (s *Scanner) strLenOnePass() (int, bool) {
	b := s.B
	if s.I >= len(b) || b[s.I] != '"' {
		return 0, false
	}
	n := 0
	for i := s.I + 1; ; {
		j := quoteOrBackslash(b[i:])
		n += j
		if i += j; i >= len(b) {
			return 0, false
		}
		if b[i] == '"' {
			s.I = i + 1
			return n, true
		}
		if i+1 >= len(b) {
			return 0, false
		}
		if b[i+1] != 'u' {
			n++
			i += 2
			continue
		}
		if i+6 > len(b) || quoteOrBackslash(b[i+2:i+6]) < 4 {
			return 0, false
		}
		n += 2
		i += 6
	}
}

// quoteOrBackslash is the length of b's leading run of bytes other than a
// quote or a backslash, eight bytes a step (as plainRun).
func quoteOrBackslash(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
		bs    = ones * '\\'
		quote = ones * '"'
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		y, z := x^bs, x^quote
		if m := (y-ones)&^y&highs | (z-ones)&^z&highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '\\' || c == '"' {
			break
		}
	}
	return i
}

// escapedLen is the length StrLen gives an escaped string's text: \uXXXX
// counts 2, any other escape 1, every other byte 1. It jumps from
// backslash to backslash with IndexByte (a byte-at-a-time loop is 5 % of
// an import's instructions under callgrind on real transcripts);
// FuzzEscapedLen holds it to that loop.
func escapedLen(raw []byte) int {
	n := 0
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 || k+1 >= len(raw) {
			return n + len(raw)
		}
		n += k
		if raw[k+1] == 'u' {
			n += 2
			raw = raw[min(k+6, len(raw)):]
		} else {
			n++
			raw = raw[k+2:]
		}
	}
	return n
}

// value skips any value.
func (s *Scanner) Skip() {
	switch s.Peek() {
	case '"':
		s.StringBytes()
	case '{', '[':
		s.SkipNested()
	case 't':
		s.Literal("true")
	case 'f':
		s.Literal("false")
	case 'n':
		s.Literal("null")
	case 0:
		s.Fail("value missing")
	default:
		s.Number()
	}
}

func (s *Scanner) Literal(word string) {
	if !bytes.HasPrefix(s.B[s.I:], []byte(word)) {
		s.Fail("bad literal")
		return
	}
	s.I += len(word)
}

// structural marks the bytes that matter while skipping a nested value.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipNested skips an object or array, matching brackets and skipping
// strings whole. It checks nesting, not the grammar inside.
func (s *Scanner) SkipNested() {
	var stack [64]byte
	depth := 0
	b := s.B
	i := s.I
	for i < len(b) {
		c := b[i]
		if !structural[c] {
			i++
			continue
		}
		switch c {
		case '"':
			s.I = i
			s.StringBytes()
			if s.Err != nil {
				return
			}
			i = s.I
			continue
		case '{', '[':
			if depth == len(stack) {
				s.I = i
				s.Fail("nested deeper than %d", len(stack))
				return
			}
			stack[depth] = c
			depth++
		case '}', ']':
			want := byte('{')
			if c == ']' {
				want = '['
			}
			if depth == 0 || stack[depth-1] != want {
				s.I = i
				s.Fail("unbalanced %q", c)
				return
			}
			depth--
			if depth == 0 {
				s.I = i + 1
				return
			}
		}
		i++
	}
	s.I = i
	s.Fail("unterminated object or array")
}

// number reads a JSON number's text.
func (s *Scanner) Number() []byte {
	s.Ws()
	start := s.I
	for s.I < len(s.B) {
		c := s.B[s.I]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.I++
			continue
		}
		break
	}
	if s.I == start {
		if s.I < len(s.B) {
			s.Fail("unexpected %q", s.B[s.I])
		} else {
			s.Fail("value missing")
		}
		return nil
	}
	return s.B[start:s.I]
}

// MaxCount bounds a token count: far above any real figure, far below
// anything that could overflow a sum.
const MaxCount = int64(1) << 50

// count reads a non-negative token count. null counts as 0; a fraction is
// truncated.
func (s *Scanner) Count() int64 {
	switch s.Peek() {
	case 'n':
		s.Literal("null")
		return 0
	case '"', '{', '[', 't', 'f':
		s.Fail("want a token count")
		return 0
	}
	text := s.Number()
	if s.Err != nil {
		return 0
	}
	var n int64
	simple := len(text) <= 16
	for _, c := range text {
		if c < '0' || c > '9' {
			simple = false
			break
		}
		n = n*10 + int64(c-'0')
	}
	if !simple {
		f, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			s.Fail("bad number %q", text)
			return 0
		}
		if f < 0 || f >= float64(MaxCount) || f != f {
			s.Fail("token count %s out of range", text)
			return 0
		}
		n = int64(f)
	}
	if n >= MaxCount {
		s.Fail("token count %s out of range", text)
		return 0
	}
	return n
}

// boolean reads true or false (null is false).
func (s *Scanner) Boolean() bool {
	switch s.Peek() {
	case 't':
		s.Literal("true")
		return true
	case 'f':
		s.Literal("false")
	case 'n':
		s.Literal("null")
	default:
		s.Fail("want true or false")
	}
	return false
}

// object walks an object, calling field for every key. field must consume
// the value (or call s.skip).
func (s *Scanner) Object(field func(key []byte)) {
	if !s.Expect('{') {
		return
	}
	if s.Peek() == '}' {
		s.I++
		return
	}
	for s.Err == nil {
		key, _ := s.StringBytes()
		if !s.Expect(':') {
			return
		}
		start := s.I
		field(key)
		if s.Err == nil && s.I == start {
			s.Fail("value of %q not read", key)
		}
		switch s.Peek() {
		case ',':
			s.I++
		case '}':
			s.I++
			return
		default:
			s.Fail("want ',' or '}' after the value of %q", key)
		}
	}
}

// Elems walks an array, calling elem for every element; elem must consume
// it (or call s.Skip). what names the array in an error.
func (s *Scanner) Elems(what string, elem func()) {
	if !s.Expect('[') {
		return
	}
	if s.Peek() == ']' {
		s.I++
		return
	}
	for s.Err == nil {
		elem()
		switch s.Peek() {
		case ',':
			s.I++
		case ']':
			s.I++
			return
		default:
			s.Fail("want ',' or ']' in %s", what)
		}
	}
}

// isNull consumes a null if one comes next.
func (s *Scanner) IsNull() bool {
	if s.Peek() == 'n' {
		s.Literal("null")
		return true
	}
	return false
}

// end checks nothing but spaces follow the value.
func (s *Scanner) End() {
	s.Ws()
	if s.I < len(s.B) && s.Err == nil {
		s.Fail("text after the JSON value")
	}
}
