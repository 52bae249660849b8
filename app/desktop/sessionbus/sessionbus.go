// Package sessionbus connects to the user's D-Bus session bus for the tray,
// the notifications and tollgate doctor (which must not pull in the window).
package sessionbus

import (
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Connect connects to the user's session bus without ever starting one:
// godbus's ConnectSessionBus runs dbus-launch when $DBUS_SESSION_BUS_ADDRESS
// is unset, which leaves a stray dbus-daemon behind on a headless machine.
// No bus means no tray and no notifications, which the callers log once.
func Connect(opts ...dbus.ConnOption) (*dbus.Conn, error) {
	conn, err := dbus.SessionBusPrivateNoAutoStartup(opts...)
	if err != nil {
		return nil, fmt.Errorf("no session D-Bus: %w", err)
	}
	if err := conn.Auth(nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session D-Bus: %w", err)
	}
	if err := conn.Hello(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session D-Bus: %w", err)
	}
	return conn, nil
}
