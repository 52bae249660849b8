package jsonl

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
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
