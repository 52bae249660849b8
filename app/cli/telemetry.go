package cli

import (
	"context"
	"errors"
	"net"

	"tollgate/app/config"
	"tollgate/app/harness"
	"tollgate/app/home"
)

// Telemetry is `tollgate telemetry HARNESS`: the settings that make a
// harness export its per-request usage to tollgate over OTLP
// (ARCHITECTURE.md, "Telemetry"), printed, or written into its settings —
// the Telemetry command its integration registers (app/harness).
func Telemetry(ctx context.Context, args []string, stdio IO) error {
	return runHarness(ctx, telemetryVerb, args, harness.Env{IO: stdio, Telemetry: telemetryTarget})
}

var telemetryVerb = harnessVerb{name: "telemetry", command: func(in harness.Integration) *harness.Command { return in.Telemetry }}

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

// telemetryTarget is where a harness sends its telemetry: the tollgate of
// the home --home names (homeFlag), its URL and the harness token.
func telemetryTarget(homeFlag string) (url, token string, err error) {
	dir, err := home.ResolveHome(homeFlag)
	if err != nil {
		return "", "", err
	}
	if url, err = telemetryURL(dir); err != nil {
		return "", "", err
	}
	token, err = home.LoadOrCreateToken(dir)
	return url, token, err
}
