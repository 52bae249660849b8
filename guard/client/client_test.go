package client

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tollgate/guard/api"
)

// At the question limit tollgate allows the rewrite unasked; the harness
// proceeds and its log says why.
func TestAskRewriteLogsTheQuestionLimit(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(api.Decision{Rewrite: "r_1", Status: api.StatusDecided, Decision: api.Allow, Reason: api.ReasonQuestionLimit,
			Message: "tollgate could not take the question: 256 questions already wait (the limit); allowed without asking"})
	}))
	defer ts.Close()
	var logs bytes.Buffer
	c := New(Endpoint{URL: ts.URL, Token: "t"}, slog.New(slog.NewTextHandler(&logs, nil)))
	d := c.AskRewrite(context.Background(), "s1", api.RewriteRequest{})
	if d.Decision != api.Allow || d.Reason != api.ReasonQuestionLimit {
		t.Fatalf("decision %+v", d)
	}
	if !strings.Contains(logs.String(), "256 questions already wait") {
		t.Fatalf("log %q does not say why", logs.String())
	}
}
