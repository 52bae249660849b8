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
	ctxClient                  // how the caller authenticated: "token", "cookie", "window"
	ctxBodyLimit               // the request's body limit, for the 413 message
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

// authenticator admits a bearer token (harnesses) or a login cookie (the
// browser UI). The cookie is an HMAC of a random id under the token, so it
// survives restarts and dies with `tollgate token --rotate`.
type authenticator struct {
	token      func() string
	cookieName string
}

func (a authenticator) cookieValue(id string) string {
	mac := hmac.New(sha256.New, []byte(a.token()))
	mac.Write([]byte("tollgate-cookie:" + id))
	return id + "." + hex.EncodeToString(mac.Sum(nil))
}

func (a authenticator) validCookie(v string) bool {
	id, _, ok := strings.Cut(v, ".")
	if !ok || id == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(v), []byte(a.cookieValue(id))) == 1
}

func (a authenticator) validBearer(header string) bool {
	tok, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	want := a.token()
	return want != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(want)) == 1
}

// authenticate guards everything under /v1/.
func (a authenticator) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			if a.validBearer(h) {
				proveConn(r.Context())
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxClient, "token")))
				return
			}
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusUnauthorized, "wrong token: read it from api.json or run `tollgate token`")
			return
		}
		if c, err := r.Cookie(a.cookieName); err == nil && a.validCookie(c.Value) {
			proveConn(r.Context())
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxClient, "cookie")))
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="tollgate"`)
		w.Header().Set("Connection", "close") // a refused caller keeps no descriptor
		writeError(w, http.StatusUnauthorized, "not logged in: run `tollgate login` and open the URL it prints, or send Authorization: Bearer <token>")
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
		r = r.WithContext(context.WithValue(r.Context(), ctxBodyLimit, limit))
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
		ctx = context.WithValue(ctx, ctxClient, "window")
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// IsWindow reports whether the request came from the in-process window.
func IsWindow(ctx context.Context) bool {
	b, _ := ctx.Value(ctxTrusted).(bool)
	return b
}
