package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// OpenCode 1.18.33, the binary the npm package opencode-ai ships as
// opencode-linux-x64 (pinned in package.json).

// openCodeBin is the pinned OpenCode binary.
func openCodeBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(os.Getenv("TOLLGATE_HARNESS_MODULES"), "opencode-linux-x64", "bin", "opencode")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("missing %s (run `make test-harness`, which installs it): %v", bin, err)
	}
	return bin
}

// openCodeServer runs `opencode serve` in work with the sandbox's
// environment, on a free loopback port, until the test ends. The plugin
// lives in the server, so it outlives each `opencode run --attach`.
func openCodeServer(t *testing.T, bin, work string, environ []string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "serve", "--hostname", "127.0.0.1", "--port", fmt.Sprint(port), "--print-logs", "--log-level", "INFO")
	cmd.Dir, cmd.Env = work, environ
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs strings.Builder
	ready := make(chan string, 1)
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			logs.WriteString(line + "\n")
			mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("opencode serve output:\n%s", tail(logs.String(), 8000))
			mu.Unlock()
		}
	})
	select {
	case url := <-ready:
		return url
	case <-time.After(2 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("opencode serve did not start:\n%s", tail(logs.String(), 4000))
	}
	return ""
}

// waitFor polls cond until it holds or a minute passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type openCodeSession struct {
	ID, Harness, Provider, Model string
	Requests, Folds, Declined    int
	ContextWindow                int64
	ThresholdTokens              int64
	Tokens                       map[string]int64
}

func openCodeSessions(t *testing.T, tg *tollgate) []openCodeSession {
	t.Helper()
	var list struct {
		Sessions []openCodeSession `json:"sessions"`
	}
	tg.get(t, "/v1/sessions", &list)
	var out []openCodeSession
	for _, s := range list.Sessions {
		if s.Harness == "opencode" {
			out = append(out, s)
		}
	}
	return out
}

// TestOpenCodePlugin drives the real OpenCode (1.18.33) with tollgate's
// plugin (integrations/opencode) against the fake OpenAI-compatible
// provider with a 12,000-token window (OpenCode compacts at 11,000: the
// window minus the model's 1,000 output tokens), in ask mode with a
// scripted UI: Not now leaves the session uncompacted (no summary request
// reaches the provider), Allow once runs OpenCode's own compaction, the
// import of the opencode.db the runs wrote matches what the plugin
// recorded live, and a stopped tollgate gives OpenCode its own automatic
// compaction back.
// openCodeWorld is a world with OpenCode configured through
// $OPENCODE_CONFIG: the fake provider as an OpenAI-compatible provider with a
// 12,000-token window and 1,000 output tokens (OpenCode compacts at 11,000),
// and tollgate's plugin with a one-second heartbeat.
func openCodeWorld(t *testing.T) (w world, bin, work string, environ []string) {
	t.Helper()
	return openCodeWorldListing(t, true)
}

// openCodeWorldListing is openCodeWorld, with tollgate's plugin listed in
// $OPENCODE_CONFIG (listed) or not (the test installs it another way).
func openCodeWorldListing(t *testing.T, listed bool) (w world, bin, work string, environ []string) {
	t.Helper()
	w = startWorld(t, false)
	p, home, tg := w.p, w.home, w.tg
	bin = openCodeBin(t)
	plugin, err := filepath.Abs(filepath.Join("..", "..", "integrations", "opencode", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	work = w.work
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"plugin":  []any{[]any{"file://" + plugin, map[string]any{"home": tg.Home, "heartbeatSeconds": 1}}},
		"model":   "fake/fake-model",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": p.URL + "/v1", "apiKey": "dummy"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake", "limit": map[string]any{"context": 12000, "output": 1000}}},
		}},
	}
	if !listed {
		delete(cfg, "plugin")
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	cfgPath := filepath.Join(home, "opencode.json")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	environ = append(w.environ, "OPENCODE_CONFIG="+cfgPath, "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
	return w, bin, work, environ
}

func TestOpenCodePlugin(t *testing.T) {
	w, bin, work, environ := openCodeWorld(t)
	p, home, tg := w.p, w.home, w.tg
	// TOLLGATE_SAMPLE_DIR (sample_test.go): the database, once the server
	// (stopped by a cleanup registered after this one) has let go of it.
	keepSample(t, "opencode", func(dst string) error {
		return copyDB(filepath.Join(home, ".local", "share", "opencode", "opencode.db"), filepath.Join(dst, "opencode.db"))
	})
	start := time.Now()
	server := openCodeServer(t, bin, work, environ)
	t.Logf("opencode serve ready in %v (it installs @opencode-ai/plugin into its config folder on first start)", time.Since(start).Round(time.Millisecond))

	ui := startUI(t, tg)
	ui.setAnswer("not-now")
	attach := func(session string, prompt string) result {
		args := []string{"run", "--attach", server}
		if session != "" {
			args = append(args, "--session", session)
		}
		r := run(t, p, work, environ, bin, append(args, prompt)...)
		if r.code != 0 {
			t.Fatalf("opencode run: exit %d\n%s", r.code, r.out)
		}
		return r
	}

	// Turn 1 stays below the threshold: recorded, not asked. (The server
	// loads a directory's plugins with its first request.)
	attach("", bigPrompt("one"))
	var engines struct {
		Armed   bool `json:"armed"`
		Engines []struct{ Harness string }
	}
	waitFor(t, "the plugin's engine", func() bool {
		tg.get(t, "/v1/engines", &engines)
		return engines.Armed && len(engines.Engines) == 1 && engines.Engines[0].Harness == "opencode"
	})
	var sessions []openCodeSession
	waitFor(t, "the recorded request", func() bool {
		sessions = openCodeSessions(t, tg)
		return len(sessions) == 1 && sessions[0].Requests >= 1
	})
	sid := strings.TrimPrefix(sessions[0].ID, "opencode:")
	if s := sessions[0]; s.ContextWindow != 12000 || s.ThresholdTokens != 11000 || s.Provider != "fake" || s.Model != "fake-model" {
		t.Fatalf("session %+v", s)
	}
	if asked, _ := ui.snapshot(); len(asked) != 0 {
		t.Fatalf("asked below the threshold: %+v", asked)
	}

	// Turn 2 ends above it: asked when the session goes idle; Not now, and
	// no summary request reaches the provider.
	compactions := p.Compactions()
	attach(sid, bigPrompt("two"))
	d := ui.waitDecided(1)
	if len(d) != 1 || d[0].Decision != "decline" || d[0].Reason != "user" {
		t.Fatalf("turn 2: decided %+v", d)
	}
	asked, _ := ui.snapshot()
	if a := asked[0]; a.Session != "opencode:"+sid || a.Harness != "opencode" || a.Quote == nil {
		t.Fatalf("asked %+v", a)
	}
	// Whatever a Not now set off would reach the provider before the next
	// turn's first request: that request is the barrier checked below.
	declinedAt := len(p.Calls())

	// Turn 3 ends above it again: asked again; Allow once runs OpenCode's
	// own compaction (session.summarize).
	ui.setAnswer("allow-once")
	attach(sid, bigPrompt("three"))
	after3 := p.Calls()[declinedAt:]
	if len(after3) == 0 || after3[0].Compaction {
		t.Fatalf("Not now, yet a summary request came before turn 3's first request (%d calls since)", len(after3))
	}
	d = ui.waitDecided(2)
	if len(d) != 2 || d[1].Decision != "allow" {
		t.Fatalf("turn 3: decided %+v", d)
	}
	waitFor(t, "OpenCode's summary request", func() bool { return p.Compactions() > compactions })
	landed := func() int {
		var series struct {
			Folds []struct {
				Decision string
				Applied  *bool
			} `json:"folds"`
		}
		tg.get(t, "/v1/sessions/opencode:"+sid+"/series", &series)
		n := 0
		for _, f := range series.Folds {
			if f.Decision == "allow" && f.Applied != nil && *f.Applied {
				n++
			}
		}
		return n
	}
	waitFor(t, "the allowed compaction's outcome", func() bool { return landed() == 1 })
	var seen struct {
		Integrations []struct {
			Name, Detail, LastDecision string
			Installed                  bool
		} `json:"integrations"`
	}
	tg.get(t, "/v1/engines", &seen)
	for _, in := range seen.Integrations {
		if in.Name == "opencode" && (!in.Installed || !strings.Contains(in.Detail, "OpenCode 1.18.33") || !strings.HasPrefix(in.LastDecision, "allow (user)")) {
			t.Fatalf("Integrations page: %+v", in)
		}
	}

	// The import of the database OpenCode wrote (while OpenCode runs)
	// finds the requests the plugin recorded: nothing new, the same usage.
	live := openCodeSessions(t, tg)[0]
	db := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	for i := range 2 {
		cmd := exec.Command(w.e.bin, "import", "--home", tg.Home, "--harness", "opencode", db)
		cmd.Env = environ
		out, err := cmd.CombinedOutput()
		// No new request and none whose figures changed: every assistant
		// message in the database is a request the plugin recorded live,
		// with the same tokens.
		if err != nil || !strings.Contains(string(out), " 0 requests, 0 updated") {
			t.Fatalf("import %d: %v\n%s", i+1, err, out)
		}
		t.Logf("$ tollgate import --harness opencode (pass %d): %s", i+1, strings.TrimSpace(string(out)))
	}
	after := openCodeSessions(t, tg)
	if len(after) != 1 || after[0].Requests != live.Requests || fmt.Sprint(after[0].Tokens) != fmt.Sprint(live.Tokens) || after[0].Requests < 4 {
		t.Fatalf("after import %+v, recorded live %+v", after, live)
	}
	if n := landed(); n != 1 {
		t.Fatalf("the import's fold is the asked compaction's twin, yet %d folds landed", n)
	}
	// OpenCode's own account of the session (`opencode export`) is the
	// independent witness: its assistant messages' tokens are the session's.
	exp := exec.Command(bin, "export", sid, "--pure")
	exp.Dir, exp.Env = work, environ
	raw, err := exp.Output()
	if err != nil {
		t.Fatalf("opencode export: %v", err)
	}
	var export struct {
		Messages []struct {
			Info struct {
				Role   string
				Tokens *struct {
					Input, Output, Reasoning int64
					Cache                    struct{ Read, Write int64 }
				}
			}
		}
	}
	if err := json.Unmarshal(raw[strings.IndexByte(string(raw), '{'):], &export); err != nil {
		t.Fatalf("opencode export: %v\n%s", err, tail(string(raw), 2000))
	}
	want := map[string]int64{}
	n := 0
	for _, m := range export.Messages {
		if tk := m.Info.Tokens; m.Info.Role == "assistant" && tk != nil && tk.Input+tk.Output+tk.Cache.Read+tk.Cache.Write > 0 {
			n++
			want["input"] += tk.Input
			want["cacheRead"] += tk.Cache.Read
			want["cacheWrite"] += tk.Cache.Write
			want["output"] += tk.Output + tk.Reasoning
		}
	}
	if got := after[0]; got.Requests != n || got.Tokens["input"] != want["input"] || got.Tokens["cacheRead"] != want["cacheRead"] ||
		got.Tokens["cacheWrite"] != want["cacheWrite"] || got.Tokens["output"] != want["output"] {
		t.Fatalf("tollgate has %d requests %v, OpenCode's export %d %v", got.Requests, got.Tokens, n, want)
	}

	// tollgate stops: within a heartbeat the plugin gives OpenCode its own
	// automatic compaction back, and a turn that ends above the threshold
	// compacts without asking.
	tg.cmd.Process.Signal(os.Interrupt)
	tg.cmd.Wait()
	// The plugin notices at its next heartbeat (1 s here); a turn that
	// starts before that is still guarded — and, with no tollgate to ask,
	// compacts as OpenCode would (unguarded). Either way the turn must
	// compact: one that ends above the threshold is retried until then.
	before := p.Compactions()
	var r result
	for i, until := 0, time.Now().Add(30*time.Second); p.Compactions() <= before && time.Now().Before(until); i++ {
		r = attach(sid, bigPrompt(fmt.Sprint("four-", i))+bigPrompt(fmt.Sprint("five-", i)))
	}
	if p.Compactions() <= before || r.compac < 1 {
		t.Fatalf("tollgate stopped: %d summary requests in the turn", r.compac)
	}
	t.Logf("OpenCode end-to-end: %v", time.Since(start).Round(time.Millisecond))
}

// TestOpenCodePluginRun drives a bare `opencode run` (1.18.33), a process
// that exits when its turn ends: the plugin cannot wait for an answer then,
// so the next run on the session (`-c`) is asked before its first request,
// which OpenCode holds until the answer. Not now sends the request as it is
// and no summary request; Allow once lets OpenCode compact right after it,
// within the run.
func TestOpenCodePluginRun(t *testing.T) {
	w, bin, work, environ := openCodeWorld(t)
	p, tg := w.p, w.tg
	ui := startUI(t, tg)
	ui.setAnswer("not-now")
	start := time.Now()
	runOC := func(args ...string) result {
		r := run(t, p, work, environ, bin, append([]string{"run"}, args...)...)
		if r.code != 0 {
			t.Fatalf("opencode run: exit %d\n%s", r.code, r.out)
		}
		return r
	}
	// Run 1 ends above the threshold: nothing asked, nothing compacted
	// (OpenCode's automatic compaction is the plugin's while tollgate runs).
	if r := runOC(bigPrompt("one") + bigPrompt("two")); r.compac != 0 {
		t.Fatalf("run 1: %d summary requests", r.compac)
	}
	if asked, _ := ui.snapshot(); len(asked) != 0 {
		t.Fatalf("run 1 asked %+v", asked)
	}
	// Run 2 is asked before its first request: Not now.
	if r := runOC("-c", "go on"); r.compac != 0 {
		t.Fatalf("run 2 (Not now): %d summary requests", r.compac)
	}
	if d := ui.waitDecided(1); len(d) != 1 || d[0].Decision != "decline" || d[0].Reason != "user" {
		t.Fatalf("run 2: decided %+v", d)
	}
	// Run 3 is asked again: Allow once, and OpenCode compacts in the run.
	ui.setAnswer("allow-once")
	if r := runOC("-c", "and now?"); r.compac < 1 {
		t.Fatalf("run 3 (Allow once): %d summary requests", r.compac)
	}
	if d := ui.waitDecided(2); len(d) != 2 || d[1].Decision != "allow" {
		t.Fatalf("run 3: decided %+v", d)
	}
	sessions := openCodeSessions(t, tg)
	if len(sessions) != 1 || sessions[0].Declined != 1 {
		t.Fatalf("sessions %+v", sessions)
	}
	t.Logf("OpenCode (opencode run) end-to-end: %v", time.Since(start).Round(time.Millisecond))
}

// TestOpenCodeInstalledPlugin: `tollgate hook opencode --install` writes
// the plugin the binary embeds into OpenCode's global plugins folder
// (~/.config/opencode/plugins/tollgate.js and plugins/tollgate/), and the
// real OpenCode 1.18.33 loads it from there, with no "plugin" entry in any
// config, and once: `opencode serve` holds one engine lease, not two
// (OpenCode runs every plugin's config hook, where the plugin registers,
// before it serves a request). The plugin records the turns and asks when
// the session goes idle above the threshold; tollgate's status names the
// shim; --uninstall removes it.
func TestOpenCodeInstalledPlugin(t *testing.T) {
	w, bin, work, environ := openCodeWorldListing(t, false)
	p, tg, home := w.p, w.tg, w.home
	install := exec.Command(w.e.bin, "hook", "opencode", "--install", "--home", tg.Home)
	install.Env = environ
	out, err := install.CombinedOutput()
	shim := filepath.Join(home, ".config", "opencode", "plugins", "tollgate.js")
	if err != nil || !strings.Contains(string(out), "Installed tollgate's OpenCode plugin: "+shim) {
		t.Fatalf("install: %v\n%s", err, out)
	}
	server := openCodeServer(t, bin, work, environ)
	ui := startUI(t, tg)
	ui.setAnswer("not-now")
	attach := func(session string, prompt string) {
		args := []string{"run", "--attach", server}
		if session != "" {
			args = append(args, "--session", session)
		}
		if r := run(t, p, work, environ, bin, append(args, prompt)...); r.code != 0 {
			t.Fatalf("opencode run: exit %d\n%s", r.code, r.out)
		}
	}
	var engines struct {
		Engines      []struct{ Harness string }
		Integrations []struct {
			Name      string
			Installed bool
			Detail    string
		}
	}
	engineCount := func() int {
		tg.get(t, "/v1/engines", &engines)
		return len(engines.Engines)
	}
	// Turn 1 stays below the threshold. The server loads a directory's
	// plugins with its first request and runs their config hooks before
	// it: by the time the turn is answered, every copy has registered.
	attach("", bigPrompt("one"))
	waitFor(t, "the plugin's engine", func() bool { return engineCount() >= 1 })
	if n := engineCount(); n != 1 || engines.Engines[0].Harness != "opencode" {
		t.Fatalf("%d engines (one plugin holds one lease): %+v", n, engines.Engines)
	}
	var sessions []openCodeSession
	waitFor(t, "the recorded request", func() bool {
		sessions = openCodeSessions(t, tg)
		return len(sessions) == 1 && sessions[0].Requests >= 1
	})
	sid := strings.TrimPrefix(sessions[0].ID, "opencode:")
	// Turn 2 ends above it: asked when the session goes idle; Not now.
	if r := p.Compactions(); r != 0 {
		t.Fatalf("%d compactions below the threshold", r)
	}
	attach(sid, bigPrompt("two"))
	if d := ui.waitDecided(1); len(d) != 1 || d[0].Decision != "decline" {
		t.Fatalf("turn 2: decided %+v", d)
	}
	if n := engineCount(); n != 1 {
		t.Fatalf("%d engines after turn 2", n)
	}
	found := false
	for _, in := range engines.Integrations {
		if in.Name == "opencode" {
			found = true
			if !in.Installed || !strings.Contains(in.Detail, "installed in "+shim+", seen") {
				t.Fatalf("status %+v", in)
			}
		}
	}
	if !found {
		t.Fatalf("no opencode integration in %+v", engines)
	}
	uninstall := exec.Command(w.e.bin, "hook", "opencode", "--uninstall")
	uninstall.Env = environ
	if out, err := uninstall.CombinedOutput(); err != nil || !strings.Contains(string(out), "Removed") {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(shim); !os.IsNotExist(err) {
		t.Fatalf("the shim is still there: %v", err)
	}
}
