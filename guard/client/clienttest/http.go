package clienttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The tests of the gate, the app and its rooms call a running tollgate's
// API over loopback HTTP with one of its tokens. These helpers are that
// call, written once: every test package can import them (this package
// imports neither the gate nor the app), where app/apptest is out of reach
// of the app's own tests and of the rooms the app imports.

// NewRequest is a request to a running tollgate carrying token as its
// bearer token ("" sends none). body is nil, a string, a []byte, an
// io.Reader, or any other value, sent as JSON; no Content-Type is set.
func NewRequest(method, url, token string, body any) *http.Request {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		panic(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// Send sends req on client (nil: http.DefaultClient) and returns the answer
// with its body read and closed. The error is the transport's (no answer)
// or the body's; Send fails no test: for goroutines, which must not, and
// for a tollgate that may die mid-request.
func Send(client *http.Client, req *http.Request) (*http.Response, []byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res, raw, err
}

// Do sends method url to a running tollgate with token and body (see
// NewRequest) and header, name/value pairs set after the token, and returns
// the answer with its body read. A transport error fails the test.
func Do(t testing.TB, method, url, token string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	req := NewRequest(method, url, token, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, raw, err := Send(nil, req)
	if res == nil {
		t.Fatal(err)
	}
	return res, raw // a body cut short is the test's to notice
}
