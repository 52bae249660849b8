package cclog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tollgate/app/importer"
	"tollgate/test/shareddata"

	"tollgate/app/harness/claudecode/cctool"
	"tollgate/app/importer/jsonl"
)

// refTracer is the tracer without the in-place decoding of lines (each
// value found whole, then walked again; every file text
// decoded as read, each result decoded by cctool from its bytes): the
// reference FuzzClaudeTrace and TestTraceMatchesReference hold the tracer
// to. (cctool is held to encoding/json by FuzzFileOp and FuzzDecode, on
// the valid JSON they agree on; the scanner also reads a line that only
// nests right.)
type refTracer struct {
	tr       Trace
	requests map[*importer.Request]int
	toolUses map[string]refToolUse
}

type refToolUse struct {
	name  string
	input json.RawMessage
}

func newRefTracer() *refTracer {
	return &refTracer{requests: map[*importer.Request]int{}, toolUses: map[string]refToolUse{}}
}

// line adds one line; req and fold are what the parser made of it. It
// walks the line with the importer's scanner, measuring text without
// copying it; only a file tool's result is decoded (encoding/json), as the
// predictor needs the file's text.
//
// top and typed are the line's topType (the parser read it already).
func (t *refTracer) line(b []byte, n int, top []byte, typed bool, req *importer.Request, fold *importer.Fold) {
	// Progress lines, file snapshots and queue operations (a third of a
	// transcript's bytes) say nothing the predictor needs.
	if typed {
		switch string(top) {
		case "user", "assistant":
		case "system":
			if fold == nil {
				return
			}
		default:
			return
		}
	}
	var (
		typ, subtype, timestamp, cwd, version string
		sidechain, meta, compactSummary       bool
		content, result                       []byte // raw message.content and toolUseResult
	)
	s := jsonl.Scanner{B: b}
	raw := func() []byte {
		s.Ws()
		start := s.I
		s.Skip()
		return b[start:s.I]
	}
	s.Object(func(k []byte) {
		switch string(k) {
		case "type":
			typ = s.Str()
		case "subtype":
			subtype = s.Str()
		case "timestamp":
			timestamp = s.Str()
		case "cwd":
			cwd = s.Str()
		case "version":
			version = s.Str()
		case "isSidechain":
			sidechain = s.Boolean()
		case "isMeta":
			meta = s.Boolean()
		case "isCompactSummary":
			compactSummary = s.Boolean()
		case "message":
			if s.Peek() != '{' {
				s.Skip()
				return
			}
			s.Object(func(k []byte) {
				if string(k) == "content" {
					content = raw()
				} else {
					s.Skip()
				}
			})
		case "toolUseResult":
			result = raw()
		default:
			s.Skip()
		}
	})
	s.End()
	if s.Err != nil || sidechain {
		return
	}
	if cwd != "" {
		t.tr.Cwd = cwd
	}
	if version != "" {
		t.tr.Version = version
	}
	at, _ := importer.ParseTime(timestamp)
	switch {
	case typ == "system" && subtype == "compact_boundary" && fold != nil:
		t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceBoundary, Line: n, At: at, Fold: fold})
	case typ == "assistant" && req != nil && req.Purpose == importer.PurposeConversation && content != nil:
		i, ok := t.requests[req]
		if !ok {
			i = len(t.tr.Events)
			t.requests[req] = i
			t.tr.Events = append(t.tr.Events, TraceEvent{Kind: TraceRequest, Line: n, At: at, Request: req})
		}
		t.tr.Events[i].Bytes += t.assistantBlocks(content)
	case typ == "user" && content != nil:
		ev := TraceEvent{Kind: TraceUser, Line: n, At: at, Meta: meta}
		var uses []string
		var text string
		ev.Bytes, text, uses = refUserContent(content, meta)
		if compactSummary {
			ev.Kind = TraceSummary
			t.tr.Events = append(t.tr.Events, ev)
			return
		}
		if meta {
			if rest, ok := strings.CutPrefix(text, "Base directory for this skill:"); ok {
				name, _, _ := strings.Cut(rest, "\n")
				ev.Skill = strings.TrimSpace(name)
			}
		}
		ev.Results = len(uses)
		for _, id := range uses {
			tu, ok := t.toolUses[id]
			if !ok {
				continue
			}
			if tu.name == "Read" {
				ev.Reads++
			}
			refFileOp(&ev, tu.name, tu.input, result)
		}
		t.tr.Events = append(t.tr.Events, ev)
	}
}

// assistantBlocks measures an assistant message's content (text, thinking,
// tool names and inputs) and remembers its file tools' inputs.
func (t *refTracer) assistantBlocks(content []byte) int {
	s := jsonl.Scanner{B: content}
	if s.Peek() != '[' {
		return 0
	}
	n := 0
	eachElem(&s, func() {
		var typ, id, name string
		var input []byte
		s.Object(func(k []byte) {
			switch string(k) {
			case "type":
				typ = s.Str()
			case "id":
				id = s.Str()
			case "name":
				name = s.Str()
			case "text", "thinking":
				if s.Peek() == '"' {
					n += s.StrLen()
				} else {
					s.Skip()
				}
			case "input":
				s.Ws()
				start := s.I
				s.Skip()
				input = content[start:s.I]
			default:
				s.Skip()
			}
		})
		n += len(input) + len(name)
		if typ == "tool_use" && fileToolBytes([]byte(name)) && s.Err == nil {
			t.toolUses[id] = refToolUse{name, append(json.RawMessage(nil), input...)}
		}
	})
	if s.Err != nil {
		return 0
	}
	return n
}

// userContent measures a user message's text (a string, or its text blocks
// and tool results' text) and lists its tool results' ids; a meta
// message's text is returned too (for the skill it names).
func refUserContent(content []byte, meta bool) (n int, text string, uses []string) {
	s := jsonl.Scanner{B: content}
	var sb strings.Builder
	str := func() {
		if meta {
			v := s.Str()
			sb.WriteString(v)
			n += len(v)
		} else {
			n += s.StrLen()
		}
	}
	switch s.Peek() {
	case '"':
		str()
	case '[':
		eachElem(&s, func() {
			var typ, id string
			s.Object(func(k []byte) {
				switch string(k) {
				case "type":
					typ = s.Str()
				case "tool_use_id":
					id = s.Str()
				case "text":
					if s.Peek() == '"' {
						str()
					} else {
						s.Skip()
					}
				case "content":
					switch s.Peek() {
					case '"':
						str()
					case '[':
						eachElem(&s, func() {
							s.Object(func(k []byte) {
								if string(k) == "text" && s.Peek() == '"' {
									str()
								} else {
									s.Skip()
								}
							})
						})
					default:
						s.Skip()
					}
				default:
					s.Skip()
				}
			})
			if typ == "tool_result" {
				uses = append(uses, id)
			}
		})
	default:
		return 0, "", nil
	}
	if s.Err != nil {
		return 0, "", nil
	}
	return n, sb.String(), uses
}

// traceLogReordered and traceLogMetaLast are traceLog with each line's
// fields in other orders: the tool result before the message, the type
// after it (the tracer then reads the content and the result after the
// walk), or isMeta after the content it changes the reading of.
const (
	traceLogReordered = `{"cwd":"/home/u/p","version":"2.1.332","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"fix it"},"type":"user"}
{"timestamp":"2026-03-01T10:00:01Z","requestId":"q1","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"text","text":"looking"}],"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":4000,"output_tokens":5}},"type":"assistant"}
{"timestamp":"2026-03-01T10:00:02Z","requestId":"q1","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/home/u/p/a.go"}}],"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":4000,"output_tokens":40}},"type":"assistant"}
{"toolUseResult":{"type":"text","file":{"filePath":"/home/u/p/a.go","content":"package a\n","numLines":2,"startLine":1,"totalLines":2}},"timestamp":"2026-03-01T10:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"     1→package a\n"}]},"type":"user"}
{"timestamp":"2026-03-01T10:00:04Z","requestId":"q2","message":{"id":"m2","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/home/u/p/big.go","offset":10,"limit":2}},{"type":"tool_use","id":"t3","name":"Write","input":{"file_path":"/home/u/p/new.go","content":"package b\n"}},{"type":"tool_use","id":"t4","name":"Edit","input":{"file_path":"/home/u/p/a.go","old_string":"a","new_string":"z","replace_all":true}},{"type":"tool_use","id":"t5","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"t6","name":"Edit","input":{"file_path":"/home/u/p/x.go","old_string":"q","new_string":"r"}}],"usage":{"input_tokens":1,"cache_read_input_tokens":24000,"cache_creation_input_tokens":100,"output_tokens":60}},"type":"assistant"}
{"toolUseResult":{"type":"text","file":{"filePath":"/home/u/p/big.go","content":"x\ny\n","numLines":2,"startLine":10,"totalLines":400}},"timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"    10→x\n    11→y\n"},{"type":"tool_result","tool_use_id":"t3","content":"ok"},{"type":"tool_result","tool_use_id":"t4","content":"ok"},{"type":"tool_result","tool_use_id":"t5","content":"a.go"},{"type":"tool_result","tool_use_id":"t6","content":"String not found","is_error":true}]},"type":"user"}
{"toolUseResult":{"type":"create","filePath":"/home/u/p/new.go","content":"package b\n"},"timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"ok"}]},"type":"user"}
{"toolUseResult":{"filePath":"/home/u/p/a.go","originalFile":"package a\n","oldString":"a","newString":"z"},"timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t4","content":"ok"}]},"type":"user"}
{"toolUseResult":"Error: String to replace not found","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t6","content":"String not found","is_error":true}]},"type":"user"}
{"isSidechain":true,"timestamp":"2026-03-01T10:00:06Z","message":{"id":"s1","model":"claude-haiku-4-5","content":[{"type":"text","text":"side"}],"usage":{"input_tokens":9,"output_tokens":1}},"type":"assistant"}
{"timestamp":"2026-03-01T10:00:07Z","message":{"role":"user","content":[{"type":"text","text":"Base directory for this skill: /home/u/.claude/skills/tdd\n\nWrite the test first."}]},"type":"user","isMeta":true}
{"subtype":"compact_boundary","uuid":"b1","timestamp":"2026-03-01T10:05:00Z","compactMetadata":{"trigger":"auto","preTokens":170000},"type":"system"}
{"isCompactSummary":true,"timestamp":"2026-03-01T10:05:01Z","message":{"role":"user","content":"This session is being continued. Summary: twelve chars"},"type":"user"}
{"timestamp":"2026-03-01T10:05:02Z","requestId":"q3","message":{"id":"m3","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"cache_read_input_tokens":21000,"cache_creation_input_tokens":9000,"output_tokens":2}},"type":"assistant"}
`
	traceLogMetaLast = `{"type":"user","cwd":"/home/u/p","version":"2.1.332","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"fix it"}}
{"type":"assistant","timestamp":"2026-03-01T10:00:01Z","requestId":"q1","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"text","text":"looking"}],"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":4000,"output_tokens":5}}}
{"type":"assistant","timestamp":"2026-03-01T10:00:02Z","requestId":"q1","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/home/u/p/a.go"}}],"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":4000,"output_tokens":40}}}
{"type":"user","toolUseResult":{"type":"text","file":{"filePath":"/home/u/p/a.go","content":"package a\n","numLines":2,"startLine":1,"totalLines":2}},"timestamp":"2026-03-01T10:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"     1→package a\n"}]}}
{"type":"assistant","timestamp":"2026-03-01T10:00:04Z","requestId":"q2","message":{"id":"m2","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/home/u/p/big.go","offset":10,"limit":2}},{"type":"tool_use","id":"t3","name":"Write","input":{"file_path":"/home/u/p/new.go","content":"package b\n"}},{"type":"tool_use","id":"t4","name":"Edit","input":{"file_path":"/home/u/p/a.go","old_string":"a","new_string":"z","replace_all":true}},{"type":"tool_use","id":"t5","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"t6","name":"Edit","input":{"file_path":"/home/u/p/x.go","old_string":"q","new_string":"r"}}],"usage":{"input_tokens":1,"cache_read_input_tokens":24000,"cache_creation_input_tokens":100,"output_tokens":60}}}
{"type":"user","toolUseResult":{"type":"text","file":{"filePath":"/home/u/p/big.go","content":"x\ny\n","numLines":2,"startLine":10,"totalLines":400}},"timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"    10→x\n    11→y\n"},{"type":"tool_result","tool_use_id":"t3","content":"ok"},{"type":"tool_result","tool_use_id":"t4","content":"ok"},{"type":"tool_result","tool_use_id":"t5","content":"a.go"},{"type":"tool_result","tool_use_id":"t6","content":"String not found","is_error":true}]}}
{"type":"user","toolUseResult":{"type":"create","filePath":"/home/u/p/new.go","content":"package b\n"},"timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"ok"}]}}
{"type":"user","toolUseResult":{"filePath":"/home/u/p/a.go","originalFile":"package a\n","oldString":"a","newString":"z"},"timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t4","content":"ok"}]}}
{"type":"user","toolUseResult":"Error: String to replace not found","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t6","content":"String not found","is_error":true}]}}
{"type":"assistant","isSidechain":true,"timestamp":"2026-03-01T10:00:06Z","message":{"id":"s1","model":"claude-haiku-4-5","content":[{"type":"text","text":"side"}],"usage":{"input_tokens":9,"output_tokens":1}}}
{"type":"user","timestamp":"2026-03-01T10:00:07Z","message":{"role":"user","content":[{"type":"text","text":"Base directory for this skill: /home/u/.claude/skills/tdd\n\nWrite the test first."}]},"isMeta":true}
{"type":"system","subtype":"compact_boundary","uuid":"b1","timestamp":"2026-03-01T10:05:00Z","compactMetadata":{"trigger":"auto","preTokens":170000}}
{"type":"user","isCompactSummary":true,"timestamp":"2026-03-01T10:05:01Z","message":{"role":"user","content":"This session is being continued. Summary: twelve chars"}}
{"type":"assistant","timestamp":"2026-03-01T10:05:02Z","requestId":"q3","message":{"id":"m3","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"cache_read_input_tokens":21000,"cache_creation_input_tokens":9000,"output_tokens":2}}}
`
)

// traceBoth parses a main transcript with the trace, feeding the
// reference tracer the same lines, and fails t when the two traces differ
// (file texts compared decoded, their measured lengths checked).
func traceBoth(t *testing.T, data []byte, live bool) (*importer.Result, error) {
	t.Helper()
	ref := newRefTracer()
	testTraceLine = ref.line
	defer func() { testTraceLine = nil }()
	res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Name, Path: "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl", AtEOF: true, Trace: true, Live: live})
	if err != nil {
		return nil, err
	}
	got := *TraceOf(res)
	got.Events = slices.Clone(got.Events)
	for i := range got.Events {
		got.Events[i].Files = slices.Clone(got.Events[i].Files)
		decodeTexts(t, &got.Events[i])
	}
	want := ref.tr
	if !reflect.DeepEqual(got, want) {
		if got.Cwd != want.Cwd || got.Version != want.Version || len(got.Events) != len(want.Events) {
			t.Fatalf("trace: cwd %q version %q, %d events; reference %q %q, %d events", got.Cwd, got.Version, len(got.Events), want.Cwd, want.Version, len(want.Events))
		}
		for i := range got.Events {
			if !reflect.DeepEqual(got.Events[i], want.Events[i]) {
				t.Fatalf("event %d:\n got %+v\nwant %+v", i, got.Events[i], want.Events[i])
			}
		}
	}
	return res, nil
}

// TestTraceMatchesReference holds the tracer's one-walk reading of the
// real transcripts (and of traceLog) to the reference's.
func TestTraceMatchesReference(t *testing.T) {
	data := shareddata.Dir(t)
	paths, _ := filepath.Glob(filepath.Join(data, "claude-code", "*.jsonl"))
	if len(paths) == 0 {
		t.Fatal("no transcripts")
	}
	inputs := [][]byte{[]byte(traceLog), []byte(traceLogReordered), []byte(traceLogMetaLast)}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	ops := 0
	for _, b := range inputs {
		for _, live := range []bool{false, true} {
			res, err := traceBoth(t, b, live)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range TraceOf(res).Events {
				ops += len(e.Files)
			}
		}
	}
	if ops < 50 {
		t.Fatalf("only %d file ops traced: the test checks little", ops)
	}
}

// refFileOp is the tracer's file op as it was: the input and the result
// decoded from their bytes for every use.
func refFileOp(ev *TraceEvent, name string, input, res []byte) {
	in, ok := cctool.DecodeInput(input)
	if !ok {
		return
	}
	if name == "ExitPlanMode" {
		ev.Plan = in.PlanLen
		return
	}
	if in.FilePath == "" || len(res) == 0 || res[0] != '{' {
		return
	}
	r, ok := cctool.DecodeResult(res)
	if !ok {
		return
	}
	op := FileOp{Tool: name, Path: in.FilePath}
	switch name {
	case "Read":
		if !r.HasFile {
			return
		}
		op.Content, op.HasContent = TextOf(r.FileContent.String()), true
		op.StartLine, op.NumLines, op.TotalLines = r.StartLine, r.NumLines, r.TotalLines
		ev.ReadBytes += len(r.FileContent.String())
		ev.ReadLines += r.NumLines
	case "Write":
		op.Content, op.HasContent = TextOf(in.Content.String()), true
		if r.HasContent {
			op.Content = TextOf(r.Content.String())
		}
	case "Edit", "MultiEdit":
		if r.HasOriginal {
			op.Content, op.HasContent = TextOf(r.OriginalFile.String()), r.OriginalFile.String() != ""
		}
		if name == "Edit" {
			op.Edits = []Edit{{in.OldString, in.NewString, in.ReplaceAll}}
		}
		for _, e := range in.Edits {
			op.Edits = append(op.Edits, Edit{e.Old, e.New, e.ReplaceAll})
		}
	}
	ev.Files = append(ev.Files, op)
}
