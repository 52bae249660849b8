package cctool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"tollgate/app/harness/claudecode/cctool/cctooltest"
	"tollgate/app/importer/jsonl"
)

// referenceInput and referenceResult decode with encoding/json: the
// reference Decode is held to.
func referenceInput(b []byte) (Input, bool) {
	var in cctooltest.FileToolInput
	if json.Unmarshal(b, &in) != nil {
		return Input{}, false
	}
	out := Input{FilePath: in.FilePath, Content: jsonl.TextOf(in.Content), OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll, PlanLen: len(in.Plan)}
	for _, e := range in.Edits {
		out.Edits = append(out.Edits, Edit{e.OldString, e.NewString, e.ReplaceAll})
	}
	return out, true
}

func referenceResult(b []byte) (Result, bool) {
	var r cctooltest.FileToolResult
	if json.Unmarshal(b, &r) != nil {
		return Result{}, false
	}
	var out Result
	if r.File != nil {
		out.HasFile, out.FileContent, out.StartLine, out.NumLines, out.TotalLines = true, jsonl.TextOf(r.File.Content), r.File.StartLine, r.File.NumLines, r.File.TotalLines
	}
	if r.Content != nil {
		out.Content, out.HasContent = jsonl.TextOf(*r.Content), true
	}
	if r.OriginalFile != nil {
		out.OriginalFile, out.HasOriginal = jsonl.TextOf(*r.OriginalFile), true
	}
	return out, true
}

// FuzzDecode holds DecodeInput and DecodeResult to encoding/json on every
// text Claude Code could write: valid JSON in UTF-8 (encoding/json would
// replace a bad byte with U+FFFD), objects, keys spelled exactly
// (encoding/json also takes "File_Path" for file_path).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"file_path":"/a","old_string":"a\"b","new_string":"c\u00e9","replace_all":true}`,
		`{"file_path":"/a","edits":[{"old_string":"a","new_string":"b"},null,{"replace_all":null}]}`,
		`{"plan":"## plan\n1. x"}`,
		`{"type":"text","file":{"content":"x\ny\n","startLine":1,"numLines":2,"totalLines":9}}`,
		`{"file":null,"file":{"numLines":1.5}}`,
		`{"originalFile":null,"content":"y","structuredPatch":[{"lines":["+y"]}]}`,
		`{"file_path":"/a","file_path":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || !utf8.Valid(b) || bytes.TrimSpace(b)[0] != '{' || cctooltest.FoldedKey(b) {
			t.Skip()
		}
		in, inOK := DecodeInput(b)
		wantIn, wantInOK := referenceInput(b)
		// No edits is no edits, whether the array was empty or absent.
		if len(in.Edits) == 0 {
			in.Edits = nil
		}
		if len(wantIn.Edits) == 0 {
			wantIn.Edits = nil
		}
		in.Content = decoded(t, in.Content)
		if inOK != wantInOK || (inOK && !reflect.DeepEqual(in, wantIn)) {
			t.Fatalf("input %q:\n got %v %+v\nwant %v %+v", b, inOK, in, wantInOK, wantIn)
		}
		got, ok := DecodeResult(b)
		got.FileContent, got.Content, got.OriginalFile = decoded(t, got.FileContent), decoded(t, got.Content), decoded(t, got.OriginalFile)
		want, wantOK := referenceResult(b)
		if ok != wantOK || (ok && !reflect.DeepEqual(got, want)) {
			t.Fatalf("result %q:\n got %v %+v\nwant %v %+v", b, ok, got, wantOK, want)
		}
	})
}

// decoded is a text as the reference holds it (decoded), once its length
// is checked against its decoding.
func decoded(t *testing.T, x jsonl.Text) jsonl.Text {
	t.Helper()
	s := x.String()
	if x.Len() != len(s) {
		t.Fatalf("text %q measured %d bytes", s, x.Len())
	}
	return jsonl.TextOf(s)
}
