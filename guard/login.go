package guard

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

// loginTTL is how long a printed login URL works.
const loginTTL = 5 * time.Minute

// loginNonces hands out single-use login nonces. They live in memory only: a
// restart invalidates unused login URLs, which is what a user expects of a
// link printed by the previous process.
type loginNonces struct {
	mu     sync.Mutex
	now    func() time.Time
	issued map[string]time.Time // nonce → expiry
}

func newLoginNonces(now func() time.Time) *loginNonces {
	return &loginNonces{now: now, issued: map[string]time.Time{}}
}

func (l *loginNonces) issue() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the OS RNG does not fail on Linux
	}
	n := hex.EncodeToString(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for k, exp := range l.issued { // prune, so the map cannot grow without bound
		if now.After(exp) {
			delete(l.issued, k)
		}
	}
	l.issued[n] = now.Add(loginTTL)
	return n
}

// redeem consumes a nonce; it succeeds once, within loginTTL.
func (l *loginNonces) redeem(n string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	exp, ok := l.issued[n]
	if !ok {
		return false
	}
	delete(l.issued, n)
	return !l.now().After(exp)
}

// handleLogin turns a login URL into a session cookie and sends the browser
// to the dashboard. The cookie is HttpOnly (scripts cannot read it) and
// SameSite=Strict (other sites cannot send it).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !s.logins.redeem(r.URL.Query().Get("nonce")) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`<!doctype html><meta charset="utf-8"><title>tollgate — login link expired</title>
<body style="font-family:sans-serif;max-width:40em;margin:3em auto">
<h1>This login link was used or has expired</h1>
<p>Login links work once, for 5 minutes. Run <code>tollgate login</code> in a terminal and open the new URL it prints.</p>`))
		return
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		writeError(w, http.StatusInternalServerError, "reading random bytes")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     s.auth.cookieName,
		Value:    s.auth.cookieValue(hex.EncodeToString(id)),
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		MaxAge:   400 * 24 * 3600, // browsers cap at 400 days
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// handleNewLogin issues a login URL to a token holder (`tollgate login`).
func (s *Server) handleNewLogin(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusCreated, map[string]string{"url": s.LoginURL()})
}

// LoginURL issues a fresh single-use login URL.
func (s *Server) LoginURL() string {
	return s.baseURL + "/login?nonce=" + s.logins.issue()
}
