package guard

import (
	"container/list"
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// Connections cost a descriptor each, and any local process can open them
// without a token: ~20,000 idle ones exhaust an unbounded server's
// descriptors, after which harness requests time out and run unguarded.
// So (ARCHITECTURE.md, "The API"):
//
//   - a request that fails authentication (or the Host or Origin check) is
//     answered with Connection: close;
//   - headers must arrive within ReadHeaderTimeout, and an idle keep-alive
//     connection is closed after IdleTimeout;
//   - the listener holds at most ConnLimits.Total connections, of which at
//     most ConnLimits.Unproven have not yet sent an authenticated request.
//     Past that, the oldest unproven connection is closed to admit the new
//     one, so a flood of unauthenticated connections cannot keep a harness
//     out; the rest of Total is headroom for authenticated clients.

// Timeouts of the TCP listener's server.
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 60 * time.Second
	maxHeaderBytes    = 64 << 10
)

// ConnLimits bound the listener's open connections.
type ConnLimits struct {
	Total    int // Accept waits while this many are open
	Unproven int // the oldest unauthenticated connection is closed past this
}

// reservedFiles are descriptors kept for everything but connections: the
// database and its WAL, logs, imports reading files in parallel, spooled
// uploads, the hook's transcripts.
const reservedFiles = 128

// DefaultConnLimits derives the limits from RLIMIT_NOFILE (which Go raises
// to the hard limit at start): all but reservedFiles descriptors, at most
// 8,192 connections, three quarters of them for unauthenticated ones.
func DefaultConnLimits() ConnLimits {
	var rl syscall.Rlimit
	budget := 1024
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < 1<<30 {
		budget = int(rl.Cur)
	}
	return connLimitsFor(budget)
}

func connLimitsFor(files int) ConnLimits {
	total := min(max(files-reservedFiles, 16), 8192)
	return ConnLimits{Total: total, Unproven: max(total*3/4, 8)}
}

// LimitListener applies lim to ln's connections. Serve it with
// Server.HTTPServer, whose authentication marks connections proven.
func LimitListener(ln net.Listener, lim ConnLimits) net.Listener {
	if lim.Total <= 0 || lim.Unproven <= 0 || lim.Unproven > lim.Total {
		lim = connLimitsFor(1024)
	}
	return &limitListener{Listener: ln, lim: lim, slots: make(chan struct{}, lim.Total), done: make(chan struct{}), unproven: list.New()}
}

type limitListener struct {
	net.Listener
	lim       ConnLimits
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	unproven *list.List // of *trackedConn, oldest first
	evicted  int64
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	var evict *trackedConn
	l.mu.Lock()
	if l.unproven.Len() >= l.lim.Unproven {
		evict = l.unproven.Remove(l.unproven.Front()).(*trackedConn)
		evict.elem = nil
		l.evicted++
	}
	tc.elem = l.unproven.PushBack(tc)
	l.mu.Unlock()
	if evict != nil {
		evict.Close()
	}
	return tc, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type trackedConn struct {
	net.Conn
	l    *limitListener
	elem *list.Element // in l.unproven while unauthenticated (under l.mu)
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		if c.elem != nil {
			c.l.unproven.Remove(c.elem)
			c.elem = nil
		}
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}

// prove takes the connection off the unproven list: it carried an
// authenticated request.
func (c *trackedConn) prove() {
	c.l.mu.Lock()
	if c.elem != nil {
		c.l.unproven.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
}

const ctxConn ctxKey = 100

func proveConn(ctx context.Context) {
	if c, ok := ctx.Value(ctxConn).(*trackedConn); ok {
		c.prove()
	}
}

// HTTPServer is the server for the TCP listener: the handler chain, the
// timeouts above, and the link that lets authentication mark a
// LimitListener's connection proven.
func (s *Server) HTTPServer(errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errorLog,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*trackedConn); ok {
				return context.WithValue(ctx, ctxConn, tc)
			}
			return ctx
		},
	}
}
