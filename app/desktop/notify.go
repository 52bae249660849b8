package desktop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"tollgate/app/desktop/sessionbus"

	"github.com/godbus/dbus/v5"
)

// Notifier shows a desktop notification about a pending question, and
// withdraws it once nothing waits any more. The window uses the freedesktop
// implementation below; tests use a fake.
type Notifier interface {
	Notify(summary, body string) error
	Withdraw()
}

const (
	notifyService = "org.freedesktop.Notifications"
	notifyPath    = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyIface   = "org.freedesktop.Notifications"
	// notifyTimeout bounds one D-Bus round trip: a session bus that tries to
	// activate a broken notification daemon must not hold a question up.
	notifyTimeout = 5 * time.Second
)

// DBusNotifier sends org.freedesktop.Notifications.Notify on the session
// bus. One bubble at a time: a new question replaces the previous one rather
// than stacking. Clicking the bubble (its default action) calls onClick,
// which raises the window.
type DBusNotifier struct {
	log     *slog.Logger
	onClick func()
	// connect opens the session bus; tests point it at a private bus.
	connect func() (*dbus.Conn, error)

	mu        sync.Mutex
	conn      *dbus.Conn
	lastID    uint32
	warned    bool // "no notification service" is logged once
	listening bool
}

// NewDBusNotifier returns a notifier on the user's session bus. Nothing
// connects until the first notification.
func NewDBusNotifier(log *slog.Logger, onClick func()) *DBusNotifier {
	if log == nil {
		log = slog.Default()
	}
	return &DBusNotifier{log: log, onClick: onClick, connect: func() (*dbus.Conn, error) { return sessionbus.Connect() }}
}

// Notify shows (or replaces) the bubble. Where there is no session bus or
// no notification service, it logs that once and returns the error; the
// question still shows in the window.
func (n *DBusNotifier) Notify(summary, body string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.connectLocked(); err != nil {
		return n.unavailableLocked(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	hints := map[string]dbus.Variant{
		"urgency":       dbus.MakeVariant(byte(2)), // critical: a question with a deadline
		"desktop-entry": dbus.MakeVariant("tollgate"),
		"category":      dbus.MakeVariant("im.received"),
	}
	actions := []string{"default", "Answer in tollgate"}
	var id uint32
	err := n.conn.Object(notifyService, notifyPath).CallWithContext(ctx, notifyIface+".Notify", 0,
		"tollgate", n.lastID, "dialog-question", summary, body, actions, hints, int32(-1)).Store(&id)
	if err != nil {
		return n.unavailableLocked(err)
	}
	if n.warned {
		n.log.Info("desktop notifications work again")
		n.warned = false
	}
	n.lastID = id
	return nil
}

// Withdraw closes the last bubble, if any (every question was answered).
func (n *DBusNotifier) Withdraw() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil || n.lastID == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	// A bubble the user already dismissed is not an error worth reporting.
	_ = n.conn.Object(notifyService, notifyPath).CallWithContext(ctx, notifyIface+".CloseNotification", 0, n.lastID).Err
	n.lastID = 0
}

// Close drops the bus connection.
func (n *DBusNotifier) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn != nil {
		n.conn.Close()
		n.conn = nil
	}
}

func (n *DBusNotifier) connectLocked() error {
	if n.conn != nil && n.conn.Connected() {
		return nil
	}
	conn, err := n.connect()
	if err != nil {
		return fmt.Errorf("session bus: %w", err)
	}
	n.conn = conn
	n.listening = false
	n.listenLocked()
	return nil
}

// listenLocked follows ActionInvoked, so a click on our bubble raises the window.
func (n *DBusNotifier) listenLocked() {
	if n.listening || n.onClick == nil {
		return
	}
	if err := n.conn.AddMatchSignal(dbus.WithMatchInterface(notifyIface), dbus.WithMatchMember("ActionInvoked")); err != nil {
		n.log.Debug("notifications: cannot follow clicks", "err", err)
		return
	}
	n.listening = true
	ch := make(chan *dbus.Signal, 8)
	n.conn.Signal(ch)
	go func() {
		for sig := range ch {
			if sig == nil || sig.Name != notifyIface+".ActionInvoked" || len(sig.Body) < 1 {
				continue
			}
			id, _ := sig.Body[0].(uint32)
			n.mu.Lock()
			ours := id != 0 && id == n.lastID
			n.mu.Unlock()
			if ours {
				n.onClick()
			}
		}
	}()
}

func (n *DBusNotifier) unavailableLocked(err error) error {
	if !n.warned {
		n.warned = true
		msg := "no desktop notification service; questions show in the window only"
		var derr dbus.Error
		if !errors.As(err, &derr) || derr.Name != "org.freedesktop.DBus.Error.ServiceUnknown" {
			msg = "desktop notifications unavailable; questions show in the window only"
		}
		n.log.Info(msg, "err", err)
	}
	return err
}
