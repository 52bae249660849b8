package guard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/guard/client/clienttest"
)

// TestConnectionFloodUnderLowDescriptorLimit runs a server in a child
// process whose RLIMIT_NOFILE is 256, floods it with 3,000 connections
// without a token — idle ones, and ones that get a 401 and stay open — and
// then asks it as a harness would: the harness is answered at once and the
// child never holds more descriptors than its limit allows.
func TestConnectionFloodUnderLowDescriptorLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("floods a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConnFloodChild$", "-test.v")
	cmd.Env = append(os.Environ(), "TOLLGATE_FLOOD_CHILD=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	var base string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
			base = u
			break
		}
	}
	if base == "" {
		t.Fatal("the child did not start")
	}
	go io.Copy(io.Discard, stdout)
	addr := strings.TrimPrefix(base, "http://")

	var flood []net.Conn
	t.Cleanup(func() {
		for _, c := range flood {
			c.Close()
		}
	})
	for i := range 3000 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if i%2 == 1 {
			fmt.Fprintf(c, "GET /v1/health HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		}
		flood = append(flood, c)
	}

	client := &http.Client{Timeout: 5 * time.Second}
	for i := range 5 {
		req := clienttest.NewRequest("GET", base+"/v1/health", testToken, nil)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("harness request %d during the flood: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || time.Since(start) > 3*time.Second {
			t.Fatalf("harness request %d: %d after %v", i, res.StatusCode, time.Since(start))
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
	if len(fds) >= 256 {
		t.Fatalf("the child holds %d descriptors", len(fds))
	}
}

// A request refused by authentication (or the Host check) closes its
// connection: the refused caller keeps no descriptor.
func TestRefusedRequestClosesItsConnection(t *testing.T) {
	_, ts := newTestServer(t, nil)
	addr := ts.Listener.Addr().String()
	for _, tc := range []struct{ name, request string }{
		{"no token", "GET /v1/health HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"},
		{"wrong token", "GET /v1/health HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer nope\r\n\r\n"},
		{"foreign host", "GET /v1/health HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer " + testToken + "\r\n\r\n"},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tc.request)
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b, err := io.ReadAll(c) // ends at EOF only if the server closed
		c.Close()
		if err != nil {
			t.Errorf("%s: connection still open after the answer (%v): %q", tc.name, err, b)
		} else if !strings.Contains(string(b), "Connection: close") {
			t.Errorf("%s: %q", tc.name, b)
		}
	}
}

// TestConnFloodChild is the child of the test above.
func TestConnFloodChild(t *testing.T) {
	if os.Getenv("TOLLGATE_FLOOD_CHILD") != "1" {
		t.Skip("run by TestConnectionFloodUnderLowDescriptorLimit")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 256, Max: 256}); err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(context.Background(), Options{Version: "test", Token: func() string { return testToken },
		BaseURL: "http://" + ln.Addr().String(), Settings: newTestSettings("ask"), Store: openTestStore(t), Pricer: testPricer{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := s.HTTPServer(nil)
	go srv.Serve(LimitListener(ln, DefaultConnLimits()))
	fmt.Println("LISTENING http://" + ln.Addr().String())
	io.Copy(io.Discard, os.Stdin) // until the parent closes it
	srv.Close()
}

func TestLimitListenerEvictsTheOldestUnproven(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, ConnLimits{Total: 4, Unproven: 2}).(*limitListener)
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return <-accepted
	}
	a, b := dial(), dial()
	a.(*trackedConn).prove()
	dial() // b stays unproven; a is proven: nothing evicted yet
	dial() // two unproven beside the new one: b, the oldest, goes
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("the oldest unproven connection is still open")
	}
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatalf("the proven connection was closed: %v", err)
	}
	if ln.evicted != 1 {
		t.Fatalf("evicted %d", ln.evicted)
	}
}
