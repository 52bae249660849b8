package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/guard/client"
)

type emitted struct {
	name string
	data any
}

type fakeEmitter struct {
	mu  sync.Mutex
	got []emitted
}

func (f *fakeEmitter) Emit(name string, data any) {
	f.mu.Lock()
	f.got = append(f.got, emitted{name, data})
	f.mu.Unlock()
}

func (f *fakeEmitter) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.got {
		out = append(out, e.name)
	}
	return out
}

type fakeControl struct {
	mu                 sync.Mutex
	raised, hid, quits int
}

func (f *fakeControl) raisedCount() int { f.mu.Lock(); defer f.mu.Unlock(); return f.raised }

func (f *fakeControl) Raise() { f.mu.Lock(); f.raised++; f.mu.Unlock() }
func (f *fakeControl) Hide()  { f.mu.Lock(); f.hid++; f.mu.Unlock() }
func (f *fakeControl) Quit()  { f.mu.Lock(); f.quits++; f.mu.Unlock() }

type fakeNotifier struct {
	mu        sync.Mutex
	notes     []questionNote
	withdrawn int
	err       error
}

func (f *fakeNotifier) Notify(summary, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, questionNote{summary, body})
	return f.err
}

func (f *fakeNotifier) Withdraw() { f.mu.Lock(); f.withdrawn++; f.mu.Unlock() }

func (f *fakeNotifier) counts() (notes, withdrawn int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.notes), f.withdrawn
}

type fakeModeAPI struct {
	mu    sync.Mutex
	state TrayState
	set   []string
}

func (f *fakeModeAPI) Mode() (TrayState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, nil
}

func (f *fakeModeAPI) SetGlobalMode(mode string) error {
	f.mu.Lock()
	f.set = append(f.set, mode)
	f.mu.Unlock()
	return nil
}

type testWindow struct {
	*Window
	emit  *fakeEmitter
	ctl   *fakeControl
	note  *fakeNotifier
	api   *fakeModeAPI
	trayB *fakeTrayBackend
}

// newTestWindow is a Window with every Wails and D-Bus edge faked and its
// side effects run inline.
func newTestWindow(withTray bool) *testWindow {
	tw := &testWindow{emit: &fakeEmitter{}, ctl: &fakeControl{}, note: &fakeNotifier{}, api: &fakeModeAPI{state: TrayState{Mode: "ask", Armed: true}}, trayB: &fakeTrayBackend{}}
	w := newWindow(slog.New(slog.NewTextHandler(io.Discard, nil)), false)
	w.emit, w.ui, w.notifier, w.api = tw.emit, tw.ctl, tw.note, tw.api
	w.async = func(f func()) { f() }
	if withTray {
		w.tray = newTray(tw.trayB)
		w.stopTray = func() {}
	}
	tw.Window = w
	return tw
}

func pendingEvent(id string) json.RawMessage {
	return json.RawMessage(`{"rewrite":"` + id + `","session":"s1","harness":"dsh","trigger":"pressure","turn":"17","mode":"ask",
	 "quote":{"contextTokens":838861,"coldTokens":255000,"coldShare":0.95,"cacheExpired":false,"costUSD":{"breakPremium":0.08}},
	 "askedAt":"2026-11-30T10:00:00Z","deadlineAt":"2026-11-30T10:00:28Z","deadlineSeconds":28}`)
}

func decidedEvent(id string) json.RawMessage {
	return json.RawMessage(`{"rewrite":"` + id + `","session":"s1","decision":"allow","reason":"user","answeredBy":"browser"}`)
}

func TestQuestionRaisesWindowAndNotifiesWhenUnfocused(t *testing.T) {
	tw := newTestWindow(true)
	tw.forward("rewrite.pending", pendingEvent("r_1"))

	if got := tw.emit.names(); len(got) != 1 || got[0] != "rewrite.pending" {
		t.Fatalf("the page got %v", got)
	}
	if tw.ctl.raised != 1 {
		t.Fatalf("raised %d times", tw.ctl.raised)
	}
	if len(tw.note.notes) != 1 {
		t.Fatalf("notified %d times", len(tw.note.notes))
	}
	n := tw.note.notes[0]
	if n.summary != "Allow a context rewrite?" || n.body != "dsh · session s1 at 839k: breaks the cache, 255k re-read in full (95%) · $0.08. Answer in tollgate." {
		t.Fatalf("note %+v", n)
	}
	if v := tw.trayB.last(t); v.OpenTitle != "Answer 1 waiting question" || !strings.Contains(v.Tooltip, "1 question waiting") {
		t.Fatalf("tray %+v", v)
	}

	// A replay of the same question (the page reloaded) neither raises nor notifies again.
	tw.forward("rewrite.pending", pendingEvent("r_1"))
	if tw.ctl.raised != 1 || len(tw.note.notes) != 1 {
		t.Fatalf("replay: raised %d, notified %d", tw.ctl.raised, len(tw.note.notes))
	}

	tw.forward("rewrite.pending", pendingEvent("r_2"))
	if v := tw.trayB.last(t); v.OpenTitle != "Answer 2 waiting questions" {
		t.Fatalf("tray %+v", v)
	}
	tw.forward("rewrite.decided", decidedEvent("r_1"))
	if tw.note.withdrawn != 0 {
		t.Fatal("withdrew the bubble while a question still waits")
	}
	tw.forward("rewrite.decided", decidedEvent("r_2"))
	if tw.note.withdrawn != 1 {
		t.Fatalf("withdrawn %d", tw.note.withdrawn)
	}
	if v := tw.trayB.last(t); v.OpenTitle != "Open tollgate" {
		t.Fatalf("tray %+v", v)
	}
}

func TestQuestionDoesNotNotifyAFocusedWindow(t *testing.T) {
	tw := newTestWindow(false)
	tw.setFocused(true)
	tw.forward("rewrite.pending", pendingEvent("r_1"))
	if len(tw.note.notes) != 0 {
		t.Fatalf("notified a focused window: %+v", tw.note.notes)
	}
	if tw.ctl.raised != 1 {
		t.Fatal("still raises (un-minimises) the window")
	}
	// A missing notification service never stops the question.
	tw.setFocused(false)
	tw.note.err = errors.New("org.freedesktop.DBus.Error.ServiceUnknown")
	tw.forward("rewrite.pending", pendingEvent("r_2"))
	if tw.ctl.raised != 2 || len(tw.emit.names()) != 2 {
		t.Fatalf("raised %d, emitted %v", tw.ctl.raised, tw.emit.names())
	}
}

func TestModeChangesRefreshTheTray(t *testing.T) {
	tw := newTestWindow(true)
	tw.api.state = TrayState{Mode: "auto", Armed: false}
	tw.forward("mode.changed", json.RawMessage(`{"scope":"global","mode":"auto"}`))
	// The refresh runs on its own loop: drive it here.
	select {
	case <-tw.refresh:
		tw.refreshMode()
	default:
		t.Fatal("mode.changed did not ask for a refresh")
	}
	if v := tw.trayB.last(t); v.Status != "Cache: not armed" || v.Checked != "auto" {
		t.Fatalf("tray %+v", v)
	}
	if got := tw.emit.names(); len(got) != 1 || got[0] != "mode.changed" {
		t.Fatalf("the page got %v", got)
	}
}

func TestClosingHidesToTrayUnlessQuitting(t *testing.T) {
	tw := newTestWindow(true)
	if !tw.onBeforeClose(context.Background()) || tw.ctl.hid != 1 {
		t.Fatalf("with a tray, closing must hide (hid %d)", tw.ctl.hid)
	}
	tw.quit()
	if tw.ctl.quits != 1 {
		t.Fatal("quit did not reach the window")
	}
	if tw.onBeforeClose(context.Background()) {
		t.Fatal("quitting must not be prevented")
	}
	noTray := newTestWindow(false)
	if noTray.onBeforeClose(context.Background()) {
		t.Fatal("without a tray, closing the window quits")
	}
}

func TestDescribeQuestion(t *testing.T) {
	id, n := describeQuestion(json.RawMessage(`{"rewrite":"r_9","quote":{"contextTokens":300000,"cacheExpired":true}}`))
	if id != "r_9" || n.body != "A harness at 300k: the cache already expired, so this rewrite costs nothing extra. Answer in tollgate." {
		t.Fatalf("%q %+v", id, n)
	}
	_, n = describeQuestion(map[string]any{"rewrite": "r_1", "harness": "claude-code", "trigger": "context-overflow"})
	if n.summary != "Context overflow: allow a rewrite?" || n.body != "claude-code wants to rewrite its context. Answer in tollgate." {
		t.Fatalf("%+v", n)
	}
	if id, _ := describeQuestion(json.RawMessage(`not json`)); id != "" {
		t.Fatalf("id %q from garbage", id)
	}
}

// The tray reads and sets the mode on the guard itself.
func TestGuardModes(t *testing.T) {
	svc, _ := apptest.Start(t, "off")
	g := guardModes{svc.Server}
	if s, err := g.Mode(); err != nil || s.Mode != "off" || s.Armed {
		t.Fatalf("%+v %v", s, err)
	}
	if err := g.SetGlobalMode("auto"); err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Mode(); s.Mode != "auto" || svc.Settings().GlobalMode() != "auto" {
		t.Fatalf("after SetGlobalMode(auto): %+v", s)
	}
	if err := g.SetGlobalMode("bogus"); err == nil || !strings.Contains(err.Error(), "want ask, auto or off") {
		t.Fatalf("want the bad mode refused, got %v", err)
	}
}

// The glue against the real guard: a question asked over the API reaches
// the attached window as rewrite.pending, raises it and notifies; the
// answer given in the window's chain decides it.
func TestWindowAttachedToRealGuard(t *testing.T) {
	svc, _ := apptest.Start(t, "")
	tw := newTestWindow(true)
	tw.srv = svc.Server
	tw.Window.api = guardModes{svc.Server}
	detach := svc.Server.AttachWindow(tw.forward)
	defer detach()

	// The window's own chain: in-process, trusted, no token.
	api := client.New(client.Endpoint{URL: "http://tollgate.window", Transport: client.InProcess(svc.Server.TrustedHandler())}, nil)
	ctx := context.Background()
	if err := tw.Window.api.SetGlobalMode("ask"); err != nil {
		t.Fatal(err)
	}
	ask := map[string]any{
		"profile": "deepseek-flash", "turn": "1", "trigger": "pressure", "deadlineSeconds": 60,
		"contextWindow": 131072, "thresholdTokens": 100000, "envelopeTokens": 2000,
		"surface": []map[string]any{{"id": "u1", "tokens": 60000, "kind": "tool-result"}, {"id": "u2", "tokens": 50000, "kind": "tool-result"}},
		"plan":    map[string]any{"prune": []map[string]any{{"id": "u1", "tokensAfter": 100}}},
		"wait":    0,
	}
	var pending struct {
		Rewrite string `json:"rewrite"`
		Status  string `json:"status"`
	}
	if err := api.Post(ctx, "/v1/sessions/s1/rewrites", ask, &pending); err != nil {
		t.Fatal(err)
	}
	if pending.Status != "pending" || pending.Rewrite == "" {
		t.Fatalf("ask answered %+v: the attached window must count as a question provider", pending)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n, _ := tw.note.counts(); n == 0 && time.Now().Before(deadline); n, _ = tw.note.counts() {
		time.Sleep(10 * time.Millisecond)
	}
	if names := tw.emit.names(); len(names) == 0 || !contains(names, "rewrite.pending") {
		t.Fatalf("the window got %v", names)
	}
	if n, _ := tw.note.counts(); n != 1 || tw.ctl.raisedCount() == 0 {
		t.Fatalf("notified %d, raised %d", n, tw.ctl.raisedCount())
	}

	var decided struct {
		Decision string `json:"decision"`
	}
	if err := api.Post(ctx, "/v1/rewrites/"+pending.Rewrite+"/answer", map[string]string{"choice": "allow-once"}, &decided); err != nil {
		t.Fatal(err)
	}
	if decided.Decision != "allow" {
		t.Fatalf("decision %+v", decided)
	}
	for _, w := tw.note.counts(); w == 0 && time.Now().Before(deadline); _, w = tw.note.counts() {
		time.Sleep(10 * time.Millisecond)
	}
	if _, w := tw.note.counts(); !contains(tw.emit.names(), "rewrite.decided") || w != 1 {
		t.Fatalf("after the answer: events %v, withdrawn %d", tw.emit.names(), w)
	}

	// Detached, the window does not count: asking fails closed at once.
	detach()
	var again struct {
		Decision, Reason string
	}
	if err := api.Post(ctx, "/v1/sessions/s2/rewrites", ask, &again); err != nil {
		t.Fatal(err)
	}
	if again.Decision != "decline" || again.Reason != "no-question-provider" {
		t.Fatalf("detached: %+v", again)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
