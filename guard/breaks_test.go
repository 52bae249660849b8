package guard

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"tollgate/guard/api"
)

// newGateClock is newGate on an injected clock.
func newGateClock(t *testing.T, mode string, clock *fakeClock) *gateEnv {
	t.Helper()
	return newGateAt(t, mode, openTestStore(t), clock.Now)
}

// TestLiveLedgerOverTheAPI: requests reported over the API are judged as
// they arrive — an idle gap past the profile's TTL (on the injected clock),
// a model switch and back, a gated fold whose actual cold tokens the ledger
// re-bills, a subagent thread that starts its own cache — each announced
// as break.detected and listed by the two routes.
func TestLiveLedgerOverTheAPI(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	g := newGateClock(t, ModeAuto, clock)
	ui := g.subscribe(false)
	rec := func(id, model string, extra map[string]any, u map[string]int64) api.RecordedRequest {
		t.Helper()
		body := map[string]any{"requestId": id, "usage": u, "profile": "deepseek-flash", "provider": "anthropic", "model": model}
		for k, v := range extra {
			body[k] = v
		}
		var out api.RecordedRequest
		if code := g.call("POST", "/v1/sessions/s1/requests", body, &out); code != 201 {
			t.Fatalf("record %s: %d", id, code)
		}
		return out
	}
	detected := func(cause string) api.Break {
		t.Helper()
		var b api.Break
		if err := json.Unmarshal(ui.next(t, EventBreakDetected), &b); err != nil {
			t.Fatal(err)
		}
		if b.Session != "s1" || b.Cause != cause {
			t.Fatalf("break.detected %+v, want cause %s", b, cause)
		}
		return b
	}
	rec("a", "m1", nil, map[string]int64{"inputTokens": 3, "cacheWriteTokens": 20000})
	clock.Advance(10 * time.Second)
	rec("b", "m1", nil, map[string]int64{"inputTokens": 3, "cacheReadTokens": 20003, "cacheWriteTokens": 500})
	clock.Advance(3601 * time.Second) // the profile's ttlSeconds is 3,600
	rec("c", "m1", nil, map[string]int64{"inputTokens": 3, "cacheWriteTokens": 20504})
	if b := detected("idle"); b.Seq != 3 || b.RebilledTokens != 20506 || b.GapSeconds != 3601 || b.StartedBy != "conversation" {
		t.Fatalf("idle %+v", b)
	}
	clock.Advance(10 * time.Second)
	rec("d", "m2", nil, map[string]int64{"inputTokens": 3, "cacheWriteTokens": 21000}) // a new model's cache: a start
	clock.Advance(10 * time.Second)
	rec("e", "m1", nil, map[string]int64{"inputTokens": 3, "cacheReadTokens": 10000, "cacheWriteTokens": 12000})
	if b := detected("family"); b.Seq != 5 || b.RebilledTokens != 10507 || b.ExpectedCachedTokens != 20507 {
		t.Fatalf("family %+v", b)
	}
	// A subagent thread's first request is a start, not a break.
	rec("sub1", "m1", map[string]any{"purpose": "subagent", "thread": "agent-1"}, map[string]int64{"inputTokens": 3, "cacheWriteTokens": 5000})
	// A gated fold: allowed, applied; the next request re-bills its cold part.
	_, d := g.ask("s1", rewriteBody(40, "1", nil))
	if code := g.call("POST", "/v1/rewrites/"+d.Rewrite+"/outcome", map[string]any{"applied": true}, nil); code != 204 {
		t.Fatalf("outcome: %d", code)
	}
	clock.Advance(10 * time.Second)
	rec("f", "m1", nil, map[string]int64{"inputTokens": 50, "cacheReadTokens": 13000, "cacheWriteTokens": 7000})
	b := detected("rewrite")
	if b.Rewrite == nil || *b.Rewrite != d.Rewrite || b.RebilledTokens != 7050 {
		t.Fatalf("rewrite %+v, want rewrite %s", b, d.Rewrite)
	}
	var series api.Series
	g.call("GET", "/v1/sessions/s1/series", nil, &series)
	if len(series.Folds) != 1 || series.Folds[0].ActualColdTokens == nil || *series.Folds[0].ActualColdTokens != b.RebilledTokens {
		t.Fatalf("the fold's actual cold tokens and the ledger disagree: %+v vs %d", series.Folds, b.RebilledTokens)
	}
	// Premium at the profile's prices: $0.30 miss, $0.006 hit, writes unbilled.
	if want := 7050 * (0.30 - 0.006) / 1e6; math.Abs(b.PremiumUSD-want) > 1e-12 {
		t.Fatalf("premium %v, want %v", b.PremiumUSD, want)
	}

	if d.Quote == nil || d.Quote.CacheExpired {
		t.Fatalf("a question within the TTL: %+v", d.Quote)
	}
	// The session says how long its cache stays warm, and a question after
	// that is priced as the expired cache it is.
	var sess api.Session
	g.call("GET", "/v1/sessions/s1", nil, &sess)
	if sess.CacheWarmUntil == nil || !sess.CacheWarmUntil.Equal(clock.Now().Add(time.Hour).Truncate(time.Millisecond)) {
		t.Fatalf("cacheWarmUntil %v, want %v", sess.CacheWarmUntil, clock.Now().Add(time.Hour))
	}
	clock.Advance(3601 * time.Second)
	if _, late := g.ask("s1", rewriteBody(40, "2", nil)); late.Quote == nil || !late.Quote.CacheExpired {
		t.Fatalf("a question after the TTL: %+v", late.Quote)
	}

	var list api.SessionBreaks
	if code := g.call("GET", "/v1/sessions/s1/breaks", nil, &list); code != 200 || len(list.Breaks) != 3 {
		t.Fatalf("breaks %d %+v", code, list)
	}
	for i, cause := range []string{"idle", "family", "rewrite"} {
		if list.Breaks[i].Cause != cause || list.Breaks[i].Session != "" {
			t.Errorf("break %d %+v, want %s", i, list.Breaks[i], cause)
		}
	}
	var sum api.BreakSummary
	if code := g.call("GET", "/v1/breaks?days=2", nil, &sum); code != 200 || sum.Breaks != 3 || len(sum.ByCause) != 3 ||
		len(sum.Sessions) != 1 || sum.Sessions[0].Session != "s1" || sum.Days != 2 {
		t.Fatalf("summary %d %+v", code, sum)
	}
	// Bad input names its field; an unknown session is a 404.
	var e struct {
		Error struct{ Code, Field string }
	}
	for _, q := range []string{"days=0", "days=x", "limit=1000", "tz=Mars/Base"} {
		if code := g.call("GET", "/v1/breaks?"+q, nil, &e); code != 400 || e.Error.Field == "" {
			t.Errorf("%s: %d %+v", q, code, e)
		}
	}
	if code := g.call("GET", "/v1/sessions/nope/breaks", nil, nil); code != 404 {
		t.Errorf("unknown session: %d", code)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'x'
	}
	if code := g.call("POST", "/v1/sessions/s1/requests", map[string]any{"requestId": "z", "thread": string(long), "usage": map[string]int64{}}, &e); code != 400 || e.Error.Field != "thread" {
		t.Errorf("long thread: %d %+v", code, e)
	}
	// The summary calls' prefix is the ledger's: a harness cannot use it to
	// switch judging off; startedBy is a word.
	for field, body := range map[string]map[string]any{
		"thread":    {"requestId": "c", "thread": "compaction:x", "usage": map[string]int64{}},
		"startedBy": {"requestId": "b", "startedBy": "Robert'); DROP", "usage": map[string]int64{}},
	} {
		if code := g.call("POST", "/v1/sessions/s1/requests", body, &e); code != 400 || e.Error.Field != field {
			t.Errorf("%s: %d %+v", field, code, e)
		}
	}
}
