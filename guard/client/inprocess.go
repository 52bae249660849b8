package client

import (
	"bytes"
	"io"
	"net/http"
)

// InProcess returns a RoundTripper that serves each request with h in this
// process: no socket, no port, the same handler chain. tollgate's own
// integrations use it to reach their own API like any harness without
// calling themselves back over loopback. The answer is buffered: it suits
// the JSON API (long polls included), not the event stream.
func InProcess(h http.Handler) http.RoundTripper { return inProcess{h} }

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		req.Body = http.NoBody
	}
	req.RequestURI = req.URL.RequestURI()
	if req.Host == "" {
		req.Host = req.URL.Host
	}
	req.RemoteAddr = "127.0.0.1:0"
	w := &bufferedResponse{header: http.Header{}}
	t.h.ServeHTTP(w, req)
	req.Body.Close()
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()),
		Request: req,
	}, nil
}

// bufferedResponse is the smallest http.ResponseWriter that keeps what the
// handler writes.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *bufferedResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
