package claudecode

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"tollgate/app/harness"
	"tollgate/app/harness/hookio"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// Claude Code's integration: the PreCompact hook (a command, `tollgate
// hook claude-code`, or the HTTP hook, HookRoute), installed into its
// settings.json; its OpenTelemetry export (`tollgate telemetry
// claude-code`). An installed, verified hook arms the guard.
func init() {
	harness.Register(harness.Integration{
		Name:    Name,
		Label:   "Claude Code",
		Aliases: []string{"claude"},
		Order:   10,
		About:   "A PreCompact hook prices every compaction from the transcript and asks before it runs. Installed once, it guards every Claude Code session.",
		Setup:   "tollgate hook " + Name + " --install",
		Status:  Status,
		Doctor: &harness.Doctor{
			Needed: true,
			Setup:  func(e harness.DoctorEnv) string { return e.Command + " hook " + Name + " --install" + e.HomeArg },
			Check: func(e harness.DoctorEnv, _ api.Integration) harness.Assessment {
				dir, _ := ConfigDir(e.Getenv)
				return harness.Assessment{Dir: dir}
			},
		},
		Hook:      hookio.Command(hookVerb),
		Telemetry: &harness.Command{Synopsis: "[--install|--uninstall] [--protocol http/json|http/protobuf]", Run: telemetryVerb},
		OTel:      &harness.OTel{Namespace: "claude_code", Service: "claude-code"},
		HookRoute: &harness.Route{Pattern: HookRoute, Handler: HTTPHandler},
	})
}

// hookVerb is `tollgate hook claude-code`: the PreCompact hook itself
// (it never fails Claude Code: any fault allows the compaction), or with
// --install / --uninstall the edit of Claude Code's settings.
func hookVerb() hookio.Verb {
	var httpHook bool
	return hookio.Verb{
		Name: Name,
		Usage: `usage: tollgate hook claude-code [--home DIR] [--timeout 300s] [--profile NAME]
       tollgate hook claude-code --install [--http] [--timeout 300s] [--settings FILE]
       tollgate hook claude-code --uninstall [--settings FILE]

Claude Code's PreCompact hook: reads the hook's JSON on stdin, asks tollgate,
and prints {"decision":"block","reason":"…"} when the compaction is declined.
tollgate not running or malformed input → the compaction is allowed.`,
		DefaultTimeout: DefaultTimeout,
		InstallTimeout: InstallTimeout,
		TimeoutHelp:    "the hook's `timeout` in Claude Code's settings (tollgate's deadline is 5 s less); a bare number is seconds",
		ProfileHelp:    "pricing `PROFILE` for Claude Code sessions (default: by provider and model)",
		InstallHelp:    "merge the PreCompact hook into Claude Code's settings.json (with a backup) and exit",
		UninstallHelp:  "remove tollgate's PreCompact hook from Claude Code's settings.json and exit",
		Flags: func(fset *flag.FlagSet) {
			fset.BoolVar(&httpHook, "http", false, "with --install: install the HTTP hook (POST /v1/hooks/claude-code on the running tollgate) instead of the command")
		},
		Run: func(ctx context.Context, env harness.Env, home, profile string, timeout time.Duration) {
			RunCommand(ctx, env.Stdin, env.Stdout, env.Stderr, Options{Home: home, Profile: profile, Timeout: timeout})
		},
		SettingsFlag:    "settings",
		SettingsHelp:    "Claude Code settings `FILE` for --install/--uninstall (default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)",
		DefaultSettings: SettingsPath,
		Uninstall: func(env harness.Env, path string) error {
			res, err := Uninstall(path)
			switch {
			case err != nil:
				return err
			case res.Missing:
				fmt.Fprintf(env.Stdout, "%s does not exist: nothing to remove\n", path)
			case res.Removed == 0:
				fmt.Fprintf(env.Stdout, "tollgate's PreCompact hook is not in %s: nothing to remove\n", path)
			default:
				fmt.Fprintf(env.Stdout, "Removed tollgate's PreCompact hook from %s (previous settings in %s)\n", path, res.Backup)
			}
			return nil
		},
		Install: func(env harness.Env, path, dir, profile string, timeout time.Duration) error {
			res, err := Install(InstallOptions{Settings: path, Home: dir, Profile: profile, Timeout: timeout, HTTP: httpHook})
			if err != nil {
				return err
			}
			if !res.Changed {
				fmt.Fprintf(env.Stdout, "tollgate's PreCompact hook is already installed in %s\n", path)
				return nil
			}
			fmt.Fprintf(env.Stdout, "Installed tollgate's PreCompact hook in %s (timeout %ds)\n", path, res.Seconds)
			if res.Backup != "" {
				fmt.Fprintf(env.Stdout, "The previous settings are in %s\n", res.Backup)
			}
			if httpHook {
				fmt.Fprintln(env.Stdout, "The HTTP hook sends $TOLLGATE_TOKEN: export it (`tollgate token`) where Claude Code runs.")
			}
			fmt.Fprintln(env.Stdout, "Claude Code reads it at the next start; `/hooks` lists it.")
			return nil
		},
	}
}

// telemetryVerb is `tollgate telemetry claude-code`: the variables that
// point Claude Code's OpenTelemetry export at this tollgate, printed, or
// written into its settings.json (--install) and removed (--uninstall).
func telemetryVerb(_ context.Context, args []string, env harness.Env) error {
	var dir string
	fset := harness.NewFlags("telemetry "+Name, env.IO, &dir)
	install := fset.Bool("install", false, "write the variables into Claude Code's settings.json \"env\" (with a backup) and exit")
	uninstall := fset.Bool("uninstall", false, "remove the variables tollgate wrote from Claude Code's settings.json")
	protocol := fset.String("protocol", "http/json", "OTLP `PROTOCOL` Claude Code sends: http/json or http/protobuf")
	settings := fset.String("settings", "", "Claude Code settings `FILE` (default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)")
	fset.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: tollgate telemetry claude-code [--home DIR] [--protocol http/json|http/protobuf]
       tollgate telemetry claude-code --install [--settings FILE]
       tollgate telemetry claude-code --uninstall [--settings FILE]

Points Claude Code's OpenTelemetry export at this tollgate, so each API
request it makes is recorded as it happens (session claude-code:<session id>),
and counted once when its transcript is imported later. Without --install it
prints the variables; run it again after `+"`tollgate token --rotate`"+`.`)
		fset.PrintDefaults()
	}
	if err := harness.Parse(fset, args); err != nil {
		return err
	}
	if *protocol != "http/json" && *protocol != "http/protobuf" {
		return harness.Usagef("--protocol: want http/json or http/protobuf, got %q", *protocol)
	}
	path := *settings
	if path == "" && (*install || *uninstall) {
		p, err := SettingsPath(os.Getenv)
		if err != nil {
			return err
		}
		path = p
	}
	if *uninstall {
		n, backup, err := UninstallTelemetry(path)
		switch {
		case err != nil:
			return err
		case n == 0:
			fmt.Fprintf(env.Stdout, "tollgate's telemetry settings are not in %s: nothing to remove\n", path)
		default:
			fmt.Fprintf(env.Stdout, "Removed %d telemetry variables from %s (previous settings in %s)\n", n, path, backup)
		}
		return nil
	}
	url, token, err := env.Telemetry(dir)
	if err != nil {
		return err
	}
	vars := TelemetryEnv(url, token, *protocol)
	if !*install {
		fmt.Fprintln(env.Stdout, "# Claude Code → tollgate over OpenTelemetry; or run with --install to write them into settings.json")
		for _, k := range EnvKeys(vars) {
			fmt.Fprintf(env.Stdout, "export %s=%s\n", k, home.ShellQuote(vars[k]))
		}
		return nil
	}
	backup, err := InstallTelemetry(path, vars)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Claude Code now exports its usage to %s/otlp (settings: %s", url, path)
	if backup != "" {
		fmt.Fprintf(env.Stdout, "; previous settings in %s", backup)
	}
	fmt.Fprintln(env.Stdout, "). New Claude Code sessions pick it up; the Integrations page shows when events arrive.")
	return nil
}
