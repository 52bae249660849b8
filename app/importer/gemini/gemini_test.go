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
			q := r.Request
			if q == nil || r.Fold != nil {
				t.Fatalf("a record that is not one request: %+v", r)
			}
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
