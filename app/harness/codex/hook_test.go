package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/guard/client/clienttest"
	"tollgate/pricing"
)

// ---- a rollout as Codex 0.171.0 writes it ----

const testSession = "01a230f8-67de-7770-87c0-4fb8dca3ecce"

type rolloutWriter struct {
	lines []string
	at    time.Time
	total struct{ input, cached, output int64 }
}

// add writes one line with Codex's key order: timestamp, type, then the
// payload with its own type first (and a message's id and role before its
// content), which the parsers' first-bytes checks rely on.
func (w *rolloutWriter) add(typ string, payload map[string]any) {
	var b strings.Builder
	fmt.Fprintf(&b, `{"timestamp":%q,"type":%q,"payload":{`, w.at.UTC().Format(time.RFC3339Nano), typ)
	first := true
	field := func(k string) {
		v, ok := payload[k]
		if !ok {
			return
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		delete(payload, k)
	}
	for _, k := range []string{"type", "id", "role"} {
		field(k)
	}
	for len(payload) > 0 {
		for k := range payload {
			field(k)
			break
		}
	}
	b.WriteString("}}")
	w.lines = append(w.lines, b.String())
	w.at = w.at.Add(time.Second)
}

func (w *rolloutWriter) message(role, text string) {
	kind := "input_text"
	if role == "assistant" {
		kind = "output_text"
	}
	w.add("response_item", map[string]any{"type": "message", "id": "msg_" + fmt.Sprint(len(w.lines)), "role": role,
		"content": []any{map[string]any{"type": kind, "text": text}}})
}

func (w *rolloutWriter) tokenCount(input, cached, output int64) {
	w.total.input += input
	w.total.cached += cached
	w.total.output += output
	usage := func(i, c, o int64) map[string]any {
		return map[string]any{"input_tokens": i, "cached_input_tokens": c, "cache_write_input_tokens": 0, "output_tokens": o, "reasoning_output_tokens": 0, "total_tokens": i + o}
	}
	w.add("event_msg", map[string]any{"type": "token_count", "info": map[string]any{
		"total_token_usage": usage(w.total.input, w.total.cached, w.total.output),
		"last_token_usage":  usage(input, cached, output), "model_context_window": 19000}})
}

// testRollout: the developer message and the environment context, then two
// turns of ~12 KB prompts, then a third prompt not yet sent (the PreCompact
// moment of its turn).
func testRollout(t0 time.Time) string {
	w := &rolloutWriter{at: t0}
	w.add("session_meta", map[string]any{"session_id": testSession, "id": testSession, "cwd": "/work/proj", "cli_version": "0.171.0", "model_provider": "openai"})
	w.message("developer", strings.Repeat("d", 8000))
	w.message("user", "<environment_context><cwd>/work/proj</cwd></environment_context>")
	w.add("turn_context", map[string]any{"turn_id": "turn-1", "cwd": "/work/proj", "model": "gpt-5.2-codex"})
	w.message("user", strings.Repeat("lorem ", 2000))
	w.add("event_msg", map[string]any{"type": "user_message", "message": "lorem…"})
	w.message("assistant", "ok.")
	w.tokenCount(12855, 0, 1)
	w.add("turn_context", map[string]any{"turn_id": "turn-2", "cwd": "/work/proj", "model": "gpt-5.2-codex"})
	w.message("user", strings.Repeat("ipsum ", 2000))
	w.message("assistant", "ok.")
	w.tokenCount(15970, 12800, 1)
	w.add("turn_context", map[string]any{"turn_id": "turn-3", "cwd": "/work/proj", "model": "gpt-5.2-codex"})
	w.message("user", strings.Repeat("dolor ", 2000))
	return strings.Join(w.lines, "\n") + "\n"
}

func writeRollout(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sessions", "2026", "12", "01")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "rollout-2026-12-01T09-38-35-"+testSession+".jsonl")
	if err := os.WriteFile(path, []byte(testRollout(time.Now().Add(-2*time.Minute))), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadRollout(t *testing.T) {
	path := writeRollout(t)
	ro, err := readRollout(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if ro.Session.ID != "codex:"+testSession || ro.Model != "gpt-5.2-codex" || ro.Version() != "0.171.0" || len(ro.Since) != 2 || ro.Session.ContextWindow != 19000 {
		t.Fatalf("rollout %+v", ro.Session)
	}
	if q := ro.Since[1]; q.Usage.CacheRead != 12800 || q.Usage.Input != 15970-12800 || q.Provider != "openai" {
		t.Fatalf("second request %+v", q)
	}
	// The user messages: the environment context and three ~12 KB prompts;
	// pending is the third, not yet sent.
	if ro.UserBytes < 36000 || ro.PendingBytes < 12000 || ro.PendingBytes > 12400 || ro.FirstUserBytes < 12000 || ro.FirstUserBytes > 12600 {
		t.Fatalf("user %d pending %d first %d", ro.UserBytes, ro.PendingBytes, ro.FirstUserBytes)
	}
	envelope, units, pending := ro.surface()
	// The envelope is the first prompt less its user messages: ~ the
	// developer message and the (unlogged) tools.
	if want := int64(12855) - (ro.FirstUserBytes+3)/4; envelope != want {
		t.Fatalf("envelope %d, want %d", envelope, want)
	}
	if len(units) != 2 || units[0].Tokens != 12855-envelope || units[1].Tokens != 15970-12855 || pending != 1+(ro.PendingBytes+3)/4 {
		t.Fatalf("units %+v pending %d", units, pending)
	}
	if ro.PendingUserBytes != ro.PendingBytes {
		t.Fatalf("pending user %d, pending %d: only the prompt came after the last request", ro.PendingUserBytes, ro.PendingBytes)
	}
	for _, u := range units {
		if u.Breakpoint {
			t.Fatalf("OpenAI caches are positional: no breakpoints, got %+v", u)
		}
	}
	if k := ro.keptTokens(); k != (ro.UserBytes+3)/4-(ro.PendingUserBytes+3)/4 {
		t.Fatalf("kept %d", k)
	}
}

// A real Codex rollout (0.89, no compaction) from the shared data, when it
// is there: it reads, and its surface adds up to its last prompt.
func TestReadRolloutSharedData(t *testing.T) {
	path := filepath.Join("..", "..", "..", "..", "shared", "data", "codex", "crud.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Skip("no shared data:", err)
	}
	ro, err := readRollout(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ro.Since) == 0 || ro.Session.ID == "" {
		t.Fatalf("%+v", ro.Session)
	}
	envelope, units, _ := ro.surface()
	var sum int64
	for _, u := range units {
		sum += u.Tokens
	}
	last := ro.Since[len(ro.Since)-1].Usage.Prompt()
	if envelope <= 0 || envelope+sum != last {
		t.Fatalf("envelope %d + units %d != last prompt %d", envelope, sum, last)
	}
}

func TestDecodeHookInput(t *testing.T) {
	good := `{"session_id":"s","turn_id":"t","transcript_path":"/r.jsonl","cwd":"/w","hook_event_name":"PreCompact","model":"gpt-5.2-codex","trigger":"auto"}`
	in, err := decodeHookInput([]byte(good))
	if err != nil || in.SessionID != "s" || transcriptPath(in) != "/r.jsonl" || in.TurnID != "t" {
		t.Fatalf("%+v %v", in, err)
	}
	nullPath := strings.Replace(good, `"/r.jsonl"`, "null", 1)
	if in, err := decodeHookInput([]byte(nullPath)); err != nil || transcriptPath(in) != "" {
		t.Fatalf("null transcript_path: %+v %v", in, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty input"},
		{`{"session_id":`, "not JSON"},
		{`{"session_id":3}`, "session_id: want a string"},
		{strings.Replace(good, "PreCompact", "Stop", 1), "hook_event_name"},
		{strings.Replace(good, `"s"`, `" "`, 1), "session_id: missing"},
		{strings.Replace(good, `"auto"`, `"sometimes"`, 1), "trigger"},
		{strings.Replace(good, `"/r.jsonl"`, `"r.jsonl"`, 1), "transcript_path"},
		{strings.Replace(good, `"t"`, `"`+strings.Repeat("t", 300)+`"`, 1), "turn_id"},
	} {
		if _, err := decodeHookInput([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.in, err, c.want)
		}
	}
}

func TestStopReasonSaysHowToGoOn(t *testing.T) {
	d := api.Decision{Decision: api.Decline, Reason: api.ReasonUser, Quote: &pricing.Quote{}}
	d.Quote.ColdTokens = 12000
	d.Quote.CostUSD.BreakPremium = 0.0189
	msg := stopReason(d)
	for _, want := range []string{"you chose Not now", "12000 tokens", "$0.0189", "ends this turn", "full history", "proposes the compaction again", "/compact", "mode to auto"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("%q lacks %q", msg, want)
		}
	}
}

func TestAutoCompactReadsCodexConfig(t *testing.T) {
	dir := t.TempDir()
	env := func(k string) string {
		if k == "CODEX_HOME" {
			return dir
		}
		return ""
	}
	if w, th := autoCompact(19000, env); w != 19000 || th != 17100 {
		t.Fatalf("default: %d %d", w, th)
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("model_context_window = 20000\nmodel_auto_compact_token_limit = 14000\n"), 0o600)
	if w, th := autoCompact(19000, env); w != 19000 || th != 14000 {
		t.Fatalf("configured: %d %d", w, th)
	}
	if w, th := autoCompact(0, env); w != 20000 || th != 14000 {
		t.Fatalf("no token_count yet: %d %d", w, th)
	}
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("model_auto_compact_token_limit = [\n"), 0o600)
	if w, th := autoCompact(19000, env); w != 19000 || th != 17100 {
		t.Fatalf("unreadable config: %d %d", w, th)
	}
}

// ---- against a running tollgate ----

// runHook runs the hook with a clock that stands still, so the deadline it
// sends is exactly its timeout less the margin (TestHookDeadlineCountsTheTimeSpent
// moves the clock).
func runHook(t *testing.T, stdin, dir string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	now := time.Now()
	RunCommand(context.Background(), strings.NewReader(stdin), &out, &errb, Options{Home: dir, Timeout: 60 * time.Second,
		Getenv: func(string) string { return "" }, Now: func() time.Time { return now }})
	return out.String(), errb.String()
}

func hookJSON(event, rollout, turn, trigger string) string {
	b, _ := json.Marshal(map[string]any{"session_id": testSession, "turn_id": turn, "transcript_path": rollout, "cwd": "/work/proj",
		"hook_event_name": event, "model": "gpt-5.2-codex", "trigger": trigger})
	return string(b)
}

func TestHookAskModeStopsTheTurnMutesItAndAsksAgainNextTurn(t *testing.T) {
	svc, dir, rollout, a := askWith(t, api.ChoiceNotNow)

	out, errs := runHook(t, hookJSON("PreCompact", rollout, "turn-3", "auto"), dir)
	var stop struct {
		Continue   *bool  `json:"continue"`
		StopReason string `json:"stopReason"`
	}
	if err := json.Unmarshal([]byte(out), &stop); err != nil || stop.Continue == nil || *stop.Continue || !strings.Contains(stop.StopReason, "you chose Not now") {
		t.Fatalf("stdout %q (stderr %s)", out, errs)
	}
	asked := a.Asked()
	if len(asked) != 1 || asked[0].Session != "codex:"+testSession || asked[0].Turn != "turn-3" || asked[0].DeadlineSeconds != 55 || asked[0].Quote == nil {
		t.Fatalf("asked %+v", asked)
	}
	// The quote: a positional cache, so the cold tokens after the
	// compaction are the summary plus what Codex carries over.
	if q := asked[0].Quote; q.ColdTokens <= 0 || q.CostUSD.BreakPremium < 0 {
		t.Fatalf("quote %+v", q)
	}

	// The usage so far is recorded, as the importer reads it.
	c := client.New(client.Endpoint{URL: svc.URL, Token: svc.Token()}, nil)
	var series api.Series
	if err := c.Get(context.Background(), "/v1/sessions/codex:"+testSession+"/series", &series); err != nil {
		t.Fatal(err)
	}
	if series.Session.Harness != "codex" || series.Session.Requests != 2 || series.ContextWindow != 19000 || series.ThresholdTokens != 17100 {
		t.Fatalf("session %+v window %d threshold %d", series.Session, series.ContextWindow, series.ThresholdTokens)
	}
	if len(series.Folds) != 1 || series.Folds[0].Decision != "decline" || series.Folds[0].Reason != "user" || series.Folds[0].Trigger != "pressure" {
		t.Fatalf("folds %+v", series.Folds)
	}

	// The same turn again: muted, not asked.
	if out, _ := runHook(t, hookJSON("PreCompact", rollout, "turn-3", "auto"), dir); !strings.Contains(out, "declined earlier in this turn") || len(a.Asked()) != 1 {
		t.Fatalf("muted: %q asked %d", out, len(a.Asked()))
	}
	// The next turn asks again: Allow once, no output; the PostCompact
	// hook then reports that it landed.
	a.SetChoice(api.ChoiceAllowOnce)
	if out, errs := runHook(t, hookJSON("PreCompact", rollout, "turn-4", "auto"), dir); out != "" || len(a.Asked()) != 2 {
		t.Fatalf("allow once: %q (%s) asked %d", out, errs, len(a.Asked()))
	}
	if out, errs := runHook(t, hookJSON("PostCompact", rollout, "turn-4", "auto"), dir); out != "" || strings.Contains(errs, "tollgate:") {
		t.Fatalf("PostCompact: %q %s", out, errs)
	}
	c.Get(context.Background(), "/v1/sessions/codex:"+testSession+"/series", &series)
	if f := series.Folds; series.Session.Requests != 2 || len(f) != 3 || f[1].Reason != "muted" || f[0].Applied != nil || f[2].Applied == nil || !*f[2].Applied {
		t.Fatalf("after allow: requests %d folds %+v", series.Session.Requests, series.Folds)
	}
	if m, err := home.ReadMarker(dir, Name); err != nil || m.LastDecision != "allow (user)" || m.Version != "0.171.0" {
		t.Fatalf("marker %+v %v", m, err)
	}
}

func TestHookFailsOpen(t *testing.T) {
	dir := t.TempDir() // nothing running here
	t.Setenv("TOLLGATE_URL", "")
	out, errs := runHook(t, hookJSON("PreCompact", "/nonexistent/rollout.jsonl", "t", "auto"), dir)
	if out != "" || !strings.Contains(errs, "not running") {
		t.Fatalf("not running: stdout %q stderr %q", out, errs)
	}
	out, errs = runHook(t, `{"session_id":`, dir)
	if out != "" || !strings.Contains(errs, "malformed") {
		t.Fatalf("malformed: stdout %q stderr %q", out, errs)
	}
}

// The compaction is quoted as OpenAI bills Codex's two requests, with the
// built-in gpt-5.2-codex prices: the compaction call re-reads the history
// it was last sent from the cache (whole 128-token blocks), pays the miss
// price for the rest (the unsent prompt, the trigger) and the output price
// for the summary; the next request keeps the envelope cached and re-reads
// the summary and the user messages Codex carries over cold. Writes cost
// nothing extra.
func TestCompactionQuotedAsOpenAIBillsIt(t *testing.T) {
	ro, err := readRollout(context.Background(), writeRollout(t))
	if err != nil {
		t.Fatal(err)
	}
	now := ro.LastAt.Add(30 * time.Second)
	in := hookInput{SessionID: testSession, TurnID: "turn-3", HookEventName: codexPreCompact, Trigger: "auto"}
	req := rewriteRequest(in, &ro, Options{Timeout: 60 * time.Second, Now: func() time.Time { return now }}, 19000, 14000, 55*time.Second)
	m, ok := pricing.Builtin("openai", "gpt-5.2-codex")
	if !ok {
		t.Fatal("no built-in gpt-5.2-codex")
	}
	q, err := pricing.NewQuote(pricing.QuoteRequest{Model: m, EnvelopeTokens: req.EnvelopeTokens, Units: req.Surface, Plan: req.Plan,
		ContextWindow: req.ContextWindow, ThresholdTokens: req.ThresholdTokens, IdleSeconds: req.IdleSeconds, At: now})
	if err != nil {
		t.Fatal(err)
	}
	block := func(n int64) int64 { return n / 128 * 128 }
	sent := req.EnvelopeTokens
	for _, u := range req.Surface {
		sent += u.Tokens
	}
	_, _, pending := ro.surface()
	summary, kept := m.EstimatedSummaryTokens, ro.keptTokens()
	call := q.SummaryCall
	if call == nil || call.PromptTokens != sent+pending+codexCompactionInstructionTokens || call.CachedTokens != block(sent) ||
		call.ColdTokens != call.PromptTokens-block(sent) || call.OutputTokens != summary {
		t.Fatalf("compaction call %+v (sent %d, pending %d)", call, sent, pending)
	}
	if q.ColdTokens != req.EnvelopeTokens-block(req.EnvelopeTokens)+summary+kept {
		t.Fatalf("next request: %d cold, want the envelope's last partial block + summary %d + kept %d", q.ColdTokens, summary, kept)
	}
	perM := func(n int64, price float64) float64 { return float64(n) * price / 1e6 }
	wantCall := perM(call.CachedTokens, m.CacheHitPricePerMTokens) + perM(call.ColdTokens, m.PricePerMTokens) + perM(summary, m.OutputPricePerMTokens)
	if d := q.CostUSD.SummaryCall - wantCall; d > 1e-9 || d < -1e-9 {
		t.Fatalf("compaction call $%.6f, want $%.6f", q.CostUSD.SummaryCall, wantCall)
	}
	if m.CacheWritePricePerMTokens != 0 {
		t.Fatal("OpenAI bills no cache writes")
	}
}

// A PostCompact reports only its own turn's compaction: an allowed fold of
// another turn (whose compaction never came) is not marked applied by it.
func TestPostCompactReportsOnlyItsTurn(t *testing.T) {
	svc, dir, rollout, a := askWith(t, api.ChoiceAllowOnce)
	if out, errs := runHook(t, hookJSON("PreCompact", rollout, "turn-3", "auto"), dir); out != "" || len(a.Asked()) != 1 {
		t.Fatalf("allow once: %q (%s) asked %d", out, errs, len(a.Asked()))
	}
	c := client.New(client.Endpoint{URL: svc.URL, Token: svc.Token()}, nil)
	folds := func() []api.Fold {
		t.Helper()
		var series api.Series
		if err := c.Get(context.Background(), "/v1/sessions/codex:"+testSession+"/series", &series); err != nil {
			t.Fatal(err)
		}
		return series.Folds
	}
	if _, errs := runHook(t, hookJSON("PostCompact", rollout, "turn-9", "auto"), dir); strings.Contains(errs, "tollgate:") {
		t.Fatalf("PostCompact of another turn: %s", errs)
	}
	if f := folds(); len(f) != 1 || f[0].Turn != "turn-3" || f[0].Applied != nil {
		t.Fatalf("another turn's PostCompact reported turn-3's fold: %+v", f)
	}
	runHook(t, hookJSON("PostCompact", rollout, "turn-3", "auto"), dir)
	if f := folds(); len(f) != 1 || f[0].Applied == nil || !*f[0].Applied {
		t.Fatalf("its own turn's PostCompact: %+v", f)
	}
}

// slowRecording stands for a slow tollgate: each recorded request moves the
// hook's clock on by step, as if it had taken that long.
type slowRecording struct {
	clock *testClock
	step  time.Duration
}

func (s slowRecording) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/requests") {
		s.clock.advance(s.step)
	}
	return res, err
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Codex counts the hook's timeout from its start, so the deadline the
// question gets is what is left after reading and recording, less the
// margin; recording stops when its share of the time is spent, and is
// skipped when the question would get too little. The clock moves only
// when the test says so: no wall-clock asserts.
func TestHookDeadlineCountsTheTimeSpent(t *testing.T) {
	svc, dir := StartService.Start(t, "ask")
	rollout := writeRollout(t)
	owner, err := home.ReadOwnerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := clienttest.StartAnswerer(t, svc.URL, owner, api.ChoiceNotNow)
	plain := client.New(client.Endpoint{URL: svc.URL, Token: svc.Token()}, nil)
	requests := func(session string) int64 {
		t.Helper()
		var series api.Series
		if err := plain.Get(context.Background(), "/v1/sessions/codex:"+session+"/series", &series); err != nil {
			t.Fatal(err)
		}
		return series.Session.Requests
	}
	cases := []struct {
		name     string
		spent    time.Duration // before the hook reads its input
		step     time.Duration // each recorded request takes this long
		deadline float64       // seconds the question gets
		recorded int64
	}{
		// 60 s: recording may spend 20 s; the first request takes 25, so
		// the second waits for later; the question gets 60-25-5.
		{"slow tollgate", 0, 25 * time.Second, 30, 1},
		// 45 s already gone: 15 left, and the question needs 5+10 of them.
		{"little left", 45 * time.Second, time.Second, 10, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := fmt.Sprintf("%s-%d", testSession, i)
			clock := &testClock{t: time.Now()}
			start := clock.now().Add(-c.spent)
			cl := client.New(client.Endpoint{URL: svc.URL, Token: svc.Token(), Transport: slowRecording{clock, c.step}}, nil)
			in := hookInput{SessionID: session, TurnID: "turn-3", TranscriptPath: &rollout, HookEventName: codexPreCompact, Trigger: "auto", Model: "gpt-5.2-codex"}
			v := decidePreCompact(context.Background(), cl, in, Options{Timeout: 60 * time.Second, Now: clock.now,
				Getenv: func(string) string { return "" }}, start)
			if !v.Stop {
				t.Fatalf("verdict %+v", v)
			}
			asked := a.Asked()
			if len(asked) != i+1 || asked[i].Session != "codex:"+session || asked[i].DeadlineSeconds != c.deadline {
				t.Fatalf("asked %+v, want a deadline of %vs", asked[len(asked)-1], c.deadline)
			}
			if got := requests(session); got != c.recorded {
				t.Fatalf("%d requests recorded, want %d", got, c.recorded)
			}
		})
	}
}

// askWith starts a tollgate in ask mode whose questions an answerer
// answers with choice, and writes a rollout for the hook to read.
func askWith(t *testing.T, choice string) (svc clienttest.Service, dir, rollout string, a *clienttest.Answerer) {
	t.Helper()
	svc, dir = StartService.Start(t, "ask")
	owner, err := home.ReadOwnerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	return svc, dir, writeRollout(t), clienttest.StartAnswerer(t, svc.URL, owner, choice)
}
