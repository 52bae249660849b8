package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// scanner walks one JSON value in place, decoding only what a parser asks
// for and skipping the rest without allocating. It is deliberately small:
// strings are skipped with IndexByte, numbers are read as integers, and
// every structural error stops the walk with a message that says where.
//
// It never panics on any input (FuzzScanner checks it).
type scanner struct {
	b   []byte
	i   int
	err error
}

var errSyntax = errors.New("malformed JSON")

func (s *scanner) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%w at byte %d: %s", errSyntax, s.i+1, fmt.Sprintf(format, args...))
	}
	s.i = len(s.b)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// expect consumes byte c (after spaces).
func (s *scanner) expect(c byte) bool {
	if s.peek() != c {
		if s.i < len(s.b) {
			s.fail("want %q, found %q", c, s.b[s.i])
		} else {
			s.fail("want %q, found the end of the line", c)
		}
		return false
	}
	s.i++
	return true
}

// stringRaw reads a string and returns its bytes between the quotes, still
// escaped, and whether it holds a backslash.
func (s *scanner) stringRaw() (raw []byte, escaped bool) {
	if !s.expect('"') {
		return nil, false
	}
	start := s.i
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			s.fail("unterminated string")
			return nil, false
		}
		end := s.i + j
		// An odd run of backslashes before the quote escapes it.
		k := end - 1
		for k >= start && s.b[k] == '\\' {
			k--
		}
		s.i = end + 1
		if (end-1-k)%2 == 0 {
			raw = s.b[start:end]
			return raw, escaped || bytes.IndexByte(raw, '\\') >= 0
		}
		escaped = true
	}
}

// str reads a string value; an escaped one is unescaped (allocating).
func (s *scanner) str() string {
	raw, esc := s.stringRaw()
	if s.err != nil {
		return ""
	}
	if !esc {
		return string(raw)
	}
	var out string
	if err := json.Unmarshal(s.b[s.i-len(raw)-2:s.i], &out); err != nil {
		s.fail("bad string escape")
		return ""
	}
	return out
}

// strLen reads a string and returns the length of its decoded text in
// bytes (escapes counted as what they stand for, approximately: \uXXXX as
// one to three bytes). It never allocates.
func (s *scanner) strLen() int {
	raw, esc := s.stringRaw()
	if !esc {
		return len(raw)
	}
	n := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) {
			if raw[i+1] == 'u' {
				i += 5
				n += 2
				continue
			}
			i++
		}
		n++
	}
	return n
}

// value skips any value.
func (s *scanner) skip() {
	switch s.peek() {
	case '"':
		s.stringRaw()
	case '{', '[':
		s.skipNested()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case 0:
		s.fail("value missing")
	default:
		s.number()
	}
}

func (s *scanner) literal(word string) {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		s.fail("bad literal")
		return
	}
	s.i += len(word)
}

// structural marks the bytes that matter while skipping a nested value.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipNested skips an object or array, matching brackets and skipping
// strings whole. It checks nesting, not the grammar inside.
func (s *scanner) skipNested() {
	var stack [64]byte
	depth := 0
	b := s.b
	i := s.i
	for i < len(b) {
		c := b[i]
		if !structural[c] {
			i++
			continue
		}
		switch c {
		case '"':
			s.i = i
			s.stringRaw()
			if s.err != nil {
				return
			}
			i = s.i
			continue
		case '{', '[':
			if depth == len(stack) {
				s.i = i
				s.fail("nested deeper than %d", len(stack))
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
				s.i = i
				s.fail("unbalanced %q", c)
				return
			}
			depth--
			if depth == 0 {
				s.i = i + 1
				return
			}
		}
		i++
	}
	s.i = i
	s.fail("unterminated object or array")
}

// number reads a JSON number's text.
func (s *scanner) number() []byte {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		if s.i < len(s.b) {
			s.fail("unexpected %q", s.b[s.i])
		} else {
			s.fail("value missing")
		}
		return nil
	}
	return s.b[start:s.i]
}

// maxCount bounds a token count: far above any real figure, far below
// anything that could overflow a sum.
const maxCount = int64(1) << 50

// count reads a non-negative token count. null counts as 0; a fraction is
// truncated.
func (s *scanner) count() int64 {
	switch s.peek() {
	case 'n':
		s.literal("null")
		return 0
	case '"', '{', '[', 't', 'f':
		s.fail("want a token count")
		return 0
	}
	text := s.number()
	if s.err != nil {
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
			s.fail("bad number %q", text)
			return 0
		}
		if f < 0 || f >= float64(maxCount) || f != f {
			s.fail("token count %s out of range", text)
			return 0
		}
		n = int64(f)
	}
	if n >= maxCount {
		s.fail("token count %s out of range", text)
		return 0
	}
	return n
}

// boolean reads true or false (null is false).
func (s *scanner) boolean() bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		return true
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.fail("want true or false")
	}
	return false
}

// object walks an object, calling field for every key. field must consume
// the value (or call s.skip).
func (s *scanner) object(field func(key []byte)) {
	if !s.expect('{') {
		return
	}
	if s.peek() == '}' {
		s.i++
		return
	}
	for s.err == nil {
		key, _ := s.stringRaw()
		if !s.expect(':') {
			return
		}
		start := s.i
		field(key)
		if s.err == nil && s.i == start {
			s.fail("value of %q not read", key)
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.fail("want ',' or '}' after the value of %q", key)
		}
	}
}

// isNull consumes a null if one comes next.
func (s *scanner) isNull() bool {
	if s.peek() == 'n' {
		s.literal("null")
		return true
	}
	return false
}

// end checks nothing but spaces follow the value.
func (s *scanner) end() {
	s.ws()
	if s.i < len(s.b) && s.err == nil {
		s.fail("text after the JSON value")
	}
}

// parseTime reads an RFC 3339 time; "" is the zero time.
func parseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is not RFC 3339", v)
	}
	return t.UTC(), nil
}
