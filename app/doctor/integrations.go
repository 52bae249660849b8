package doctor

import (
	"maps"
	"os"

	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// The checks of the integrations (ARCHITECTURE.md, "Integrations"), one
// per registered integration, as harness.Integrations(home) reports them
// and its harness.Doctor grades them.

func (d *doctor) checkIntegrations() []DoctorCheck {
	env := d.harnessEnv()
	var out []DoctorCheck
	for _, in := range harness.Integrations(d.home) {
		c := DoctorCheck{ID: "integration." + in.Name, Detail: in.Detail, Status: DoctorOK}
		if in.Note != "" {
			c.Detail += " (" + in.Note + ")"
		}
		facts := map[string]any{"installed": in.Installed, "verified": in.Verified}
		if in.LastDecision != "" {
			facts["lastDecision"] = in.LastDecision
		}
		c.Facts = facts
		c.Title = in.Name
		reg, ok := harness.Lookup(in.Name)
		if ok {
			c.Title = reg.Label
		}
		if !ok || reg.Doctor == nil {
			c.Status = DoctorInfo
			out = append(out, c)
			continue
		}
		c.Needed = reg.Doctor.Needed
		if reg.Doctor.Setup != nil {
			c.Fix = reg.Doctor.Setup(env)
		}
		a := reg.Doctor.Check(env, in)
		if a.Fix != "" {
			c.Fix = a.Fix
		}
		maps.Copy(facts, a.Facts)
		if a.Grade == harness.GradeByDir {
			d.grade(&c, in, a.Dir, c.Title)
		} else {
			c.Status = string(a.Grade)
		}
		if c.Status == DoctorOK {
			c.Fix = ""
		}
		out = append(out, c)
	}
	return out
}

// harnessEnv is what an integration's doctor hook knows: this home, this
// binary, the environment, and how a fix names them.
func (d *doctor) harnessEnv() harness.DoctorEnv {
	return harness.DoctorEnv{Probe: home.Probe{Home: d.home, Self: d.self, Getenv: os.Getenv}, Command: d.cmd, HomeArg: d.homeArg}
}

// setupFix is the command that sets up the first integration the guard
// needs (in the registry's order): what doctor proposes when nothing arms
// the guard.
func (d *doctor) setupFix() string {
	for _, in := range harness.Registered() {
		if in.Doctor != nil && in.Doctor.Needed && in.Doctor.Setup != nil {
			return in.Doctor.Setup(d.harnessEnv())
		}
	}
	return ""
}

// grade sets an installable integration's status: verified is ok;
// installed but not resolving to this binary is an error (the harness runs
// a hook that is not this tollgate, or none); not installed is a warning
// where the harness's folder exists and info where it does not.
func (d *doctor) grade(c *DoctorCheck, in api.Integration, harnessDir, label string) {
	switch {
	case in.Verified:
		c.Status = DoctorOK
	case in.Installed:
		c.Status = DoctorError
	case harnessDir != "" && fileExists(harnessDir):
		c.Status = DoctorWarn
		c.Detail = label + " is set up here (" + harnessDir + ") but tollgate's integration is not installed: its compactions are not guarded"
	default:
		c.Status = DoctorInfo
		c.Detail = label + " is not set up here (no " + harnessDir + ")"
	}
}
