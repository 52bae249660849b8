package harness

import (
	"tollgate/app/home"
	"tollgate/guard/api"
)

// Doctor is how `tollgate doctor` grades an integration (app/doctor's
// integration checks, one per registered integration).
type Doctor struct {
	// Needed marks an integration the guard needs: its check can fail
	// doctor, and the first Needed integration's Setup is the fix doctor
	// proposes when nothing arms the guard.
	Needed bool
	// Setup is the shell command that sets it up ("" when nothing run
	// from here does). nil: none.
	Setup func(DoctorEnv) string
	// Check grades its status on this machine. Required.
	Check func(DoctorEnv, api.Integration) Assessment
}

// DoctorEnv is what doctor knows when it grades an integration.
type DoctorEnv struct {
	// Probe is the home checked, this binary and the environment.
	home.Probe
	// Command is how a fix names this binary (shell-quoted); HomeArg is
	// " --home DIR", or "" when the home is the default.
	Command, HomeArg string
}

// Assessment is an integration's grade and fix.
type Assessment struct {
	Grade Grade
	// Dir is the harness's own folder, which GradeByDir looks for.
	Dir string
	// Fix replaces Setup's command ("": Setup's).
	Fix string
	// Facts join the check's facts (installed, verified, lastDecision).
	Facts map[string]any
}

// Grade is the status an integration's check ends in; the values are
// doctor's statuses.
type Grade string

const (
	// GradeByDir lets doctor grade it from its status: verified is ok;
	// installed but not resolving to this binary an error (the harness
	// runs a hook that is not this tollgate, or none); not installed a
	// warning where Dir exists and info where it does not.
	GradeByDir Grade = ""
	GradeOK    Grade = "ok"
	GradeInfo  Grade = "info"
	GradeWarn  Grade = "warn"
	GradeError Grade = "error"
)
