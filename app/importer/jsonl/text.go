package jsonl

import (
	"bytes"
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Text is a JSON string value kept as the line wrote it: the bytes between
// the quotes, still escaped (copied out of the line, so it never holds a
// read buffer), with the length of its decoded text. A fold predictor
// reads whole file texts from a transcript (Read, Write and Edit results)
// but looks at the text itself only for the few files it restores, and
// mostly needs their length: decoding every one of them as the line was
// read (allocating it a second time) was most of an import's tracing
// time (issue 17). String decodes; Len does not.
//
// The zero Text is the empty text.
type Text struct {
	raw     string // escaped when escaped is true, else the text itself
	n       int    // the decoded length in bytes
	escaped bool
	// checked says raw is a string's text as the line wrote it, read in
	// one walk: valid UTF-8 with well-formed escapes, which TextAfter
	// may measure a later text against.
	checked bool
}

// TextOf is a decoded text as a Text.
func TextOf(s string) Text { return Text{raw: s, n: len(s)} }

// Len is the length of the decoded text in bytes: len(t.String()).
func (t Text) Len() int { return t.n }

// String is the decoded text (allocating when it was escaped).
func (t Text) String() string {
	if !t.escaped {
		return t.raw
	}
	// Validated when it was read: Unescape cannot fail here.
	s, _ := Unescape([]byte(t.raw))
	return s
}

// Text reads a string value as a Text: validated and measured as Unescape
// would decode it (a bad escape fails the scanner as Str does), copied,
// not decoded.
func (s *Scanner) Text() Text {
	if t, ok := s.textOnePass(); ok {
		return t
	}
	raw, esc := s.StringRaw()
	if s.Err != nil {
		return Text{}
	}
	if !esc {
		return TextOf(string(raw))
	}
	n, ok := UnescapedLen(raw)
	if !ok {
		s.Fail("bad string escape")
		return Text{}
	}
	return Text{raw: string(raw), n: n, escaped: true}
}

// textOnePass is Text for a string that is well formed: one walk finds its
// end, checks and measures its escapes (where finding the end, then looking
// for a backslash, then measuring walked a file's text three times). On
// anything else (a bad escape or byte, no end) it reads nothing and says
// false: Text then reads it as before, failing where that fails. Escapes
// taken pairwise from the left end the string where StringBytes's count of
// backslashes before a quote does.
func (s *Scanner) textOnePass() (Text, bool) {
	b := s.B
	if s.I >= len(b) || b[s.I] != '"' {
		return Text{}, false
	}
	start := s.I + 1
	n, escaped := 0, false
	for i := start; ; {
		j := plainRun(b[i:])
		n += j
		if i += j; i >= len(b) {
			return Text{}, false
		}
		switch c := b[i]; {
		case c == '"':
			s.I = i + 1
			return Text{raw: string(b[start:i]), n: n, escaped: escaped, checked: true}, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return Text{}, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n++
				i += 2
			case 'u':
				r := hex4(b[i+2:])
				if r < 0 {
					return Text{}, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
						r2 := hex4(b[i+2:])
						if r2 < 0 {
							return Text{}, false
						}
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							n += utf8.RuneLen(d)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				n += utf8.RuneLen(r)
			default:
				return Text{}, false
			}
		case c < ' ':
			return Text{}, false
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return Text{}, false
			}
			n += size
			i += size
		}
	}
}

// TextAfter is Text for a string that is likely another version of prev
// (a file's text, read again or before its next edit): where the two are
// the same bytes, prev's checks and measure serve, and only the bytes
// between their common start and end are checked and measured. A file's
// text is checked once, not at every edit (each Edit result holds the
// whole file). The parts meet where no escape and no character is cut
// (cleanBoundary); prev must be a checked text, else (or when the new
// bytes do not check) it is Text.
func (s *Scanner) TextAfter(prev Text) Text {
	if !prev.checked {
		return s.Text()
	}
	sub := *s
	raw, _ := sub.StringBytes()
	if sub.Err != nil {
		return s.Text()
	}
	// prev's bytes, read only (a string's bytes are never written).
	old := unsafe.Slice(unsafe.StringData(prev.raw), len(prev.raw))
	if string(raw) == prev.raw {
		s.I = sub.I
		return prev
	}
	p := commonPrefix(raw, old)
	q := commonSuffix(raw[p:], old[p:])
	for p > 0 && !cleanBoundary(raw[p-1]) {
		p--
	}
	for q > 0 && (len(raw)-q > 0 && !cleanBoundary(raw[len(raw)-q-1]) || len(old)-q > 0 && !cleanBoundary(old[len(old)-q-1])) {
		q--
	}
	nMid, escMid, ok := measureChecked(raw[p : len(raw)-q])
	if !ok {
		return s.Text()
	}
	nOld, _, ok := measureChecked(old[p : len(old)-q])
	if !ok {
		return s.Text() // not reached: prev was checked
	}
	escaped := escMid || bytes.IndexByte(raw[:p], '\\') >= 0 || bytes.IndexByte(raw[len(raw)-q:], '\\') >= 0
	s.I = sub.I
	return Text{raw: string(raw), n: prev.n - nOld + nMid, escaped: escaped, checked: true}
}

// cleanBoundary says a checked text can be cut after byte c: c ends no
// escape's first part (a backslash, \u or its hex digits; a letter or
// digit that might be one is passed over too) and no character (ASCII).
// The bytes after such a cut read alike alone or after what precedes it.
func cleanBoundary(c byte) bool {
	switch {
	case c >= utf8.RuneSelf, c == '\\', c == 'u', '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		return false
	}
	return true
}

// commonPrefix is the length of the bytes a and b start with alike,
// compared eight at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if binary.LittleEndian.Uint64(a[i:]) != binary.LittleEndian.Uint64(b[i:]) {
			break
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the bytes a and b end with alike.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if binary.LittleEndian.Uint64(a[len(a)-i-8:]) != binary.LittleEndian.Uint64(b[len(b)-i-8:]) {
			break
		}
	}
	for i < n && a[len(a)-i-1] == b[len(b)-i-1] {
		i++
	}
	return i
}

// measureChecked checks and measures a piece of a string's text cut at
// clean boundaries, as textOnePass does the whole: its decoded length,
// whether it has an escape; false on anything textOnePass would not read.
func measureChecked(b []byte) (n int, escaped, ok bool) {
	for i := 0; i < len(b); {
		j := plainRun(b[i:])
		n += j
		if i += j; i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return 0, false, false
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n++
				i += 2
			case 'u':
				r := hex4(b[i+2:])
				if r < 0 {
					return 0, false, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
						r2 := hex4(b[i+2:])
						if r2 < 0 {
							return 0, false, false
						}
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							n += utf8.RuneLen(d)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				n += utf8.RuneLen(r)
			default:
				return 0, false, false
			}
		case c < ' ':
			return 0, false, false
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			n += size
			i += size
		}
	}
	return n, escaped, true
}

// UnescapedLen is len(Unescape(raw)) and Unescape's ok, without decoding.
// A file's text is escapes every few dozen bytes (each line's \n, quotes,
// tabs), so it does not walk it run by run as Unescape must: one pass
// eight bytes a step finds whether any byte is a control character (never
// valid unescaped) or outside ASCII, then the decoded length is the raw
// one less what each escape saves, jumping from backslash to backslash.
// Text that is not valid UTF-8 (Unescape replaces each bad byte) is
// measured by unescapedLenSlow, Unescape's own walk. FuzzUnescape holds
// it to Unescape.
func UnescapedLen(raw []byte) (int, bool) {
	control, high := byteClasses(raw)
	if control {
		return 0, false
	}
	if high && !utf8.Valid(raw) {
		return unescapedLenSlow(raw)
	}
	n := len(raw)
	escapedQuotes := 0
	for i := 0; ; {
		k := bytes.IndexByte(raw[i:], '\\')
		if k < 0 {
			break
		}
		i += k
		if i+1 >= len(raw) {
			return 0, false
		}
		switch raw[i+1] {
		case '"':
			escapedQuotes++
			n--
			i += 2
		case '\\', '/', 'b', 'f', 'n', 'r', 't':
			n--
			i += 2
		case 'u':
			r := hex4(raw[i+2:])
			if r < 0 {
				return 0, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := hex4(raw[i+2:]); r2 >= 0 {
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							n -= 12 - utf8.RuneLen(d)
							i += 6
							continue
						}
					} else {
						return 0, false
					}
				}
				r = unicode.ReplacementChar
			}
			n -= 6 - utf8.RuneLen(r)
		default:
			return 0, false
		}
	}
	// A quote not escaped is never valid (the scanner ends a string there).
	if bytes.Count(raw, quote) != escapedQuotes {
		return 0, false
	}
	return n, true
}

var quote = []byte{'"'}

// byteClasses says whether b holds a byte below ' ' and one at or above
// 0x80, eight bytes a step. (x - space) &^ x marks a byte below ' ' and,
// through the borrow, only bytes above a marked one: any mark is a true one.
func byteClasses(b []byte) (control, high bool) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
		space = ones * ' '
	)
	var c, h uint64
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		h |= x
		c |= (x - space) &^ x
	}
	for ; i < len(b); i++ {
		if b[i] < ' ' {
			c |= highs
		}
		h |= uint64(b[i])
	}
	return c&highs != 0, h&highs != 0
}

// unescapedLenSlow is UnescapedLen by Unescape's own walk, counting
// instead of copying.
func unescapedLenSlow(raw []byte) (int, bool) {
	n := 0
	for i := 0; i < len(raw); {
		j := i + plainRun(raw[i:])
		n += j - i
		if i = j; i == len(raw) {
			break
		}
		c := raw[i]
		switch {
		case c == '\\':
			if i+1 >= len(raw) {
				return 0, false
			}
			switch raw[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n++
			case 'u':
				r := hex4(raw[i+2:])
				if r < 0 {
					return 0, false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if r2 := hex4(raw[i+2:]); r2 >= 0 {
							if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
								n += utf8.RuneLen(d)
								i += 6
								continue
							}
						} else {
							return 0, false
						}
					}
					r = unicode.ReplacementChar
				}
				n += utf8.RuneLen(r)
				continue
			default:
				return 0, false
			}
			i += 2
		case c == '"' || c < ' ':
			return 0, false
		case c < utf8.RuneSelf:
			n++
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				n += utf8.RuneLen(utf8.RuneError)
			} else {
				n += size
			}
			i += size
		}
	}
	return n, true
}
