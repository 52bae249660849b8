package cclog

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"tollgate/app/harness/claudecode/cctool/cctooltest"
	"tollgate/test/shareddata"
)

// fileOpReference is the tracer's file op decoded with encoding/json: the
// reference the scanner's decoding (tracer.fileOp) is held to.
func fileOpReference(ev *TraceEvent, name string, input, res json.RawMessage) {
	var in cctooltest.FileToolInput
	if json.Unmarshal(input, &in) != nil {
		return
	}
	if name == "ExitPlanMode" {
		ev.Plan = len(in.Plan)
		return
	}
	var r cctooltest.FileToolResult
	if in.FilePath == "" || len(res) == 0 || res[0] != '{' || json.Unmarshal(res, &r) != nil {
		return
	}
	op := FileOp{Tool: name, Path: in.FilePath}
	switch name {
	case "Read":
		if r.File == nil {
			return
		}
		op.Content, op.HasContent = TextOf(r.File.Content), true
		op.StartLine, op.NumLines, op.TotalLines = r.File.StartLine, r.File.NumLines, r.File.TotalLines
		ev.ReadBytes += len(r.File.Content)
		ev.ReadLines += r.File.NumLines
	case "Write":
		op.Content, op.HasContent = TextOf(in.Content), true
		if r.Content != nil {
			op.Content = TextOf(*r.Content)
		}
	case "Edit", "MultiEdit":
		if r.OriginalFile != nil {
			op.Content, op.HasContent = TextOf(*r.OriginalFile), *r.OriginalFile != ""
		}
		if name == "Edit" {
			op.Edits = []Edit{{in.OldString, in.NewString, in.ReplaceAll}}
		}
		for _, e := range in.Edits {
			op.Edits = append(op.Edits, Edit{e.OldString, e.NewString, e.ReplaceAll})
		}
	}
	ev.Files = append(ev.Files, op)
}

// sameFileOp fails t when the scanner and the reference make different
// events of one tool's input and result.
func sameFileOp(t *testing.T, name string, input, result []byte) {
	t.Helper()
	var got, want TraceEvent
	(&tracer{}).fileOp(&got, newToolUse(name, input), &lineResult{raw: result})
	fileOpReference(&want, name, input, result)
	decodeTexts(t, &got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s input %.300s\nresult %.300s\nscanner   %+v\nreference %+v", name, input, result, got, want)
	}
}

// decodeTexts decodes an event's file texts as the reference holds them
// (TextOf the decoded text), once each one's measured length is checked
// against its decoding.
func decodeTexts(t *testing.T, ev *TraceEvent) {
	t.Helper()
	for i := range ev.Files {
		op := &ev.Files[i]
		s := op.Content.String()
		if op.Content.Len() != len(s) {
			t.Fatalf("%s %s: text %.100q measured %d bytes, decodes to %d", op.Tool, op.Path, s, op.Content.Len(), len(s))
		}
		op.Content = TextOf(s)
	}
}

// TestFileOpMatchesReference holds the scanner's decoding of every file
// tool's input and result in the real transcripts to encoding/json's.
func TestFileOpMatchesReference(t *testing.T) {
	data := shareddata.Dir(t)
	paths, _ := filepath.Glob(filepath.Join(data, "claude-code", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(data, "claude-code", "*", "subagents", "*.jsonl"))
	paths = append(paths, more...)
	ops := 0
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		uses := map[string]refToolUse{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var l struct {
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
				ToolUseResult json.RawMessage `json:"toolUseResult"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			var blocks []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
			}
			if json.Unmarshal(l.Message.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					if fileToolBytes([]byte(b.Name)) {
						uses[b.ID] = refToolUse{b.Name, b.Input}
					}
				case "tool_result":
					if tu, ok := uses[b.ToolUseID]; ok {
						sameFileOp(t, tu.name, tu.input, l.ToolUseResult)
						ops++
					}
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if ops < 50 {
		t.Fatalf("only %d file tool results in the real transcripts", ops)
	}
	t.Logf("%d file tool results decoded alike", ops)
}

// FuzzFileOp holds the scanner's decoding to encoding/json's on any input
// and result that Claude Code could write: valid JSON in UTF-8 (encoding/json
// would replace a bad byte with U+FFFD), keys spelled exactly
// (encoding/json also matches "File_Path" to file_path; the scanner, like
// every other reader of the importer, does not).
func FuzzFileOp(f *testing.F) {
	f.Add("Read", []byte(`{"file_path":"/a"}`), []byte(`{"type":"text","file":{"content":"x\ny\n","startLine":1,"numLines":2,"totalLines":9}}`))
	f.Add("Write", []byte(`{"file_path":"/a","content":"x"}`), []byte(`{"type":"create","content":"y","structuredPatch":[{"lines":["+y"]}]}`))
	f.Add("Edit", []byte(`{"file_path":"/a","old_string":"a\"","new_string":"b\u00e9","replace_all":true}`), []byte(`{"originalFile":"a\"a","oldString":"a"}`))
	f.Add("MultiEdit", []byte(`{"file_path":"/a","edits":[{"old_string":"a","new_string":"b"},null,{"replace_all":null}]}`), []byte(`{"originalFile":null}`))
	f.Add("ExitPlanMode", []byte(`{"plan":"## plan\n1. x"}`), []byte(`{}`))
	f.Add("Read", []byte(`{"file_path":"/a","file_path":null}`), []byte(`{"file":null,"file":{"numLines":1.5}}`))
	f.Add("Edit", []byte(`{"file_path":"/a"}`), []byte(`"Error: not found"`))
	f.Fuzz(func(t *testing.T, name string, input, result []byte) {
		if !json.Valid(input) || !json.Valid(result) || !utf8.Valid(input) || !utf8.Valid(result) || cctooltest.FoldedKey(input) || cctooltest.FoldedKey(result) {
			t.Skip()
		}
		sameFileOp(t, name, input, result)
	})
}

// FuzzApplyOne holds an Edit's single replacement to strings.Replace's.
func FuzzApplyOne(f *testing.F) {
	for _, s := range [][3]string{{"a b a", "a", "z"}, {"abc", "", "x"}, {"abc", "d", "x"}, {"ééé", "é", ""}, {"", "", "new"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, text, old, new string) {
		op := FileOp{Edits: []Edit{{Old: old, New: new}}}
		if got, want := op.Apply(text), strings.Replace(text, old, new, 1); got != want {
			t.Fatalf("Apply(%q, %q → %q) = %q, strings.Replace %q", text, old, new, got, want)
		}
	})
}
