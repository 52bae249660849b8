package opencode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"tollgate/app/harness"
	"tollgate/guard/api"
)

// OpenCode's integration: the plugin this binary embeds, written into
// OpenCode's plugins folder by `tollgate hook opencode --install`. It arms
// the guard through its engine lease while OpenCode runs, never by being
// installed.
func init() {
	harness.Register(harness.Integration{
		Name:  Name,
		Label: "OpenCode",
		Order: 50,
		About: "The tollgate plugin turns OpenCode's automatic compaction over to tollgate while tollgate runs: " +
			"once the context crosses OpenCode's own threshold it asks (when the session goes idle, or before the next model request, which OpenCode holds), " +
			"and on Allow OpenCode compacts by its own path; on Not now the session goes on and is asked again after the next answer above the threshold. " +
			"When tollgate is not running OpenCode compacts on its own. " +
			"The plugin ships inside tollgate: --install writes it into OpenCode's plugins folder (~/.config/opencode/plugins), which OpenCode loads at its next start. " +
			`From a tollgate checkout you can instead list integrations/opencode/index.js in opencode.json's "plugin" array (not both: OpenCode would run it twice).`,
		Setup:  "tollgate hook " + Name + " --install",
		Status: Status,
		Doctor: &harness.Doctor{
			Setup: func(e harness.DoctorEnv) string { return e.Command + " hook " + Name + " --install" + e.HomeArg },
			Check: doctorCheck,
		},
		Hook: &harness.Command{Run: hookVerb},
	})
}

// doctorCheck grades the plugin like an installed hook, except that it
// never verifies: installed is ok, installed needing the user (an older
// tollgate's files, a second copy) a warning.
func doctorCheck(e harness.DoctorEnv, in api.Integration) harness.Assessment {
	dir, _ := Dir(e.Getenv)
	_, needsFix := Assess(e.Probe)
	switch {
	case in.Installed && needsFix:
		a := harness.Assessment{Grade: harness.GradeWarn}
		if Inspect(dir).Current {
			// Its files are right: the problem is a second copy.
			a.Fix = e.Command + " hook " + Name + " --uninstall"
		}
		return a
	case in.Installed:
		return harness.Assessment{Grade: harness.GradeOK}
	}
	return harness.Assessment{Dir: dir}
}

// hookVerb is `tollgate hook opencode --install|--uninstall`: OpenCode
// runs tollgate's plugin inside itself (there is no command hook to run),
// so the verb only writes the plugin this binary embeds into OpenCode's
// plugins folder, or removes it.
func hookVerb(_ context.Context, args []string, env harness.Env) error {
	var homeFlag string
	fset := harness.NewFlags("hook "+Name, env.IO, &homeFlag)
	install := fset.Bool("install", false, "write tollgate's OpenCode plugin into OpenCode's plugins folder and exit")
	uninstall := fset.Bool("uninstall", false, "remove the plugin --install wrote (only files still as it wrote them) and exit")
	configDir := fset.String("config-dir", "", "OpenCode's config `DIR` (default $XDG_CONFIG_HOME/opencode, else ~/.config/opencode)")
	fset.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: tollgate hook opencode --install [--home DIR] [--config-dir DIR]
       tollgate hook opencode --uninstall [--config-dir DIR]

Writes tollgate's OpenCode plugin (embedded in this binary) into
<config-dir>/plugins/tollgate/, and plugins/tollgate.js, which OpenCode
loads at its next start. With --home the plugin finds tollgate there;
without, in $TOLLGATE_HOME or ~/.config/tollgate. When an OpenCode config
already lists the plugin, nothing is written.`)
		fset.PrintDefaults()
	}
	if err := harness.Parse(fset, args); err != nil {
		return err
	}
	if *install == *uninstall {
		return harness.Usagef("tollgate hook opencode: give --install or --uninstall (OpenCode runs the plugin itself)")
	}
	dir := *configDir
	if dir == "" {
		d, err := Dir(os.Getenv)
		if err != nil {
			return err
		}
		dir = d
	}
	if *uninstall {
		res, err := Uninstall(dir)
		switch {
		case err != nil:
			return err
		case res.Removed == 0:
			fmt.Fprintf(env.Stdout, "tollgate's OpenCode plugin is not installed in %s: nothing to remove\n", filepath.Dir(res.Shim))
		default:
			fmt.Fprintf(env.Stdout, "Removed tollgate's OpenCode plugin from %s (%d files); OpenCode stops loading it at its next start\n", filepath.Dir(res.Shim), res.Removed)
		}
		return nil
	}
	res, err := Install(InstallOptions{ConfigDir: dir, Home: homeFlag, Getenv: os.Getenv})
	switch {
	case err != nil:
		return err
	case res.ConfiguredIn != "":
		fmt.Fprintf(env.Stdout, "OpenCode already loads tollgate's plugin from %s: nothing written (a second copy would run twice)\n", res.ConfiguredIn)
		if Inspect(dir).Present {
			fmt.Fprintf(env.Stdout, "%s is there too, so OpenCode runs the plugin twice: `tollgate hook opencode --uninstall` removes that copy\n", res.Shim)
		}
	case !res.Changed:
		fmt.Fprintf(env.Stdout, "tollgate's OpenCode plugin is already installed: %s\n", res.Shim)
	default:
		fmt.Fprintf(env.Stdout, "Installed tollgate's OpenCode plugin: %s loads %s\n", res.Shim, res.Folder)
		fmt.Fprintln(env.Stdout, "OpenCode loads it at its next start; it registers an engine while tollgate runs.")
	}
	return nil
}
