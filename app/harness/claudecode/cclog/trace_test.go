package cclog

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"tollgate/app/importer"
)

// traceLog is a main transcript with one of each thing the trace reads.
const traceLog = `{"type":"user","cwd":"/home/u/p","version":"2.1.332","timestamp":"2026-03-01T10:00:00Z","message":{"role":"user","content":"fix it"}}
{"type":"assistant","timestamp":"2026-03-01T10:00:01Z","requestId":"q1","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"text","text":"looking"}],"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":4000,"output_tokens":5}}}
{"type":"assistant","timestamp":"2026-03-01T10:00:02Z","requestId":"q1","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/home/u/p/a.go"}}],"usage":{"input_tokens":3,"cache_read_input_tokens":20000,"cache_creation_input_tokens":4000,"output_tokens":40}}}
{"type":"user","timestamp":"2026-03-01T10:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"     1→package a\n"}]},"toolUseResult":{"type":"text","file":{"filePath":"/home/u/p/a.go","content":"package a\n","numLines":2,"startLine":1,"totalLines":2}}}
{"type":"assistant","timestamp":"2026-03-01T10:00:04Z","requestId":"q2","message":{"id":"m2","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/home/u/p/big.go","offset":10,"limit":2}},{"type":"tool_use","id":"t3","name":"Write","input":{"file_path":"/home/u/p/new.go","content":"package b\n"}},{"type":"tool_use","id":"t4","name":"Edit","input":{"file_path":"/home/u/p/a.go","old_string":"a","new_string":"z","replace_all":true}},{"type":"tool_use","id":"t5","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"t6","name":"Edit","input":{"file_path":"/home/u/p/x.go","old_string":"q","new_string":"r"}}],"usage":{"input_tokens":1,"cache_read_input_tokens":24000,"cache_creation_input_tokens":100,"output_tokens":60}}}
{"type":"user","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"    10→x\n    11→y\n"},{"type":"tool_result","tool_use_id":"t3","content":"ok"},{"type":"tool_result","tool_use_id":"t4","content":"ok"},{"type":"tool_result","tool_use_id":"t5","content":"a.go"},{"type":"tool_result","tool_use_id":"t6","content":"String not found","is_error":true}]},"toolUseResult":{"type":"text","file":{"filePath":"/home/u/p/big.go","content":"x\ny\n","numLines":2,"startLine":10,"totalLines":400}}}
{"type":"user","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"ok"}]},"toolUseResult":{"type":"create","filePath":"/home/u/p/new.go","content":"package b\n"}}
{"type":"user","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t4","content":"ok"}]},"toolUseResult":{"filePath":"/home/u/p/a.go","originalFile":"package a\n","oldString":"a","newString":"z"}}
{"type":"user","timestamp":"2026-03-01T10:00:05Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t6","content":"String not found","is_error":true}]},"toolUseResult":"Error: String to replace not found"}
{"type":"assistant","isSidechain":true,"timestamp":"2026-03-01T10:00:06Z","message":{"id":"s1","model":"claude-haiku-4-5","content":[{"type":"text","text":"side"}],"usage":{"input_tokens":9,"output_tokens":1}}}
{"type":"user","isMeta":true,"timestamp":"2026-03-01T10:00:07Z","message":{"role":"user","content":[{"type":"text","text":"Base directory for this skill: /home/u/.claude/skills/tdd\n\nWrite the test first."}]}}
{"type":"system","subtype":"compact_boundary","uuid":"b1","timestamp":"2026-03-01T10:05:00Z","compactMetadata":{"trigger":"auto","preTokens":170000}}
{"type":"user","isCompactSummary":true,"timestamp":"2026-03-01T10:05:01Z","message":{"role":"user","content":"This session is being continued. Summary: twelve chars"}}
{"type":"assistant","timestamp":"2026-03-01T10:05:02Z","requestId":"q3","message":{"id":"m3","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"cache_read_input_tokens":21000,"cache_creation_input_tokens":9000,"output_tokens":2}}}
`

func TestClaudeTrace(t *testing.T) {
	res, err := importer.Parse(strings.NewReader(traceLog), importer.Options{Harness: Name, Path: "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl", AtEOF: true, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := TraceOf(res)
	if tr == nil || tr.Cwd != "/home/u/p" || tr.Version != "2.1.332" {
		t.Fatalf("trace %+v", tr)
	}
	var kinds []string
	for _, e := range tr.Events {
		kinds = append(kinds, e.Kind)
	}
	want := "user request user request user user user user user boundary summary request"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
	ev := tr.Events
	if ev[1].Request.ID != "m1:q1" || ev[1].Request.Usage.Output != 40 || ev[1].Bytes != len("looking")+len(`{"file_path":"/home/u/p/a.go"}`)+len("Read") {
		t.Errorf("request m1: %+v bytes %d", ev[1].Request, ev[1].Bytes)
	}
	if ops := ev[2].Files; len(ops) != 1 || ops[0].Tool != "Read" || ops[0].Content.String() != "package a\n" || ops[0].Partial() || ev[2].Reads != 1 || ev[2].ReadBytes != 10 {
		t.Errorf("full read: %+v", ev[2])
	}
	// One message with five results, its toolUseResult the first's (the
	// partial read); the results of Write and Edit come in their own lines.
	if ops := ev[4].Files; len(ops) < 1 || !ops[0].Partial() || ops[0].TotalLines != 400 || ev[4].Results != 5 || ev[4].Reads != 1 {
		t.Errorf("partial read: %+v", ev[4])
	}
	if ops := ev[5].Files; len(ops) != 1 || ops[0].Tool != "Write" || ops[0].Content.String() != "package b\n" {
		t.Errorf("write: %+v", ev[5].Files)
	}
	if ops := ev[6].Files; len(ops) != 1 || ops[0].Tool != "Edit" || !ops[0].HasContent || ops[0].Apply(ops[0].Content.String()) != "pzckzge z\n" {
		t.Errorf("edit: %+v", ev[6].Files)
	}
	if len(ev[7].Files) != 0 {
		t.Errorf("an error result changed a file: %+v", ev[7].Files)
	}
	if ev[8].Skill != "/home/u/.claude/skills/tdd" || !ev[8].Meta {
		t.Errorf("skill: %+v", ev[8])
	}
	if ev[9].Fold == nil || ev[9].Fold.PreTokens != 170000 || ev[10].Bytes != len("This session is being continued. Summary: twelve chars") {
		t.Errorf("boundary %+v summary %+v", ev[9], ev[10])
	}
	if a := ev[9].Fold.ActualCold; a == nil || *a != 9003 {
		t.Errorf("actual cold %v", a)
	}
	if res.Session.ThresholdTokens != 167_000 || res.Session.ContextWindow != 200_000 {
		t.Errorf("session %+v", res.Session)
	}
	// The plain import reads the same records without a trace.
	plain, err := importer.Parse(strings.NewReader(traceLog), importer.Options{Harness: Name, Path: "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl", AtEOF: true})
	if err != nil || plain.Trace != nil || len(plain.Records) != len(res.Records) {
		t.Fatalf("plain: %v %+v", err, plain)
	}
	// A subagent's transcript has no trace.
	sub, err := importer.Parse(bytes.NewReader([]byte(traceLog)), importer.Options{Harness: Name, Path: "p/s/subagents/agent-a1.jsonl", AtEOF: true, Trace: true})
	if err != nil || sub.Trace != nil {
		t.Fatalf("subagent: %v %+v", err, sub.Trace)
	}
}

func TestClaudeAutoCompact(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		model             string
		getenv            func(string) string
		window, threshold int64
	}{
		{"claude-opus-4-6", nil, 200_000, 167_000},
		{"claude-sonnet-4-5[1m]", nil, 1_000_000, 967_000},
		{"claude-opus-4-6", env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "100000"), 100_000, 67_000},
		{"claude-opus-4-6", env("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "500000"), 200_000, 167_000}, // never above the model's
		{"claude-opus-4-6", env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50"), 200_000, 90_000},      // of the effective window
		{"claude-opus-4-6", env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "99"), 200_000, 167_000},     // never above the default
		{"claude-opus-4-6", env("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "abc"), 200_000, 167_000},
		{"", nil, 200_000, 167_000},
	}
	for _, c := range cases {
		w, th := AutoCompact(c.model, c.getenv)
		if w != c.window || th != c.threshold {
			t.Errorf("%s: %d/%d, want %d/%d", c.model, w, th, c.window, c.threshold)
		}
	}
}

// TraceFolds traces a transcript whose first read holds all of it only
// when it has a fold, and a longer one always; the records are the pass's
// either way.
func TestTraceFolds(t *testing.T) {
	path := "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl"
	var noFold strings.Builder
	for _, l := range strings.SplitAfter(traceLog, "\n") {
		if !strings.Contains(l, FoldKey) {
			noFold.WriteString(l)
		}
	}
	// Longer than the first read (a reader without Len, as a file is).
	long := strings.Repeat(`{"type":"progress","data":{"pad":"`+strings.Repeat("x", 1000)+`"}}`+"\n", 1200) + noFold.String()
	for _, c := range []struct {
		name   string
		in     io.Reader
		traced bool
	}{
		{"fold", strings.NewReader(traceLog), true},
		{"no fold", strings.NewReader(noFold.String()), false},
		{"no fold, read in pieces", io.MultiReader(strings.NewReader(noFold.String())), false},
		{"longer than a read", io.MultiReader(strings.NewReader(long)), true},
	} {
		res, err := importer.Parse(c.in, importer.Options{Harness: Name, Path: path, AtEOF: true, TraceFolds: true})
		if err != nil {
			t.Fatal(err)
		}
		if (TraceOf(res) != nil) != c.traced || len(res.Records) == 0 {
			t.Errorf("%s: traced %v, want %v (%d records)", c.name, TraceOf(res) != nil, c.traced, len(res.Records))
		}
	}
	// A subagent's transcript is never traced.
	res, err := importer.Parse(strings.NewReader(traceLog), importer.Options{Harness: Name, Path: "p/s/subagents/agent-a1.jsonl", AtEOF: true, TraceFolds: true})
	if err != nil || TraceOf(res) != nil {
		t.Fatalf("subagent: %v %v", err, TraceOf(res))
	}
}
