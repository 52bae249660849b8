package guard

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
	"tollgate/storage/sqlite"
)

// gateEnv is a real server on loopback over a real SQLite file.
type gateEnv struct {
	t        testing.TB
	srv      *Server
	ts       *httptest.Server
	store    *sqlite.DB
	settings *testSettings
}

func newGate(t testing.TB, mode string) *gateEnv {
	t.Helper()
	store := openTestStore(t)
	return newGateOn(t, mode, store)
}

func newGateOn(t testing.TB, mode string, store *sqlite.DB) *gateEnv {
	t.Helper()
	return newGateAt(t, mode, store, nil)
}

// newGateAt is newGateOn on the clock now (nil: time.Now).
func newGateAt(t testing.TB, mode string, store *sqlite.DB, now func() time.Time) *gateEnv {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	settings := newTestSettings(mode)
	srv, err := NewServer(context.Background(), Options{
		Version: "test", Token: func() string { return testToken }, OwnerToken: func() string { return testOwnerToken }, BaseURL: "http://" + ln.Addr().String(),
		Settings: settings, Store: store, Pricer: testPricer{}, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := &httptest.Server{Listener: ln, Config: &http.Server{Handler: srv.Handler()}}
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return &gateEnv{t: t, srv: srv, ts: ts, store: store, settings: settings}
}

// tokenFor is the token of the caller that may send method path: the
// harness's, or the owner's for what needs the owner (the permission table
// is TestPermissionTable's).
func (g *gateEnv) tokenFor(method, path string) string {
	if g.srv.needsOwner(httptest.NewRequest(method, path, nil)) {
		return testOwnerToken
	}
	return testToken
}

// call sends an authenticated JSON request and decodes the answer.
func (g *gateEnv) call(method, path string, body any, out any) int {
	g.t.Helper()
	res, raw := clienttest.Do(g.t, method, g.ts.URL+path, g.tokenFor(method, path), body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			g.t.Fatalf("%s %s: decoding %q: %v", method, path, raw, err)
		}
	}
	return res.StatusCode
}

// rewriteBody is a surface of n units of 1,000 tokens after a 13k envelope,
// a summary of units 0…n/2 and prunes of two tail units.
func rewriteBody(n int, turn string, extra map[string]any) map[string]any {
	surface := make([]map[string]any, n)
	for i := range surface {
		surface[i] = map[string]any{"id": fmt.Sprintf("seq-%d", i), "tokens": 1000, "kind": "tool-result"}
	}
	b := map[string]any{
		"profile": "deepseek-flash", "trigger": "pressure", "contextWindow": n * 1100, "thresholdTokens": n * 900,
		"envelopeTokens": 13000, "surface": surface,
		"plan": map[string]any{
			"prune":     []map[string]any{{"id": fmt.Sprintf("seq-%d", n-3), "tokensAfter": 100}, {"id": fmt.Sprintf("seq-%d", n-2), "tokensAfter": 100}},
			"summarize": map[string]any{"start": "seq-0", "end": fmt.Sprintf("seq-%d", n/2), "estimatedTokens": 800, "instructionTokens": 470},
		},
	}
	if turn != "" {
		b["turn"] = turn
	}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// answerQuietly answers a question and ignores transport errors: for
// background answerers that may outlive their test.
func (g *gateEnv) answerQuietly(rewrite, choice string) {
	clienttest.Send(nil, clienttest.NewRequest("POST", g.ts.URL+"/v1/rewrites/"+rewrite+"/answer", testOwnerToken, map[string]string{"choice": choice}))
}

func (g *gateEnv) ask(session string, body map[string]any) (int, api.Decision) {
	var d api.Decision
	code := g.call("POST", "/v1/sessions/"+session+"/rewrites", body, &d)
	return code, d
}

// sse is a live /v1/events subscription.
type sse struct {
	events chan sseEvent
	cancel func()
}

type sseEvent struct {
	name string
	data json.RawMessage
}

func (g *gateEnv) subscribe(answers bool) *sse {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	path := "/v1/events"
	if answers {
		path += "?answers=1"
	}
	res, err := http.DefaultClient.Do(clienttest.NewRequest("GET", g.ts.URL+path, g.tokenFor("GET", path), nil).WithContext(ctx))
	if err != nil || res.StatusCode != 200 {
		g.t.Fatalf("subscribe: %v %v", err, res)
	}
	s := &sse{events: make(chan sseEvent, 1024), cancel: func() { cancel(); res.Body.Close() }}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var name string
		first := true
		for sc.Scan() {
			line := sc.Text()
			if first && line == "" {
				close(ready)
				first = false
			}
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				s.events <- sseEvent{name: name, data: json.RawMessage(strings.TrimPrefix(line, "data: "))}
			}
		}
		close(s.events)
	}()
	<-ready // the hub has registered the subscriber
	g.t.Cleanup(s.cancel)
	return s
}

// next waits for the next event of a name.
func (s *sse) next(t *testing.T, name string) json.RawMessage {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended waiting for %s", name)
			}
			if ev.name == name {
				return ev.data
			}
		case <-timeout:
			t.Fatalf("no %s event", name)
		}
	}
}

func TestAutoModeAllowsAtOnceWithTheRecommendedApply(t *testing.T) {
	g := newGate(t, ModeAuto)
	code, d := g.ask("s1", rewriteBody(40, "7", nil))
	if code != 200 || d.Decision != api.Allow || d.Reason != api.ReasonAuto || d.Status != api.StatusDecided {
		t.Fatalf("auto: %d %+v", code, d)
	}
	if d.Quote == nil || d.Order != d.Quote.Recommended || d.Apply == nil {
		t.Fatalf("auto answer lacks quote/order/apply: %+v", d)
	}
	if !reflect.DeepEqual(*d.Apply, d.Quote.Apply) {
		t.Fatalf("apply %+v is not the recommended order's %+v", *d.Apply, d.Quote.Apply)
	}
	rec, err := g.store.Rewrite(context.Background(), d.Rewrite)
	if err != nil || rec.Decision != api.Allow || rec.Reason != api.ReasonAuto || rec.PredictedCold == nil || *rec.PredictedCold != d.Quote.ColdTokens {
		t.Fatalf("stored %+v %v", rec, err)
	}
}

// A harness's prediction (the Claude Code hook's band) is stored with the
// rewrite, so the series' fold shows it.
func TestAPredictionsBandIsStored(t *testing.T) {
	g := newGate(t, ModeAuto)
	pred := map[string]any{"low": 9000, "high": 15000, "parts": []map[string]any{{"name": "summary", "tokens": 4300}, {"name": "files", "tokens": 7000, "count": 5}}}
	code, d := g.ask("s1", rewriteBody(40, "7", map[string]any{"prediction": pred}))
	if code != 200 || d.Decision != api.Allow {
		t.Fatalf("%d %+v", code, d)
	}
	rec, err := g.store.Rewrite(context.Background(), d.Rewrite)
	if err != nil || rec.PredictedBand == nil || rec.PredictedBand.Low != 9000 || rec.PredictedBand.High != 15000 {
		t.Fatalf("stored %+v %v", rec.PredictedBand, err)
	}
	var bad api.ErrorBody
	pred["low"] = -1
	if code := g.call("POST", "/v1/sessions/s1/rewrites", rewriteBody(40, "8", map[string]any{"prediction": pred}), &bad); code != 400 || bad.Error.Field != "prediction.low" {
		t.Fatalf("bad prediction: %d %+v", code, bad)
	}
}

func TestOffModeAllowsUnpricedAndStillRecords(t *testing.T) {
	g := newGate(t, ModeOff)
	code, d := g.ask("s1", rewriteBody(20, "1", nil))
	if code != 200 || d.Decision != api.Allow || d.Reason != api.ReasonOff || d.Quote != nil {
		t.Fatalf("off: %d %+v", code, d)
	}
	if d.Apply == nil || d.Apply.Summarize == nil || d.Apply.Summarize.Start != "seq-0" || len(d.Apply.Prune) != 2 {
		t.Fatalf("off must apply the plan as shipped: %+v", d.Apply)
	}
	if _, err := g.store.Rewrite(context.Background(), d.Rewrite); err != nil {
		t.Fatalf("off-mode rewrite not recorded: %v", err)
	}
}

func TestAskFailsClosedWithoutAQuestionProvider(t *testing.T) {
	g := newGate(t, ModeAsk)
	mon := g.subscribe(false) // a monitoring client must not count
	_ = mon
	code, d := g.ask("s1", rewriteBody(20, "1", nil))
	if code != 200 || d.Decision != api.Decline || d.Reason != api.ReasonNoQuestionProvider {
		t.Fatalf("ask without provider: %d %+v", code, d)
	}
	if !strings.Contains(d.Message, "mode: auto") {
		t.Fatalf("message %q does not say how to allow it", d.Message)
	}
	if d.Apply == nil || d.Apply.Summarize != nil || len(d.Apply.Prune) != 0 {
		t.Fatalf("a decline applies nothing: %+v", d.Apply)
	}
}

func TestAskAllowOnceAndAlwaysSessionPersistsOverARestart(t *testing.T) {
	store := openTestStore(t)
	g := newGateOn(t, ModeAsk, store)
	ui := g.subscribe(true)

	type result struct {
		code int
		d    api.Decision
	}
	done := make(chan result, 1)
	go func() {
		c, d := g.ask("s1", rewriteBody(30, "1", map[string]any{"deadlineSeconds": 20}))
		done <- result{c, d}
	}()
	var pending api.RewritePending
	json.Unmarshal(ui.next(t, EventRewritePending), &pending)
	if pending.Session != "s1" || pending.Quote == nil || pending.DeadlineSeconds != 20 {
		t.Fatalf("pending event %+v", pending)
	}
	var ans api.Decision
	if code := g.call("POST", "/v1/rewrites/"+pending.Rewrite+"/answer", map[string]string{"choice": "allow-once"}, &ans); code != 200 {
		t.Fatalf("answer: %d", code)
	}
	r := <-done
	if r.code != 200 || r.d.Decision != api.Allow || r.d.Reason != api.ReasonUser || r.d.Rewrite != pending.Rewrite {
		t.Fatalf("harness got %d %+v", r.code, r.d)
	}
	json.RawMessage(ui.next(t, EventRewriteDecided)).MarshalJSON()

	// Always allow (this session): the session turns auto, stored.
	go func() { c, d := g.ask("s1", rewriteBody(30, "2", nil)); done <- result{c, d} }()
	json.Unmarshal(ui.next(t, EventRewritePending), &pending)
	g.call("POST", "/v1/rewrites/"+pending.Rewrite+"/answer", map[string]string{"choice": "always-session"}, nil)
	if r := <-done; r.d.Decision != api.Allow {
		t.Fatalf("always-session answer: %+v", r.d)
	}
	var ms api.ModeState
	g.call("GET", "/v1/mode?session=s1", nil, &ms)
	if ms.Mode != ModeAuto || ms.Scope != "session" {
		t.Fatalf("mode after always-session: %+v", ms)
	}
	// A restart (new server, same database) keeps it.
	g2 := newGateOn(t, ModeAsk, store)
	code, d := g2.ask("s1", rewriteBody(30, "3", nil))
	if code != 200 || d.Decision != api.Allow || d.Reason != api.ReasonAuto {
		t.Fatalf("after restart: %d %+v", code, d)
	}
}

func TestTimeoutDeclinesAndALateAnswerIsRefused(t *testing.T) {
	g := newGate(t, ModeAsk)
	ui := g.subscribe(true)
	start := time.Now()
	done := make(chan api.Decision, 1)
	go func() { _, d := g.ask("s1", rewriteBody(20, "5", map[string]any{"deadlineSeconds": 1})); done <- d }()
	var pending api.RewritePending
	json.Unmarshal(ui.next(t, EventRewritePending), &pending)
	d := <-done
	if d.Decision != api.Decline || d.Reason != api.ReasonTimeout {
		t.Fatalf("timeout: %+v", d)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("declined after %v, before the 1 s deadline", el)
	}
	if code := g.call("POST", "/v1/rewrites/"+pending.Rewrite+"/answer", map[string]string{"choice": "allow-once"}, nil); code != http.StatusConflict {
		t.Fatalf("late answer: %d, want 409", code)
	}
	// The timeout mutes the rest of the turn.
	_, d = g.ask("s1", rewriteBody(20, "5", nil))
	if d.Reason != api.ReasonMuted {
		t.Fatalf("after a timeout in turn 5: %+v", d)
	}
}

func TestAskTimeoutFromConfigBoundsTheDeadline(t *testing.T) {
	g := newGate(t, ModeAsk)
	g.settings.askTimeout = 500 * time.Millisecond
	ui := g.subscribe(true)
	go g.ask("s1", rewriteBody(20, "", map[string]any{"deadlineSeconds": 60}))
	var pending api.RewritePending
	json.Unmarshal(ui.next(t, EventRewritePending), &pending)
	if pending.DeadlineSeconds != 0.5 {
		t.Fatalf("deadline %v s, want min(askTimeout 0.5, 60)", pending.DeadlineSeconds)
	}
}

func TestNotNowMutesTheRestOfTheTurnOnly(t *testing.T) {
	g := newGate(t, ModeAsk)
	ui := g.subscribe(true)
	answerNext := func(choice string) {
		var p api.RewritePending
		json.Unmarshal(ui.next(t, EventRewritePending), &p)
		g.call("POST", "/v1/rewrites/"+p.Rewrite+"/answer", map[string]string{"choice": choice}, nil)
	}
	go answerNext("not-now")
	if _, d := g.ask("s1", rewriteBody(20, "17", nil)); d.Decision != api.Decline || d.Reason != api.ReasonUser {
		t.Fatalf("not now: %+v", d)
	}
	if _, d := g.ask("s1", rewriteBody(20, "17", nil)); d.Reason != api.ReasonMuted {
		t.Fatalf("same turn: %+v, want muted", d)
	}
	// A number turn is the same turn as its text.
	body := rewriteBody(20, "", nil)
	body["turn"] = 17
	if _, d := g.ask("s1", body); d.Reason != api.ReasonMuted {
		t.Fatalf("turn 17 as a number: %+v, want muted", d)
	}
	// Another session is not muted; the next turn asks again.
	go answerNext("allow-once")
	if _, d := g.ask("s2", rewriteBody(20, "17", nil)); d.Reason != api.ReasonUser {
		t.Fatalf("other session: %+v", d)
	}
	go answerNext("allow-once")
	if _, d := g.ask("s1", rewriteBody(20, "18", nil)); d.Reason != api.ReasonUser || d.Decision != api.Allow {
		t.Fatalf("next turn: %+v", d)
	}
	// Without a turn nothing is muted.
	go answerNext("not-now")
	g.ask("s3", rewriteBody(20, "", nil))
	go answerNext("allow-once")
	if _, d := g.ask("s3", rewriteBody(20, "", nil)); d.Reason != api.ReasonUser || d.Decision != api.Allow {
		t.Fatalf("no turn: %+v", d)
	}
}

func TestOneAnswerWinsTheSecondGets409(t *testing.T) {
	g := newGate(t, ModeAsk)
	ui := g.subscribe(true)
	g.subscribe(true) // a second UI
	go g.ask("s1", rewriteBody(20, "1", nil))
	var p api.RewritePending
	json.Unmarshal(ui.next(t, EventRewritePending), &p)
	codes := make(chan int, 2)
	for _, choice := range []string{"allow-once", "not-now"} {
		go func(c string) {
			codes <- g.call("POST", "/v1/rewrites/"+p.Rewrite+"/answer", map[string]string{"choice": c}, nil)
		}(choice)
	}
	a, b := <-codes, <-codes
	if !(a == 200 && b == 409 || a == 409 && b == 200) {
		t.Fatalf("two answers: %d and %d, want one 200 and one 409", a, b)
	}
}

func TestPricingFailureAllows(t *testing.T) {
	g := newGate(t, ModeAsk)
	body := rewriteBody(20, "1", map[string]any{"profile": "broken"})
	if _, d := g.ask("s1", body); d.Decision != api.Allow || d.Reason != api.ReasonPricingFailed || !strings.Contains(d.Message, "profiles.broken.granularity") {
		t.Fatalf("pricing failure: %+v", d)
	}
	// A plan naming a unit the surface lacks is a pricing failure too: the
	// engine is never blocked by the guard's own trouble.
	body = rewriteBody(20, "1", nil)
	body["plan"] = map[string]any{"prune": []map[string]any{{"id": "seq-999", "tokensAfter": 1}}}
	if _, d := g.ask("s1", body); d.Reason != api.ReasonPricingFailed || !strings.Contains(d.Message, "seq-999") {
		t.Fatalf("unknown unit: %+v", d)
	}
}

func TestManualCompactionIsAllowedUnlessTheProfileGuardsIt(t *testing.T) {
	g := newGate(t, ModeAsk)
	if _, d := g.ask("s1", rewriteBody(20, "1", map[string]any{"trigger": "manual"})); d.Decision != api.Allow || d.Reason != api.ReasonManual || d.Quote == nil {
		t.Fatalf("manual: %+v", d)
	}
	g.settings.guardManual["deepseek-flash"] = true
	if _, d := g.ask("s1", rewriteBody(20, "1", map[string]any{"trigger": "manual"})); d.Reason != api.ReasonNoQuestionProvider {
		t.Fatalf("guarded manual without provider: %+v", d)
	}
}

func TestOverflowIsAskedLikeAnyOther(t *testing.T) {
	g := newGate(t, ModeAsk)
	ui := g.subscribe(true)
	go func() {
		var p api.RewritePending
		json.Unmarshal(ui.next(t, EventRewritePending), &p)
		if p.Trigger != "context-overflow" {
			t.Errorf("trigger %q", p.Trigger)
		}
		g.call("POST", "/v1/rewrites/"+p.Rewrite+"/answer", map[string]string{"choice": "not-now"}, nil)
	}()
	if _, d := g.ask("s1", rewriteBody(20, "1", map[string]any{"trigger": "context-overflow"})); d.Decision != api.Decline || d.Reason != api.ReasonUser {
		t.Fatalf("overflow: %+v", d)
	}
}

func TestWaitZeroAnswers202AndThePollLongPolls(t *testing.T) {
	g := newGate(t, ModeAsk)
	ui := g.subscribe(true)
	code, d := g.ask("s1", rewriteBody(20, "1", map[string]any{"wait": 0}))
	if code != http.StatusAccepted || d.Status != api.StatusPending || d.Rewrite == "" || d.DeadlineAt == nil {
		t.Fatalf("wait 0: %d %+v", code, d)
	}
	ui.next(t, EventRewritePending)
	var polled api.Decision
	if code := g.call("GET", "/v1/rewrites/"+d.Rewrite+"?wait=0", nil, &polled); code != 200 || polled.Status != api.StatusPending {
		t.Fatalf("poll while pending: %d %+v", code, polled)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		g.call("POST", "/v1/rewrites/"+d.Rewrite+"/answer", map[string]string{"choice": "allow-once"}, nil)
	}()
	start := time.Now()
	g.call("GET", "/v1/rewrites/"+d.Rewrite+"?wait=10", nil, &polled)
	if polled.Decision != api.Allow || time.Since(start) > 5*time.Second {
		t.Fatalf("long poll: %+v after %v", polled, time.Since(start))
	}
	if code := g.call("GET", "/v1/rewrites/r_unknown", nil, nil); code != 404 {
		t.Fatalf("unknown rewrite: %d", code)
	}
}

func TestOutcomeAndActualColdFromTheNextRequest(t *testing.T) {
	g := newGate(t, ModeAuto)
	rec := func(id string, u map[string]int64) {
		var out api.RecordedRequest
		if code := g.call("POST", "/v1/sessions/s1/requests", map[string]any{"requestId": id, "usage": u, "profile": "deepseek-flash"}, &out); code != 201 {
			t.Fatalf("record %s: %d", id, code)
		}
	}
	rec("a", map[string]int64{"cacheReadTokens": 40000, "outputTokens": 100})
	_, d := g.ask("s1", rewriteBody(40, "1", nil))
	if code := g.call("POST", "/v1/rewrites/"+d.Rewrite+"/outcome", map[string]any{"applied": true}, nil); code != 204 {
		t.Fatalf("outcome: %d", code)
	}
	rec("b", map[string]int64{"inputTokens": 50, "cacheReadTokens": 13000, "cacheWriteTokens": 7000})
	var series api.Series
	g.call("GET", "/v1/sessions/s1/series", nil, &series)
	if len(series.Folds) != 1 || series.Folds[0].ActualColdTokens == nil || *series.Folds[0].ActualColdTokens != 7050 ||
		series.Folds[0].PredictedColdTokens == nil || series.Folds[0].Applied == nil || !*series.Folds[0].Applied {
		t.Fatalf("fold %+v", series.Folds)
	}
	if code := g.call("POST", "/v1/rewrites/"+d.Rewrite+"/outcome", map[string]any{}, nil); code != 400 {
		t.Fatalf("outcome without applied: %d", code)
	}
}

func TestConcurrentAsksFrom50SessionsEachGetTheirOwnDecision(t *testing.T) {
	g := newGate(t, ModeAsk)
	uiA, uiB := g.subscribe(true), g.subscribe(true)
	const sessions = 50
	// Two UIs answer every question they see; the session decides the choice
	// so each harness can check it got its own answer.
	answer := func(ui *sse) {
		for ev := range ui.events {
			if ev.name != EventRewritePending {
				continue
			}
			var p api.RewritePending
			json.Unmarshal(ev.data, &p)
			choice := "allow-once"
			var n int
			fmt.Sscanf(p.Session, "s%d", &n)
			if n%2 == 1 {
				choice = "not-now"
			}
			// Both UIs answer; the loser gets 409. A late one may still be in
			// flight when the test ends: it must not fail the test then.
			go g.answerQuietly(p.Rewrite, choice)
		}
	}
	go answer(uiA)
	go answer(uiB)
	var wg sync.WaitGroup
	errs := make(chan string, sessions)
	for i := 0; i < sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			session := fmt.Sprintf("s%d", i)
			code, d := g.ask(session, rewriteBody(30, "1", nil))
			want := api.Allow
			if i%2 == 1 {
				want = api.Decline
			}
			if code != 200 || d.Session != session || d.Decision != want || d.Reason != api.ReasonUser {
				errs <- fmt.Sprintf("%s: %d %+v", session, code, d)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	var n int
	g.store.SQL().QueryRow("SELECT COUNT(*) FROM rewrites WHERE status = 'decided' AND reason = 'user'").Scan(&n)
	if n != sessions {
		t.Fatalf("%d decided rewrites, want %d", n, sessions)
	}
}

func TestBadBodiesAnswer400NamingTheField(t *testing.T) {
	g := newGate(t, ModeAuto)
	cases := []struct {
		path, body, field string
	}{
		{"/v1/sessions/s/requests", `{"usage":{}}`, "requestId"},
		{"/v1/sessions/s/requests", `{"requestId":"a"}`, "usage"},
		{"/v1/sessions/s/requests", `{"requestId":"a","usage":{"inputTokens":"many"}}`, "usage.inputTokens"},
		{"/v1/sessions/s/requests", `{"requestId":"a","usage":{"inputTokens":-1}}`, "usage.inputTokens"},
		{"/v1/sessions/s/requests", `{"requestId":"a","usage":{},"purpose":"chat"}`, "purpose"},
		{"/v1/sessions/s/requests", `{"requestId":"a","usage":{},"at":"yesterday"}`, "at"},
		{"/v1/sessions/s/requests", `{"requestId":"a","usage":{},"turn":{}}`, "turn"},
		{"/v1/sessions/s/requests", `not json`, "(body)"},
		{"/v1/sessions/s/requests", ``, ""},
		{"/v1/sessions/s/rewrites", `{"trigger":"pressure","envelopeTokens":1,"surface":[],"plan":{},"wait":-1}`, "wait"},
		{"/v1/sessions/s/rewrites", `{"envelopeTokens":1,"surface":[],"plan":{}}`, "trigger"},
		{"/v1/sessions/s/rewrites", `{"trigger":"pressure","envelopeTokens":1,"surface":[{"id":"a","tokens":"x"}],"plan":{}}`, "surface[0].tokens"},
		{"/v1/engines", `{}`, "harness"},
		{"/v1/mode", `{"scope":"planet","mode":"ask"}`, "scope"},
		{"/v1/rewrites/r_x/answer", `{"choice":"maybe"}`, "choice"},
	}
	for _, tc := range cases {
		method := "POST"
		if tc.path == "/v1/mode" {
			method = "PUT"
		}
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		code := g.call(method, tc.path, tc.body, &e)
		if code != 400 || e.Error.Code != "bad_request" || !strings.Contains(e.Error.Message, tc.field) || (tc.field != "" && e.Error.Field != tc.field) {
			t.Errorf("%s %s: %d %+v, want 400 naming %q", tc.path, tc.body, code, e.Error, tc.field)
		}
	}
	g.nothingStored(t)
}

// nothingStored fails the test unless the gate's store holds no request
// and no rewrite: what a refused request must leave behind.
func (g *gateEnv) nothingStored(t *testing.T) {
	t.Helper()
	var n int
	g.store.SQL().QueryRow("SELECT (SELECT COUNT(*) FROM requests) + (SELECT COUNT(*) FROM rewrites)").Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows stored by bad requests", n)
	}
}

func TestRetriedRequestIDReturnsTheFirstAnswer(t *testing.T) {
	g := newGate(t, ModeAsk)
	body := map[string]any{"requestId": "r1", "usage": map[string]int64{"inputTokens": 1000, "outputTokens": 10}}
	var a, b api.RecordedRequest
	if code := g.call("POST", "/v1/sessions/s/requests", body, &a); code != 201 {
		t.Fatal(code)
	}
	body["usage"] = map[string]int64{"inputTokens": 5}
	if code := g.call("POST", "/v1/sessions/s/requests", body, &b); code != 201 {
		t.Fatal(code)
	}
	if a != b {
		t.Fatalf("retry answered %+v, first %+v", b, a)
	}
	var s api.Session
	g.call("GET", "/v1/sessions/s", nil, &s)
	if s.Requests != 1 || s.Tokens.Input != 1000 {
		t.Fatalf("session after retry: %+v", s)
	}
}

func TestModeScopesAndEvents(t *testing.T) {
	g := newGate(t, ModeAsk)
	ui := g.subscribe(false)
	var ms api.ModeState
	g.call("GET", "/v1/mode", nil, &ms)
	if ms.Mode != ModeAsk || ms.Label != "Cache: not armed" || ms.Armed {
		t.Fatalf("unarmed: %+v", ms)
	}
	var reg struct {
		Engine       string `json:"engine"`
		LeaseSeconds int    `json:"leaseSeconds"`
		Mode         string `json:"mode"`
	}
	if code := g.call("POST", "/v1/engines", map[string]any{"harness": "dsh", "profile": "p1"}, &reg); code != 201 || reg.LeaseSeconds != 30 || reg.Mode != ModeAsk {
		t.Fatalf("register: %d %+v", code, reg)
	}
	ui.next(t, EventEnginesChanged)
	g.call("GET", "/v1/mode", nil, &ms)
	if ms.Label != "Cache: ask" || !ms.Armed {
		t.Fatalf("armed: %+v", ms)
	}
	g.call("PUT", "/v1/mode", map[string]any{"scope": "profile", "profile": "p1", "mode": "off"}, &ms)
	ui.next(t, EventModeChanged)
	g.call("GET", "/v1/mode?profile=p1", nil, &ms)
	if ms.Mode != ModeOff || ms.Scope != "profile" {
		t.Fatalf("profile scope: %+v", ms)
	}
	g.call("PUT", "/v1/mode", map[string]any{"scope": "session", "session": "x", "mode": "auto"}, nil)
	g.call("GET", "/v1/mode?profile=p1&session=x", nil, &ms)
	if ms.Mode != ModeAuto || ms.Scope != "session" {
		t.Fatalf("session beats profile: %+v", ms)
	}
	g.call("PUT", "/v1/mode", map[string]any{"scope": "global", "mode": "auto"}, nil)
	if g.settings.GlobalMode() != ModeAuto {
		t.Fatal("global mode not saved")
	}
	if code := g.call("POST", "/v1/engines/"+reg.Engine+"/heartbeat", map[string]any{}, nil); code != 200 {
		t.Fatalf("heartbeat %d", code)
	}
	if code := g.call("DELETE", "/v1/engines/"+reg.Engine, nil, nil); code != 204 {
		t.Fatalf("unregister %d", code)
	}
	if code := g.call("POST", "/v1/engines/"+reg.Engine+"/heartbeat", map[string]any{}, nil); code != 404 {
		t.Fatalf("heartbeat after unregister %d", code)
	}
}
