// Package bustest starts a throwaway D-Bus session bus for the tests that
// talk to one (the tray, the notifications, tollgate doctor), so that none
// of them touches the user's own bus. Only tests import it.
package bustest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Start starts a private dbus-daemon for one test, killed when the test
// ends, and returns its address; ok is false where dbus-daemon is not
// installed. A daemon that prints no address within 10 s fails the test.
func Start(t testing.TB) (addr string, ok bool) {
	t.Helper()
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		return "", false
	}
	cmd := exec.Command(bin, "--session", "--nofork", "--nopidfile", "--print-address")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case addr := <-lines:
		if addr == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return addr, true
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not start")
	}
	return "", false
}

// Connect connects to the bus at addr (from Start), closed when the test
// ends.
func Connect(t testing.TB, addr string) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
