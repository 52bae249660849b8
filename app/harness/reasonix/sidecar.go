package reasonix

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// Name is the integration's name, as the Integrations page and the
// sessions' harness show it.
const Name = "reasonix"

// PluginName is the name of tollgate's Reasonix plugin.
const PluginName = "tollgate"

// Protocol constants of Reasonix's Extension Protocol v2.
const (
	reasonixProtocolID      = "reasonix.extension.v2"
	reasonixProtocolVersion = "2"
	reasonixMaxFrame        = 8 << 20 // frames over 8 MiB are connection-fatal
)

// reasonixIntercepts are the events the plugin manifest declares.
var reasonixIntercepts = []string{"compaction.prepare", "compaction.complete", "provider.response"}

// rpcMessage is one JSON-RPC 2.0 frame.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// decodeRPCLine decodes one NDJSON frame. Errors name the field.
func decodeRPCLine(b []byte) (rpcMessage, error) {
	var m rpcMessage
	if len(b) > reasonixMaxFrame {
		return m, fmt.Errorf("frame of %d bytes is over the 8 MiB limit", len(b))
	}
	if err := json.Unmarshal(b, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return m, fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type.Kind(), te.Value)
		}
		return m, fmt.Errorf("not a JSON object: %w", err)
	}
	if m.JSONRPC != "2.0" {
		return m, fmt.Errorf("jsonrpc: %q is not \"2.0\"", m.JSONRPC)
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return m, errors.New("method: missing (neither a request, a notification nor a response)")
	}
	if len(m.ID) > 0 && m.ID[0] != '-' && (m.ID[0] < '0' || m.ID[0] > '9') && string(m.ID) != "null" {
		return m, fmt.Errorf("id: %s is not an integer", m.ID)
	}
	return m, nil
}

type reasonixInitParams struct {
	ProtocolVersion string `json:"protocolVersion"`
	ProtocolID      string `json:"protocolId"`
	Manifest        struct {
		Intercepts []string `json:"intercepts"`
	} `json:"manifest"`
	Session struct {
		SessionID     string `json:"sessionId"`
		WorkspaceRoot string `json:"workspaceRoot"`
	} `json:"session"`
}

type reasonixInterceptParams struct {
	Event         string          `json:"event"`
	Seq           uint64          `json:"seq"`
	Payload       json.RawMessage `json:"payload"`
	TimeoutMillis int64           `json:"timeoutMillis"`
	Externalized  []struct {
		Pointer string `json:"pointer"`
		Bytes   int64  `json:"bytes"`
	} `json:"externalized"`
}

type reasonixUsage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	CacheHitTokens   int64 `json:"cacheHitTokens"`
	CacheMissTokens  int64 `json:"cacheMissTokens"`
}

// reasonixSidecar is one sidecar's state (one `reasonix run`).
type reasonixSidecar struct {
	out     io.Writer
	outMu   sync.Mutex
	log     *slog.Logger
	home    string // tollgate home, for the marker
	profile string
	version string
	getenv  func(string) string
	now     func() time.Time
	// connect returns the client, or nil when tollgate is not running.
	connect func() *client.Client

	// registered is closed once the engine registration is done (or
	// given up), so requests that arrive early wait for the client.
	registered     chan struct{}
	registeredOnce sync.Once
	initOnce       sync.Once

	mu        sync.Mutex
	c         *client.Client
	run       string // the tollgate turn: this run
	workspace string
	cfg       reasonixConfig
	lastAt    time.Time
	lastUsage *reasonixUsage
	allowed   []string // rewrites allowed this run, waiting for compaction.complete
	minHit    int64
	requests  int
	wg        sync.WaitGroup
}

// serve runs the protocol until stdin ends or shutdown is answered.
func (s *reasonixSidecar) serve(ctx context.Context, in io.Reader) error {
	s.init()
	br := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := readFrame(br)
		if len(line) > 0 {
			if done := s.handle(ctx, line); done {
				s.wg.Wait()
				return nil
			}
		}
		if err == io.EOF {
			s.wg.Wait()
			s.close()
			return nil
		}
		if err != nil {
			s.wg.Wait()
			s.close()
			return err
		}
	}
}

// readFrame reads one line of at most the frame limit (a longer one is
// returned truncated past the limit, so decoding reports it).
func readFrame(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) <= reasonixMaxFrame {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return trimNewline(buf), err
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func (s *reasonixSidecar) write(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		s.log.Error("encoding a reply", "err", err)
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.out.Write(append(b, '\n'))
}

func (s *reasonixSidecar) reply(id json.RawMessage, result any) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (s *reasonixSidecar) replyError(id json.RawMessage, code int, reason, msg string) {
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": rpcError{Code: code, Message: msg, Data: map[string]any{"reason": reason, "retryable": false}}})
}

func (s *reasonixSidecar) init() {
	s.initOnce.Do(func() { s.registered = make(chan struct{}) })
}

// handle answers one frame; it reports whether the sidecar should exit.
func (s *reasonixSidecar) handle(ctx context.Context, line []byte) bool {
	s.init()
	m, err := decodeRPCLine(line)
	if err != nil {
		s.log.Warn("reasonix: unreadable frame", "err", err)
		return false
	}
	isRequest := len(m.ID) > 0 && string(m.ID) != "null"
	switch m.Method {
	case "extension/initialize":
		var p reasonixInitParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			s.replyError(m.ID, -32602, "invalid_params", "extension/initialize params: "+err.Error())
			return false
		}
		if p.ProtocolVersion != "" && p.ProtocolVersion != reasonixProtocolVersion {
			s.replyError(m.ID, -32000, "unsupported_version", "tollgate speaks Extension Protocol major 2, not "+p.ProtocolVersion)
			return false
		}
		subs := []string{}
		for _, e := range p.Manifest.Intercepts {
			for _, want := range reasonixIntercepts {
				if e == want {
					subs = append(subs, e)
				}
			}
		}
		s.mu.Lock()
		s.workspace = p.Session.WorkspaceRoot
		s.cfg = loadReasonixConfig(s.workspace, s.getenv)
		s.mu.Unlock()
		s.reply(m.ID, map[string]any{"protocolVersion": reasonixProtocolVersion, "name": PluginName, "version": s.version,
			"subscriptions": subs, "stateSchemaVersion": 0})
	case "extension/initialized":
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.register(ctx) }()
	case "extension/intercept":
		var p reasonixInterceptParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			s.replyError(m.ID, -32602, "invalid_params", "extension/intercept params: "+err.Error())
			return false
		}
		switch p.Event {
		case "compaction.prepare":
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.reply(m.ID, s.decide(ctx, p))
			}()
		case "compaction.complete":
			// The summary landed: the oldest allowed rewrite is applied.
			s.reply(m.ID, map[string]string{"decision": "continue"})
			s.mu.Lock()
			var rewrite string
			if len(s.allowed) > 0 {
				rewrite, s.allowed = s.allowed[0], s.allowed[1:]
			}
			s.mu.Unlock()
			if c := s.client(); c != nil && rewrite != "" {
				s.wg.Add(1)
				go func() {
					defer s.wg.Done()
					ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					defer cancel()
					c.Outcome(ctx, rewrite, true, "")
				}()
			}
		case "provider.response":
			s.reply(m.ID, map[string]string{"decision": "continue"})
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.recordUsage(ctx, p) }()
		default:
			s.reply(m.ID, map[string]string{"decision": "continue"})
		}
	case "extension/event", "extension/resources/changed":
		// observations: nothing to do
	case "extension/shutdown":
		s.wg.Wait()
		s.close()
		s.reply(m.ID, map[string]any{})
		return true
	default:
		if isRequest && m.Method != "" {
			s.replyError(m.ID, -32601, "unknown_method", "tollgate does not implement "+m.Method)
		}
	}
	return false
}

// register connects to tollgate and registers the engine (best effort).
func (s *reasonixSidecar) register(ctx context.Context) {
	defer s.registeredOnce.Do(func() { close(s.registered) })
	c := s.connect()
	if c == nil {
		s.log.Warn("tollgate is not running: Reasonix compactions go unguarded this run")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c.Register(ctx, client.Engine{Harness: Name, Version: s.getenv("REASONIX_VERSION"), Profile: s.profile, PID: os.Getppid()})
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

// awaitClient waits (a little) for the registration that
// extension/initialized started, and returns the client or nil.
func (s *reasonixSidecar) awaitClient() *client.Client {
	s.init()
	select {
	case <-s.registered:
	case <-time.After(2 * time.Second):
	}
	return s.client()
}

func (s *reasonixSidecar) client() *client.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

func (s *reasonixSidecar) close() {
	if c := s.client(); c != nil {
		c.Close()
	}
}

// session names the tollgate session: the newest Reasonix session of the
// workspace, else the workspace.
func (s *reasonixSidecar) session() string {
	s.mu.Lock()
	ws := s.workspace
	s.mu.Unlock()
	if rhome, err := Home(s.getenv); err == nil && ws != "" {
		dir := filepath.Join(rhome, "projects", strings.ReplaceAll(filepath.Clean(ws), string(filepath.Separator), "-"), "sessions-v4")
		if entries, err := os.ReadDir(dir); err == nil {
			var best string
			var bestAt time.Time
			for _, e := range entries {
				if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
					continue
				}
				if fi, err := e.Info(); err == nil && fi.ModTime().After(bestAt) {
					best, bestAt = e.Name(), fi.ModTime()
				}
			}
			if best != "" {
				return "reasonix:" + best
			}
		}
	}
	if ws == "" {
		ws = "unknown-workspace"
	}
	return "reasonix:" + ws
}

func (s *reasonixSidecar) recordUsage(ctx context.Context, p reasonixInterceptParams) {
	var payload struct {
		Usage *reasonixUsage `json:"usage"`
	}
	if json.Unmarshal(p.Payload, &payload) != nil || payload.Usage == nil {
		return
	}
	u := *payload.Usage
	s.mu.Lock()
	s.lastUsage, s.lastAt = &u, s.now()
	if u.CacheHitTokens > 0 && (s.minHit == 0 || u.CacheHitTokens < s.minHit) {
		s.minHit = u.CacheHitTokens
	}
	s.requests++
	run, cfg := s.run, s.cfg
	s.mu.Unlock()
	c := s.awaitClient()
	if c == nil {
		return
	}
	input := max(u.PromptTokens-u.CacheHitTokens, 0)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.RecordRequest(ctx, s.session(), client.Request{
		RequestID: run + "-" + strconv.FormatUint(p.Seq, 10), Harness: Name, Profile: s.profile,
		Provider: cfg.Provider, Model: cfg.Model, Purpose: api.PurposeConversation, Turn: api.Turn(run), At: api.At(s.now()),
		ContextWindow: cfg.ContextWindow, ThresholdTokens: cfg.threshold(),
		Usage: api.Report(pricing.Usage{Input: input, CacheRead: u.CacheHitTokens, Output: u.CompletionTokens}),
	}); err != nil {
		s.log.Warn("recording a Reasonix request", "err", err)
	}
}

// reasonixDeadlineMargin is kept between tollgate's deadline and the
// intercept's own timeout.
const reasonixDeadlineMargin = 3 * time.Second

// decide answers a compaction.prepare intercept.
func (s *reasonixSidecar) decide(ctx context.Context, p reasonixInterceptParams) map[string]string {
	cont := map[string]string{"decision": "continue"}
	c := s.awaitClient()
	if c == nil {
		s.log.Warn("tollgate is not running: allowing the compaction unguarded")
		return cont
	}
	timeout := time.Duration(p.TimeoutMillis) * time.Millisecond
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	req := s.rewriteRequest(p, max(timeout-reasonixDeadlineMargin, time.Second))
	askCtx, cancel := context.WithTimeout(ctx, max(timeout-time.Second, 500*time.Millisecond))
	defer cancel()
	d := c.AskRewrite(askCtx, s.session(), req)
	if d.Reason == api.ReasonUnguarded && askCtx.Err() != nil {
		// Our own deadline passed before tollgate answered: decline, as the
		// question would have been by now.
		d.Decision, d.Reason = api.Decline, api.ReasonTimeout
	}
	if s.home != "" {
		home.WriteMarker(s.home, Name, home.Marker{At: s.now().UTC(), LastDecision: d.Decision + " (" + d.Reason + ")"})
	}
	if d.Decision != api.Decline {
		if d.Rewrite != "" {
			s.mu.Lock()
			s.allowed = append(s.allowed, d.Rewrite)
			s.mu.Unlock()
		}
		return cont
	}
	reason := "tollgate declined the compaction (" + d.Reason + ")"
	if d.Reason == api.ReasonTimeout {
		reason = "tollgate declined the compaction (timeout: nobody answered in time)"
	}
	if d.Message != "" {
		reason += ": " + d.Message
	}
	return map[string]string{"decision": "block", "reason": reason}
}

// rewriteRequest prices the span Reasonix is about to summarize: one unit
// per message (estimated at 4 bytes a token, externalized fields by their
// byte counts), then the retained tail, sized from the last request's
// prompt when this run has seen one.
func (s *reasonixSidecar) rewriteRequest(p reasonixInterceptParams, deadline time.Duration) api.RewriteRequest {
	var payload struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(p.Payload, &payload)
	sizes := make([]int64, len(payload.Messages))
	for i, m := range payload.Messages {
		sizes[i] = int64(len(m))
	}
	var whole int64
	for _, x := range p.Externalized {
		parts := strings.Split(strings.TrimPrefix(x.Pointer, "/"), "/")
		if len(parts) >= 2 && parts[0] == "messages" {
			if i, err := strconv.Atoi(parts[1]); err == nil && i >= 0 && i < len(sizes) {
				sizes[i] += x.Bytes
				continue
			}
		}
		whole += x.Bytes
	}
	if whole > 0 {
		sizes = append(sizes, whole)
	}
	s.mu.Lock()
	last, minHit, lastAt, cfg := s.lastUsage, s.minHit, s.lastAt, s.cfg
	s.mu.Unlock()

	surface := make([]pricing.Unit, 0, len(sizes)+1)
	var span int64
	for i, b := range sizes {
		t := max((b+3)/4, 1)
		span += t
		surface = append(surface, pricing.Unit{ID: "m" + strconv.Itoa(i), Tokens: t, Kind: "message"})
	}
	var envelope int64
	if last != nil {
		envelope = min(minHit, max(last.PromptTokens-span, 0))
		if tail := last.PromptTokens + last.CompletionTokens - envelope - span; tail > 0 {
			surface = append(surface, pricing.Unit{ID: "tail", Tokens: tail, Kind: "retained"})
		}
	}
	same := true
	plan := pricing.Plan{}
	if len(sizes) > 0 {
		plan.Summarize = &pricing.SummaryPlan{Start: "m0", End: "m" + strconv.Itoa(len(sizes)-1), InstructionTokens: reasonixInstructionTokens, SameFamily: &same}
	}
	idle := 0.0
	if !lastAt.IsZero() {
		idle = max(s.now().Sub(lastAt).Seconds(), 0)
	}
	return api.RewriteRequest{
		Profile: s.profile, Turn: s.run, Trigger: api.TriggerPressure,
		DeadlineSeconds: deadline.Seconds(), IdleSeconds: idle,
		ContextWindow: cfg.ContextWindow, ThresholdTokens: cfg.threshold(),
		EnvelopeTokens: envelope, Surface: surface, Plan: plan,
	}
}

// reasonixInstructionTokens is Reasonix's compaction instruction (≈1.6 KB
// in 1.38.11: "Compact the preceding conversation prefix into a durable
// resume briefing…").
const reasonixInstructionTokens = 420

// ---- Reasonix's configuration (for the window and the pricing keys) ----

type reasonixConfig struct {
	Provider      string
	Model         string
	ContextWindow int64
	CompactRatio  float64
}

func (c reasonixConfig) threshold() int64 {
	if c.ContextWindow <= 0 {
		return 0
	}
	r := c.CompactRatio
	if r <= 0 {
		r = 0.80 // Reasonix's default
	}
	return int64(float64(c.ContextWindow) * r)
}

type reasonixTOML struct {
	DefaultModel string `toml:"default_model"`
	Agent        struct {
		CompactRatio float64 `toml:"compact_ratio"`
	} `toml:"agent"`
	Providers []struct {
		Name          string   `toml:"name"`
		Kind          string   `toml:"kind"`
		BaseURL       string   `toml:"base_url"`
		Model         string   `toml:"model"`
		Models        []string `toml:"models"`
		Default       string   `toml:"default"`
		ContextWindow int64    `toml:"context_window"`
	} `toml:"providers"`
}

// loadReasonixConfig reads ./reasonix.toml over <reasonix home>/config.toml
// (Reasonix's own order) for the default model's provider and window. Best
// effort: what it cannot read stays zero.
func loadReasonixConfig(workspace string, getenv func(string) string) reasonixConfig {
	var files []reasonixTOML
	for _, path := range []string{filepath.Join(workspace, "reasonix.toml"), ""} {
		if path == "" {
			rhome, err := Home(getenv)
			if err != nil {
				continue
			}
			path = filepath.Join(rhome, "config.toml")
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var t reasonixTOML
		if toml.Unmarshal(b, &t) == nil {
			files = append(files, t)
		}
	}
	var cfg reasonixConfig
	var def string
	for _, f := range files {
		if def == "" {
			def = f.DefaultModel
		}
		if cfg.CompactRatio == 0 {
			cfg.CompactRatio = f.Agent.CompactRatio
		}
	}
	name, model, _ := strings.Cut(def, "/")
	for _, f := range files {
		for _, p := range f.Providers {
			if p.Name != name && name != "" {
				continue
			}
			cfg.Provider = p.Name
			if strings.Contains(p.BaseURL, "deepseek") {
				cfg.Provider = "deepseek"
			}
			cfg.Model = model
			if cfg.Model == "" {
				cfg.Model = cmpOrStr(p.Default, p.Model)
				if cfg.Model == "" && len(p.Models) > 0 {
					cfg.Model = p.Models[0]
				}
			}
			cfg.ContextWindow = p.ContextWindow
			return cfg
		}
	}
	return cfg
}

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// reasonixMaxInterceptTimeout is Reasonix's ceiling for a runtime's
// intercept timeout.
const reasonixMaxInterceptTimeout = 60 * time.Second

// ServeOptions configure one sidecar.
type ServeOptions struct {
	Home    string // tollgate home: discovery and the Integrations page's marker
	Profile string // pricing profile ("" = by provider and model)
	Version string // tollgate's version
	Log     *slog.Logger
}

// Serve runs the sidecar for one Reasonix run: the Extension Protocol on in
// and out until in ends or Reasonix asks it to shut down.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o ServeOptions) error {
	b := make([]byte, 8)
	rand.Read(b)
	s := &reasonixSidecar{
		out: out, log: o.Log, home: o.Home, profile: o.Profile, version: o.Version, getenv: os.Getenv, now: time.Now,
		run: "run-" + hex.EncodeToString(b),
		connect: func() *client.Client {
			ep, err := client.Discover(o.Home)
			if err != nil {
				return nil
			}
			return client.New(ep, o.Log)
		},
	}
	return s.serve(ctx, in)
}
