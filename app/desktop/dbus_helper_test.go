package desktop

import (
	"testing"

	"github.com/godbus/dbus/v5"

	"tollgate/app/desktop/sessionbus/bustest"
)

// privateBus starts a throwaway dbus-daemon for one test and returns its
// address; the test is skipped where dbus-daemon is not installed.
func privateBus(t *testing.T) string {
	t.Helper()
	addr, ok := bustest.Start(t)
	if !ok {
		t.Skip("dbus-daemon not installed")
	}
	return addr
}

// connectBus connects to the private bus at addr for the rest of the test.
func connectBus(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	return bustest.Connect(t, addr)
}
