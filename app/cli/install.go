package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"tollgate/app/home"
	"tollgate/app/install"
	"tollgate/build/desktop"
)

// Install is `tollgate install --user [--autostart] [--uninstall]`.
func Install(ctx context.Context, args []string, stdio IO) error {
	fset := flag.NewFlagSet("install", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	user := fset.Bool("user", false, "install for this user only (no root): ~/.local/bin, ~/.local/share, ~/.config/autostart")
	autostart := fset.Bool("autostart", false, "also start tollgate minimised to the tray at login (XDG autostart); with --uninstall: remove only that")
	uninstall := fset.Bool("uninstall", false, "remove exactly the files `tollgate install --user` wrote")
	force := fset.Bool("force", false, "replace files at the install paths that tollgate did not write")
	homeDir := fset.String("home", "", "tollgate home `DIR` the menu and autostart entries start tollgate with (default: the default home)")
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, `usage: tollgate install --user [--autostart] [--home DIR] [--force]
       tollgate install --user --uninstall [--autostart]

Installs this binary for the current user: ~/.local/bin/tollgate, the
applications-menu entry and icons under $XDG_DATA_HOME (~/.local/share), and
with --autostart an XDG autostart entry ($XDG_CONFIG_HOME/autostart) that
starts tollgate minimised to the tray. The files written are listed in
$XDG_DATA_HOME/tollgate/installed.txt; --uninstall removes exactly those.
System-wide: install the Debian package (make package).`)
		fset.PrintDefaults()
	}
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usagef("tollgate install: unexpected argument %q", fset.Arg(0))
	}
	if !*user {
		return usagef("tollgate install: only --user is supported (a system-wide install is the Debian package: `make package`, then `sudo apt install ./build/bin/tollgate_*.deb`)")
	}
	paths, err := install.UserInstallPaths(os.Getenv)
	if err != nil {
		return fmt.Errorf("tollgate install: %w", err)
	}
	if *uninstall {
		res, err := install.UninstallUser(paths, *autostart)
		for _, p := range res.Removed {
			fmt.Fprintln(stdio.Stdout, "removed", p)
		}
		for _, k := range res.Kept {
			fmt.Fprintln(stdio.Stderr, "kept", k)
		}
		if err != nil {
			return fmt.Errorf("tollgate install: %w", err)
		}
		if len(res.Removed) == 0 && len(res.Kept) == 0 {
			fmt.Fprintf(stdio.Stdout, "nothing to remove: %s lists nothing\n", paths.Manifest)
		}
		if len(res.Kept) > 0 {
			return errFailed // "kept" lines say what and why
		}
		fmt.Fprintln(stdio.Stdout, "The tollgate home (config, database, token) is left in place.")
		return nil
	}

	self, err := home.Executable()
	if err != nil {
		return fmt.Errorf("tollgate install: finding this binary: %w", err)
	}
	homeAbs := ""
	if *homeDir != "" {
		if homeAbs, err = filepath.Abs(*homeDir); err != nil {
			return usagef("tollgate install: --home: %v", err)
		}
	}
	opts := install.InstallOptions{Paths: paths, Source: self, Autostart: *autostart, Home: homeAbs, Force: *force}
	entry, system := install.SystemEntry(self, os.Getenv)
	if !system {
		// The menu entry's `tollgate` execs the window binary: it is
		// installed beside the CLI, so it must be here to copy.
		if opts.WindowSource, err = home.WindowBinary(self); err != nil {
			return fmt.Errorf("tollgate install: %w", err)
		}
	}
	if system {
		opts.SystemWide = true
		if !*autostart {
			fmt.Fprintf(stdio.Stdout, "Nothing to do: %s is installed system-wide (menu entry %s).\nTo start it at login: %s install --user --autostart\n", self, entry, home.ShellQuote(self))
			return nil
		}
	}
	res, err := install.InstallUser(opts)
	if err != nil {
		return fmt.Errorf("tollgate install: %w", err)
	}
	if system {
		fmt.Fprintf(stdio.Stdout, "%s is installed system-wide (menu entry %s); added for this user:\n", self, entry)
	} else {
		fmt.Fprintf(stdio.Stdout, "Installed tollgate for this user (%d files):\n", len(res.Written))
		fmt.Fprintf(stdio.Stdout, "  %s\n  %s (the window)\n  %s\n  %s/*/apps/tollgate.{png,svg} (%d icons)\n", paths.Bin, paths.Window, paths.Entry, paths.IconTheme, len(desktop.IconSizes())+1)
	}
	if *autostart {
		fmt.Fprintf(stdio.Stdout, "  %s (starts `tollgate --hidden` at login: tray only)\n", paths.Autostart)
	}
	fmt.Fprintf(stdio.Stdout, "The files are listed in %s; `tollgate install --user --uninstall` removes exactly those.\n", paths.Manifest)
	bin := paths.Bin
	if system {
		bin = self
	} else if !onPath(filepath.Dir(paths.Bin), os.Getenv("PATH")) {
		fmt.Fprintf(stdio.Stdout, "Note: %s is not on your PATH; the menu and autostart entries use the full path, a shell needs it added.\n", filepath.Dir(paths.Bin))
	}
	fmt.Fprintf(stdio.Stdout, "Check the setup with: %s doctor\n", home.ShellQuote(bin))
	return nil
}

func onPath(dir, path string) bool {
	for _, d := range filepath.SplitList(path) {
		if filepath.Clean(d) == filepath.Clean(dir) {
			return true
		}
	}
	return false
}
