package reasonix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tollgate/app/home"
	"tollgate/guard/api"
)

// reasonixManifest is the part of reasonix-plugin.json tollgate writes and checks.
type reasonixManifest struct {
	APIVersion  string `json:"apiVersion"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	Provides    []struct {
		Namespace string `json:"namespace"`
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		Version   string `json:"version"`
	} `json:"provides"`
	Runtime struct {
		Command       string   `json:"command"`
		Args          []string `json:"args"`
		Required      bool     `json:"required"`
		TimeoutMillis int      `json:"timeoutMillis,omitempty"`
		Intercepts    []string `json:"intercepts"`
		Capabilities  []string `json:"capabilities"`
	} `json:"runtime"`
}

func readReasonixManifest(path string) (reasonixManifest, error) {
	var m reasonixManifest
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s does not parse: %w", path, err)
	}
	if m.Runtime.Command == "" {
		return m, fmt.Errorf("%s: runtime.command is missing", path)
	}
	return m, nil
}

// reasonixPluginManifest is the manifest --install writes. Reasonix's v2
// manifests are strict (an unknown field is an error), so it holds only
// documented fields. runtime.command is this binary's absolute path (only
// command expands ${REASONIX_PLUGIN_ROOT}; the plugin folder holds nothing
// else to run). timeoutMillis is the 60 s ceiling, the user's time to
// answer; required is false, so a missing tollgate never stops Reasonix.
func reasonixPluginManifest(exe, home, profile, version string, timeout time.Duration) map[string]any {
	args := []any{"ext", "reasonix"}
	if home != "" {
		args = append(args, "--home", home)
	}
	if profile != "" {
		args = append(args, "--profile", profile)
	}
	version = semverOr(version, "0.0.0")
	return map[string]any{
		"apiVersion":  "reasonix.io/plugin/v2",
		"name":        PluginName,
		"version":     version,
		"description": "tollgate: prices every compaction before it breaks the prompt cache, and asks you first",
		"provides":    []any{map[string]any{"namespace": "plugin/" + PluginName, "kind": "interceptors", "id": "default", "version": version}},
		"runtime": map[string]any{
			"command":       exe,
			"args":          args,
			"required":      false,
			"timeoutMillis": timeout.Milliseconds(),
			"intercepts":    reasonixIntercepts,
			"capabilities":  []any{"interceptors"},
		},
	}
}

// semverOr returns v as MAJOR.MINOR.PATCH (a leading v and any suffix
// dropped), or def when v is not a version (a dev build's "dev" or a
// commit hash): Reasonix wants a version in its manifests.
func semverOr(v, def string) string {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 {
		return def
	}
	end := strings.IndexFunc(parts[2], func(r rune) bool { return r < '0' || r > '9' })
	if end == 0 {
		return def
	}
	if end > 0 {
		parts[2] = parts[2][:end]
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return def
		}
	}
	return strings.Join(parts, ".")
}

// MaxInterceptTimeout is Reasonix's ceiling for a runtime's intercept
// timeout.
const MaxInterceptTimeout = reasonixMaxInterceptTimeout

// Install writes the plugin folder (default <home>/integrations/
// reasonix-plugin) whose manifest runs this binary as the sidecar, and
// returns the folder. homeFlag is the --home to pass on ("" = the default).
func Install(dir, tollgateHome, homeFlag, profile, version string, timeout time.Duration) (string, error) {
	exe, err := home.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary: %w", err)
	}
	if dir == "" {
		dir = filepath.Join(tollgateHome, "integrations", "reasonix-plugin")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	absHome := ""
	if homeFlag != "" {
		absHome = tollgateHome
	}
	b, _ := json.MarshalIndent(reasonixPluginManifest(exe, absHome, profile, version, timeout), "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "reasonix-plugin.json"), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// Home is Reasonix's folder: $REASONIX_HOME, else ~/.reasonix.
func Home(getenv func(string) string) (string, error) {
	return home.HarnessDir(getenv, "REASONIX_HOME", ".reasonix")
}

// Status reports whether tollgate's plugin is installed and enabled in
// Reasonix and runs this tollgate (verified: it then arms the guard).
func Status(probe home.Probe) api.Integration {
	in := api.Integration{Name: Name}
	rhome, err := Home(probe.Getenv)
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
		if p.Name != PluginName {
			continue
		}
		in.Installed = true
		if !p.Enabled {
			in.Detail = "installed but disabled: `reasonix plugin enable " + PluginName + "`"
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
		exe, err := home.VerifyCommand(command, probe.Self)
		if err != nil {
			in.Detail = fmt.Sprintf("%s: runtime.command: %v", manifest, err)
			return in
		}
		in.Verified = true
		in.Detail = fmt.Sprintf("Reasonix plugin %q enabled (%s) → %s", PluginName, root, exe)
		return in
	}
	in.Detail = "not installed: run `tollgate ext reasonix --install`"
	return in
}
