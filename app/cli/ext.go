package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"tollgate/app/harness/reasonix"
	"tollgate/app/home"
)

// Ext is `tollgate ext HARNESS`: a harness's extension sidecar.
func Ext(ctx context.Context, args []string, stdio IO, version string) error {
	if len(args) == 0 {
		return usagef("usage: tollgate ext reasonix [--install [--dir DIR]]")
	}
	switch args[0] {
	case "reasonix":
		return extReasonix(ctx, args[1:], stdio, version)
	}
	return usagef("tollgate ext: unknown harness %q (want reasonix)", args[0])
}

func extReasonix(ctx context.Context, args []string, stdio IO, version string) error {
	fset, common := newFlags("ext reasonix", stdio, false)
	profile := fset.String("profile", "", "pricing `PROFILE` for Reasonix sessions (default: by provider and model)")
	install := fset.Bool("install", false, "write the Reasonix plugin folder and print the command that installs it")
	dir := fset.String("dir", "", "with --install: the plugin folder to write (default <tollgate home>/integrations/reasonix-plugin)")
	timeout := fset.Duration("timeout", reasonix.MaxInterceptTimeout, "with --install: how long Reasonix waits for an answer (its runtime.timeoutMillis; at most 60s, Reasonix's ceiling); tollgate's deadline is 3 s less")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate ext reasonix [--home DIR] [--profile NAME]
       tollgate ext reasonix --install [--dir DIR] [--home DIR]

A sidecar for Reasonix's Extension Protocol v2 (JSON-RPC 2.0 over stdio):
Reasonix starts it through the tollgate plugin; it asks tollgate before
every compaction and records each request's usage.`)
		fset.PrintDefaults()
	}
	if err := parse(fset, args); err != nil {
		return err
	}
	tollgateHome, _ := resolveHome(common)
	if *install {
		if *timeout < 5*time.Second || *timeout > reasonix.MaxInterceptTimeout {
			return usagef("tollgate: --timeout: want 5s to 60s (Reasonix's ceiling)")
		}
		plugin, err := reasonix.Install(*dir, tollgateHome, common.Home, *profile, version, *timeout)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdio.Stdout, "Wrote the Reasonix plugin to %s\nInstall it with:\n  reasonix plugin install %s --yes --replace\n", plugin, home.ShellQuote(plugin))
		return nil
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := reasonix.Serve(ctx, stdio.Stdin, stdio.Stdout, reasonix.ServeOptions{Home: tollgateHome, Profile: *profile, Version: version, Log: log}); err != nil {
		return fmt.Errorf("tollgate ext reasonix: %w", err)
	}
	return nil
}
