package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"tollgate/app/home"
)

// TestPermissionTable sends every /v1 route with each credential. The
// harness token (api.json) registers engines, records usage, asks, reports
// outcomes and reads; what changes the owner's choices needs the owner —
// the window, a browser session or <home>/owner.token — and the harness
// gets 403 for it. No credential: 401.
func TestPermissionTable(t *testing.T) {
	const (
		read    = "read"
		harness = "harness" // the harness token may
		owner   = "owner"   // only the owner may
	)
	rewrite := `{"trigger":"pressure","envelopeTokens":1000,"surface":[{"id":"u1","tokens":5000},{"id":"u2","tokens":5000}],"plan":{"prune":[{"id":"u1","tokensAfter":10}]},"wait":0}`
	rows := []struct {
		method, path, body string
		perm               string
		want               int // the owner's status (the harness's too, where it may)
	}{
		{"GET", "/v1/health", "", read, 200},
		{"GET", "/v1/engines", "", read, 200},
		{"POST", "/v1/engines", `{"harness":"dsh"}`, harness, 201},
		{"POST", "/v1/engines/e_none/heartbeat", `{}`, harness, 404},
		{"DELETE", "/v1/engines/e_none", "", harness, 404},
		{"POST", "/v1/sessions/s1/requests", `{"requestId":"q1","usage":{"inputTokens":10}}`, harness, 201},
		{"POST", "/v1/sessions/s1/rewrites", rewrite, harness, 200},
		{"GET", "/v1/rewrites/r_none", "", read, 404},
		{"POST", "/v1/rewrites/r_none/outcome", `{"applied":true}`, harness, 404},
		{"POST", "/v1/hooks/claude-code", `{}`, harness, 200},
		{"POST", "/otlp/v1/logs", `{}`, harness, 200},
		{"POST", "/otlp/v1/metrics", `{}`, harness, 200},
		{"GET", "/metrics", "", read, 200},
		{"POST", "/v1/window/raise", "", harness, 409},
		{"GET", "/v1/mode", "", read, 200},
		{"GET", "/v1/events", "", read, 200},
		{"GET", "/v1/events?answers=1", "", owner, 200},
		{"GET", "/v1/sessions", "", read, 200},
		{"GET", "/v1/sessions/s1", "", read, 200},
		{"GET", "/v1/sessions/s1/series", "", read, 200},
		{"GET", "/v1/sessions/s1/export", "", read, 200},
		{"GET", "/v1/export", "", read, 200},
		{"GET", "/v1/spend", "", read, 200},
		{"GET", "/v1/sessions/s1/breaks", "", read, 200},
		{"GET", "/v1/breaks", "", read, 200},
		{"GET", "/v1/profiles", "", read, 200},
		{"GET", "/v1/doctor", "", read, 200},
		{"GET", "/v1/follow", "", read, 200},
		{"GET", "/v1/harnesses", "", read, 200},
		{"POST", "/v1/rewrites/r_none/answer", `{"choice":"allow-once"}`, owner, 404},
		{"PUT", "/v1/mode", `{"scope":"global","mode":"ask"}`, owner, 200},
		{"PUT", "/v1/profiles/p1", `{"pricePerMTokens":-1}`, owner, 400},
		{"PUT", "/v1/settings", `{"askTimeout":"nope"}`, owner, 400},
		{"POST", "/v1/reprice", `{}`, owner, 200},
		{"POST", "/v1/import", `{"paths":[]}`, owner, 400},
		{"POST", "/v1/simulate", `{"steps":-1}`, owner, 400},
		{"POST", "/v1/login", "", owner, 201},
		{"DELETE", "/v1/sessions/s_none", "", owner, 404},
		{"DELETE", "/v1/sessions?confirm=all", "", owner, 200},
		{"POST", "/v1/token/rotate", "", owner, 200}, // last: it changes the tokens
	}

	type door struct {
		name string
		// do sends a request through this door.
		do func(svc *Service, req *http.Request) int
	}
	tcp := func(auth func(svc *Service, req *http.Request)) func(*Service, *http.Request) int {
		return func(svc *Service, req *http.Request) int {
			auth(svc, req)
			ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
			defer cancel()
			res, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
			}
			defer res.Body.Close()
			if !strings.Contains(req.URL.RawQuery, "answers") && req.URL.Path != "/v1/events" {
				io.Copy(io.Discard, res.Body)
			}
			return res.StatusCode
		}
	}
	doors := []door{
		{"none", tcp(func(*Service, *http.Request) {})},
		{"harness-token", tcp(func(svc *Service, req *http.Request) { req.Header.Set("Authorization", "Bearer "+svc.Token()) })},
		{"owner-token", tcp(func(svc *Service, req *http.Request) {
			tok, err := home.ReadOwnerToken(svc.Home)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		})},
		{"browser", tcp(func(svc *Service, req *http.Request) {
			u, _ := url.Parse(svc.Server.LoginURL())
			res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(u.String())
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			for _, c := range res.Cookies() {
				req.AddCookie(c)
			}
		})},
		{"window", func(svc *Service, req *http.Request) int {
			ctx, cancel := context.WithTimeout(req.Context(), 300*time.Millisecond)
			defer cancel()
			rec := httptest.NewRecorder()
			svc.Server.TrustedHandler().ServeHTTP(rec, req.WithContext(ctx))
			return rec.Code
		}},
	}
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			svc := startTestService(t, t.TempDir())
			t.Cleanup(func() { svc.Close(context.Background()) })
			covered := map[string]bool{}
			for _, r := range rows {
				req, _ := http.NewRequest(r.method, svc.URL+r.path, strings.NewReader(r.body))
				if r.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				want := r.want
				switch {
				case d.name == "none":
					want = 401
				case d.name == "harness-token" && r.perm == owner:
					want = 403
				case d.name == "window" && r.path == "/v1/token/rotate":
					want = 403 // the window never rotates: `tollgate token --rotate`
				case d.name == "window" && r.path == "/v1/window/raise":
					want = 409
				}
				if got := d.do(svc, req); got != want {
					t.Errorf("%s %s as %s: %d, want %d", r.method, r.path, d.name, got, want)
				}
				covered[r.method+" "+strings.SplitN(r.path, "?", 2)[0]] = true
			}
			if d.name == "owner-token" {
				for _, p := range svc.Server.Patterns() {
					if !coveredPattern(p, covered) {
						t.Errorf("route %s has no row in the permission table", p)
					}
				}
			}
		})
	}
}

// coveredPattern reports whether a row's method and path match pattern.
func coveredPattern(pattern string, covered map[string]bool) bool {
	method, path, _ := strings.Cut(pattern, " ")
	pp := strings.Split(path, "/")
	for k := range covered {
		m, p, _ := strings.Cut(k, " ")
		if m != method {
			continue
		}
		kp := strings.Split(p, "/")
		if len(kp) != len(pp) {
			continue
		}
		ok := true
		for i := range pp {
			if !strings.HasPrefix(pp[i], "{") && pp[i] != kp[i] {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}
