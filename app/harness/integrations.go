// Package harness lists the harness integrations and what state each is in
// on this machine (the Integrations page, GET /v1/engines, doctor). The
// integrations themselves live in the packages below it (claudecode,
// reasonix, codex, opencode: the installer of the OpenCode plugin that
// integrations/opencode ships); dsh ships its own plugin (integrations/dsh)
// and Gemini CLI is observed (imported; it cannot be gated).
package harness

import (
	"os"

	"tollgate/app/harness/claudecode"
	"tollgate/app/harness/codex"
	"tollgate/app/harness/opencode"
	"tollgate/app/harness/reasonix"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// Integration names, as the Integrations page and GET /v1/engines show them.
const (
	ClaudeCode = claudecode.Name
	Reasonix   = reasonix.Name
	DSH        = "dsh"
	Codex      = codex.Name
	OpenCode   = opencode.Name
)

// Integrations reports the installed hook integrations (ARCHITECTURE.md,
// "Integrations") for the tollgate whose home is dir: the Claude Code
// PreCompact hook in the user's Claude settings, the Reasonix plugin, the
// dsh plugin (seen when it last ran), Codex's PreCompact hook in its
// hooks.json (trusted in its config.toml) and Gemini CLI (observed:
// imported, never gated). An installed
// integration that is verified — its configuration parses and its command
// resolves to this tollgate binary — arms the guard, as it guards every
// session of its harness without a live process. Each entry's lastDecision
// is the last one its hook or sidecar took, from <home>/integrations/<name>.json.
//
// It reads a few small files on every call (the guard asks whenever it
// reports whether it is armed), so it stays cheap and never fails: problems
// land in each entry's detail.
func Integrations(dir string) []api.Integration {
	self, _ := home.Executable()
	return integrationsFor(home.Probe{Home: dir, Self: self, Getenv: os.Getenv})
}

func integrationsFor(p home.Probe) []api.Integration {
	out := []api.Integration{claudecode.Status(p), reasonix.Status(p), dshStatus(p), codex.Status(p), opencode.Status(p), geminiStatus(p)}
	for i := range out {
		if m, err := home.ReadMarker(p.Home, out[i].Name); err == nil && m.LastDecision != "" {
			out[i].LastDecision = m.LastDecision + " · " + m.At.Local().Format("2006-01-02 15:04")
		}
	}
	return out
}

// ---- dsh ----

func dshStatus(p home.Probe) api.Integration {
	in := api.Integration{Name: DSH}
	m, err := home.ReadMarker(p.Home, DSH)
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
