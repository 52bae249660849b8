// Package client is the Go client harnesses link to talk to tollgate.
//
// It fails open: when tollgate is not running or cannot be reached, a
// rewrite is allowed with reason "unguarded" — the harness proceeds as
// shipped — and the first such failure is logged (once, not per call).
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"tollgate/guard/api"
	"tollgate/pricing"
)

// Endpoint is where tollgate listens and the token it wants.
type Endpoint struct {
	URL   string
	Token string
	// Transport, when set, carries the requests instead of a TCP connection:
	// tollgate's own integrations (the Claude Code HTTP hook, the simulator)
	// reach the handler in-process with InProcess, through the same doors as
	// any harness.
	Transport http.RoundTripper
}

// Discover finds tollgate: $TOLLGATE_URL and $TOLLGATE_TOKEN when set, else
// <home>/api.json, where home is the argument, else $TOLLGATE_HOME, else
// os.UserConfigDir()/tollgate.
func Discover(home string) (Endpoint, error) {
	if u, t := os.Getenv("TOLLGATE_URL"), os.Getenv("TOLLGATE_TOKEN"); u != "" && t != "" {
		return Endpoint{URL: u, Token: t}, nil
	}
	if home == "" {
		home = os.Getenv("TOLLGATE_HOME")
	}
	if home == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return Endpoint{}, fmt.Errorf("finding tollgate: %w", err)
		}
		home = filepath.Join(dir, "tollgate")
	}
	b, err := os.ReadFile(filepath.Join(home, "api.json"))
	if err != nil {
		return Endpoint{}, fmt.Errorf("finding tollgate: %w", err)
	}
	var info struct {
		URL   string `json:"url"`
		Token string `json:"token"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.URL == "" {
		return Endpoint{}, fmt.Errorf("finding tollgate: %s is not a discovery file", filepath.Join(home, "api.json"))
	}
	return Endpoint{URL: info.URL, Token: info.Token}, nil
}

// Engine describes the harness registering.
type Engine struct {
	Harness string `json:"harness"`
	Version string `json:"version,omitempty"`
	Profile string `json:"profile,omitempty"`
	PID     int    `json:"pid,omitempty"`
}

// Client talks to one tollgate.
type Client struct {
	ep   Endpoint
	http *http.Client
	log  *slog.Logger
	home string
	// discovered clients look for api.json again after a failure.
	discovered bool

	mu       sync.Mutex
	engine   Engine
	engineID string
	stopBeat chan struct{}
	warned   bool
}

// New returns a client for an endpoint. A zero Endpoint is allowed: every
// call then fails open (rediscovery happens on the next call when home is
// set with WithHome).
func New(ep Endpoint, log *slog.Logger) *Client {
	if log == nil {
		log = slog.Default()
	}
	// Idle connections are dropped before the server's idle timeout (60 s)
	// would close them under a request.
	var rt http.RoundTripper = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 50 * time.Second}
	if ep.Transport != nil {
		rt = ep.Transport
	}
	return &Client{ep: ep, log: log, http: &http.Client{Transport: rt}}
}

// NewDiscovered discovers tollgate (see Discover) and returns a client; when
// tollgate is not found the client fails open and keeps looking.
func NewDiscovered(home string, log *slog.Logger) *Client {
	ep, _ := Discover(home)
	c := New(ep, log)
	c.home, c.discovered = home, true
	return c
}

// Error is an error answer from tollgate.
type Error struct {
	Status  int
	Code    string
	Message string
	Field   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("tollgate: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

func (c *Client) endpoint() Endpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ep.URL == "" && c.discovered {
		if ep, err := Discover(c.home); err == nil {
			c.ep = ep
		}
	}
	return c.ep
}

// do sends one request; out receives a 2xx body. It reports the status.
func (c *Client) do(ctx context.Context, method, path string, in, out any) (int, error) {
	ep := c.endpoint()
	if ep.URL == "" {
		return 0, errors.New("tollgate is not running (no api.json)")
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, ep.URL+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		// A discovered tollgate may have restarted on another port: look
		// again next time.
		if c.discovered {
			c.mu.Lock()
			c.ep = Endpoint{}
			c.mu.Unlock()
		}
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		return res.StatusCode, &Error{Status: res.StatusCode, Code: e.Error.Code, Message: e.Error.Message, Field: e.Error.Field}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return res.StatusCode, fmt.Errorf("decoding tollgate's answer: %w", err)
		}
	}
	return res.StatusCode, nil
}

// Register registers the engine and keeps its lease alive with heartbeats
// until Close. If tollgate restarts, the next heartbeat's 404 re-registers.
func (c *Client) Register(ctx context.Context, e Engine) error {
	if e.PID == 0 {
		e.PID = os.Getpid()
	}
	c.mu.Lock()
	c.engine = e
	c.mu.Unlock()
	err := c.register(ctx)
	c.mu.Lock()
	if c.stopBeat == nil {
		c.stopBeat = make(chan struct{})
		go c.heartbeats(c.stopBeat)
	}
	c.mu.Unlock()
	return err
}

func (c *Client) register(ctx context.Context) error {
	c.mu.Lock()
	e := c.engine
	c.mu.Unlock()
	var out struct {
		Engine string `json:"engine"`
	}
	if _, err := c.do(ctx, http.MethodPost, "/v1/engines", e, &out); err != nil {
		c.unguarded("registering", err)
		return err
	}
	c.mu.Lock()
	c.engineID = out.Engine
	c.mu.Unlock()
	return nil
}

// EngineID is the id tollgate gave this engine ("" before Register).
func (c *Client) EngineID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.engineID
}

func (c *Client) heartbeats(stop chan struct{}) {
	t := time.NewTicker(10 * time.Second) // a third of the 30 s lease
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			id := c.EngineID()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			var status int
			var err error
			if id != "" {
				status, err = c.do(ctx, http.MethodPost, "/v1/engines/"+url.PathEscape(id)+"/heartbeat", struct{}{}, nil)
			}
			if id == "" || status == http.StatusNotFound || (err != nil && status == 0) {
				c.register(ctx)
			}
			cancel()
		}
	}
}

// Close stops heartbeats and unregisters the engine.
func (c *Client) Close() {
	c.mu.Lock()
	stop, id := c.stopBeat, c.engineID
	c.stopBeat, c.engineID = nil, ""
	c.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	if id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c.do(ctx, http.MethodDelete, "/v1/engines/"+url.PathEscape(id), nil, nil)
		cancel()
	}
}

// unguarded logs the first failure to reach tollgate; later ones are quiet
// until a call succeeds again.
func (c *Client) unguarded(what string, err error) {
	c.mu.Lock()
	first := !c.warned
	c.warned = true
	c.mu.Unlock()
	if first {
		c.log.Warn("tollgate unreachable: proceeding unguarded", "while", what, "err", err)
	}
}

func (c *Client) reachable() {
	c.mu.Lock()
	c.warned = false
	c.mu.Unlock()
}

// Request is one routed request to record (the body of
// POST /v1/sessions/{session}/requests).
type Request = api.RequestReport

// RecordRequest records a request, retrying transient failures with the
// same request id (tollgate stores it once however often it arrives).
func (c *Client) RecordRequest(ctx context.Context, session string, r Request) (api.RecordedRequest, error) {
	if r.RequestID == "" {
		b := make([]byte, 12)
		rand.Read(b)
		r.RequestID = "req-" + hex.EncodeToString(b)
	}
	if r.Engine == "" {
		r.Engine = c.EngineID()
	}
	if r.At == "" {
		r.At = api.At(time.Now())
	}
	var out api.RecordedRequest
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		var status int
		status, err = c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(session)+"/requests", r, &out)
		if err == nil {
			c.reachable()
			return out, nil
		}
		if status >= 400 && status < 500 || ctx.Err() != nil {
			break // the request itself is wrong, or the caller gave up
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
		}
	}
	c.unguarded("recording a request", err)
	return out, err
}

// AskRewrite asks before a rewrite and returns the decision to execute. It
// never fails: when tollgate cannot answer, the decision is allow with
// reason "unguarded" and apply = the plan as shipped.
func (c *Client) AskRewrite(ctx context.Context, session string, req api.RewriteRequest) api.Decision {
	if req.Engine == "" {
		req.Engine = c.EngineID()
	}
	var d api.Decision
	status, err := c.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(session)+"/rewrites", req, &d)
	for err == nil && status == http.StatusAccepted {
		// Pending: poll until decided (the question has its own deadline).
		if ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		var next api.Decision
		status, err = c.do(ctx, http.MethodGet, "/v1/rewrites/"+url.PathEscape(d.Rewrite)+"?wait=30", nil, &next)
		if err == nil {
			d = next
			if d.Status != api.StatusPending {
				break
			}
			status = http.StatusAccepted
		}
	}
	if err != nil {
		c.unguarded("asking before a rewrite", err)
		return Unguarded(req.Plan, err)
	}
	c.reachable()
	if d.Reason == api.ReasonQuestionLimit {
		c.log.Warn("tollgate could not take the question; the rewrite goes ahead unasked", "session", session, "message", d.Message)
	}
	return d
}

// Unguarded is the fail-open decision: allow, as shipped.
func Unguarded(plan pricing.Plan, err error) api.Decision {
	apply := &pricing.Apply{Prune: []string{}}
	if plan.Summarize != nil {
		apply.Summarize = &pricing.Span{Start: plan.Summarize.Start, End: plan.Summarize.End}
	}
	for _, p := range plan.Prune {
		apply.Prune = append(apply.Prune, p.ID)
	}
	msg := "tollgate unreachable"
	if err != nil {
		msg += ": " + err.Error()
	}
	return api.Decision{Status: api.StatusDecided, Decision: api.Allow, Reason: api.ReasonUnguarded, Apply: apply, Message: msg}
}

// Outcome reports whether the rewrite landed.
func (c *Client) Outcome(ctx context.Context, rewriteID string, applied bool, errText string) error {
	if rewriteID == "" {
		return nil // an unguarded rewrite has nobody to tell
	}
	body := map[string]any{"applied": applied}
	if errText != "" {
		body["error"] = errText
	}
	_, err := c.do(ctx, http.MethodPost, "/v1/rewrites/"+url.PathEscape(rewriteID)+"/outcome", body, nil)
	return err
}

// Answer answers a pending question (what the UI does; tests and scripted
// UIs use it). It needs the owner token: with api.json's harness token the
// answer is 403 (a harness cannot approve its own rewrite).
func (c *Client) Answer(ctx context.Context, rewriteID, choice string) (api.Decision, error) {
	var d api.Decision
	_, err := c.do(ctx, http.MethodPost, "/v1/rewrites/"+url.PathEscape(rewriteID)+"/answer", map[string]string{"choice": choice}, &d)
	return d, err
}

// SetMode changes a mode (scope global, profile or session). It needs the
// owner token.
func (c *Client) SetMode(ctx context.Context, scope, profileOrSession, mode string) error {
	body := map[string]string{"scope": scope, "mode": mode}
	switch scope {
	case "profile":
		body["profile"] = profileOrSession
	case "session":
		body["session"] = profileOrSession
	}
	_, err := c.do(ctx, http.MethodPut, "/v1/mode", body, nil)
	return err
}

// Get reads any JSON endpoint (dashboards, tests).
func (c *Client) Get(ctx context.Context, path string, out any) error {
	_, err := c.do(ctx, http.MethodGet, path, nil, out)
	return err
}

// Post sends a JSON body (nil: an empty object) to any endpoint; out
// receives the answer.
func (c *Client) Post(ctx context.Context, path string, in, out any) error {
	if in == nil {
		in = struct{}{}
	}
	_, err := c.do(ctx, http.MethodPost, path, in, out)
	return err
}

// LoginURL asks for a fresh single-use login URL for a browser. It needs
// the owner token.
func (c *Client) LoginURL(ctx context.Context) (string, error) {
	var out struct {
		URL string `json:"url"`
	}
	err := c.Post(ctx, "/v1/login", nil, &out)
	return out.URL, err
}

// RotateToken replaces the harness token and the owner token; the answer is
// the new harness token. It needs the owner token.
func (c *Client) RotateToken(ctx context.Context) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	err := c.Post(ctx, "/v1/token/rotate", nil, &out)
	return out.Token, err
}

// RaiseWindow brings the desktop window of that tollgate to the front.
func (c *Client) RaiseWindow(ctx context.Context) error {
	return c.Post(ctx, "/v1/window/raise", nil, nil)
}
