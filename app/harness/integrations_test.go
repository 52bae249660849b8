package harness_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness"
	_ "tollgate/app/harness/all"
	"tollgate/app/harness/claudecode"
	"tollgate/app/harness/codex"
	"tollgate/app/harness/dsh"
	"tollgate/app/harness/gemini"
	"tollgate/app/harness/opencode"
	"tollgate/app/harness/reasonix"
	"tollgate/app/home"
	"tollgate/guard/api"
)

func TestIntegrationsDSHSeenAndCodexNotInstalled(t *testing.T) {
	dir := t.TempDir()
	env := home.Probe{Home: dir, Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}}
	list := harness.IntegrationsFor(env)
	// GET /v1/engines lists them in this order.
	want := []string{claudecode.Name, reasonix.Name, dsh.Name, codex.Name, opencode.Name, gemini.Harness}
	var names []string
	for _, in := range list {
		names = append(names, in.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	if len(list) != 6 || list[2].Installed || list[3].Installed || !strings.Contains(list[3].Detail, "hook codex --install") || !strings.Contains(list[3].Note, "ends the current Codex turn") {
		t.Fatalf("%+v", list)
	}
	for _, in := range list {
		if in.Verified {
			t.Fatalf("nothing installed, yet %s is verified", in.Name)
		}
	}
	home.WriteMarker(dir, dsh.Name, home.Marker{At: time.Now(), LastDecision: "decline (user)", Version: "0.9.0"})
	list = harness.IntegrationsFor(env)
	if d := list[2]; !d.Installed || d.Verified || !strings.Contains(d.Detail, "dsh 0.9.0") || !strings.HasPrefix(d.LastDecision, "decline (user)") {
		t.Fatalf("dsh %+v", d)
	}
}

func TestIntegrationsOpenCodeConfiguredThenSeen(t *testing.T) {
	dir := t.TempDir()
	cfgHome := filepath.Join(dir, "xdg")
	env := home.Probe{Home: dir, Getenv: func(k string) string {
		switch k {
		case "HOME":
			return dir
		case "XDG_CONFIG_HOME":
			return cfgHome
		}
		return ""
	}}
	status := func() api.Integration {
		for _, in := range harness.IntegrationsFor(env) {
			if in.Name == opencode.Name {
				return in
			}
		}
		t.Fatal("no opencode entry")
		return api.Integration{}
	}
	if in := status(); in.Installed || !strings.Contains(in.Detail, "not installed") {
		t.Fatalf("nothing configured: %+v", in)
	}
	// A JSONC config with comments, a trailing comma and the plugin as [spec, options].
	os.MkdirAll(filepath.Join(cfgHome, "opencode"), 0o700)
	cfg := filepath.Join(cfgHome, "opencode", "opencode.jsonc")
	os.WriteFile(cfg, []byte(`{
  // tollgate guards compactions
  "plugin": [
    "some-other-plugin",
    ["file:///opt/tollgate/integrations/opencode/index.js", {"home": "/x"}], /* options */
  ],
  "model": "a // not a comment",
}`), 0o600)
	if in := status(); !in.Installed || in.Verified || !strings.Contains(in.Detail, cfg) || !strings.Contains(in.Detail, "not seen yet") {
		t.Fatalf("configured: %+v", in)
	}
	home.WriteMarker(dir, opencode.Name, home.Marker{At: time.Now(), LastDecision: "allow (user)", Version: "1.18.33"})
	if in := status(); !in.Installed || in.Verified || !strings.Contains(in.Detail, "OpenCode 1.18.33") || !strings.HasPrefix(in.LastDecision, "allow (user)") {
		t.Fatalf("seen: %+v", in)
	}
	// A config that does not list it is not an install.
	os.WriteFile(cfg, []byte(`{"plugin": ["other"]}`), 0o600)
	os.Remove(filepath.Join(dir, "integrations", opencode.Name+".json"))
	if in := status(); in.Installed {
		t.Fatalf("other plugin only: %+v", in)
	}
}

// Every registered harness has what the Integrations page shows of it, and
// the engine harness name DeepSeek-Reasonix registers under is Reasonix's.
func TestIntegrationsHaveTheirPageTexts(t *testing.T) {
	for _, in := range harness.Registered() {
		if in.Label == "" || in.Title == "" || in.About == "" || in.Setup == "" {
			t.Errorf("%s: label %q, title %q, about %q, setup %q", in.Name, in.Label, in.Title, in.About, in.Setup)
		}
	}
	if in, ok := harness.Lookup("deepseek-reasonix"); !ok || in.Name != reasonix.Name || in.Title != "DeepSeek-Reasonix" {
		t.Fatalf("deepseek-reasonix: %+v %v", in, ok)
	}
	if in, _ := harness.Lookup(codex.Name); in.Decline == "" || in.Title != "Codex CLI" {
		t.Fatalf("codex: %+v", in)
	}
	if in, _ := harness.Lookup(gemini.Harness); !in.Observed {
		t.Fatal("gemini is gated")
	}
}
