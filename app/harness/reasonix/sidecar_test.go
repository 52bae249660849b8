package reasonix

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/guard/client/clienttest"
)

// sidecarConn drives a reasonixSidecar the way Reasonix does: NDJSON frames
// in, NDJSON frames out.
type sidecarConn struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
	id   int
}

func startSidecar(t *testing.T, connect func() *client.Client, workspace string) *sidecarConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &reasonixSidecar{out: outW, log: slog.New(slog.NewTextHandler(io.Discard, nil)), version: "1.2.3", getenv: func(k string) string {
		if k == "REASONIX_HOME" {
			return filepath.Join(workspace, ".reasonix-home")
		}
		return ""
	}, now: time.Now, run: "run-" + strconv.FormatInt(time.Now().UnixNano(), 36), connect: connect}
	c := &sidecarConn{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(make([]byte, 1<<20), 16<<20)
	go func() { c.done <- s.serve(context.Background(), inR); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *sidecarConn) send(method string, params any, request bool) int {
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if request {
		c.id++
		m["id"] = c.id
	}
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	return c.id
}

// reply reads the next frame, which must answer id.
func (c *sidecarConn) reply(id int) map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no reply to %d: %v", id, c.out.Err())
	}
	var m struct {
		ID     int            `json:"id"`
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("reply %s: %v", c.out.Bytes(), err)
	}
	if m.ID != id {
		c.t.Fatalf("reply to %d, want %d: %s", m.ID, id, c.out.Bytes())
	}
	if m.Error != nil {
		return map[string]any{"error": m.Error}
	}
	return m.Result
}

func (c *sidecarConn) initialize(workspace string) map[string]any {
	id := c.send("extension/initialize", map[string]any{"protocolVersion": "2", "protocolId": "reasonix.extension.v2",
		"manifest":     map[string]any{"intercepts": []string{"compaction.prepare", "compaction.complete", "provider.response"}, "capabilities": []string{"interceptors"}},
		"session":      map[string]any{"sessionId": "boot-1", "workspaceRoot": workspace, "generation": 1},
		"capabilities": map[string]any{"contentRefs": true, "uiHost": "headless", "protocolVersion": "2"}}, true)
	r := c.reply(id)
	c.send("extension/initialized", map[string]any{}, false)
	return r
}

func compactionPrepare(seq int, timeoutMillis int) map[string]any {
	return map[string]any{"event": "compaction.prepare", "seq": seq, "timeoutMillis": timeoutMillis, "payload": map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": strings.Repeat("a", 4000)},
		map[string]any{"role": "assistant", "content": "ok"},
		map[string]any{"role": "user", "content": strings.Repeat("b", 12000)},
	}}}
}

func providerResponse(seq int) map[string]any {
	return map[string]any{"event": "provider.response", "seq": seq, "timeoutMillis": 30000, "payload": map[string]any{"text": "ok",
		"usage": map[string]any{"promptTokens": 7809, "completionTokens": 3, "totalTokens": 7812, "cacheHitTokens": 4800, "cacheMissTokens": 3009}}}
}

func workspaceWithConfig(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "reasonix.toml"), []byte(`default_model = "fake"
[agent]
compact_ratio = 0.5
[[providers]]
name = "fake"
kind = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "fake-model"
context_window = 16000
`), 0o644)
	// Reasonix's newest session folder names the tollgate session.
	os.MkdirAll(filepath.Join(ws, ".reasonix-home", "projects", strings.ReplaceAll(ws, "/", "-"), "sessions-v4", "abc123"), 0o755)
	return ws
}

func serviceClient(svc clienttest.Service) func() *client.Client {
	return func() *client.Client {
		return client.New(client.Endpoint{URL: svc.URL, Token: svc.Token()}, nil)
	}
}

func TestReasonixSidecarHandshakeUsageAndContinue(t *testing.T) {
	svc, _ := StartService.Start(t, "auto")
	ws := workspaceWithConfig(t)
	c := startSidecar(t, serviceClient(svc), ws)
	init := c.initialize(ws)
	b, _ := json.Marshal(init)
	if string(b) != `{"name":"tollgate","protocolVersion":"2","stateSchemaVersion":0,"subscriptions":["compaction.prepare","compaction.complete","provider.response"],"version":"1.2.3"}` {
		t.Fatalf("initialize result %s", b)
	}
	if r := c.reply(c.send("extension/intercept", providerResponse(1), true)); r["decision"] != "continue" {
		t.Fatalf("provider.response %v", r)
	}
	if r := c.reply(c.send("extension/intercept", compactionPrepare(2, 30000), true)); r["decision"] != "continue" {
		t.Fatalf("compaction.prepare in auto mode: %v", r)
	}
	complete := map[string]any{"event": "compaction.complete", "seq": 3, "timeoutMillis": 30000, "payload": map[string]any{"summary": "s"}}
	if r := c.reply(c.send("extension/intercept", complete, true)); r["decision"] != "continue" {
		t.Fatalf("compaction.complete: %v", r)
	}
	// Observations and unknown requests.
	c.send("extension/event", map[string]any{"event": "compaction.prepare"}, false)
	if r := c.reply(c.send("extension/ui/action", map[string]any{}, true)); r["error"] == nil {
		t.Fatalf("unknown method answered %v", r)
	}
	if r := c.reply(c.send("extension/shutdown", map[string]any{"timeoutMillis": 5000}, true)); len(r) != 0 {
		t.Fatalf("shutdown %v", r)
	}
	if err := <-c.done; err != nil {
		t.Fatal(err)
	}
	var series api.Series
	cl := serviceClient(svc)()
	if err := cl.Get(context.Background(), "/v1/sessions/reasonix:abc123/series", &series); err != nil {
		t.Fatal(err)
	}
	s := series.Session
	if s.Harness != "reasonix" || s.Requests != 1 || s.Tokens.CacheRead != 4800 || s.Tokens.Input != 3009 || s.Provider != "fake" || s.ContextWindow != 16000 || s.ThresholdTokens != 8000 {
		t.Fatalf("session %+v", s)
	}
	if len(series.Folds) != 1 || !strings.HasPrefix(series.Folds[0].Turn, "run-") || series.Folds[0].Reason != "auto" || series.Folds[0].Applied == nil || !*series.Folds[0].Applied {
		t.Fatalf("folds %+v", series.Folds)
	}
}

func TestReasonixSidecarBlocksMutesAndTimesOut(t *testing.T) {
	svc, tgHome := StartService.Start(t, "ask")
	ws := workspaceWithConfig(t)
	c := startSidecar(t, serviceClient(svc), ws)
	c.initialize(ws)
	// Nobody to ask.
	r := c.reply(c.send("extension/intercept", compactionPrepare(1, 30000), true))
	if r["decision"] != "block" || !strings.Contains(r["reason"].(string), "no-question-provider") {
		t.Fatalf("no provider: %v", r)
	}
	// A second compaction in the same run: muted.
	a := clienttest.StartAnswerer(t, svc.URL, ownerToken(t, tgHome), "") // answering is the owner's
	r = c.reply(c.send("extension/intercept", compactionPrepare(2, 30000), true))
	if r["decision"] != "block" || !strings.Contains(r["reason"].(string), "muted") || len(a.Asked()) != 0 {
		t.Fatalf("muted: %v", r)
	}

	// A new run (a new sidecar) asks again; nobody answers within
	// timeoutMillis less the margin: timeout.
	c2 := startSidecar(t, serviceClient(svc), ws)
	c2.initialize(ws)
	start := time.Now()
	r = c2.reply(c2.send("extension/intercept", compactionPrepare(1, 4500), true))
	if r["decision"] != "block" || !strings.Contains(r["reason"].(string), "timeout") {
		t.Fatalf("timeout: %v", r)
	}
	if took := time.Since(start); took > 4500*time.Millisecond {
		t.Fatalf("answered after %v, past Reasonix's 4.5 s", took)
	}
	if asked := a.Asked(); len(asked) != 1 || asked[0].DeadlineSeconds < 1 || asked[0].DeadlineSeconds > 1.6 {
		t.Fatalf("asked %+v", asked)
	}
}

func TestReasonixSidecarFailsOpen(t *testing.T) {
	ws := t.TempDir()
	c := startSidecar(t, func() *client.Client { return nil }, ws)
	c.initialize(ws)
	if r := c.reply(c.send("extension/intercept", compactionPrepare(1, 30000), true)); r["decision"] != "continue" {
		t.Fatalf("unreachable tollgate: %v", r)
	}
	// A tollgate that went away: the client fails open.
	c2 := startSidecar(t, func() *client.Client { return client.New(client.Endpoint{URL: "http://127.0.0.1:1", Token: "x"}, nil) }, ws)
	c2.initialize(ws)
	if r := c2.reply(c2.send("extension/intercept", compactionPrepare(1, 30000), true)); r["decision"] != "continue" {
		t.Fatalf("gone tollgate: %v", r)
	}
}

func TestReasonixRewriteRequestSizesTheSpanAndTail(t *testing.T) {
	s := &reasonixSidecar{now: time.Now, run: "run-x", cfg: reasonixConfig{ContextWindow: 16000, CompactRatio: 0.5}}
	s.lastUsage = &reasonixUsage{PromptTokens: 9000, CompletionTokens: 10, CacheHitTokens: 5000}
	s.minHit = 1500
	var p reasonixInterceptParams
	b, _ := json.Marshal(compactionPrepare(1, 30000))
	json.Unmarshal(b, &p)
	req := s.rewriteRequest(p, 27*time.Second)
	// span ≈ 1007+10+3007 tokens; the envelope is the smallest cache hit;
	// the tail is the rest of the last prompt and its output.
	var span int64
	for _, u := range req.Surface[:3] {
		span += u.Tokens
	}
	if len(req.Surface) != 4 || req.Surface[3].ID != "tail" || req.Surface[3].Tokens != 9010-1500-span || req.EnvelopeTokens != 1500 {
		t.Fatalf("surface %+v envelope %d", req.Surface, req.EnvelopeTokens)
	}
	if req.Plan.Summarize.Start != "m0" || req.Plan.Summarize.End != "m2" || req.ThresholdTokens != 8000 || req.DeadlineSeconds != 27 || req.Turn != "run-x" {
		t.Fatalf("request %+v", req)
	}
	// Externalized content counts by its byte size.
	p.Externalized = append(p.Externalized, struct {
		Pointer string `json:"pointer"`
		Bytes   int64  `json:"bytes"`
	}{"/messages/1/content", 400000})
	req = s.rewriteRequest(p, 27*time.Second)
	if req.Surface[1].Tokens < 100000 || len(req.Surface) != 3 {
		t.Fatalf("externalized content: %+v", req.Surface)
	}
}

func TestReasonixInstallWritesAPluginThatVerifies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plugin")
	if got, err := Install(dir, t.TempDir(), "", "", "v1.4.0-3-gabc", 20*time.Second); err != nil || got != dir {
		t.Fatalf("%q %v", got, err)
	}
	m, err := readReasonixManifest(filepath.Join(dir, "reasonix-plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != "reasonix.io/plugin/v2" || m.Version != "1.4.0" || m.Runtime.TimeoutMillis != 20000 || m.Runtime.Required ||
		strings.Join(m.Runtime.Args, " ") != "ext reasonix" || strings.Join(m.Runtime.Intercepts, ",") != "compaction.prepare,compaction.complete,provider.response" ||
		len(m.Provides) != 1 || m.Provides[0].Kind != "interceptors" {
		t.Fatalf("manifest %+v", m)
	}
	// As `reasonix plugin install` leaves it: copied under plugins/, listed enabled.
	rhome := t.TempDir()
	os.MkdirAll(filepath.Join(rhome, "plugins", "tollgate"), 0o755)
	b, _ := os.ReadFile(filepath.Join(dir, "reasonix-plugin.json"))
	os.WriteFile(filepath.Join(rhome, "plugins", "tollgate", "reasonix-plugin.json"), b, 0o644)
	os.WriteFile(filepath.Join(rhome, "plugin-packages.json"), []byte(`{"version":1,"plugins":[{"name":"tollgate","root":"plugins/tollgate","enabled":true}]}`), 0o644)
	self, _ := os.Executable()
	probe := home.Probe{Home: t.TempDir(), Self: self, Getenv: func(k string) string {
		if k == "REASONIX_HOME" {
			return rhome
		}
		return ""
	}}
	in := Status(probe)
	if in.Name != "reasonix" || !in.Installed || !in.Verified {
		t.Fatalf("integration %+v", in)
	}
	os.WriteFile(filepath.Join(rhome, "plugin-packages.json"), []byte(`{"version":1,"plugins":[{"name":"tollgate","root":"plugins/tollgate","enabled":false}]}`), 0o644)
	if in := Status(probe); in.Verified || !strings.Contains(in.Detail, "disabled") {
		t.Fatalf("disabled plugin %+v", in)
	}
}

func TestSemverOr(t *testing.T) {
	for in, want := range map[string]string{"v1.2.3": "1.2.3", "1.2.3-4-gabc": "1.2.3", "dev": "0.0.0", "abc1234": "0.0.0", "1.2": "0.0.0", "1.2.x": "0.0.0"} {
		if got := semverOr(in, "0.0.0"); got != want {
			t.Errorf("semverOr(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzDecodeRPCLine(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{"protocolVersion":"2","protocolId":"reasonix.extension.v2"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"extension/initialized","params":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"extension/intercept","params":{"event":"compaction.prepare","seq":1,"payload":{"messages":[{"role":"user","content":"x"}]},"timeoutMillis":30000}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","result":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeRPCLine(b)
		if err != nil {
			return
		}
		if m.JSONRPC != "2.0" {
			t.Fatalf("accepted %q", b)
		}
		// Whatever decodes must be handled without a panic.
		s := &reasonixSidecar{out: io.Discard, log: slog.New(slog.NewTextHandler(io.Discard, nil)), getenv: func(string) string { return "" },
			now: time.Now, run: "run-f", connect: func() *client.Client { return nil }}
		s.init()
		s.registeredOnce.Do(func() { close(s.registered) }) // as if tollgate were not running
		if m.Method != "extension/intercept" || !strings.Contains(string(m.Params), "compaction.prepare") {
			s.handle(context.Background(), b)
			s.wg.Wait()
		}
	})
}

// ownerToken reads the owner token of a tollgate home.
func ownerToken(t *testing.T, dir string) string {
	t.Helper()
	tok, err := home.ReadOwnerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
