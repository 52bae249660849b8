package gemini

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tollgate/app/importer"
	"tollgate/pricing"
)

// session is a Gemini CLI 0.61.0 session file in the shape the real
// program writes it (see testdata/real-0.61.0.jsonl for one it wrote): the
// metadata line, the history checkpoint, a prompt, a reply with tool calls
// whose tokens arrive on a second write of the same message, the tool
// loop's next reply, a resume (metadata again, $set, $rewindTo), a prompt
// and a reply that read nothing from the cache.
const session = `{"sessionId":"79a72b79-ce14-4503-8010-972c354ba029","projectHash":"a0d549cc","startTime":"2026-12-01T09:36:49.457Z","lastUpdated":"2026-12-01T09:36:49.457Z","kind":"main"}
{"$set":{"messages":[{"id":"d04923d38bb0f6017037e74183378ef4","timestamp":"2026-12-01T09:36:49.457Z","type":"user","content":[{"text":"<session_context>…</session_context>"}]}],"lastUpdated":"2026-12-01T09:36:49.457Z"}}
{"id":"f6f18a02-7bd3-48e4-a647-757fa74585f9","timestamp":"2026-12-01T09:36:49.484Z","type":"user","content":[{"text":"list the files"}]}
{"$set":{"lastUpdated":"2026-12-01T09:36:49.484Z"}}
{"id":"aaaa0001-7bd3-48e4-a647-757fa74585f9","timestamp":"2026-12-01T09:36:49.615Z","type":"gemini","content":"","toolCalls":[{"id":"ls-1","name":"list_directory","args":{},"status":"success","timestamp":"2026-12-01T09:36:49.700Z"}],"thoughts":[],"model":"gemini-2.5-pro"}
{"id":"aaaa0001-7bd3-48e4-a647-757fa74585f9","timestamp":"2026-12-01T09:36:49.615Z","type":"gemini","content":"","toolCalls":[{"id":"ls-1","name":"list_directory","args":{},"status":"success","timestamp":"2026-12-01T09:36:49.700Z"}],"thoughts":[],"tokens":{"input":10741,"output":10,"cached":0,"thoughts":20,"tool":0,"total":10771},"model":"gemini-2.5-pro"}
{"id":"aaaa0001-7bd3-48e4-a647-757fa74585f9","timestamp":"2026-12-01T09:36:49.615Z","type":"gemini","content":"","toolCalls":[{"id":"ls-1","name":"list_directory","args":{},"result":[{"functionResponse":{"id":"ls-1"}}],"status":"success","timestamp":"2026-12-01T09:36:49.700Z"}],"thoughts":[],"tokens":{"input":10741,"output":10,"cached":0,"thoughts":20,"tool":0,"total":10771},"model":"gemini-2.5-pro"}
{"id":"aaaa0002-7bd3-48e4-a647-757fa74585f9","timestamp":"2026-12-01T09:36:50.100Z","type":"gemini","content":"Two files.","thoughts":[],"tokens":{"input":10800,"output":3,"cached":10740,"thoughts":0,"tool":5,"total":10808},"model":"gemini-2.5-pro"}
{"id":"info-1","timestamp":"2026-12-01T09:36:50.200Z","type":"info","content":"Request cancelled."}
{"sessionId":"79a72b79-ce14-4503-8010-972c354ba029","projectHash":"a0d549cc","startTime":"2026-12-01T10:36:52.422Z","lastUpdated":"2026-12-01T10:36:52.422Z","kind":"main"}
{"$set":{"sessionId":"79a72b79-ce14-4503-8010-972c354ba029"}}
{"$rewindTo":"info-1"}
{"id":"5c8db716-f3c7-4b45-8679-71fff50a5601","timestamp":"2026-12-01T10:36:52.448Z","type":"user","content":[{"text":"and again"}]}
{"id":"573bae33-9a4d-4857-a5de-a5a0fb4a4f27","timestamp":"2026-12-01T10:36:52.505Z","type":"gemini","content":"ok.","thoughts":[],"tokens":{"input":10830,"output":1,"cached":0,"thoughts":0,"tool":0,"total":10831},"model":"gemini-3-pro-preview"}
`

func parse(t *testing.T, path, text string) *importer.Result {
	t.Helper()
	res, err := importer.Parse(strings.NewReader(text), importer.Options{Harness: Harness, Path: path, AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestParseSession(t *testing.T) {
	res := parse(t, "/h/.gemini/tmp/work/chats/session-2026-12-01T09-36-79a72b79.jsonl", session)
	s := res.Session
	if s.ID != "gemini:79a72b79-ce14-4503-8010-972c354ba029" || s.Harness != Harness || s.Provider != "google" || s.Model != "gemini-3-pro-preview" {
		t.Fatalf("session %+v", s)
	}
	type want struct {
		id, model, startedBy string
		u                    pricing.Usage
	}
	wants := []want{
		// prompt 10,741 with nothing cached; 20 thought tokens are output.
		{"aaaa0001-7bd3-48e4-a647-757fa74585f9", "gemini-2.5-pro", importer.StartedByPrompt, pricing.Usage{Input: 10741, Output: 30}},
		// 10,740 of 10,800 cached; the 5 tool-use prompt tokens are input.
		{"aaaa0002-7bd3-48e4-a647-757fa74585f9", "gemini-2.5-pro", importer.StartedByToolResult, pricing.Usage{Input: 65, CacheRead: 10740, Output: 3}},
		{"573bae33-9a4d-4857-a5de-a5a0fb4a4f27", "gemini-3-pro-preview", importer.StartedByPrompt, pricing.Usage{Input: 10830, Output: 1}},
	}
	if len(res.Records) != len(wants) {
		t.Fatalf("%d records, want %d: %+v", len(res.Records), len(wants), res.Records)
	}
	for i, w := range wants {
		r := res.Records[i].Request
		if r == nil || r.ID != w.id || r.Model != w.model || r.StartedBy != w.startedBy || r.Usage != w.u ||
			r.Provider != "google" || r.Purpose != importer.PurposeConversation || r.Thread != "" || r.At.IsZero() {
			t.Errorf("request %d = %+v, want %+v", i, r, w)
		}
	}
	if res.Records[0].Request.Line != 6 {
		t.Errorf("the first request is on line %d, want 6 (where its tokens were written)", res.Records[0].Request.Line)
	}
}

// A file read in passes, cut after every line (as a growing file is read
// by --watch), gives the requests one pass gives, once each.
func TestPassesGiveOnePass(t *testing.T) {
	path := "/h/.gemini/tmp/work/chats/session-x.jsonl"
	whole := parse(t, path, session)
	lines := strings.SplitAfter(session, "\n")
	for cut := 1; cut < len(lines); cut++ {
		first, err := importer.Parse(strings.NewReader(strings.Join(lines[:cut], "")), importer.Options{Harness: Harness, Path: path})
		if err != nil {
			t.Fatal(err)
		}
		second, err := importer.Parse(strings.NewReader(strings.Join(lines[cut:], "")), importer.Options{Harness: Harness, Path: path, State: first.State, AtEOF: true})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got := append(append([]importer.Record(nil), first.Records...), second.Records...)
		if fmt.Sprint(ids(got)) != fmt.Sprint(ids(whole.Records)) {
			t.Errorf("cut after line %d: %v, want %v", cut, ids(got), ids(whole.Records))
		}
		if second.Session.ID != whole.Session.ID {
			t.Errorf("cut %d: the second pass's session is %q", cut, second.Session.ID)
		}
	}
}

func ids(recs []importer.Record) []string {
	var out []string
	for _, r := range recs {
		if f := r.Fold; f != nil {
			out = append(out, fmt.Sprintf("fold %s %s %d units %d at %d pre %d", f.ID, f.Kind, f.CheckpointTokens, f.Units, f.Position, f.PreTokens))
			continue
		}
		out = append(out, r.Request.ID+fmt.Sprint(r.Request.Usage)+r.Request.StartedBy)
	}
	return out
}

// A subagent's file (chats/<parent session>/<its session>.jsonl) is a
// thread of its parent's session.
func TestSubagentIsAThreadOfItsParent(t *testing.T) {
	sub := `{"sessionId":"sub-1","projectHash":"a0","startTime":"2026-12-01T09:00:00Z","lastUpdated":"2026-12-01T09:00:00Z","kind":"subagent"}
{"id":"m1","timestamp":"2026-12-01T09:00:01Z","type":"gemini","content":"x","tokens":{"input":3000,"output":5,"cached":0,"total":3005},"model":"gemini-2.5-flash"}
{"id":"m2","timestamp":"2026-12-01T09:00:02Z","type":"gemini","content":"y","tokens":{"input":3100,"output":5,"cached":2900,"total":3105},"model":"gemini-2.5-flash"}
`
	res := parse(t, "/h/.gemini/tmp/work/chats/79a72b79-ce14-4503-8010-972c354ba029/sub-1.jsonl", sub)
	if res.Session.ID != "gemini:79a72b79-ce14-4503-8010-972c354ba029" || res.Session.Model != "" {
		t.Fatalf("session %+v", res.Session)
	}
	first, second := res.Records[0].Request, res.Records[1].Request
	if first.Thread != "sub-1" || first.Purpose != importer.PurposeSubagent || first.StartedBy != importer.StartedByThreadStart ||
		second.Thread != "sub-1" || second.StartedBy != "" || second.Usage != (pricing.Usage{Input: 200, CacheRead: 2900, Output: 5}) {
		t.Fatalf("requests %+v %+v", first, second)
	}
}

// Bad input is an error naming the line and the field, and the pass
// yields nothing.
func TestBadLinesNameLineAndField(t *testing.T) {
	meta := `{"sessionId":"s1","projectHash":"p","startTime":"2026-12-01T09:00:00Z"}` + "\n"
	msg := func(tokens string) string {
		return meta + `{"id":"m1","timestamp":"2026-12-01T09:00:01Z","type":"gemini","tokens":` + tokens + `,"model":"gemini-2.5-pro"}` + "\n"
	}
	for _, tc := range []struct{ name, text, want string }{
		{"not JSON", meta + "{oops\n", "session-a.jsonl:2: not a JSON object"},
		{"not a record", meta + `{"hello":1}` + "\n", `line 2: not a Gemini CLI session record: no "id"`},
		{"a negative count", msg(`{"input":-1,"output":0,"cached":0,"total":0}`), "line 2: tokens.input -1 is not a token count"},
		{"a fraction", msg(`{"input":10,"output":1.5,"cached":0,"total":0}`), "line 2: tokens.output 1.5 is not a token count"},
		{"an absurd count", msg(`{"input":10,"output":1,"cached":0,"thoughts":1e30,"total":0}`), "line 2: tokens.thoughts 1e30 is not a token count"},
		{"cached beyond the prompt", msg(`{"input":10,"output":1,"cached":11,"total":11}`), "line 2: tokens.cached 11 exceeds tokens.input 10"},
		{"a count of the wrong type", msg(`{"input":"10","output":1,"cached":0,"total":11}`), `line 2: tokens.input "10" is not a token count`},
		{"a bad time", meta + `{"id":"m1","timestamp":"yesterday","type":"gemini","tokens":{"input":10,"output":1,"cached":0,"total":11}}` + "\n", `line 2: timestamp "yesterday" is not RFC 3339`},
		{"a message before the metadata", `{"id":"m1","timestamp":"2026-12-01T09:00:01Z","type":"gemini","tokens":{"input":10,"output":1,"cached":0,"total":11}}` + "\n", "line 1: a message before the session's metadata line"},
		{"two sessions in one file", meta + `{"sessionId":"s2","projectHash":"p"}` + "\n", `line 2: sessionId "s2" differs from the file's "s1"`},
		{"an id with a slash", meta + `{"id":"../x","type":"user"}` + "\n", `line 2: id "../x" is not a message id`},
		{"a broken history edit", meta + `{"$set":{"messages":[}` + "\n", "line 2: a history edit ($set, $rewindTo) that is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := importer.Parse(strings.NewReader(tc.text), importer.Options{Harness: Harness, Path: "/x/chats/session-a.jsonl", AtEOF: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "session-a.jsonl") || res != nil {
				t.Fatalf("err = %v (result %+v), want one naming the file and %q", err, res, tc.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	meta := []byte(`{"sessionId":"s1","projectHash":"p","startTime":"2026-12-01T09:00:00Z"}` + "\n")
	claude := []byte(`{"parentUuid":null,"sessionId":"4d5611e5-241a-462a-8d15-5122611a9569","type":"user","message":{}}` + "\n")
	for _, tc := range []struct {
		path string
		head []byte
		want bool
	}{
		{"/h/.gemini/tmp/p/chats/session-2026-12-01T09-36-79a72b79.jsonl", meta, true},
		{"/anywhere/upload.jsonl", meta, true},
		{"/h/.gemini/tmp/p/chats/session-2026-12-01T09-36-79a72b79.jsonl", nil, true}, // empty yet
		{"/h/.claude/projects/p/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", claude, false},
		{"/h/.gemini/tmp/p/logs.json", []byte(`[{"sessionId":"s1"}]`), false},
	} {
		if got := Detect(tc.path, tc.head); got != tc.want {
			t.Errorf("Detect(%s, %.30q) = %v", tc.path, tc.head, got)
		}
	}
}

// A session file the real Gemini CLI 0.61.0 wrote, run as
// test/harness's TestGeminiCLIImport runs it (three headless turns, the
// second and third resuming the session, against the fake Gemini endpoint,
// whose cache was emptied before the third) with short prompts: it parses
// into the requests the endpoint served.
func TestRealSessionFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "real-0.61.0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	res := parse(t, "/h/.gemini/tmp/work/chats/session-2026-12-01T10-00-6a4a3c4e.jsonl", string(b))
	var got []pricing.Usage
	for _, r := range res.Records {
		got = append(got, r.Request.Usage)
	}
	// What the fake endpoint answered, turn by turn: promptTokenCount 7,764
	// with nothing cached, 7,786 with 7,763 cached, 7,807 with nothing
	// cached; candidatesTokenCount 1 each.
	want := []pricing.Usage{{Input: 7764, Output: 1}, {Input: 23, CacheRead: 7763, Output: 1}, {Input: 7807, Output: 1}}
	if !slices.Equal(got, want) || !strings.HasPrefix(res.Session.ID, "gemini:") {
		t.Fatalf("usage %v, want %v (session %+v)", got, want, res.Session)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(session), uint16(len(session)/2))
	f.Add([]byte(`{"sessionId":"s","projectHash":"p"}`+"\n"+`{"id":"m","timestamp":"2026-12-01T09:00:01Z","type":"gemini","tokens":{"input":5,"output":1,"cached":5}}`), uint16(20))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		path := "/h/.gemini/tmp/p/chats/session-f.jsonl"
		one, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Harness, Path: path, AtEOF: true})
		if err != nil {
			return
		}
		if one.Consumed < 0 || one.Consumed > int64(len(data)) {
			t.Fatalf("consumed %d of %d", one.Consumed, len(data))
		}
		seen := map[string]bool{}
		for _, r := range one.Records {
			if (r.Request == nil) == (r.Fold == nil) {
				t.Fatalf("a record with both or neither: %+v", r)
			}
			if f := r.Fold; f != nil {
				if seen[f.ID] || f.At.IsZero() || f.Units < 0 || f.PreTokens < 0 {
					t.Fatalf("fold %+v", f)
				}
				seen[f.ID] = true
				continue
			}
			q := r.Request
			if q.Usage != q.Usage.Clamped() || seen[q.ID] || q.ID == "" {
				t.Fatalf("request %+v (seen %v)", q, seen[q.ID])
			}
			seen[q.ID] = true
		}
		// Two passes, cut anywhere, read what one pass reads.
		c := int(cut) % (len(data) + 1)
		first, err := importer.Parse(bytes.NewReader(data[:c]), importer.Options{Harness: Harness, Path: path})
		if err != nil {
			t.Fatalf("the first pass fails where the whole succeeds: %v", err)
		}
		second, err := importer.Parse(bytes.NewReader(data[first.Consumed:]), importer.Options{Harness: Harness, Path: path, State: first.State, AtEOF: true})
		if err != nil {
			t.Fatalf("the second pass fails where the whole succeeds: %v", err)
		}
		two := append(append([]importer.Record(nil), first.Records...), second.Records...)
		if fmt.Sprint(ids(two)) != fmt.Sprint(ids(one.Records)) {
			t.Fatalf("two passes (cut %d): %v\none pass: %v", c, ids(two), ids(one.Records))
		}
	})
}

// BenchmarkParse reads a long session: 2,000 turns of a prompt, a reply
// with a tool call written twice (before and after its tokens) and the
// per-turn $set lines, ~1 KB of content each.
func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"sessionId":"79a72b79-ce14-4503-8010-972c354ba029","projectHash":"a0d549cc","startTime":"2026-12-01T09:36:49.457Z","kind":"main"}` + "\n")
	text := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	for i := range 2000 {
		fmt.Fprintf(&sb, `{"id":"u-%d","timestamp":"2026-12-01T09:36:49.484Z","type":"user","content":[{"text":%q}]}`+"\n", i, text)
		sb.WriteString(`{"$set":{"lastUpdated":"2026-12-01T09:36:49.484Z"}}` + "\n")
		reply := fmt.Sprintf(`{"id":"g-%d","timestamp":"2026-12-01T09:36:50.615Z","type":"gemini","content":%q,"toolCalls":[{"id":"t-%d","name":"read_file","args":{"path":"a.go"},"status":"success"}],"thoughts":[],`, i, text, i)
		sb.WriteString(reply + `"model":"gemini-2.5-pro"}` + "\n")
		fmt.Fprintf(&sb, `%s"tokens":{"input":%d,"output":40,"cached":%d,"thoughts":12,"tool":0,"total":%d},"model":"gemini-2.5-pro"}`+"\n", reply, 10000+i*300, 9000+i*300, 10052+i*300)
		sb.WriteString(`{"$set":{"lastUpdated":"2026-12-01T09:36:50.615Z"}}` + "\n")
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Harness, Path: "/h/.gemini/tmp/p/chats/session-b.jsonl", AtEOF: true})
		if err != nil || len(res.Records) != 2000 {
			b.Fatalf("%v, %d records", err, len(res.Records))
		}
	}
}

// A compression the real Gemini CLI 0.61.0 made (run as test/harness's
// TestGeminiCLICompressionIgnoresItsHook runs it: "hello", a long prompt,
// then another, the third turn compressing the history at a 0.1 %
// threshold): the history set holding the new <state_snapshot> is one
// summary fold, before the third request, which it started; the later
// history sets holding the same snapshot are not new folds. The endpoint
// served 7,772 / 0, 10,769 / 7,771 and (after the two summary calls the
// file does not show) 10,796 / 7,765 prompt / cached tokens.
func TestRealCompressionIsAFold(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "real-0.61.0-compression.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	res := parse(t, "/h/.gemini/tmp/work/chats/session-2026-12-01T10-03-x.jsonl", string(b))
	var kinds []string
	for _, r := range res.Records {
		if r.Fold != nil {
			kinds = append(kinds, "fold")
		} else {
			kinds = append(kinds, r.Request.StartedBy)
		}
	}
	if fmt.Sprint(kinds) != "[user-prompt user-prompt fold after-compaction]" {
		t.Fatalf("records %v", kinds)
	}
	f := res.Records[2].Fold
	if f.Kind != importer.KindSummary || f.Trigger != importer.TriggerAuto || f.Position != 2 || f.PreTokens != 10769+1 ||
		!f.CheckpointEstimated || f.CheckpointTokens <= 0 || f.CheckpointTokens > 100 || !strings.HasPrefix(f.ID, "r_imp_") {
		t.Fatalf("fold %+v", f)
	}
	if u := res.Records[3].Request.Usage; u != (pricing.Usage{Input: 10796 - 7765, CacheRead: 7765, Output: 1}) {
		t.Fatalf("the request after the fold: %+v", u)
	}
}

// Tool-output masking (context/toolOutputMaskingService.ts) sets a history
// whose old tool outputs read <tool_output_masked>…</tool_output_masked>:
// a set with more of them than the last is a prune fold of the difference;
// a resume setting the same history again is not. These lines are shaped
// after the source (the masking needs ~80k tokens of tool output, more than
// a test of the real program sends).
func TestMaskingIsAPruneFold(t *testing.T) {
	masked := func(ids ...string) string {
		var parts []string
		for _, id := range ids {
			parts = append(parts, `{"id":"`+id+`","timestamp":"2026-12-01T09:00:0`+id[len(id)-1:]+`Z","type":"user","content":[{"functionResponse":{"id":"t`+id+`","name":"read_file","response":{"output":"<tool_output_masked>\nOutput too large. Full output saved to: /h/.gemini/tmp/p/tool-outputs/t`+id+`.txt\n</tool_output_masked>"}}}]}`)
		}
		return `{"$set":{"messages":[` + strings.Join(parts, ",") + `],"lastUpdated":"2026-12-01T09:00:09Z"}}` + "\n"
	}
	text := `{"sessionId":"s1","projectHash":"p"}` + "\n" +
		`{"id":"g1","timestamp":"2026-12-01T09:00:01Z","type":"gemini","content":"x","tokens":{"input":90000,"output":10,"cached":80000,"total":90010},"model":"gemini-2.5-pro"}` + "\n" +
		masked("m1", "m2") +
		masked("m1", "m2") + // a resume: the same history again
		`{"id":"g2","timestamp":"2026-12-01T09:00:05Z","type":"gemini","content":"y","tokens":{"input":40000,"output":10,"cached":2000,"total":40010},"model":"gemini-2.5-pro"}` + "\n" +
		masked("m1", "m2", "m3")
	res := parse(t, "/h/.gemini/tmp/p/chats/session-m.jsonl", text)
	var folds []*importer.Fold
	for _, r := range res.Records {
		if r.Fold != nil {
			folds = append(folds, r.Fold)
		}
	}
	if len(folds) != 2 || folds[0].Kind != importer.KindPrune || folds[0].Units != 2 || folds[0].Position != 1 || folds[0].PreTokens != 90010 ||
		folds[1].Units != 1 || folds[1].Position != 2 || folds[0].ID == folds[1].ID {
		t.Fatalf("folds %+v", folds)
	}
	if g2 := res.Records[2].Request; g2 == nil || g2.StartedBy != importer.StartedByCompaction {
		t.Fatalf("the request after the masking: %+v", res.Records[2])
	}
	// A history set without a placeable time is an error naming the line.
	_, err := importer.Parse(strings.NewReader(`{"sessionId":"s1","projectHash":"p"}`+"\n"+`{"$set":{"messages":[{"id":"m1","content":"<tool_output_masked>"}]}}`+"\n"),
		importer.Options{Harness: Harness, Path: "/x/chats/session-b.jsonl", AtEOF: true})
	if err == nil || !strings.Contains(err.Error(), "line 2: $set.messages: no message with an RFC 3339 timestamp") {
		t.Fatalf("err = %v", err)
	}
}
