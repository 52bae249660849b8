package guard

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"tollgate/guard/api"
	"tollgate/storage"
)

// The harness token cannot answer its own question (an answer it gave
// would be stored as the user's); the owner's answers record the door they
// came through.
func TestOnlyTheOwnerAnswersAndTheDoorIsRecorded(t *testing.T) {
	g := newGate(t, ModeAsk)
	g.subscribe(true)
	ask := func(session string) string {
		code, d := g.ask(session, rewriteBody(20, "1", map[string]any{"wait": 0}))
		if code != http.StatusAccepted {
			t.Fatalf("ask: %d %+v", code, d)
		}
		return d.Rewrite
	}
	answer := func(rewrite string, auth func(*http.Request)) int {
		req, _ := http.NewRequest("POST", g.ts.URL+"/v1/rewrites/"+rewrite+"/answer", bytes.NewReader([]byte(`{"choice":"allow-once"}`)))
		auth(req)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}

	own := ask("s-harness")
	if code := answer(own, bearer(testToken)); code != http.StatusForbidden {
		t.Fatalf("the harness answering its own question: %d, want 403", code)
	}
	if code := answer(own, bearer(testOwnerToken)); code != 200 {
		t.Fatalf("owner token: %d", code)
	}
	viaCookie := ask("s-browser")
	cookie := &http.Cookie{Name: g.srv.auth.cookieName, Value: g.srv.auth.cookieValue("c0ffee")}
	if code := answer(viaCookie, func(r *http.Request) { r.AddCookie(cookie) }); code != 200 {
		t.Fatalf("cookie: %d", code)
	}
	viaWindow := ask("s-window")
	rec := httptest.NewRecorder()
	g.srv.TrustedHandler().ServeHTTP(rec, httptest.NewRequest("POST", "http://wails/v1/rewrites/"+viaWindow+"/answer", bytes.NewReader([]byte(`{"choice":"not-now"}`))))
	if rec.Code != 200 {
		t.Fatalf("window: %d %s", rec.Code, rec.Body)
	}
	for session, want := range map[string]string{"s-harness": CallerOwnerToken, "s-browser": CallerBrowser, "s-window": CallerWindow} {
		var series storage.Series
		if code := g.call("GET", "/v1/sessions/"+session+"/series", nil, &series); code != 200 || len(series.Folds) != 1 {
			t.Fatalf("%s series: %d %+v", session, code, series)
		}
		if f := series.Folds[0]; f.AnsweredBy != want || f.Reason != api.ReasonUser {
			t.Errorf("%s: answeredBy %q reason %q, want %q user", session, f.AnsweredBy, f.Reason, want)
		}
	}
}

// A write a room adds is the owner's unless it says the harness may call
// it: a route added later fails closed for the harness token.
func TestRoomRoutesAreOwnerOnlyUnlessMarked(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s, err := NewServer(t.Context(), Options{Token: func() string { return testToken }, OwnerToken: func() string { return testOwnerToken },
		BaseURL: "http://127.0.0.1:47631", Settings: newTestSettings("ask"), Store: openTestStore(t), Pricer: testPricer{},
		Routes: []Route{{Pattern: "POST /v1/room/action", Handler: ok}, {Pattern: "POST /v1/room/hook", Handler: ok, Harness: true}, {Pattern: "GET /v1/room/info", Handler: ok}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, token string
		want                int
	}{
		{"POST", "/v1/room/action", testToken, 403},
		{"POST", "/v1/room/action", testOwnerToken, 204},
		{"POST", "/v1/room/hook", testToken, 204},
		{"GET", "/v1/room/info", testToken, 204},
		{"DELETE", "/v1/room/nothing", testToken, 404},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tc.method, "http://127.0.0.1:47631"+tc.path, nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.want)
		}
	}
}
