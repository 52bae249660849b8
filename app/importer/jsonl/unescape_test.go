package jsonl

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzUnescape holds Unescape to encoding/json's decoding of the same
// string: the same text, and an error exactly when it refuses it; and
// UnescapedLen to Unescape, Text (measured, decoded later) to Str.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{
		`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\u00e9\u4e2d`, `\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ud83d\u0041`,
		`\ude00\ud83d`, `\x`, `\u12`, `\u12g4`, "tab\there", "\xff\xfe", `\'`, `trailing\`,
		// UnescapedLen's paths: long runs, text outside ASCII with escapes,
		// bad bytes among escapes, stray and escaped quotes, late controls.
		`func main() {\n\tfmt.Println(\"héllo → 世界\")\n}\n`, "caf\xc3\xa9 \\n and \xe9 \\t bad", `a \\" b`, `12345678"9`,
		"0123456789abcdef\x1f", `\ud83d\ude00 and \u00e9\u0000 \ud800\ud800`, `\\\\\\\"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		quoted := append(append([]byte{'"'}, raw...), '"')
		var want string
		wantErr := json.Unmarshal(quoted, &want)
		got, ok := Unescape(raw)
		if n, nok := UnescapedLen(raw); nok != ok || (ok && n != len(got)) {
			t.Fatalf("%q: UnescapedLen %d %v, Unescape %d %v", raw, n, nok, len(got), ok)
		}
		// Text is Str, read later: the same text, the same failure.
		a, b := Scanner{B: quoted}, Scanner{B: quoted}
		txt, str := a.Text(), b.Str()
		if txt.String() != str || txt.Len() != len(str) || (a.Err == nil) != (b.Err == nil) || a.I != b.I {
			t.Fatalf("%q: Text %q (%d, %v), Str %q (%v)", raw, txt.String(), txt.Len(), a.Err, str, b.Err)
		}
		if (wantErr == nil) != ok {
			// A raw quote ends the string early for encoding/json: the
			// scanner never hands Unescape one.
			for _, c := range raw {
				if c == '"' {
					t.Skip()
				}
			}
			t.Fatalf("%q: Unescape ok=%v, encoding/json err=%v", raw, ok, wantErr)
		}
		if ok && got != want {
			t.Fatalf("%q: Unescape %q, encoding/json %q", raw, got, want)
		}
	})
}

// BenchmarkStr is the scanner reading a file's text as a Read result
// holds it: escaped newlines, quotes and tabs.
func BenchmarkStr(b *testing.B) {
	text := []byte(`"`)
	for range 2000 {
		text = append(text, `\tfunc main() {\n\t\tfmt.Println(\"hello, world\")\n\t}\n`...)
	}
	text = append(text, '"')
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s := Scanner{B: text}
		if s.Str() == "" || s.Err != nil {
			b.Fatal(s.Err)
		}
	}
}

// FuzzEscapedLen holds escapedLen to the byte-at-a-time loop StrLen ran
// before it jumped between backslashes.
func FuzzEscapedLen(f *testing.F) {
	for _, s := range []string{``, `plain`, `a\"b`, `\u00e9x`, `\u12`, `trailing\`, `\\\\`, `\n\t\u0041\u`, `x\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := 0
		for i := 0; i < len(raw); i++ {
			if raw[i] == '\\' && i+1 < len(raw) {
				if raw[i+1] == 'u' {
					i += 5
					want += 2
					continue
				}
				i++
			}
			want++
		}
		if got := escapedLen(raw); got != want {
			t.Fatalf("%q: escapedLen %d, the loop %d", raw, got, want)
		}
	})
}

// TestPlainRunStopsWhereTheByteLoopStops: every byte class at every
// position of a word, and runs longer than a word.
func TestPlainRunStopsWhereTheByteLoopStops(t *testing.T) {
	loop := func(b []byte) int {
		i := 0
		for ; i < len(b); i++ {
			if c := b[i]; c == '\\' || c == '"' || c < ' ' || c >= 0x80 {
				break
			}
		}
		return i
	}
	// Mixed bytes: several marks in one word, borrows between them.
	rng := rand.New(rand.NewPCG(17, 3))
	alphabet := []byte{'a', '~', ' ', 0x1f, 0, '\\', '"', 0x7f, 0x80, 0xff, '!', '#', '[', ']'}
	for range 200000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := plainRun(b), loop(b); got != want {
			t.Fatalf("%q: plainRun %d, the loop %d", b, got, want)
		}
	}
	for n := 0; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				if got, want := plainRun(b), loop(b); got != want {
					t.Fatalf("%q: plainRun %d, the loop %d", b, got, want)
				}
			}
		}
	}
}

// StringBytes ends a string where StringRaw does, and says only whether an
// escaped quote was passed; StringRaw adds any other backslash.
func TestStringBytesEndsWhereStringRawEnds(t *testing.T) {
	for _, c := range []struct {
		in                string
		raw               string
		quote, escapedRaw bool
	}{
		{`"plain",`, `plain`, false, false},
		{`"a\nb",`, `a\nb`, false, true},
		{`"say \"hi\"",`, `say \"hi\"`, true, true},
		{`"ends in \\",`, `ends in \\`, false, true},
		{` "spaced" ,`, `spaced`, false, false},
	} {
		a, b := Scanner{B: []byte(c.in)}, Scanner{B: []byte(c.in)}
		raw, quote := a.StringBytes()
		raw2, esc := b.StringRaw()
		if string(raw) != c.raw || string(raw2) != c.raw || quote != c.quote || esc != c.escapedRaw || a.I != b.I || a.Err != nil || b.Err != nil {
			t.Errorf("%s: StringBytes %q %v at %d, StringRaw %q %v at %d (%v %v)", c.in, raw, quote, a.I, raw2, esc, b.I, a.Err, b.Err)
		}
	}
	s := Scanner{B: []byte(`"open`)}
	if s.StringBytes(); s.Err == nil {
		t.Error("an unterminated string passed")
	}
}

// BenchmarkText reads source files as a Read or Edit result holds them
// (JSON-encoded: an escaped newline every line, quotes, tabs) as a Text:
// measured and copied, not decoded; BenchmarkTextStr is Str on the same.
func BenchmarkText(b *testing.B) {
	benchText(b, func(s *Scanner) int { return s.Text().Len() })
}

func BenchmarkTextStr(b *testing.B) {
	benchText(b, func(s *Scanner) int { return len(s.Str()) })
}

// BenchmarkStrLen measures the same texts (a message's text).
func BenchmarkStrLen(b *testing.B) {
	benchText(b, func(s *Scanner) int { return s.StrLen() })
}

func benchText(b *testing.B, read func(*Scanner) int) {
	var src []byte
	for _, name := range []string{"scan.go", "read.go", "text.go", "unescape_test.go"} {
		text, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, text...)
	}
	quoted, err := json.Marshal(string(src))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(quoted)))
	for b.Loop() {
		s := Scanner{B: quoted}
		if read(&s) == 0 || s.Err != nil {
			b.Fatal(s.Err)
		}
	}
}

// FuzzOnePass holds StrLen and Text, which read a well-formed string in
// one walk, to the walks they replace (StringRaw, then escapedLen or
// UnescapedLen): the same length and text, the same end, the same failure.
func FuzzOnePass(f *testing.F) {
	for _, s := range []string{
		`"plain",`, `"a\nb\t\"c\"\\d",`, `"\u00e9\ud83d\ude00\ud83d",`, `"\u12"`, `"\u12\"34"x"`, `"\\"`, `"\\\"",`,
		"\"caf\xc3\xa9 \\n\xe9\"", "\"tab\there\"", `"open`, `"trailing\`, ` "spaced"`, `"\x"`, `"\u0022"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, old := Scanner{B: b}, Scanner{B: b}
		n := a.StrLen()
		raw, esc := old.StringRaw()
		want := len(raw)
		if esc {
			want = escapedLen(raw)
		}
		if old.Err != nil {
			want = 0
		}
		if n != want || a.I != old.I || (a.Err == nil) != (old.Err == nil) {
			t.Fatalf("%q: StrLen %d at %d (%v), two walks %d at %d (%v)", b, n, a.I, a.Err, want, old.I, old.Err)
		}
		a, old = Scanner{B: b}, Scanner{B: b}
		txt := a.Text()
		raw, esc = old.StringRaw()
		wantText := string(raw)
		if esc && old.Err == nil {
			if _, ok := UnescapedLen(raw); !ok {
				old.Fail("bad string escape")
			}
			wantText, _ = Unescape(raw)
		}
		if old.Err != nil {
			wantText = ""
		}
		if txt.String() != wantText || txt.Len() != len(wantText) || a.I != old.I || (a.Err == nil) != (old.Err == nil) {
			t.Fatalf("%q: Text %q (%d) at %d (%v), two walks %q at %d (%v)", b, txt.String(), txt.Len(), a.I, a.Err, wantText, old.I, old.Err)
		}
	})
}

// FuzzTextAfter holds TextAfter to Text: a string read after another
// version of it (a file's text at its next edit) is the same text, of the
// same length, ending at the same byte, failing alike.
func FuzzTextAfter(f *testing.F) {
	f.Add("func main() {\n\tfmt.Println(\"héllo\")\n}\n", []byte(`"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",`))
	f.Add("a\\b \U0001F600 c", []byte(`"a\\b \ud83d\ude00 d"`))
	f.Add("x\u00e9y", []byte(`"x\u00e9z\u00e9y"`))
	f.Add("same", []byte(`"same"`))
	f.Add("abc\ndef", []byte("\"abc\\ndef\xff\""))
	f.Fuzz(func(t *testing.T, before string, b []byte) {
		quoted, err := json.Marshal(before)
		if err != nil {
			t.Skip()
		}
		p := Scanner{B: quoted}
		prev := p.Text()
		if p.Err != nil {
			t.Fatalf("%s: %v", quoted, p.Err)
		}
		a, want := Scanner{B: b}, Scanner{B: b}
		got, w := a.TextAfter(prev), want.Text()
		if got.String() != w.String() || got.Len() != w.Len() || got.Len() != len(got.String()) || a.I != want.I || (a.Err == nil) != (want.Err == nil) {
			t.Fatalf("after %s, %q: TextAfter %q (%d) at %d (%v), Text %q (%d) at %d (%v)", quoted, b, got.String(), got.Len(), a.I, a.Err, w.String(), w.Len(), want.I, want.Err)
		}
	})
}

// FuzzTextAfterEdit is FuzzTextAfter on pairs of texts as an encoder
// writes them: one an edit of the other, escapes and characters on either
// side of the edit.
func FuzzTextAfterEdit(f *testing.F) {
	f.Add("func main() {\n\tfmt.Println(\"héllo\")\n}\n", "func main() {\n\tfmt.Println(\"hello, world\")\n}\n")
	f.Add("a\\b \U0001F600 c", "a\\b \U0001F601 c")
	f.Add("x\u00e9y", "x\u00e9z\u00e9y")
	f.Add("\x01\x02\x03", "\x01\x03")
	f.Add("abcdef0123", "abcdef4123")
	f.Fuzz(func(t *testing.T, before, after string) {
		qb, err1 := json.Marshal(before)
		qa, err2 := json.Marshal(after)
		if err1 != nil || err2 != nil {
			t.Skip()
		}
		p := Scanner{B: qb}
		prev := p.Text()
		a, want := Scanner{B: qa}, Scanner{B: qa}
		got, w := a.TextAfter(prev), want.Text()
		if got.String() != w.String() || got.String() != after && utf8.ValidString(after) || got.Len() != len(got.String()) || a.I != want.I || a.Err != nil {
			t.Fatalf("%q after %q: TextAfter %q (%d) at %d (%v), Text %q (%d)", after, before, got.String(), got.Len(), a.I, a.Err, w.String(), w.Len())
		}
	})
}
