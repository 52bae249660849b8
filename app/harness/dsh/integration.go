package dsh

import (
	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// Name is dsh's harness name: its sessions, its integration marker.
const Name = "dsh"

// dsh ships its own plugin (integrations/dsh), which asks tollgate over the
// API while dsh runs: nothing is installed or run from here.
func init() {
	harness.Register(harness.Integration{
		Name:  Name,
		Order: 30,
		About: "The tollgate plugin (integrations/dsh in the tollgate repository) gates dsh's compactIfNeeded: it asks before each rewrite and runs the order tollgate returns. " +
			"It arms the guard while dsh runs and finds tollgate through api.json. Add it to dsh's configuration:",
		Setup: "plugins:\n" +
			"  tollgate:                  # @tollgate/dsh-plugin\n" +
			"    profile: deepseek-flash  # optional pricing profile\n" +
			"    deadlineSeconds: 120     # how long a question may wait",
		Status: status,
		Doctor: &harness.Doctor{Check: func(_ harness.DoctorEnv, in api.Integration) harness.Assessment {
			if !in.Installed {
				return harness.Assessment{Grade: harness.GradeInfo} // a plugin inside dsh: nothing to run from here
			}
			return harness.Assessment{Grade: harness.GradeOK}
		}},
	})
}

// status reports the plugin as seen when it last ran (its marker).
func status(p home.Probe) api.Integration {
	in := api.Integration{Name: Name}
	m, err := home.ReadMarker(p.Home, Name)
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
