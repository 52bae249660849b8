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
// mostly needs their length: decoding every one of them as the line is
// read (allocating it a second time) would be most of an import's tracing
// time. String decodes; Len does not.
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
// end, checks and measures its escapes (checkedRun), where finding the
// end, then looking for a backslash, then measuring walked a file's text
// three times. On anything else (a bad escape or byte, no end) it reads
// nothing and says false: Text then reads it as before, failing where that
// fails.
func (s *Scanner) textOnePass() (Text, bool) {
	b := s.B
	if s.I >= len(b) || b[s.I] != '"' {
		return Text{}, false
	}
	start := s.I + 1
	n, end, escaped, ok := checkedRun(b[start:], true)
	if !ok {
		return Text{}, false
	}
	s.I = start + end + 1
	return Text{raw: string(b[start : start+end]), n: n, escaped: escaped, checked: true}, true
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
	nMid, _, escMid, ok := checkedRun(raw[p:len(raw)-q], false)
	if !ok {
		return s.Text()
	}
	nOld, _, _, ok := checkedRun(old[p:len(old)-q], false)
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

// checkedRun walks a string's text once, checking and measuring it as
// Unescape would decode it: its decoded length, whether it has an escape.
// With toQuote it stops at the quote that ends the string (end is where);
// else b is a piece of a string's text cut at clean boundaries, read to
// its end. ok is false on anything else: a control byte, a byte that is
// not UTF-8, a bad escape, an unescaped quote in a piece, no end. Escapes
// taken pairwise from the left end the string where StringBytes's count
// of backslashes before a quote does.
func checkedRun(b []byte, toQuote bool) (n, end int, escaped, ok bool) {
	for i := 0; ; {
		j := plainRun(b[i:])
		n += j
		if i += j; i >= len(b) {
			return n, i, escaped, !toQuote
		}
		switch c := b[i]; {
		case c == '"':
			return n, i, escaped, toQuote
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n++
				i += 2
			case 'u':
				r, next, valid := unicodeEscape(b, i)
				if !valid {
					return 0, 0, false, false
				}
				n += utf8.RuneLen(r)
				i = next
			default:
				return 0, 0, false, false
			}
		case c < ' ':
			return 0, 0, false, false
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, 0, false, false
			}
			n += size
			i += size
		}
	}
}

// unicodeEscape decodes the \u escape at b[i:] as Unescape does: a
// surrogate pair is one rune, a surrogate alone U+FFFD; next is the byte
// after it. ok is false when its hex digits (or those of a \u after a
// surrogate) are not four.
func unicodeEscape(b []byte, i int) (r rune, next int, ok bool) {
	r = hex4(b[i+2:])
	if r < 0 {
		return 0, 0, false
	}
	i += 6
	if !utf16.IsSurrogate(r) {
		return r, i, true
	}
	if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
		r2 := hex4(b[i+2:])
		if r2 < 0 {
			return 0, 0, false
		}
		if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
			return d, i + 6, true
		}
	}
	return unicode.ReplacementChar, i, true
}

// UnescapedLen is len(Unescape(raw)) and Unescape's ok, by Unescape's
// own walk, counting instead of copying (Text's reading of a string that
// checkedRun does not take: a byte that is not UTF-8 counts as U+FFFD).
// FuzzUnescape holds it to Unescape.
func UnescapedLen(raw []byte) (int, bool) {
	n := 0
	for i := 0; i < len(raw); {
		j := i + plainRun(raw[i:])
		n += j - i
		if i = j; i == len(raw) {
			break
		}
		switch c := raw[i]; {
		case c == '\\':
			if i+1 >= len(raw) {
				return 0, false
			}
			switch raw[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				n++
				i += 2
			case 'u':
				r, next, ok := unicodeEscape(raw, i)
				if !ok {
					return 0, false
				}
				n += utf8.RuneLen(r)
				i = next
			default:
				return 0, false
			}
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
