package desktop

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// fakeNotifications is an org.freedesktop.Notifications server on a private bus.
type fakeNotifications struct {
	mu     sync.Mutex
	got    []notifyCall
	closed []uint32
	nextID uint32
}

type notifyCall struct {
	app, summary, body string
	replaces           uint32
	actions            []string
	urgency            byte
}

func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, _ := hints["urgency"].Value().(byte)
	f.got = append(f.got, notifyCall{app: app, summary: summary, body: body, replaces: replaces, actions: actions, urgency: u})
	if replaces != 0 {
		return replaces, nil
	}
	f.nextID++
	return f.nextID, nil
}

func (f *fakeNotifications) CloseNotification(id uint32) *dbus.Error {
	f.mu.Lock()
	f.closed = append(f.closed, id)
	f.mu.Unlock()
	return nil
}

func (f *fakeNotifications) calls() []notifyCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]notifyCall(nil), f.got...)
}

func serveNotifications(t *testing.T, addr string) (*fakeNotifications, *dbus.Conn) {
	t.Helper()
	conn := connectBus(t, addr)
	srv := &fakeNotifications{}
	if err := conn.Export(srv, notifyPath, notifyIface); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(notifyService, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning %s: %v %v", notifyService, reply, err)
	}
	return srv, conn
}

func testNotifier(addr string, log *slog.Logger, onClick func()) *DBusNotifier {
	n := NewDBusNotifier(log, onClick)
	n.connect = func() (*dbus.Conn, error) { return dbus.Connect(addr) }
	return n
}

func TestDBusNotifierSendsReplacesAndWithdraws(t *testing.T) {
	addr := privateBus(t)
	srv, srvConn := serveNotifications(t, addr)
	clicked := make(chan struct{}, 1)
	n := testNotifier(addr, slog.Default(), func() { clicked <- struct{}{} })
	defer n.Close()

	if err := n.Notify("Allow a context rewrite?", "dsh · session s1 at 839k"); err != nil {
		t.Fatal(err)
	}
	if err := n.Notify("Allow a context rewrite?", "the next one"); err != nil {
		t.Fatal(err)
	}
	calls := srv.calls()
	if len(calls) != 2 {
		t.Fatalf("got %d calls", len(calls))
	}
	if c := calls[0]; c.app != "tollgate" || c.summary != "Allow a context rewrite?" || c.body != "dsh · session s1 at 839k" || c.replaces != 0 || c.urgency != 2 {
		t.Fatalf("first call %+v", c)
	}
	if calls[1].replaces != 1 {
		t.Fatalf("the second bubble must replace the first, got replaces=%d", calls[1].replaces)
	}
	if len(calls[0].actions) != 2 || calls[0].actions[0] != "default" {
		t.Fatalf("actions %v: want a default action so a click opens the window", calls[0].actions)
	}

	// A click on our bubble raises the window; one on another app's does not.
	emit := func(id uint32) {
		if err := srvConn.Emit(notifyPath, notifyIface+".ActionInvoked", id, "default"); err != nil {
			t.Fatal(err)
		}
	}
	emit(99)
	emit(1)
	select {
	case <-clicked:
	case <-time.After(5 * time.Second):
		t.Fatal("a click on the bubble did not reach onClick")
	}
	select {
	case <-clicked:
		t.Fatal("a click on another bubble reached onClick")
	case <-time.After(200 * time.Millisecond):
	}

	n.Withdraw()
	srv.mu.Lock()
	closed := srv.closed
	srv.mu.Unlock()
	if len(closed) != 1 || closed[0] != 1 {
		t.Fatalf("closed %v", closed)
	}
	n.Withdraw() // nothing left: no second call
	srv.mu.Lock()
	if len(srv.closed) != 1 {
		t.Fatalf("closed twice: %v", srv.closed)
	}
	srv.mu.Unlock()
}

func TestDBusNotifierWithoutServiceLogsOnceAndCarriesOn(t *testing.T) {
	addr := privateBus(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	n := testNotifier(addr, log, nil)
	defer n.Close()
	for i := 0; i < 3; i++ {
		if err := n.Notify("s", "b"); err == nil {
			t.Fatal("want an error without a notification service")
		}
	}
	if c := strings.Count(logs.String(), "no desktop notification service"); c != 1 {
		t.Fatalf("logged %d times, want once:\n%s", c, logs.String())
	}
	n.Withdraw() // nothing shown: must not fail or block

	// A service that appears later is used, and that is said once too.
	srv, _ := serveNotifications(t, addr)
	if err := n.Notify("s", "b"); err != nil {
		t.Fatal(err)
	}
	if len(srv.calls()) != 1 || !strings.Contains(logs.String(), "work again") {
		t.Fatalf("calls %d, logs:\n%s", len(srv.calls()), logs.String())
	}
}

func TestDBusNotifierWithoutSessionBus(t *testing.T) {
	var logs bytes.Buffer
	n := NewDBusNotifier(slog.New(slog.NewTextHandler(&logs, nil)), nil)
	n.connect = func() (*dbus.Conn, error) { return dbus.Connect("unix:path=/nonexistent/bus") }
	if err := n.Notify("s", "b"); err == nil {
		t.Fatal("want an error")
	}
	n.Notify("s", "b")
	if c := strings.Count(logs.String(), "notifications unavailable"); c != 1 {
		t.Fatalf("logged %d times:\n%s", c, logs.String())
	}
}
