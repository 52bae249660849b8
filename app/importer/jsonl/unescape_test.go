package jsonl

import (
	"encoding/json"
	"testing"
)

// FuzzUnescape holds Unescape to encoding/json's decoding of the same
// string: the same text, and an error exactly when it refuses it.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{
		`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\u00e9\u4e2d`, `\ud83d\ude00`, `\ud83d`, `\ud83dx`, `\ud83d\u0041`,
		`\ude00\ud83d`, `\x`, `\u12`, `\u12g4`, "tab\there", "\xff\xfe", `\'`, `trailing\`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		quoted := append(append([]byte{'"'}, raw...), '"')
		var want string
		wantErr := json.Unmarshal(quoted, &want)
		got, ok := Unescape(raw)
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
