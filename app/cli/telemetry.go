package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"tollgate/app/config"
	"tollgate/app/harness/claudecode"
	"tollgate/app/home"
)

// Telemetry is `tollgate telemetry claude-code [--install|--uninstall]`
// (and `tollgate telemetry codex|gemini`, printed only):
// the settings that make a harness export its per-request usage to
// tollgate over OTLP (ARCHITECTURE.md, "Telemetry"), printed, or written
// into its settings.
func Telemetry(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		return usagef("usage: tollgate telemetry claude-code [--install|--uninstall] [--protocol http/json|http/protobuf] | codex | gemini")
	}
	switch args[0] {
	case "claude-code", "claude":
		return telemetryClaudeCode(args[1:], stdio)
	case "codex", "gemini":
		return telemetryPrint(args[0], args[1:], stdio)
	}
	return usagef("tollgate telemetry: unknown harness %q (want claude-code, codex or gemini)", args[0])
}

// telemetryPrint prints the settings for Codex (its config.toml [otel]
// block) and Gemini CLI (its GEMINI_TELEMETRY_* variables), from their
// documentation: unlike Claude Code's, they were not run against tollgate
// here, and tollgate does not rewrite their files.
func telemetryPrint(harness string, args []string, stdio IO) error {
	fset, common := newFlags("telemetry "+harness, stdio, false)
	if err := parse(fset, args); err != nil {
		return err
	}
	url, token, err := telemetryTarget(common)
	if err != nil {
		return err
	}
	switch harness {
	case "codex":
		fmt.Fprintf(stdio.Stdout, `# Codex → tollgate over OpenTelemetry: add to ~/.codex/config.toml
# (from Codex's documentation; not yet run against tollgate here)
[otel.exporter."otlp-http"]
endpoint = %q
protocol = "binary"

[otel.exporter."otlp-http".headers]
"authorization" = %q
`, url+"/otlp/v1/logs", "Bearer "+token)
	case "gemini":
		env := map[string]string{
			"GEMINI_TELEMETRY_ENABLED":       "true",
			"GEMINI_TELEMETRY_TARGET":        "local",
			"GEMINI_TELEMETRY_OTLP_ENDPOINT": url + "/otlp",
			"GEMINI_TELEMETRY_OTLP_PROTOCOL": "http",
			"OTEL_EXPORTER_OTLP_HEADERS":     "Authorization=Bearer " + token,
		}
		fmt.Fprintln(stdio.Stdout, "# Gemini CLI → tollgate over OpenTelemetry (from Gemini CLI's documentation; not yet run against tollgate here)")
		for _, k := range claudecode.EnvKeys(env) {
			fmt.Fprintf(stdio.Stdout, "export %s=%s\n", k, home.ShellQuote(env[k]))
		}
	}
	return nil
}

func telemetryClaudeCode(args []string, stdio IO) error {
	fset, common := newFlags("telemetry claude-code", stdio, false)
	install := fset.Bool("install", false, "write the variables into Claude Code's settings.json \"env\" (with a backup) and exit")
	uninstall := fset.Bool("uninstall", false, "remove the variables tollgate wrote from Claude Code's settings.json")
	protocol := fset.String("protocol", "http/json", "OTLP `PROTOCOL` Claude Code sends: http/json or http/protobuf")
	settings := fset.String("settings", "", "Claude Code settings `FILE` (default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate telemetry claude-code [--home DIR] [--protocol http/json|http/protobuf]
       tollgate telemetry claude-code --install [--settings FILE]
       tollgate telemetry claude-code --uninstall [--settings FILE]

Points Claude Code's OpenTelemetry export at this tollgate, so each API
request it makes is recorded as it happens (session claude-code:<session id>),
and counted once when its transcript is imported later. Without --install it
prints the variables; run it again after `+"`tollgate token --rotate`"+`.`)
		fset.PrintDefaults()
	}
	if err := parse(fset, args); err != nil {
		return err
	}
	if *protocol != "http/json" && *protocol != "http/protobuf" {
		return usagef("--protocol: want http/json or http/protobuf, got %q", *protocol)
	}
	path := *settings
	if path == "" && (*install || *uninstall) {
		p, err := claudecode.SettingsPath(os.Getenv)
		if err != nil {
			return err
		}
		path = p
	}
	if *uninstall {
		n, backup, err := claudecode.UninstallTelemetry(path)
		switch {
		case err != nil:
			return err
		case n == 0:
			fmt.Fprintf(stdio.Stdout, "tollgate's telemetry settings are not in %s: nothing to remove\n", path)
		default:
			fmt.Fprintf(stdio.Stdout, "Removed %d telemetry variables from %s (previous settings in %s)\n", n, path, backup)
		}
		return nil
	}
	url, token, err := telemetryTarget(common)
	if err != nil {
		return err
	}
	env := claudecode.TelemetryEnv(url, token, *protocol)
	if !*install {
		fmt.Fprintln(stdio.Stdout, "# Claude Code → tollgate over OpenTelemetry; or run with --install to write them into settings.json")
		for _, k := range claudecode.EnvKeys(env) {
			fmt.Fprintf(stdio.Stdout, "export %s=%s\n", k, home.ShellQuote(env[k]))
		}
		return nil
	}
	backup, err := claudecode.InstallTelemetry(path, env)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "Claude Code now exports its usage to %s/otlp (settings: %s", url, path)
	if backup != "" {
		fmt.Fprintf(stdio.Stdout, "; previous settings in %s", backup)
	}
	fmt.Fprintln(stdio.Stdout, "). New Claude Code sessions pick it up; the Integrations page shows when events arrive.")
	return nil
}

// telemetryURL is where the harness reaches tollgate: the running one's
// address, else the configured listen address.
func telemetryURL(dir string) (string, error) {
	if info, err := home.ReadAPIInfo(dir); err == nil && home.ProcessAlive(info.PID) {
		return info.URL, nil
	}
	cfg, err := config.LoadConfig(dir, config.Flags{})
	if err != nil {
		return "", err
	}
	host, port, _ := net.SplitHostPort(cfg.Listen)
	if port == "0" {
		return "", errors.New("listen has port 0 (any free port): start tollgate first, or set a fixed port in config.yaml")
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// telemetryTarget is where a harness sends its telemetry: this home's
// tollgate OTLP endpoint and the harness token.
func telemetryTarget(common *CommonFlags) (url, token string, err error) {
	dir, err := resolveHome(common)
	if err != nil {
		return "", "", err
	}
	if url, err = telemetryURL(dir); err != nil {
		return "", "", err
	}
	token, err = home.LoadOrCreateToken(dir)
	return url, token, err
}
