package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"tollgate/guard"
	"tollgate/guard/client"
)

// Integration names, as the Integrations page and GET /v1/engines show them.
const (
	IntegrationClaudeCode = "claude-code"
	IntegrationReasonix   = "reasonix"
	IntegrationDSH        = "dsh"
	IntegrationCodex      = "codex"
)

// Integrations reports the installed hook integrations (DESIGN §8) for the
// tollgate whose home is home: the Claude Code PreCompact hook in the user's
// Claude settings, the Reasonix plugin, the dsh plugin (seen when it last
// ran) and Codex (import-only). An installed integration that is verified —
// its configuration parses and its command resolves to this tollgate binary
// — arms the guard, as it guards every session of its harness without a
// live process. Each entry's lastDecision is the last one its hook or
// sidecar took, from <home>/integrations/<name>.json.
//
// It reads a few small files on every call (the guard asks whenever it
// reports whether it is armed), so it stays cheap and never fails: problems
// land in each entry's detail.
func Integrations(home string) []guard.Integration {
	self, _ := os.Executable()
	return integrationsFor(integrationEnv{home: home, self: self, getenv: os.Getenv})
}

// integrationEnv is what the probes read, injectable for tests.
type integrationEnv struct {
	home   string // tollgate home (markers)
	self   string // this binary; hooks must point at it
	getenv func(string) string
}

func integrationsFor(env integrationEnv) []guard.Integration {
	out := []guard.Integration{claudeCodeIntegration(env), reasonixIntegration(env), dshIntegration(env), codexIntegration(env)}
	for i := range out {
		if m, err := readIntegrationMarker(env.home, out[i].Name); err == nil && m.LastDecision != "" {
			out[i].LastDecision = m.LastDecision + " · " + m.At.Local().Format("2006-01-02 15:04")
		}
	}
	return out
}

// ---- markers: what a hook or sidecar last did ----

// integrationMarker is <home>/integrations/<name>.json.
type integrationMarker struct {
	At           time.Time `json:"at"`
	LastDecision string    `json:"lastDecision,omitempty"` // e.g. "decline (user)"
	Version      string    `json:"version,omitempty"`      // the harness's version, when known
}

func integrationMarkerPath(home, name string) string {
	return filepath.Join(home, "integrations", name+".json")
}

// writeIntegrationMarker records an integration's last decision (best
// effort: a read-only home only loses the Integrations page's line).
func writeIntegrationMarker(home, name string, m integrationMarker) error {
	if home == "" {
		return errors.New("no tollgate home")
	}
	dir := filepath.Join(home, "integrations")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), integrationMarkerPath(home, name))
}

func readIntegrationMarker(home, name string) (integrationMarker, error) {
	var m integrationMarker
	b, err := os.ReadFile(integrationMarkerPath(home, name))
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(b, &m)
	return m, err
}

// ---- Claude Code ----

// harnessDir is a harness's own folder: $envVar when set, else ~/dotDir
// ($HOME as the harness itself would read it).
func harnessDir(getenv func(string) string, envVar, dotDir string) (string, error) {
	if d := getenv(envVar); d != "" {
		return d, nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		home = h
	}
	return filepath.Join(home, dotDir), nil
}

// claudeConfigDir is $CLAUDE_CONFIG_DIR, else ~/.claude.
func claudeConfigDir(getenv func(string) string) (string, error) {
	return harnessDir(getenv, "CLAUDE_CONFIG_DIR", ".claude")
}

func claudeCodeIntegration(env integrationEnv) guard.Integration {
	in := guard.Integration{Name: IntegrationClaudeCode}
	dir, err := claudeConfigDir(env.getenv)
	if err != nil {
		in.Detail = "no home folder: " + err.Error()
		return in
	}
	path := filepath.Join(dir, "settings.json")
	settings, err := readClaudeSettings(path)
	if errors.Is(err, fs.ErrNotExist) {
		in.Detail = "not installed: run `tollgate hook claude-code --install`"
		return in
	}
	if err != nil {
		in.Detail = err.Error()
		return in
	}
	hooks := findTollgateClaudeHooks(settings)
	if len(hooks) == 0 {
		in.Detail = "not installed in " + path + ": run `tollgate hook claude-code --install`"
		return in
	}
	in.Installed = true
	h := hooks[0]
	if h.Type == "http" {
		if u, err := url.Parse(h.URL); err != nil || u.Host == "" {
			in.Detail = fmt.Sprintf("%s: the PreCompact HTTP hook's url %q does not parse", path, h.URL)
			return in
		}
		in.Verified = true
		in.Detail = fmt.Sprintf("PreCompact HTTP hook → %s (%s)", h.URL, path)
		return in
	}
	exe, err := verifyCommand(h.Command, env.self)
	if err != nil {
		in.Detail = fmt.Sprintf("%s: PreCompact hook %q: %v", path, h.Command, err)
		return in
	}
	in.Verified = true
	in.Detail = fmt.Sprintf("PreCompact hook installed (%s, timeout %ds) → %s", path, h.Timeout, exe)
	return in
}

// verifyCommand checks that a hook's command line starts with an
// executable that resolves, and that it is this tollgate binary.
func verifyCommand(command, self string) (string, error) {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return "", errors.New("empty command")
	}
	exe := strings.Trim(fields[0], `"'`)
	resolved, err := exec.LookPath(exe)
	if err != nil {
		return "", fmt.Errorf("the command does not resolve: %w", err)
	}
	if self != "" && !sameFile(resolved, self) {
		return resolved, fmt.Errorf("it runs %s, not this tollgate (%s)", resolved, self)
	}
	return resolved, nil
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

// ---- Reasonix ----

// reasonixHome is $REASONIX_HOME, else ~/.reasonix.
func reasonixHome(getenv func(string) string) (string, error) {
	return harnessDir(getenv, "REASONIX_HOME", ".reasonix")
}

func reasonixIntegration(env integrationEnv) guard.Integration {
	in := guard.Integration{Name: IntegrationReasonix}
	rhome, err := reasonixHome(env.getenv)
	if err != nil {
		in.Detail = "no home folder: " + err.Error()
		return in
	}
	packages := filepath.Join(rhome, "plugin-packages.json")
	b, err := os.ReadFile(packages)
	if errors.Is(err, fs.ErrNotExist) {
		in.Detail = "not installed: run `tollgate ext reasonix --install`"
		return in
	}
	if err != nil {
		in.Detail = err.Error()
		return in
	}
	var reg struct {
		Plugins []struct {
			Name    string `json:"name"`
			Root    string `json:"root"`
			Enabled bool   `json:"enabled"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		in.Detail = fmt.Sprintf("%s does not parse: %v", packages, err)
		return in
	}
	for _, p := range reg.Plugins {
		if p.Name != reasonixPluginName {
			continue
		}
		in.Installed = true
		if !p.Enabled {
			in.Detail = "installed but disabled: `reasonix plugin enable " + reasonixPluginName + "`"
			return in
		}
		root := p.Root
		if !filepath.IsAbs(root) {
			root = filepath.Join(rhome, root)
		}
		manifest := filepath.Join(root, "reasonix-plugin.json")
		m, err := readReasonixManifest(manifest)
		if err != nil {
			in.Detail = err.Error()
			return in
		}
		command := strings.ReplaceAll(m.Runtime.Command, "${REASONIX_PLUGIN_ROOT}", root)
		exe, err := verifyCommand(command, env.self)
		if err != nil {
			in.Detail = fmt.Sprintf("%s: runtime.command: %v", manifest, err)
			return in
		}
		in.Verified = true
		in.Detail = fmt.Sprintf("Reasonix plugin %q enabled (%s) → %s", reasonixPluginName, root, exe)
		return in
	}
	in.Detail = "not installed: run `tollgate ext reasonix --install`"
	return in
}

// ---- dsh ----

func dshIntegration(env integrationEnv) guard.Integration {
	in := guard.Integration{Name: IntegrationDSH}
	m, err := readIntegrationMarker(env.home, IntegrationDSH)
	if err != nil {
		in.Detail = "not seen: add the tollgate plugin (integrations/dsh) to dsh; it registers an engine while dsh runs"
		return in
	}
	// A plugin inside a running dsh guards through its engine lease, so it
	// is reported as seen, never as an installed hook that arms the guard.
	in.Installed = true
	in.Detail = "plugin seen " + m.At.Local().Format("2006-01-02 15:04")
	if m.Version != "" {
		in.Detail += " (dsh " + m.Version + ")"
	}
	in.Detail += "; it arms the guard while dsh runs (engine lease)"
	return in
}

// ---- Codex ----

func codexIntegration(env integrationEnv) guard.Integration {
	return guard.Integration{Name: IntegrationCodex, Detail: codexVerdict}
}

// codexVerdict is what the Integrations page says about Codex.
const codexVerdict = "import-only: Codex CLI's PreCompact hook (0.171) cannot decline a compaction — its output has no decision, " +
	"and `continue: false` stops the whole turn — so tollgate imports Codex rollouts (`tollgate import`) instead of gating them"

// IntegrationRoutes returns routes plus the integrations' own
// authenticated routes (the Claude Code HTTP hook), which reach the gate
// through endpoint like any harness.
func IntegrationRoutes(routes map[string]http.Handler, home string, endpoint func() client.Endpoint, log *slog.Logger) map[string]http.Handler {
	out := make(map[string]http.Handler, len(routes)+1)
	for k, v := range routes {
		out[k] = v
	}
	if _, taken := out[ClaudeHookRoute]; !taken {
		out[ClaudeHookRoute] = ClaudeHookHandler(home, endpoint, log)
	}
	return out
}
