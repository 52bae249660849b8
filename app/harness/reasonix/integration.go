package reasonix

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// DeepSeek-Reasonix's integration: the extension sidecar (`tollgate ext
// reasonix`) that Reasonix starts through tollgate's plugin, which
// `tollgate ext reasonix --install` writes. An installed, enabled,
// verified plugin arms the guard.
func init() {
	harness.Register(harness.Integration{
		Name:    Name,
		Label:   "Reasonix",
		Title:   "DeepSeek-Reasonix",
		Aliases: []string{"deepseek-reasonix"},
		Order:   20,
		About:   "An extension sidecar answers Reasonix's compaction.prepare intercept within its timeout.",
		Setup:   "tollgate ext " + Name + " --install",
		Status:  Status,
		Doctor: &harness.Doctor{
			Needed: true,
			Setup: func(e harness.DoctorEnv) string {
				plugin := filepath.Join(e.Home, "integrations", "reasonix-plugin")
				return e.Command + " ext " + Name + " --install" + e.HomeArg + " && reasonix plugin install " + home.ShellQuote(plugin) + " --yes --replace"
			},
			Check: func(e harness.DoctorEnv, _ api.Integration) harness.Assessment {
				dir, _ := Home(e.Getenv)
				return harness.Assessment{Dir: dir}
			},
		},
		Ext: &harness.Command{Synopsis: "[--install [--dir DIR]]", Run: extVerb},
	})
}

// extVerb is `tollgate ext reasonix`: the sidecar itself, on stdio, or
// with --install the plugin folder that runs it.
func extVerb(ctx context.Context, args []string, env harness.Env) error {
	var homeFlag string
	fset := harness.NewFlags("ext "+Name, env.IO, &homeFlag)
	profile := fset.String("profile", "", "pricing `PROFILE` for Reasonix sessions (default: by provider and model)")
	install := fset.Bool("install", false, "write the Reasonix plugin folder and print the command that installs it")
	dir := fset.String("dir", "", "with --install: the plugin folder to write (default <tollgate home>/integrations/reasonix-plugin)")
	timeout := fset.Duration("timeout", MaxInterceptTimeout, "with --install: how long Reasonix waits for an answer (its runtime.timeoutMillis; at most 60s, Reasonix's ceiling); tollgate's deadline is 3 s less")
	fset.Usage = func() {
		fmt.Fprintln(env.Stderr, `usage: tollgate ext reasonix [--home DIR] [--profile NAME]
       tollgate ext reasonix --install [--dir DIR] [--home DIR]

A sidecar for Reasonix's Extension Protocol v2 (JSON-RPC 2.0 over stdio):
Reasonix starts it through the tollgate plugin; it asks tollgate before
every compaction and records each request's usage.`)
		fset.PrintDefaults()
	}
	if err := harness.Parse(fset, args); err != nil {
		return err
	}
	tollgateHome, _ := home.ResolveHome(homeFlag)
	if *install {
		if *timeout < 5*time.Second || *timeout > MaxInterceptTimeout {
			return harness.Usagef("tollgate: --timeout: want 5s to 60s (Reasonix's ceiling)")
		}
		plugin, err := Install(*dir, tollgateHome, homeFlag, *profile, env.Version, *timeout)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "Wrote the Reasonix plugin to %s\nInstall it with:\n  reasonix plugin install %s --yes --replace\n", plugin, home.ShellQuote(plugin))
		return nil
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := Serve(ctx, env.Stdin, env.Stdout, ServeOptions{Home: tollgateHome, Profile: *profile, Version: env.Version, Log: log}); err != nil {
		return fmt.Errorf("tollgate ext reasonix: %w", err)
	}
	return nil
}
