package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tollgate/app/harness/claudecode"
	"tollgate/app/harness/codex"
	"tollgate/app/harness/opencode"
)

// Hook is `tollgate hook HARNESS`: a harness's hook entry point.
func Hook(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		return usagef("usage: tollgate hook claude-code|codex|opencode [--install|--uninstall] [flags]")
	}
	switch args[0] {
	case "claude-code", "claude":
		return hookClaudeCode(ctx, args[1:], stdio)
	case "codex":
		return hookCodex(ctx, args[1:], stdio)
	case "opencode":
		return hookOpenCode(args[1:], stdio)
	}
	return usagef("tollgate hook: unknown harness %q (want claude-code, codex or opencode)", args[0])
}

// hookClaudeCode is `tollgate hook claude-code`: the PreCompact hook itself
// (it never fails Claude Code: any fault allows the compaction), or with
// --install / --uninstall the edit of Claude Code's settings.
func hookClaudeCode(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("hook claude-code", stdio, false)
	timeout := fset.Duration("timeout", claudecode.DefaultTimeout, "the hook's `timeout` in Claude Code's settings (tollgate's deadline is 5 s less); a bare number is seconds")
	profile := fset.String("profile", "", "pricing `PROFILE` for Claude Code sessions (default: by provider and model)")
	install := fset.Bool("install", false, "merge the PreCompact hook into Claude Code's settings.json (with a backup) and exit")
	uninstall := fset.Bool("uninstall", false, "remove tollgate's PreCompact hook from Claude Code's settings.json and exit")
	httpHook := fset.Bool("http", false, "with --install: install the HTTP hook (POST /v1/hooks/claude-code on the running tollgate) instead of the command")
	settings := fset.String("settings", "", "Claude Code settings `FILE` for --install/--uninstall (default $CLAUDE_CONFIG_DIR/settings.json, else ~/.claude/settings.json)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate hook claude-code [--home DIR] [--timeout 300s] [--profile NAME]
       tollgate hook claude-code --install [--http] [--timeout 300s] [--settings FILE]
       tollgate hook claude-code --uninstall [--settings FILE]

Claude Code's PreCompact hook: reads the hook's JSON on stdin, asks tollgate,
and prints {"decision":"block","reason":"…"} when the compaction is declined.
tollgate not running or malformed input → the compaction is allowed.`)
		fset.PrintDefaults()
	}
	if err := parse(fset, secondsToDuration(args, "timeout")); err != nil {
		return err
	}
	if !*install && !*uninstall {
		dir, _ := resolveHome(common)
		claudecode.RunCommand(ctx, stdio.Stdin, stdio.Stdout, stdio.Stderr, claudecode.Options{Home: dir, Profile: *profile, Timeout: *timeout})
		return nil
	}
	path := *settings
	if path == "" {
		p, err := claudecode.SettingsPath(os.Getenv)
		if err != nil {
			return err
		}
		path = p
	}
	if *uninstall {
		res, err := claudecode.Uninstall(path)
		switch {
		case err != nil:
			return err
		case res.Missing:
			fmt.Fprintf(stdio.Stdout, "%s does not exist: nothing to remove\n", path)
		case res.Removed == 0:
			fmt.Fprintf(stdio.Stdout, "tollgate's PreCompact hook is not in %s: nothing to remove\n", path)
		default:
			fmt.Fprintf(stdio.Stdout, "Removed tollgate's PreCompact hook from %s (previous settings in %s)\n", path, res.Backup)
		}
		return nil
	}
	t := claudecode.InstallTimeout
	fset.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			t = *timeout
		}
	})
	res, err := claudecode.Install(claudecode.InstallOptions{Settings: path, Home: common.Home, Profile: *profile, Timeout: t, HTTP: *httpHook})
	if err != nil {
		return err
	}
	if !res.Changed {
		fmt.Fprintf(stdio.Stdout, "tollgate's PreCompact hook is already installed in %s\n", path)
		return nil
	}
	fmt.Fprintf(stdio.Stdout, "Installed tollgate's PreCompact hook in %s (timeout %ds)\n", path, res.Seconds)
	if res.Backup != "" {
		fmt.Fprintf(stdio.Stdout, "The previous settings are in %s\n", res.Backup)
	}
	if *httpHook {
		fmt.Fprintln(stdio.Stdout, "The HTTP hook sends $TOLLGATE_TOKEN: export it (`tollgate token`) where Claude Code runs.")
	}
	fmt.Fprintln(stdio.Stdout, "Claude Code reads it at the next start; `/hooks` lists it.")
	return nil
}

// hookCodex is `tollgate hook codex`: Codex CLI's PreCompact (and
// PostCompact) hook itself — it never fails Codex: any fault allows the
// compaction — or with --install / --uninstall the edit of Codex's
// hooks.json and config.toml.
func hookCodex(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("hook codex", stdio, false)
	timeout := fset.Duration("timeout", codex.DefaultTimeout, "the hook's `timeout` in Codex's hooks.json (the question gets what is left of it, less 5 s); a bare number is seconds")
	profile := fset.String("profile", "", "pricing `PROFILE` for Codex sessions (default: by provider and model)")
	install := fset.Bool("install", false, "add the PreCompact and PostCompact hooks to Codex's hooks.json, trust them in its config.toml, and exit")
	uninstall := fset.Bool("uninstall", false, "remove tollgate's hooks (and their trust entries) from Codex's files and exit")
	codexHome := fset.String("codex-home", "", "Codex's `DIR` for --install/--uninstall (default $CODEX_HOME, else ~/.codex)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate hook codex [--home DIR] [--timeout 300s] [--profile NAME]
       tollgate hook codex --install [--timeout 300s] [--codex-home DIR]
       tollgate hook codex --uninstall [--codex-home DIR]

Codex CLI's PreCompact hook: reads the hook's JSON on stdin, asks tollgate,
and prints {"continue":false,"stopReason":"…"} when the compaction is
declined — Codex then ends the current turn and proposes the compaction
again on the next one. tollgate not running or malformed input → the
compaction is allowed.`)
		fset.PrintDefaults()
	}
	if err := parse(fset, secondsToDuration(args, "timeout")); err != nil {
		return err
	}
	if !*install && !*uninstall {
		dir, _ := resolveHome(common)
		codex.RunCommand(ctx, stdio.Stdin, stdio.Stdout, stdio.Stderr, codex.Options{Home: dir, Profile: *profile, Timeout: *timeout})
		return nil
	}
	dir := *codexHome
	if dir == "" {
		d, err := codex.Dir(os.Getenv)
		if err != nil {
			return err
		}
		dir = d
	}
	if *uninstall {
		res, err := codex.Uninstall(dir)
		switch {
		case err != nil:
			return err
		case res.Removed == 0:
			fmt.Fprintf(stdio.Stdout, "tollgate's hooks are not in %s: nothing to remove\n", res.Hooks)
		default:
			fmt.Fprintf(stdio.Stdout, "Removed tollgate's Codex hooks from %s and their trust from config.toml\n", res.Hooks)
		}
		return nil
	}
	t := codex.InstallTimeout
	fset.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			t = *timeout
		}
	})
	res, err := codex.Install(codex.InstallOptions{CodexDir: dir, Home: common.Home, Profile: *profile, Timeout: t})
	if err != nil {
		return err
	}
	if !res.Changed {
		fmt.Fprintf(stdio.Stdout, "tollgate's Codex hooks are already installed and trusted in %s\n", res.Hooks)
		return nil
	}
	fmt.Fprintf(stdio.Stdout, "Installed tollgate's PreCompact and PostCompact hooks in %s (timeout %ds) and trusted them in %s\n", res.Hooks, res.Seconds, res.Config)
	fmt.Fprintln(stdio.Stdout, "Codex reads them at its next start. Declining a compaction ends that Codex turn; Codex proposes it again on the next one.")
	return nil
}

// hookOpenCode is `tollgate hook opencode --install|--uninstall`: OpenCode
// runs tollgate's plugin inside itself (there is no command hook to run),
// so the verb only writes the plugin this binary embeds into OpenCode's
// plugins folder, or removes it.
func hookOpenCode(args []string, stdio IO) error {
	fset, common := newFlags("hook opencode", stdio, false)
	install := fset.Bool("install", false, "write tollgate's OpenCode plugin into OpenCode's plugins folder and exit")
	uninstall := fset.Bool("uninstall", false, "remove the plugin --install wrote (only files still as it wrote them) and exit")
	configDir := fset.String("config-dir", "", "OpenCode's config `DIR` (default $XDG_CONFIG_HOME/opencode, else ~/.config/opencode)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate hook opencode --install [--home DIR] [--config-dir DIR]
       tollgate hook opencode --uninstall [--config-dir DIR]

Writes tollgate's OpenCode plugin (embedded in this binary) into
<config-dir>/plugins/tollgate/, and plugins/tollgate.js, which OpenCode
loads at its next start. With --home the plugin finds tollgate there;
without, in $TOLLGATE_HOME or ~/.config/tollgate. When an OpenCode config
already lists the plugin, nothing is written.`)
		fset.PrintDefaults()
	}
	if err := parse(fset, args); err != nil {
		return err
	}
	if *install == *uninstall {
		return usagef("tollgate hook opencode: give --install or --uninstall (OpenCode runs the plugin itself)")
	}
	dir := *configDir
	if dir == "" {
		d, err := opencode.Dir(os.Getenv)
		if err != nil {
			return err
		}
		dir = d
	}
	if *uninstall {
		res, err := opencode.Uninstall(dir)
		switch {
		case err != nil:
			return err
		case res.Removed == 0:
			fmt.Fprintf(stdio.Stdout, "tollgate's OpenCode plugin is not installed in %s: nothing to remove\n", filepath.Dir(res.Shim))
		default:
			fmt.Fprintf(stdio.Stdout, "Removed tollgate's OpenCode plugin from %s (%d files); OpenCode stops loading it at its next start\n", filepath.Dir(res.Shim), res.Removed)
		}
		return nil
	}
	res, err := opencode.Install(opencode.InstallOptions{ConfigDir: dir, Home: common.Home, Getenv: os.Getenv})
	switch {
	case err != nil:
		return err
	case res.ConfiguredIn != "":
		fmt.Fprintf(stdio.Stdout, "OpenCode already loads tollgate's plugin from %s: nothing written (a second copy would run twice)\n", res.ConfiguredIn)
		if opencode.Inspect(dir).Present {
			fmt.Fprintf(stdio.Stdout, "%s is there too, so OpenCode runs the plugin twice: `tollgate hook opencode --uninstall` removes that copy\n", res.Shim)
		}
	case !res.Changed:
		fmt.Fprintf(stdio.Stdout, "tollgate's OpenCode plugin is already installed: %s\n", res.Shim)
	default:
		fmt.Fprintf(stdio.Stdout, "Installed tollgate's OpenCode plugin: %s loads %s\n", res.Shim, res.Folder)
		fmt.Fprintln(stdio.Stdout, "OpenCode loads it at its next start; it registers an engine while tollgate runs.")
	}
	return nil
}

// secondsToDuration lets --NAME take a bare number of seconds (Claude
// Code's settings count hook timeouts in seconds).
func secondsToDuration(args []string, name string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := strings.TrimLeft(out[i], "-")
		if a == name && i+1 < len(out) {
			if _, err := strconv.ParseFloat(out[i+1], 64); err == nil {
				out[i+1] += "s"
			}
			i++
		} else if v, ok := strings.CutPrefix(a, name+"="); ok && strings.HasPrefix(out[i], "-") {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				out[i] += "s"
			}
		}
	}
	return out
}
