// Package clienttest holds test helpers that talk to a running tollgate as a
// user interface or a harness would: answering its questions, reading its
// event stream, calling its API, loading it with concurrent clients. Only
// tests import it.
package clienttest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client"
)

// Answerer subscribes to the event stream with answers=1 (so it counts as a
// question provider) and answers every question with its choice ("" leaves
// them pending).
type Answerer struct {
	mu      sync.Mutex
	choice  string
	pending []api.RewritePending
}

// StartAnswerer subscribes to the tollgate at url and returns once the
// subscription is registered; it stops when the test ends. token must be
// the owner token (<home>/owner.token): a question provider and its answers
// are the owner's, and the harness token gets 403 for both.
func StartAnswerer(t testing.TB, url, token, choice string) *Answerer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := &Answerer{choice: choice}
	res, err := http.DefaultClient.Do(NewRequest("GET", url+"/v1/events?answers=1", token, nil).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(client.Endpoint{URL: url, Token: token}, nil)
	ready := make(chan struct{})
	go func() {
		defer res.Body.Close()
		close(ready)
		ReadEvents(res.Body, func(event, data string) {
			if event != "rewrite.pending" {
				return
			}
			var p api.RewritePending
			json.Unmarshal([]byte(data), &p)
			a.mu.Lock()
			a.pending = append(a.pending, p)
			choice := a.choice
			a.mu.Unlock()
			if choice != "" {
				go c.Answer(context.Background(), p.Rewrite, choice)
			}
		})
	}()
	<-ready
	// The subscription counts once the server has registered it.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var h struct {
			Status string `json:"status"`
		}
		if c.Get(context.Background(), "/v1/health", &h) == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	return a
}

// ReadEvents reads tollgate's event stream (GET /v1/events) from r until it
// ends, calling each with every data: line and the name of the event: line
// before it ("" before any). Lines up to 64 MiB are read whole.
func ReadEvents(r io.Reader, each func(event, data string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			each(event, data)
		}
	}
}

// Asked lists the questions seen so far.
func (a *Answerer) Asked() []api.RewritePending {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]api.RewritePending(nil), a.pending...)
}

// SetChoice changes the answer to later questions.
func (a *Answerer) SetChoice(choice string) {
	a.mu.Lock()
	a.choice = choice
	a.mu.Unlock()
}

// Service is a running tollgate as a room's tests see it.
type Service struct {
	URL   string
	token string
}

// Token is the harness token of the tollgate.
func (s Service) Token() string { return s.token }

// Starter starts a real tollgate in a mode and returns its URL, token and
// home. A room the app imports cannot import the app in its own tests;
// its app_link_test.go (an external test file) sets its Starter from
// app/apptest instead.
type Starter func(t testing.TB, mode string) (url, token, home string)

// Start starts a tollgate and returns it with its home.
func (s Starter) Start(t testing.TB, mode string) (Service, string) {
	t.Helper()
	if s == nil {
		t.Fatal("app_link_test.go did not link the app")
	}
	url, token, home := s(t, mode)
	return Service{URL: url, token: token}, home
}
