package guard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// The TCP listener is reachable by every local process and by every web page
// the user's browser opens, so each request passes these layers in order:
//
//	securityHeaders → checkHost → checkOrigin → (public static | authenticate) → limitBody → route
//
// The Wails window reaches the same routes in-process through
// AssetServer.Handler; that chain (trustedChain) skips Host, Origin and token
// checks, because nothing outside this process can send on it.

// Body limits: most bodies are small; the two surface-carrying endpoints get
// room for a million-token surface of small units. A route that needs more
// declares it where it is registered (Route.BodyLimit): the limit is looked
// up by the pattern the request matches, so no layer names another room's
// path.
const (
	defaultBodyLimit = 1 << 20
	surfaceBodyLimit = 16 << 20
)

// CSP for HTML: scripts, styles and connections only from this origin; no
// framing; no plugins. uPlot styles elements through the CSSOM, which CSP
// does not restrict.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

type ctxKey int

const (
	ctxTrusted   ctxKey = iota // the request came through the in-process window chain
	ctxClient                  // how the caller authenticated: one of the Caller… values
	ctxBodyLimit               // the request's body limit, for the 413 message
)

// Callers: how a request was admitted. Every caller but the harness is the
// owner (ARCHITECTURE.md, "The API"); the owner's names are what a decided
// question records as answeredBy.
const (
	CallerWindow     = "window"      // the in-process trusted chain
	CallerBrowser    = "browser"     // the login cookie
	CallerOwnerToken = "owner-token" // Authorization: Bearer <home>/owner.token
	CallerHarness    = "harness"     // Authorization: Bearer <api.json token>
	CallerTray       = "tray"        // the tray menu (in-process)
)

// Caller says how a request was admitted.
func Caller(ctx context.Context) string {
	s, _ := ctx.Value(ctxClient).(string)
	return s
}

// securityHeaders forbids MIME sniffing and framing on every response, and
// sets the CSP on HTML (harmless on JSON, so it is set everywhere).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// hostPolicy decides which Host headers and Origins are ours.
type hostPolicy struct {
	port          string
	extraHostname string // the --insecure-listen host, admitted too ("*": any IP literal)
}

// allowedHost: a DNS-rebinding page reaches 127.0.0.1 under its own name
// (evil.example), so only loopback names and IPs pass.
func (p hostPolicy) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	if p.extraHostname == "*" {
		return net.ParseIP(host) != nil
	}
	return p.extraHostname != "" && strings.EqualFold(host, p.extraHostname)
}

// allowedOrigin: our own pages send Origin http://<loopback>:<our port>; any
// other origin is a cross-site request (CSRF) and is refused. No CORS headers
// are ever sent, so browsers also refuse to show cross-origin responses.
func (p hostPolicy) allowedOrigin(origin string) bool {
	rest, ok := strings.CutPrefix(origin, "http://")
	if !ok {
		return false
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil || port != p.port {
		return false
	}
	return p.allowedHost(net.JoinHostPort(host, port))
}

func (p hostPolicy) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.allowedHost(r.Host) {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusForbidden, "Host "+strconv.Quote(r.Host)+" is not a loopback name; use http://127.0.0.1:"+p.port)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p hostPolicy) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !p.allowedOrigin(origin) {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusForbidden, "cross-origin request from "+strconv.Quote(origin)+" refused")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticator admits a bearer token — the harness token of api.json or
// the owner token of <home>/owner.token — or a login cookie (the browser
// UI, an owner). The cookie is an HMAC of a random id and the listener's
// port under both tokens, so it survives restarts, is good on this port only
// (browsers share cookies across ports), and dies when either token is
// rotated.
type authenticator struct {
	token      func() string
	ownerToken func() string // nil: no owner token
	cookieName string
	port       string
}

func (a authenticator) owner() string {
	if a.ownerToken == nil {
		return ""
	}
	return a.ownerToken()
}

func (a authenticator) cookieValue(id string) string {
	mac := hmac.New(sha256.New, []byte(a.token()+"\x00"+a.owner()))
	mac.Write([]byte("tollgate-cookie:" + a.port + ":" + id))
	return id + "." + hex.EncodeToString(mac.Sum(nil))
}

func (a authenticator) validCookie(v string) bool {
	id, _, ok := strings.Cut(v, ".")
	if !ok || id == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(v), []byte(a.cookieValue(id))) == 1
}

// bearer says which token the header carries: CallerHarness,
// CallerOwnerToken, or "" for neither.
func (a authenticator) bearer(header string) string {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return ""
	}
	tok = strings.TrimSpace(tok)
	// Both compared, constant-time, whichever matches.
	harness, owner := a.token(), a.owner()
	isHarness := harness != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(harness)) == 1
	isOwner := owner != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(owner)) == 1
	switch {
	case isOwner:
		return CallerOwnerToken
	case isHarness:
		return CallerHarness
	}
	return ""
}

// authenticate guards everything under /v1/.
func (a authenticator) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			if who := a.bearer(h); who != "" {
				proveConn(r.Context())
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxClient, who)))
				return
			}
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusUnauthorized, "wrong token: read it from api.json or run `tollgate token`")
			return
		}
		if c, err := r.Cookie(a.cookieName); err == nil && a.validCookie(c.Value) {
			proveConn(r.Context())
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxClient, CallerBrowser)))
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="tollgate"`)
		w.Header().Set("Connection", "close") // a refused caller keeps no descriptor
		writeError(w, http.StatusUnauthorized, "not logged in: run `tollgate login` and open the URL it prints, or send Authorization: Bearer <token>")
	})
}

// What the harness token may do, like Tailscale's LocalAPI
// PermitRead/PermitWrite: every read (GET), and the writes a harness needs —
// register and heartbeat its engine, record usage, ask before a rewrite and
// report its outcome, raise the window. Every other write needs the owner
// (the window, a browser session, or the owner token): answering, modes,
// settings and profiles, deletion, re-pricing, imports, the simulator,
// token rotation, login URLs, and any route added later unless it says
// otherwise (Route.Harness). A question provider (GET
// /v1/events?answers=1) is the owner too: a harness that subscribed would
// count as someone who can answer.
var harnessWrites = map[string]bool{
	"POST /v1/engines":                     true,
	"POST /v1/engines/{id}/heartbeat":      true,
	"DELETE /v1/engines/{id}":              true,
	"POST /v1/sessions/{session}/requests": true,
	"POST /v1/sessions/{session}/rewrites": true,
	"POST /v1/rewrites/{id}/outcome":       true,
	"POST /v1/window/raise":                true,
}

// NeedsOwner reports whether the request needs the owner (a harness token
// gets 403 for it).
func (s *Server) NeedsOwner(r *http.Request) bool { return s.needsOwner(r) }

func (s *Server) needsOwner(r *http.Request) bool {
	_, pattern := s.mux.Handler(r)
	switch {
	case pattern == "GET /v1/events":
		return r.URL.Query().Get("answers") == "1"
	case pattern == "/v1/" || pattern == "/otlp/" || pattern == "":
		return false // no such route: 404 or 405, whoever asks
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return false
	}
	return !s.harnessWrites[pattern]
}

// permit refuses a harness what needs the owner, with 403.
func (s *Server) permit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Caller(r.Context()) == CallerHarness && s.needsOwner(r) {
			writeError(w, http.StatusForbidden, r.Method+" "+r.URL.Path+" needs the owner: the tollgate window, a browser session (`tollgate login`) "+
				"or the owner token in owner.token; the harness token of api.json cannot do it")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bodyLimitFor returns the most bytes a route may read: its registered
// limit, else the default.
func (s *Server) bodyLimitFor(r *http.Request) int64 {
	if _, pattern := s.mux.Handler(r); s.bodyLimits[pattern] > 0 {
		return s.bodyLimits[pattern]
	}
	return defaultBodyLimit
}

// limitBody answers 413 at once when Content-Length says too much, and caps
// the reader otherwise (handlers turn a MaxBytesError into 413).
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := s.bodyLimitFor(r)
		if r.ContentLength > limit {
			writeError(w, http.StatusRequestEntityTooLarge, "body of "+strconv.FormatInt(r.ContentLength, 10)+" bytes is over the limit of "+strconv.FormatInt(limit, 10))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// trusted marks requests from the Wails window, which arrive in-process.
func trusted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), ctxTrusted, true)
		ctx = context.WithValue(ctx, ctxClient, CallerWindow)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// IsWindow reports whether the request came from the in-process window.
func IsWindow(ctx context.Context) bool {
	b, _ := ctx.Value(ctxTrusted).(bool)
	return b
}
