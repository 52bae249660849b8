package all_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/harness/dsh"
	"tollgate/app/importer"
	"tollgate/test/shareddata"
)

// startedByAt parses files and maps each new request's first-line time
// (UTC, to the second) to its thread and what started it.
func startedByAt(t *testing.T, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: path, AtEOF: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			if q := r.Request; q != nil {
				out[q.At.UTC().Format(time.TimeOnly)+" "+q.Thread] = q.StartedBy
			}
		}
	}
	return out
}

// TestStartedByRealTranscripts: the requests the issue names, read from the
// shared transcripts themselves.
func TestStartedByRealTranscripts(t *testing.T) {
	dir := filepath.Join(shareddata.Dir(t), "claude-code")
	got := startedByAt(t, filepath.Join(dir, "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
	for at, want := range map[string]string{
		"20:19:04 ": importer.StartedByPrompt,       // "continue" after 4 h 11 min
		"20:30:31 ": importer.StartedByCompaction,   // the first request after the fold
		"20:58:58 ": importer.StartedByAnswer,       // the AskUserQuestion answer after 19 min
		"21:03:30 ": importer.StartedByNotification, // a background command finished
	} {
		if got[at] != want {
			t.Errorf("4d5611e5 %s started by %q, want %q", at, got[at], want)
		}
	}
	sub, _ := filepath.Glob(filepath.Join(dir, "258c7280-ae70-4798-800f-63464d01a85d", "subagents", "*.jsonl"))
	got = startedByAt(t, append(sub, filepath.Join(dir, "258c7280-ae70-4798-800f-63464d01a85d.jsonl"))...)
	for at, want := range map[string]string{
		"20:51:16 ": importer.StartedByNotification, // with an interrupt and a tool result before it: the notification names it
		"21:18:43 ": importer.StartedByCompaction,
		"21:36:44 ": importer.StartedByNotification,
	} {
		if got[at] != want {
			t.Errorf("258c7280 %s started by %q, want %q", at, got[at], want)
		}
	}
	starts, kinds := 0, map[string]int{}
	for k, v := range got {
		kinds[v]++
		if strings.HasSuffix(k, " agent-a881341") && v == importer.StartedByThreadStart {
			starts++
		}
		if strings.HasSuffix(k, " ") && v == importer.StartedByThreadStart {
			t.Errorf("a main-thread request %s is a thread start", k)
		}
	}
	if starts != 1 {
		t.Errorf("subagent a881341 has %d thread starts, want 1 (%v)", starts, kinds)
	}
	if kinds[importer.StartedByToolResult] < 100 {
		t.Errorf("only %d tool-result requests: %v", kinds[importer.StartedByToolResult], kinds)
	}
}

// TestStartedByEveryKind: one synthetic transcript with each kind of user
// line, read in one pass and line by line (the state carries it across).
func TestStartedByEveryKind(t *testing.T) {
	head := `{"parentUuid":null,"isSidechain":false,"cwd":"/p/x","sessionId":"s","type":"user",`
	user := func(content string, extra string) string {
		return head + `"message":{"role":"user","content":` + content + `}` + extra + `,"uuid":"u","timestamp":"2026-02-12T20:00:00Z"}`
	}
	n := 0
	asst := func(extra string) string {
		n++
		return `{"parentUuid":"p","isSidechain":false,"message":{"id":"m` + strconv.Itoa(n) + `","model":"claude-opus-4-6","role":"assistant","content":[` + extra +
			`],"usage":{"input_tokens":3,"cache_read_input_tokens":100,"output_tokens":1}},"requestId":"r` + strconv.Itoa(n) + `","type":"assistant","uuid":"a","timestamp":"2026-02-12T20:00:0` + strconv.Itoa(n%10) + `Z"}`
	}
	lines := []string{
		user(`"hello"`, ""), asst(""),
		user(`[{"tool_use_id":"t1","type":"tool_result","content":"<task-notification> in a file"}]`, ""), asst(`{"type":"tool_use","id":"q","name":"AskUserQuestion","input":{}}`),
		user(`[{"tool_use_id":"q","type":"tool_result","content":"User has answered your questions: yes"}]`, ""), asst(""),
		user(`"<task-notification>\n<task-id>b1</task-id>"`, ""), asst(""),
		user(`[{"type":"text","text":"[Request interrupted by user for tool use]"}]`, ""), asst(""),
		user(`"<system-reminder>PostToolUse hook additional context</system-reminder>"`, `,"isMeta":true`), asst(""),
		user(`"<command-name>/model</command-name>"`, ""), asst(""),
		`{"type":"system","subtype":"compact_boundary","uuid":"b","timestamp":"2026-02-12T20:00:09Z","compactMetadata":{"trigger":"auto","preTokens":9}}`,
		user(`"This session is being continued"`, `,"isCompactSummary":true`), asst(""),
		user(`[{"tool_use_id":"t2","type":"tool_result","content":"ok"}]`, ""), user(`"<task-notification>x"`, ""), asst(""),
		asst(""),
	}
	want := []string{importer.StartedByPrompt, importer.StartedByToolResult, importer.StartedByAnswer, importer.StartedByNotification, importer.StartedByInterrupt,
		importer.StartedByHook, importer.StartedByMeta, importer.StartedByCompaction, importer.StartedByNotification, ""}
	data := []byte(strings.Join(lines, "\n") + "\n")
	check := func(name string, g []string) {
		if strings.Join(g, ",") != strings.Join(want, ",") {
			t.Errorf("%s:\n got %q\nwant %q", name, g, want)
		}
	}
	path := "/p/11111111-2222-3333-4444-555555555555.jsonl"
	res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: path, AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	var g []string
	for _, r := range res.Records {
		if r.Request != nil {
			g = append(g, r.Request.StartedBy)
		}
	}
	check("one pass", g)
	g = nil
	var state []byte
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		res, err := importer.Parse(strings.NewReader(l), importer.Options{Harness: cclog.Name, Path: path, State: state})
		if err != nil {
			t.Fatal(err)
		}
		state = res.State
		for _, r := range res.Records {
			if r.Request != nil {
				g = append(g, r.Request.StartedBy)
			}
		}
	}
	check("line by line", g)
	// A subagent's file is its own thread, its first request a start.
	res, err = importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: "/p/11111111-2222-3333-4444-555555555555/subagents/agent-a1.jsonl", AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Records[0].Request; q.Thread != "agent-a1" || q.StartedBy != importer.StartedByThreadStart {
		t.Errorf("subagent's first request: thread %q started by %q", q.Thread, q.StartedBy)
	}
}

// TestStartedByCodex: the shared rollout's requests, each after a prompt or
// a tool result; a synthetic rollout's request after its compaction.
func TestStartedByCodex(t *testing.T) {
	path := filepath.Join(shareddata.Dir(t), "codex", "crud.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cxlog.Name, Path: path, AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Records {
		if r.Request != nil {
			got = append(got, r.Request.StartedBy)
		}
	}
	// user_message, then four tool results (function or custom tool calls).
	if want := []string{importer.StartedByPrompt, importer.StartedByToolResult, importer.StartedByToolResult, importer.StartedByToolResult, importer.StartedByToolResult}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("started by %q, want %q", got, want)
	}
	res, err = importer.Parse(bytes.NewReader(synthCodex(1)), importer.Options{Harness: cxlog.Name, Path: "rollout-x.jsonl", AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	after := false
	for _, r := range res.Records {
		switch {
		case r.Fold != nil:
			after = true
		case r.Request != nil && after:
			if r.Request.StartedBy != importer.StartedByCompaction {
				t.Errorf("the first request after a compaction is started by %q", r.Request.StartedBy)
			}
			after = false
		}
	}
}

// TestStartedByDSH: the synthetic dsh log's conversation requests follow a
// user message and a tool result (the prompt names them), the first after
// its summary says so.
func TestStartedByDSH(t *testing.T) {
	res, err := importer.Parse(bytes.NewReader(synthDSH(1)), importer.Options{Harness: dsh.Name, Path: "s.jsonl", AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Records {
		if q := r.Request; q != nil && q.Purpose == importer.PurposeConversation {
			got = append(got, q.StartedBy)
		}
	}
	want := []string{importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt,
		importer.StartedByPrompt, importer.StartedByCompaction, importer.StartedByPrompt, importer.StartedByPrompt}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("started by\n%q, want\n%q", got, want)
	}
}
