package codex

import (
	"context"
	"fmt"
	"time"

	"tollgate/app/harness"
	"tollgate/app/harness/hookio"
	"tollgate/guard/api"
)

// Codex CLI's integration: the PreCompact (and PostCompact) command hook
// in $CODEX_HOME/hooks.json, trusted in its config.toml (`tollgate hook
// codex`); its OpenTelemetry export (`tollgate telemetry codex`, printed).
// An installed, trusted, verified hook arms the guard.
func init() {
	harness.Register(harness.Integration{
		Name:  Name,
		Label: "Codex",
		Title: "Codex CLI",
		Order: 40,
		About: "A PreCompact hook prices every compaction from the rollout and asks before it runs; --install also trusts it in Codex's config.toml, which Codex requires. " +
			"Codex's hook cannot skip only the compaction: declining ends that Codex turn (the conversation keeps its full history), and Codex proposes the compaction again on the next turn.",
		Setup:   "tollgate hook " + Name + " --install",
		Decline: "Not now ends this Codex turn (the conversation keeps its full history); Codex proposes the compaction again on the next turn",
		Status:  Status,
		Doctor: &harness.Doctor{
			Setup: func(e harness.DoctorEnv) string { return e.Command + " hook " + Name + " --install" + e.HomeArg },
			Check: func(e harness.DoctorEnv, _ api.Integration) harness.Assessment {
				dir, _ := Dir(e.Getenv)
				return harness.Assessment{Dir: dir}
			},
		},
		Hook:      hookio.Command(hookVerb),
		Telemetry: &harness.Command{Run: telemetryVerb},
		OTel:      &harness.OTel{Namespace: "codex"},
	})
}

// hookVerb is `tollgate hook codex`: Codex CLI's PreCompact (and
// PostCompact) hook itself — it never fails Codex: any fault allows the
// compaction — or with --install / --uninstall the edit of Codex's
// hooks.json and config.toml.
func hookVerb() hookio.Verb {
	return hookio.Verb{
		Name: Name,
		Usage: `usage: tollgate hook codex [--home DIR] [--timeout 300s] [--profile NAME]
       tollgate hook codex --install [--timeout 300s] [--codex-home DIR]
       tollgate hook codex --uninstall [--codex-home DIR]

Codex CLI's PreCompact hook: reads the hook's JSON on stdin, asks tollgate,
and prints {"continue":false,"stopReason":"…"} when the compaction is
declined — Codex then ends the current turn and proposes the compaction
again on the next one. tollgate not running or malformed input → the
compaction is allowed.`,
		DefaultTimeout: DefaultTimeout,
		InstallTimeout: InstallTimeout,
		TimeoutHelp:    "the hook's `timeout` in Codex's hooks.json (the question gets what is left of it, less 5 s); a bare number is seconds",
		ProfileHelp:    "pricing `PROFILE` for Codex sessions (default: by provider and model)",
		InstallHelp:    "add the PreCompact and PostCompact hooks to Codex's hooks.json, trust them in its config.toml, and exit",
		UninstallHelp:  "remove tollgate's hooks (and their trust entries) from Codex's files and exit",
		Run: func(ctx context.Context, env harness.Env, home, profile string, timeout time.Duration) {
			RunCommand(ctx, env.Stdin, env.Stdout, env.Stderr, Options{Home: home, Profile: profile, Timeout: timeout})
		},
		SettingsFlag:    "codex-home",
		SettingsHelp:    "Codex's `DIR` for --install/--uninstall (default $CODEX_HOME, else ~/.codex)",
		DefaultSettings: Dir,
		Uninstall: func(env harness.Env, codexDir string) error {
			res, err := Uninstall(codexDir)
			switch {
			case err != nil:
				return err
			case res.Removed == 0:
				fmt.Fprintf(env.Stdout, "tollgate's hooks are not in %s: nothing to remove\n", res.Hooks)
			default:
				fmt.Fprintf(env.Stdout, "Removed tollgate's Codex hooks from %s and their trust from config.toml\n", res.Hooks)
			}
			return nil
		},
		Install: func(env harness.Env, codexDir, dir, profile string, timeout time.Duration) error {
			res, err := Install(InstallOptions{CodexDir: codexDir, Home: dir, Profile: profile, Timeout: timeout})
			if err != nil {
				return err
			}
			if !res.Changed {
				fmt.Fprintf(env.Stdout, "tollgate's Codex hooks are already installed and trusted in %s\n", res.Hooks)
				return nil
			}
			fmt.Fprintf(env.Stdout, "Installed tollgate's PreCompact and PostCompact hooks in %s (timeout %ds) and trusted them in %s\n", res.Hooks, res.Seconds, res.Config)
			fmt.Fprintln(env.Stdout, "Codex reads them at its next start. Declining a compaction ends that Codex turn; Codex proposes it again on the next one.")
			return nil
		},
	}
}

// telemetryVerb is `tollgate telemetry codex`: it prints the [otel] block
// of Codex's config.toml, from Codex's documentation (unlike Claude Code's
// settings, untried against tollgate here); tollgate does not rewrite the
// file.
func telemetryVerb(_ context.Context, args []string, env harness.Env) error {
	var dir string
	fset := harness.NewFlags("telemetry "+Name, env.IO, &dir)
	if err := harness.Parse(fset, args); err != nil {
		return err
	}
	url, token, err := env.Telemetry(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, `# Codex → tollgate over OpenTelemetry: add to ~/.codex/config.toml
# (from Codex's documentation; not yet run against tollgate here)
[otel.exporter."otlp-http"]
endpoint = %q
protocol = "binary"

[otel.exporter."otlp-http".headers]
"authorization" = %q
`, url+"/otlp/v1/logs", "Bearer "+token)
	return nil
}
