package guard

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"tollgate/guard/client/clienttest"
)

const (
	testToken      = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testOwnerToken = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var testAssets = fstest.MapFS{
	"index.html":    {Data: []byte("<!doctype html><title>tollgate</title><div id=app></div>")},
	"assets/app.js": {Data: []byte("console.log('ui')")},
}

// newTestServer runs the TCP chain on a real loopback listener.
func newTestServer(t *testing.T, clock *fakeClock) (*Server, *httptest.Server) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Version:    "test",
		Assets:     testAssets,
		Token:      func() string { return testToken },
		OwnerToken: func() string { return testOwnerToken },
		BaseURL:    "http://" + ln.Addr().String(),
		Settings:   newTestSettings("ask"),
		Store:      openTestStore(t),
		Pricer:     testPricer{},
	}
	if clock != nil {
		opts.Now = clock.Now
	}
	s, err := NewServer(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.Handler()}}
	ts.Start()
	t.Cleanup(ts.Close)
	return s, ts
}

func noRedirect() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func TestTCPSecurityLayers(t *testing.T) {
	s, ts := newTestServer(t, nil)
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	own := "http://127.0.0.1:" + itoa(port)
	cookie := &http.Cookie{Name: s.auth.cookieName, Value: s.auth.cookieValue("c0ffee")}
	forged := &http.Cookie{Name: s.auth.cookieName, Value: "c0ffee.00"}

	cases := []struct {
		name   string
		method string
		path   string
		host   string // "" = the listener's address
		origin string
		token  string
		cookie *http.Cookie
		body   int // bytes of body
		want   int
	}{
		{name: "token ok", method: "GET", path: "/v1/health", token: testToken, want: 200},
		{name: "token missing", method: "GET", path: "/v1/health", want: 401},
		{name: "token wrong", method: "GET", path: "/v1/health", token: strings.Repeat("f", 64), want: 401},
		{name: "token prefix only", method: "GET", path: "/v1/health", token: testToken[:32], want: 401},
		{name: "wrong token beats a valid cookie", method: "GET", path: "/v1/health", token: "nope", cookie: cookie, want: 401},
		{name: "cookie ok", method: "GET", path: "/v1/health", cookie: cookie, want: 200},
		{name: "owner token ok", method: "GET", path: "/v1/health", token: testOwnerToken, want: 200},
		{name: "harness token on an owner route", method: "PUT", path: "/v1/mode", token: testToken, body: 10, want: 403},
		{name: "owner token on an owner route", method: "PUT", path: "/v1/mode", token: testOwnerToken, body: 10, want: 400},
		{name: "harness token as a question provider", method: "GET", path: "/v1/events?answers=1", token: testToken, want: 403},
		{name: "cookie of another port", method: "GET", path: "/v1/health", cookie: &http.Cookie{Name: s.auth.cookieName, Value: authenticator{token: s.auth.token, ownerToken: s.auth.ownerToken, port: "1"}.cookieValue("c0ffee")}, want: 401},
		{name: "cookie forged", method: "GET", path: "/v1/health", cookie: forged, want: 401},
		{name: "host evil.example", method: "GET", path: "/v1/health", host: "evil.example", token: testToken, want: 403},
		{name: "host evil with our port", method: "GET", path: "/v1/health", host: "evil.example:" + itoa(port), token: testToken, want: 403},
		{name: "host localhost", method: "GET", path: "/v1/health", host: "localhost:" + itoa(port), token: testToken, want: 200},
		{name: "host ::1", method: "GET", path: "/v1/health", host: "[::1]:" + itoa(port), token: testToken, want: 200},
		{name: "static page evil host", method: "GET", path: "/", host: "evil.example", want: 403},
		{name: "origin evil", method: "GET", path: "/v1/health", origin: "http://evil.example", token: testToken, want: 403},
		{name: "origin evil with cookie", method: "GET", path: "/v1/health", origin: "http://evil.example", cookie: cookie, want: 403},
		{name: "origin other port", method: "GET", path: "/v1/health", origin: "http://127.0.0.1:1", cookie: cookie, want: 403},
		{name: "origin https", method: "GET", path: "/v1/health", origin: "https://127.0.0.1:" + itoa(port), cookie: cookie, want: 403},
		{name: "origin null", method: "GET", path: "/v1/health", origin: "null", cookie: cookie, want: 403},
		{name: "origin own", method: "GET", path: "/v1/health", origin: own, cookie: cookie, want: 200},
		{name: "origin own localhost", method: "GET", path: "/v1/health", origin: "http://localhost:" + itoa(port), cookie: cookie, want: 200},
		{name: "body 2 MiB", method: "POST", path: "/v1/login", token: testOwnerToken, body: 2 << 20, want: 413},
		{name: "body 2 MiB unauthenticated is 401 first", method: "POST", path: "/v1/login", body: 2 << 20, want: 401},
		{name: "surface endpoint takes 2 MiB", method: "POST", path: "/v1/sessions/s1/requests", token: testToken, body: 2 << 20, want: 400},
		{name: "surface endpoint 17 MiB", method: "POST", path: "/v1/sessions/s1/rewrites", token: testToken, body: 17 << 20, want: 413},
		{name: "static index public", method: "GET", path: "/", want: 200},
		{name: "static asset public", method: "GET", path: "/assets/app.js", want: 200},
		{name: "spa route falls back to index", method: "GET", path: "/sessions/x", want: 200},
		{name: "login nonce unknown", method: "GET", path: "/login?nonce=deadbeef", want: 401},
		{name: "unknown v1 route", method: "GET", path: "/v1/nope", token: testToken, want: 404},
		{name: "known route, wrong method", method: "PUT", path: "/v1/health", token: testToken, want: 405},
		{name: "wrong method unauthenticated is 401 first", method: "PUT", path: "/v1/health", want: 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body > 0 {
				body = strings.NewReader(strings.Repeat("x", tc.body))
			}
			req := clienttest.NewRequest(tc.method, ts.URL+tc.path, tc.token, body)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.cookie != nil {
				req.AddCookie(tc.cookie)
			}
			res, err := noRedirect().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			got, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d; body %s", res.StatusCode, tc.want, got)
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("missing security headers: %v", res.Header)
			}
			if res.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header sent: %q", res.Header.Get("Access-Control-Allow-Origin"))
			}
			if res.StatusCode >= 400 && strings.HasPrefix(tc.path, "/v1/") {
				if !strings.Contains(string(got), `"error":{"code":`) {
					t.Errorf("error body is not {\"error\":{code,message}}: %s", got)
				}
			}
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("HTML without a restrictive CSP")
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestLoginNonceIsSingleUseAndExpires(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	s, ts := newTestServer(t, clock)
	client := noRedirect()

	login := func(u string) *http.Response {
		t.Helper()
		parsed, _ := url.Parse(u)
		res, err := client.Get(ts.URL + parsed.RequestURI())
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}

	first := s.LoginURL()
	if !strings.HasPrefix(first, ts.URL+"/login?nonce=") {
		t.Fatalf("login URL %q does not point at the listener", first)
	}
	res := login(first)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("first use: status %d location %q; want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == s.auth.cookieName {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v: want %s, HttpOnly, SameSite=Strict", session, s.auth.cookieName)
	}
	if !strings.HasPrefix(s.auth.cookieName, "tollgate_") || strings.TrimPrefix(s.auth.cookieName, "tollgate_") != itoa(ts.Listener.Addr().(*net.TCPAddr).Port) {
		t.Fatalf("cookie name %q is not named for the port", s.auth.cookieName)
	}

	// The cookie opens /v1.
	req, _ := http.NewRequest("GET", ts.URL+"/v1/health", nil)
	req.AddCookie(session)
	if r, err := client.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("cookie on /v1/health: %v %v", r.StatusCode, err)
	}

	// Reused → refused.
	if res := login(first); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("reused nonce: status %d, want 401", res.StatusCode)
	}
	// Expired → refused.
	late := s.LoginURL()
	clock.Advance(loginTTL + time.Second)
	if res := login(late); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("expired nonce: status %d, want 401", res.StatusCode)
	}
	// Just inside the window → accepted.
	inTime := s.LoginURL()
	clock.Advance(loginTTL - time.Second)
	if res := login(inTime); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("nonce within 5 minutes: status %d, want 303", res.StatusCode)
	}
}

func TestCookieDiesWithTokenRotation(t *testing.T) {
	token := testToken
	var mu sync.Mutex
	s, err := NewServer(context.Background(), Options{
		Token:    func() string { mu.Lock(); defer mu.Unlock(); return token },
		BaseURL:  "http://127.0.0.1:47631",
		Settings: newTestSettings("ask"),
		Store:    openTestStore(t),
		Pricer:   testPricer{},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := s.auth.cookieValue("abc")
	if !s.auth.validCookie(c) {
		t.Fatal("fresh cookie invalid")
	}
	mu.Lock()
	token = strings.Repeat("e", 64)
	mu.Unlock()
	if s.auth.validCookie(c) {
		t.Fatal("cookie still valid after the token changed")
	}
}

func TestListenRefusesNonLoopbackWithoutInsecure(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "[::]:0", "example.com:0"} {
		if ln, err := Listen(addr, false); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) without --insecure-listen succeeded", addr)
		} else if !strings.Contains(err.Error(), "--insecure-listen") {
			t.Errorf("Listen(%q): error %q does not say how to allow it", addr, err)
		}
	}
	ln, err := Listen("0.0.0.0:0", true)
	if err != nil {
		t.Fatalf("Listen with --insecure-listen: %v", err)
	}
	ln.Close()
	if ln, err := Listen("localhost:0", false); err != nil {
		t.Errorf("localhost refused: %v", err)
	} else {
		ln.Close()
	}
}

func TestInsecureListenAdmitsItsHost(t *testing.T) {
	for _, tc := range []struct {
		listen, host string
		want         bool
	}{
		{"192.0.2.7:47631", "192.0.2.7:47631", true},
		{"192.0.2.7:47631", "evil.example:47631", false},
		{"0.0.0.0:47631", "192.0.2.7:47631", true},
		{"0.0.0.0:47631", "evil.example:47631", false},
		{"127.0.0.1:47631", "192.0.2.7:47631", false},
	} {
		p := hostPolicy{port: "47631", extraHostname: InsecureHostFor(tc.listen)}
		if got := p.allowedHost(tc.host); got != tc.want {
			t.Errorf("listen %s, Host %s: allowed=%v, want %v", tc.listen, tc.host, got, tc.want)
		}
	}
}

func TestTrustedChainSkipsTokenAndHostChecks(t *testing.T) {
	s, err := NewServer(context.Background(), Options{Token: func() string { return testToken }, BaseURL: "http://127.0.0.1:47631", Settings: newTestSettings("auto"), Store: openTestStore(t), Pricer: testPricer{}, Assets: testAssets})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "http://wails.localhost/v1/health", nil)
	req.Host = "wails"
	s.TrustedHandler().ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"mode":"auto"`) {
		t.Fatalf("window chain: %d %s", rec.Code, rec.Body.String())
	}
	// Body limits still hold in the window.
	rec = httptest.NewRecorder()
	req = httptest.NewRequest("POST", "http://wails/v1/login", strings.NewReader(strings.Repeat("x", 2<<20)))
	s.TrustedHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("window chain body limit: %d", rec.Code)
	}
}

func TestHealthReportsNotArmedUntilAnEngineHoldsALease(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	s, _ := newTestServer(t, clock)
	if h := s.health(); h.Armed || h.Engines != 0 || h.Mode != "ask" || h.Status != "ok" {
		t.Fatalf("fresh health %+v: want not armed", h)
	}
	e := s.engines.register(Engine{Harness: "dsh"})
	if h := s.health(); !h.Armed || h.Engines != 1 {
		t.Fatalf("after register %+v: want armed with 1 engine", h)
	}
	clock.Advance(LeaseDuration - time.Second)
	if !s.engines.heartbeat(e.ID) {
		t.Fatal("heartbeat within the lease refused")
	}
	clock.Advance(LeaseDuration + time.Second)
	if h := s.health(); h.Armed {
		t.Fatalf("lease expired but health %+v says armed", h)
	}
	if s.engines.heartbeat(e.ID) {
		t.Fatal("heartbeat on an expired lease accepted")
	}
}
