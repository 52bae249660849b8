// Package harness is the registry of the harness integrations (Register,
// Registered) and says what state each is in on this machine (the
// Integrations page, GET /v1/engines, doctor). The integrations themselves
// live in the folders below it, one per harness (claudecode, reasonix,
// dsh, codex, opencode, gemini), each registering its own from an init
// function; app/harness/all links them all into the binary. This package
// never imports them.
package harness

import (
	"os"

	"tollgate/app/home"
	"tollgate/guard/api"
)

// Integrations reports the registered integrations (ARCHITECTURE.md,
// "Integrations") for the tollgate whose home is dir, in Order: each one's
// Status on this machine. An installed integration that is verified — its
// configuration parses and its command resolves to this tollgate binary —
// arms the guard, as it guards every session of its harness without a
// live process. Each entry's lastDecision is the last one its hook or
// sidecar took, from <home>/integrations/<name>.json.
//
// It reads a few small files on every call (the guard asks whenever it
// reports whether it is armed), so it stays cheap and never fails: problems
// land in each entry's detail.
func Integrations(dir string) []api.Integration {
	self, _ := home.Executable()
	return IntegrationsFor(home.Probe{Home: dir, Self: self, Getenv: os.Getenv})
}

// IntegrationsFor is Integrations for a probe: the home, this binary and
// the environment the statuses read. Each entry carries the registry's
// label and the Integrations page's texts (title, about, setup), so the UI
// names and describes every harness from here.
func IntegrationsFor(p home.Probe) []api.Integration {
	list := Registered()
	out := make([]api.Integration, len(list))
	for i, in := range list {
		out[i] = in.Status(p)
		out[i].Label, out[i].Title, out[i].About, out[i].Setup = in.Label, in.Title, in.About, in.Setup
		if m, err := home.ReadMarker(p.Home, out[i].Name); err == nil && m.LastDecision != "" {
			out[i].LastDecision = m.LastDecision + " · " + m.At.Local().Format("2006-01-02 15:04")
		}
	}
	return out
}
