// Command tollgate is the cost dashboard and guard for LLM coding-agent
// harnesses. `tollgate` opens the desktop window; `tollgate serve` runs the
// same API and UI headless for a browser. See README.md.
//
// This is the only file that imports the root wails package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/wailsapp/wails/v2"

	"tollgate/app"
	"tollgate/frontend"
)

// version is set at build time: -ldflags "-X main.version=…".
var version = "dev"

const usage = `tollgate — the cost dashboard and guard for LLM coding-agent harnesses

usage:
  tollgate [--home DIR] [--listen ADDR] [--hidden]   open the desktop window
  tollgate serve [--home DIR] [--listen ADDR]        API + browser UI, no window; prints a login URL
  tollgate login [--home DIR]                        print a fresh single-use login URL
  tollgate token [--rotate] [--home DIR]             print (or replace) the API token
  tollgate quote [--format json|text] [FILE|-]       price a rewrite request body
  tollgate simulate [--window 32k,128k,512k] [--steps 60] [--order both] [--mode auto]
                                                     a scripted session through the API: both rewrite orders compared
  tollgate import [--harness claude-code|dsh|codex] [--watch] [PATH…]
                                                     import session logs (default: the harnesses' own folders)
  tollgate price FILE [--fold N]                     predicted vs billed cold tokens of each fold in a log
  tollgate hook claude-code [--install|--uninstall]  Claude Code's PreCompact hook (reads the hook JSON on stdin)
  tollgate ext reasonix [--install]                  DeepSeek-Reasonix extension sidecar (JSON-RPC on stdio)
  tollgate doctor [--home DIR] [--json]              check what the guard needs; prints the fix for each problem
  tollgate install --user [--autostart] [--uninstall]
                                                     install this binary, menu entry and icons for this user
  tollgate version                                   print the version
  tollgate help                                      this text

Common flags:
  --home DIR           tollgate home (default $TOLLGATE_HOME, else ~/.config/tollgate);
                       holds config.yaml, tollgate.db, token and api.json
  --listen ADDR        API address (default 127.0.0.1:47631; port 0 picks a free port)
  --insecure-listen    allow a non-loopback --listen address
  --mode MODE          global mode for this run: ask, auto or off
`

func main() {
	os.Exit(run(os.Args[1:], app.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

func run(args []string, stdio app.IO) int {
	slog.SetDefault(slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(stdio.Stdout, usage)
			return 0
		}
		return runDesktop(args, stdio)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return app.RunServe(rest, stdio, version, frontend.Dist())
	case "login":
		return app.RunLogin(rest, stdio)
	case "token":
		return app.RunToken(rest, stdio)
	case "quote":
		return app.RunQuoteCommand(rest, stdio)
	case "simulate":
		return app.RunSimulate(rest, stdio, version)
	case "import":
		return app.RunImport(rest, stdio)
	case "price":
		return app.RunPrice(rest, stdio)
	case "hook":
		return app.RunHook(rest, stdio)
	case "ext":
		return app.RunExt(rest, stdio, version)
	case "doctor":
		return app.RunDoctor(rest, stdio, version)
	case "install":
		return app.RunInstall(rest, stdio)
	case "version", "--version":
		fmt.Fprintln(stdio.Stdout, "tollgate", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Stdout, usage)
		return 0
	}
	fmt.Fprintf(stdio.Stderr, "tollgate: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// runDesktop opens the window. A second start on the same home raises the
// window of the first and exits.
func runDesktop(args []string, stdio app.IO) int {
	fset := flag.NewFlagSet("tollgate", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common app.CommonFlags
	common.Register(fset, true)
	hidden := fset.Bool("hidden", false, "start minimised to the tray; the window opens from the tray or when a question arrives")
	fset.Usage = func() { fmt.Fprint(stdio.Stderr, usage) }
	if err := fset.Parse(args); err != nil {
		return 2
	}
	home, err := app.ResolveHome(common.Home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	svc, err := app.Start(context.Background(), app.StartOptions{
		Home: home, Flags: common.Flags(fset), Version: version, Assets: frontend.Dist(), Desktop: true,
	})
	var running *app.AlreadyRunningError
	switch {
	case errors.As(err, &running):
		if rerr := app.RaiseLive(running.Info); rerr != nil {
			fmt.Fprintf(stdio.Stderr, "tollgate: %v; it has no window to raise (%v)\n", err, rerr)
			return 1
		}
		fmt.Fprintf(stdio.Stderr, "tollgate: %v; brought its window to the front\n", err)
		return 0
	case err != nil:
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		showStartError(err, stdio.Stderr)
		return 1
	}
	win := app.NewWindow(svc, *hidden)
	runErr := wails.Run(win.Options())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: closing:", err)
	}
	if runErr != nil {
		fmt.Fprintf(stdio.Stderr, "tollgate: the window could not start: %v\nRun `tollgate serve` for the browser UI.\n", runErr)
		return 1
	}
	return 0
}

// showStartError puts a start-up failure in a window when a display exists,
// so a user who launched tollgate from a menu sees it too.
func showStartError(err error, stderr io.Writer) {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	if werr := wails.Run(app.ErrorWindowOptions(err)); werr != nil {
		fmt.Fprintln(stderr, "tollgate: could not show the error window:", werr)
	}
}
