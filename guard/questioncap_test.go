package guard

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tollgate/guard/api"
)

// 20 silent askers with "wait": 0 would build thousands of pending
// questions (1.5 GB) without a cap. Questions are capped per session and
// in all; past the cap the rewrite is allowed unasked (a tollgate that
// cannot take a question must not block the harness) and the answer says
// why.
func TestPendingQuestionsAreCapped(t *testing.T) {
	g := newGate(t, ModeAsk)
	g.subscribe(true)
	ask := func(session string, turn int) (int, api.Decision) {
		return g.ask(session, rewriteBody(20, fmt.Sprint(turn), map[string]any{"wait": 0}))
	}
	var first string
	for i := range MaxPendingPerSession {
		code, d := ask("s0", i)
		if code != http.StatusAccepted {
			t.Fatalf("question %d of s0: %d %+v", i, code, d)
		}
		if first == "" {
			first = d.Rewrite
		}
	}
	code, d := ask("s0", 99)
	if code != 200 || d.Decision != api.Allow || d.Reason != api.ReasonQuestionLimit || !strings.Contains(d.Message, "8 questions of this session") {
		t.Fatalf("past the session cap: %d %+v", code, d)
	}
	// Fill the total from other sessions.
	for n := MaxPendingPerSession; n < MaxPendingTotal; n++ {
		if code, d := ask(fmt.Sprintf("s%d", 1+n/MaxPendingPerSession), n); code != http.StatusAccepted {
			t.Fatalf("question %d: %d %+v", n, code, d)
		}
	}
	code, d = ask("fresh", 1)
	if code != 200 || d.Reason != api.ReasonQuestionLimit || !strings.Contains(d.Message, "256 questions already wait") {
		t.Fatalf("past the total cap: %d %+v", code, d)
	}
	if got := len(g.srv.broker.pendingEvents()); got != MaxPendingTotal {
		t.Fatalf("%d questions pending, want %d", got, MaxPendingTotal)
	}
	// An answer frees a slot.
	if code := g.call("POST", "/v1/rewrites/"+first+"/answer", map[string]string{"choice": "allow-once"}, nil); code != 200 {
		t.Fatalf("answer: %d", code)
	}
	if code, d := ask("s0", 100); code != http.StatusAccepted {
		t.Fatalf("after an answer: %d %+v", code, d)
	}
	// The allowed-unasked rewrites are in the history with their reason.
	var n int
	g.store.SQL().QueryRow("SELECT COUNT(*) FROM rewrites WHERE reason = 'question-limit' AND decision = 'allow'").Scan(&n)
	if n != 2 {
		t.Fatalf("%d rewrites stored as question-limit, want 2", n)
	}
}
