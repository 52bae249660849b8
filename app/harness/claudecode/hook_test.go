package claudecode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/ccfold"
	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
)

// ---- fixtures ----

// ccAssistant is one assistant transcript line.
func ccAssistant(msgID, reqID string, at time.Time, input, cacheRead, cacheWrite, output int64, sidechain bool) string {
	b, _ := json.Marshal(map[string]any{
		"type": "assistant", "timestamp": at.UTC().Format(time.RFC3339Nano), "requestId": reqID, "isSidechain": sidechain,
		"message": map[string]any{"id": msgID, "model": "claude-sonnet-4-5", "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "ok"}},
			"usage":   map[string]any{"input_tokens": input, "cache_read_input_tokens": cacheRead, "cache_creation_input_tokens": cacheWrite, "output_tokens": output}},
	})
	return string(b)
}

func ccUser(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	return string(b)
}

// testTranscript: one fold, then three requests (the first streamed in two
// lines), a subagent request, a synthetic notice and a pending prompt.
func testTranscript(t0 time.Time) string {
	lines := []string{
		ccUser("first prompt"),
		ccAssistant("msg_0", "req_0", t0, 10, 0, 20000, 300, false),
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":20300}}`,
		`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"` + strings.Repeat("s", 4000) + `"}}`,
		ccAssistant("msg_1", "req_1", t0.Add(time.Minute), 5, 9000, 3000, 1, false),
		ccAssistant("msg_1", "req_1", t0.Add(time.Minute), 5, 9000, 3000, 200, false), // the same message, final figures
		ccUser("a tool result"),
		ccAssistant("msg_s", "req_s", t0.Add(90*time.Second), 100, 0, 500, 50, true),
		ccAssistant("msg_2", "req_2", t0.Add(2*time.Minute), 5, 12000, 2500, 100, false),
		`{"type":"assistant","message":{"id":"msg_syn","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}`,
		`not json at all`,
		ccAssistant("msg_3", "req_3", t0.Add(3*time.Minute), 5, 14000, 1000, 80, false),
		ccUser(strings.Repeat("p", 800)),
	}
	return strings.Join(lines, "\n") + "\n"
}

// parseTestTranscript reads a transcript as the hook reads a live one.
func parseTestTranscript(text string) (transcript, error) {
	res, err := importer.Parse(strings.NewReader(text), importer.Options{Harness: cclog.Name,
		Path: "11111111-2222-3333-4444-555555555555.jsonl", AtEOF: true, Live: true, Trace: true})
	if err != nil {
		return transcript{}, err
	}
	return newTranscript(res), nil
}

func TestParseClaudeTranscript(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	tr, err := parseTestTranscript(testTranscript(t0))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var reqs []*importer.Request
	for _, rec := range tr.Records {
		if rec.Request != nil {
			ids = append(ids, rec.Request.ID)
			reqs = append(reqs, rec.Request)
		}
	}
	if got := strings.Join(ids, ","); got != "msg_0:req_0,msg_1:req_1,msg_s:req_s,msg_2:req_2,msg_3:req_3" {
		t.Fatalf("requests %s (streamed lines deduplicated, synthetic skipped)", got)
	}
	if r := reqs[1]; r.Usage.Output != 200 || r.Usage.CacheRead != 9000 {
		t.Fatalf("streamed message keeps its final figures: %+v", r.Usage)
	}
	if reqs[2].Purpose != importer.PurposeSubagent || tr.Folds != 1 || len(tr.Since) != 3 {
		t.Fatalf("sidechain %v folds %d since %v", reqs[2].Purpose, tr.Folds, tr.Since)
	}
	if tr.Checkpoint < 1000 || !tr.LastAt.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("checkpoint %d, lastAt %v", tr.Checkpoint, tr.LastAt)
	}
	envelope, units := tr.surface()
	// The envelope is the cached prefix of the first request after the fold.
	if envelope != 9000 {
		t.Fatalf("envelope %d, want 9000", envelope)
	}
	want := []struct {
		id     string
		tokens int64
		bp     bool
	}{{"msg_1:req_1", 3005, true}, {"msg_2:req_2", 14505 - 12005, true}, {"msg_3:req_3", 15005 - 14505, true}}
	if len(units) != 4 {
		t.Fatalf("units %+v", units)
	}
	for i, w := range want {
		if units[i].ID != w.id || units[i].Tokens != w.tokens || units[i].Breakpoint != w.bp {
			t.Fatalf("unit %d: %+v, want %+v", i, units[i], w)
		}
	}
	// The last output plus the pending prompt (content bytes / 4).
	if u := units[3]; u.ID != "pending" || u.Tokens < 80+200 || u.Breakpoint {
		t.Fatalf("pending unit %+v", u)
	}
}

func TestParseClaudeTranscriptWithoutFoldUsesTheSmallestCacheRead(t *testing.T) {
	t0 := time.Now()
	text := strings.Join([]string{
		ccAssistant("a", "1", t0, 100, 0, 8000, 10, false),
		ccAssistant("b", "2", t0, 100, 6000, 2500, 10, false),
		ccAssistant("c", "3", t0, 100, 8500, 1000, 10, false),
	}, "\n")
	tr, _ := parseTestTranscript(text)
	envelope, units := tr.surface()
	if envelope != 6000 || len(units) != 4 || units[0].Tokens != 8100-6000 {
		t.Fatalf("envelope %d units %+v", envelope, units)
	}
}

func TestDecodeClaudeHookInput(t *testing.T) {
	good := `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p1","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`
	if in, err := decodeClaudeHookInput([]byte(good)); err != nil || in.SessionID != "s1" || in.PromptID != "p1" || in.CustomInstructions != nil {
		t.Fatalf("%+v %v", in, err)
	}
	for _, c := range []struct{ body, field string }{
		{``, "empty"},
		{`nope`, "not JSON"},
		{`{"session_id":1,"hook_event_name":"PreCompact","trigger":"auto"}`, "session_id"},
		{`{"session_id":"s","hook_event_name":"Stop","trigger":"auto"}`, "hook_event_name"},
		{`{"session_id":"s","hook_event_name":"PostCompact","trigger":"auto","compact_summary":[]}`, "compact_summary"},
		{`{"hook_event_name":"PreCompact","trigger":"auto"}`, "session_id"},
		{`{"session_id":"s","hook_event_name":"PreCompact","trigger":"sometimes"}`, "trigger"},
		{`{"session_id":"s","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":7}`, "custom_instructions"},
	} {
		_, err := decodeClaudeHookInput([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: err %v, want one naming %s", c.body, err, c.field)
		}
	}
}

func TestClaudeWindow(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if w, th := cclog.AutoCompact("claude-sonnet-4-5", get); w != 200000 || th != 167000 {
		t.Fatalf("default %d %d", w, th)
	}
	if w, _ := cclog.AutoCompact("claude-sonnet-4-5[1m]", get); w != 1000000 {
		t.Fatalf("1m %d", w)
	}
	// 10 % of the effective window (100k less the 20k output reserve)
	env["CLAUDE_CODE_AUTO_COMPACT_WINDOW"], env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = "100000", "10"
	if w, th := cclog.AutoCompact("x", get); w != 100000 || th != 8000 {
		t.Fatalf("override %d %d", w, th)
	}
	env["AI_AGENT"] = "claude-code_2-1-332_harness"
	if v := claudeVersion(get); v != "2.1.332" {
		t.Fatalf("version %q", v)
	}
}

func FuzzDecodeClaudeHookInput(f *testing.F) {
	f.Add([]byte(`{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","prompt_id":"p1","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":null}`))
	f.Add([]byte(`{"session_id":"s","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"keep the plan"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeClaudeHookInput(b)
		if err == nil && (in.SessionID == "" || in.HookEventName != claudePreCompact && in.HookEventName != claudePostCompact) {
			t.Fatalf("accepted %q as %+v", b, in)
		}
	})
}

func FuzzParseClaudeTranscript(f *testing.F) {
	f.Add([]byte(testTranscript(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-5,"cache_read_input_tokens":9}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := parseTestTranscript(string(b))
		if err != nil {
			t.Fatal(err)
		}
		envelope, units := tr.surface()
		if envelope < 0 {
			t.Fatalf("envelope %d", envelope)
		}
		seen := map[string]bool{}
		for _, u := range units {
			if u.Tokens <= 0 || seen[u.ID] {
				t.Fatalf("unit %+v (duplicate %v)", u, seen[u.ID])
			}
			seen[u.ID] = true
		}
		// The prediction the hook sends is one the API accepts.
		c := coldPrediction(ccfold.Predict(tr.Trace, nil, ccfold.Env{}, "auto", time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)))
		if c.Low < 0 || c.High < c.Low || c.CacheExpiredSeconds < 0 || len(c.Parts) > 16 {
			t.Fatalf("prediction %+v", c)
		}
	})
}

// The hook reports each request with the thread and what started it, as
// the importer reads them: the cache-break ledger judges a request against
// the previous one of its thread.
func TestRequestsOfKeepThreadAndStartedBy(t *testing.T) {
	recs := []importer.Record{{Request: &importer.Request{ID: "m1", Purpose: importer.PurposeSubagent, Thread: "agent-a1", StartedBy: "thread-start"}}}
	got := requestsOf(recs, nil)
	if len(got) != 1 || got[0].Thread != "agent-a1" || got[0].StartedBy != "thread-start" || got[0].Purpose != importer.PurposeSubagent {
		t.Fatalf("%+v", got)
	}
}
