package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/guard/client/clienttest"
)

// The end-to-end tests need the tollgate binary (TOLLGATE_BIN) and the
// pinned harness packages (TOLLGATE_HARNESS_MODULES, npm ci'd from this
// folder's package-lock.json). `make test-harness` sets both; a plain
// `go test ./...` skips these tests.

type env struct {
	bin     string // tollgate
	claude  string
	reasonx string
}

func harnessEnv(t *testing.T) env {
	t.Helper()
	bin := os.Getenv("TOLLGATE_BIN")
	mods := os.Getenv("TOLLGATE_HARNESS_MODULES")
	if bin == "" || mods == "" {
		t.Skip("set TOLLGATE_BIN and TOLLGATE_HARNESS_MODULES (make test-harness does) to run the real harnesses")
	}
	e := env{bin: bin,
		claude:  filepath.Join(mods, "@anthropic-ai", "claude-code-linux-x64", "claude"),
		reasonx: filepath.Join(mods, "@reasonix", "cli-linux-x64", "bin", "reasonix")}
	for _, p := range []string{e.bin, e.claude, e.reasonx} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("missing %s (run `make test-harness`, which installs it): %v", p, err)
		}
	}
	return e
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// ---- tollgate ----

type tollgate struct {
	URL, Token, Home string
	Owner            string // <home>/owner.token: the scripted UI answers as the owner
	cmd              *exec.Cmd
	out              *bytes.Buffer
}

// startTollgate runs `tollgate serve` on a free port with the sandbox's
// environment (so it sees the hooks installed there).
func startTollgate(t *testing.T, e env, environ []string) *tollgate {
	t.Helper()
	home := t.TempDir()
	tg := &tollgate{Home: home, out: &bytes.Buffer{}}
	tg.cmd = exec.Command(e.bin, "serve", "--home", home, "--listen", "127.0.0.1:0", "--mode", "ask")
	// Not following the sandbox's logs unless the test says so
	// (TOLLGATE_WATCH=true): the others tell what arrived live (the hook,
	// OTLP) from what an import brings.
	tg.cmd.Env = environ
	if !slices.ContainsFunc(environ, func(v string) bool { return strings.HasPrefix(v, "TOLLGATE_WATCH=") }) {
		tg.cmd.Env = append(slices.Clip(environ), "TOLLGATE_WATCH=false")
	}
	tg.cmd.Stdout, tg.cmd.Stderr = tg.out, tg.out
	if err := tg.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !interrupt(tg.cmd, 5*time.Second) {
			tg.cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("tollgate output:\n%s", tg.out.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(home, "api.json"))
		if err == nil {
			var info struct{ URL, Token string }
			owner, oerr := os.ReadFile(filepath.Join(home, "owner.token"))
			if json.Unmarshal(b, &info) == nil && info.URL != "" && oerr == nil {
				tg.URL, tg.Token, tg.Owner = info.URL, info.Token, strings.TrimSpace(string(owner))
				return tg
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("tollgate did not start:\n%s", tg.out.String())
	return nil
}

// interrupt sends cmd's process an interrupt and waits up to wait for it to
// exit; false means it still runs.
func interrupt(cmd *exec.Cmd, wait time.Duration) bool {
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(wait):
		return false
	}
}

// runTollgate runs the tollgate binary with args in environ (nil: this
// process's environment) and returns what it printed; if it fails, the test
// ends with what, the error and the output.
func (e env) runTollgate(t *testing.T, environ []string, what string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return out
}

// engineStatus is what GET /v1/engines answers, as far as the tests read
// it: each integration with every field any test checks of one.
type engineStatus struct {
	Armed        bool `json:"armed"`
	Integrations []struct {
		Name, Detail, Note, LastDecision string
		Installed, Verified              bool
	} `json:"integrations"`
}

// engines reads GET /v1/engines.
func (tg *tollgate) engines(t *testing.T) engineStatus {
	t.Helper()
	var e engineStatus
	tg.get(t, "/v1/engines", &e)
	return e
}

func (tg *tollgate) get(t *testing.T, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", tg.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+tg.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, b)
	}
}

// post sends as the owner (the scripted UI's answers).
func (tg *tollgate) post(path string, body any) error {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", tg.URL+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tg.Owner)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, b)
	}
	return nil
}

// ---- a scripted UI: an SSE subscriber with answers=1 ----

type pending struct {
	Rewrite         string  `json:"rewrite"`
	Session         string  `json:"session"`
	Harness         string  `json:"harness"`
	Trigger         string  `json:"trigger"`
	Turn            string  `json:"turn"`
	DeadlineSeconds float64 `json:"deadlineSeconds"`
	Quote           *struct {
		ContextTokens int64 `json:"contextTokens"`
		ColdTokens    int64 `json:"coldTokens"`
	} `json:"quote"`
	// Prediction is the harness's own account of the cold tokens (the
	// Claude Code hook's fold predictor).
	Prediction *struct {
		Low   int64 `json:"low"`
		High  int64 `json:"high"`
		Parts []struct {
			Name   string `json:"name"`
			Tokens int64  `json:"tokens"`
			Count  int    `json:"count"`
		} `json:"parts"`
	} `json:"prediction"`
}

type decision struct {
	Rewrite  string `json:"rewrite"`
	Session  string `json:"session"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

type ui struct {
	tg *tollgate
	t  *testing.T

	mu      sync.Mutex
	answer  string // the next answer: allow-once | not-now | "" (none)
	asked   []pending
	decided []decision
}

func startUI(t *testing.T, tg *tollgate) *ui {
	t.Helper()
	u := &ui{tg: tg, t: t}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", tg.URL+"/v1/events?answers=1", nil)
	req.Header.Set("Authorization", "Bearer "+tg.Owner) // a question provider is the owner
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer res.Body.Close()
		clienttest.ReadEvents(res.Body, func(event, data string) {
			switch event {
			case "rewrite.pending":
				var p pending
				json.Unmarshal([]byte(data), &p)
				u.mu.Lock()
				u.asked = append(u.asked, p)
				choice := u.answer
				u.mu.Unlock()
				if choice != "" {
					go func() {
						time.Sleep(200 * time.Millisecond) // a person reads the dialog
						if err := tg.post("/v1/rewrites/"+p.Rewrite+"/answer", map[string]string{"choice": choice}); err != nil {
							t.Logf("answering: %v", err)
						}
					}()
				}
			case "rewrite.decided":
				var d decision
				json.Unmarshal([]byte(data), &d)
				u.mu.Lock()
				u.decided = append(u.decided, d)
				u.mu.Unlock()
			}
		})
	}()
	time.Sleep(300 * time.Millisecond) // the subscription is registered
	return u
}

func (u *ui) setAnswer(choice string) {
	u.mu.Lock()
	u.answer = choice
	u.mu.Unlock()
}

func (u *ui) snapshot() ([]pending, []decision) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]pending(nil), u.asked...), append([]decision(nil), u.decided...)
}

// waitDecided waits until n decisions have been published.
func (u *ui) waitDecided(n int) []decision {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, d := u.snapshot()
		if len(d) >= n || time.Now().After(deadline) {
			return d
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---- running a harness ----

type result struct {
	code   int
	out    string
	took   time.Duration
	reqs   int // model requests served during the run
	compac int // of which compactions
}

func run(t *testing.T, p *Provider, dir string, environ []string, name string, args ...string) result {
	t.Helper()
	before := p.Calls()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, environ
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := result{out: out.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	after := p.Calls()
	r.reqs = len(after) - len(before)
	for _, c := range after[len(before):] {
		if c.Compaction {
			r.compac++
		}
	}
	t.Logf("$ %s %s → exit %d in %v, %d model requests (%d compactions)\n%s", filepath.Base(name), short(args), r.code, r.took.Round(time.Millisecond), r.reqs, r.compac, tail(r.out, 600))
	return r
}

func short(args []string) string {
	var s []string
	for _, a := range args {
		if len(a) > 40 {
			a = a[:30] + fmt.Sprintf("…(%d bytes)", len(a))
		}
		s = append(s, a)
	}
	return strings.Join(s, " ")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// bigPrompt is ~12 KB of text: a turn that fills a small window quickly.
func bigPrompt(tag string) string {
	return "Please keep this note (" + tag + "). " + strings.Repeat("lorem ipsum dolor sit amet ", 440)
}

// sandbox is a throwaway HOME with the variables that keep a harness
// from phoning home.
func sandbox(t *testing.T, extra ...string) (string, []string) {
	t.Helper()
	home := t.TempDir()
	environ := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1",
		"TMPDIR=" + t.TempDir(),
	}
	return home, append(environ, extra...)
}

// applied is a fold's outcome as the tests list it: true or false once the
// harness reported it, "?" before.
func applied(b *bool) string {
	if b == nil {
		return "?"
	}
	return fmt.Sprint(*b)
}

func countBoundaries(t *testing.T, transcript string) int {
	t.Helper()
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), `"subtype":"compact_boundary"`)
}

// world is what a real-harness test runs in: the built binaries, a fake
// provider, a sandboxed $HOME with its environment, the folder a harness
// runs in (<home>/work), and a running tollgate.
type world struct {
	e          env
	p          *Provider
	home, work string
	environ    []string
	tg         *tollgate
}

// startWorld starts a fake provider and a tollgate in a fresh sandbox;
// claudeConfig also points Claude Code at <home>/.claude-config, and
// tollgateEnv is added to tollgate's environment alone (not to the world's).
// Everything stops when the test ends.
func startWorld(t *testing.T, claudeConfig bool, tollgateEnv ...string) world {
	t.Helper()
	e := harnessEnv(t)
	p := fakeProvider(t, StartProvider)
	home, environ := sandbox(t)
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if claudeConfig {
		environ = append(environ, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude-config"))
	}
	return world{e: e, p: p, home: home, work: work, environ: environ, tg: startTollgate(t, e, append(slices.Clip(environ), tollgateEnv...))}
}

// fakeProvider starts a fake provider (StartProvider, StartGeminiProvider)
// logging to the test, and closes it when the test ends.
func fakeProvider(t *testing.T, start func(*slog.Logger) (*Provider, error)) *Provider {
	t.Helper()
	p, err := start(testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
