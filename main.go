// Command tollgate is the cost dashboard and guard for LLM coding-agent
// harnesses. `tollgate` opens the desktop window; `tollgate serve` runs the
// same API and UI headless for a browser. See README.md.
//
// Two binaries are built from this package (ARCHITECTURE.md, "Two
// binaries"): `tollgate` without build tags runs every verb and, given no
// verb, execs the window binary (launch.go); `tollgate-window`, built with
// -tags desktop,production,webkit2_41, runs the window itself (window.go,
// the only file that imports the root wails package).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"tollgate/app/cli"
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
  tollgate import [--harness {harnesses}] [--watch] [PATH…]
                                                     import session logs (default: the harnesses' own folders)
  tollgate price FILE [--fold N] [--format text|json] predicted vs billed cold tokens of each fold in a log
  tollgate breaks [--days N] [--session ID] [--format json|text]
                                                     the cache-break ledger: where the prefix cache went, why, and its cost
  tollgate hook {hook} [--install|--uninstall]
                                                     a harness's compaction hook (reads the hook JSON on stdin),
                                                     or its install into the harness's settings
  tollgate ext {ext} [--install]
                                                     a harness's extension sidecar (JSON-RPC on stdio)
  tollgate telemetry {telemetry} [--install|--uninstall]
                                                     point a harness's OpenTelemetry export at tollgate (live usage)
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
  --metrics-listen ADDR  also serve the Prometheus page without a token on this loopback address
`

func main() {
	os.Exit(run(os.Args[1:], cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// run starts the verb args name and maps its error to the exit status: the
// one place that does (cli.Exit).
func run(args []string, stdio cli.IO) int {
	slog.SetDefault(slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if len(args) == 0 || len(args[0]) > 0 && args[0][0] == '-' {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(stdio.Stdout, cli.Usage(usage))
			return 0
		}
		return runWindow(args, stdio)
	}
	cmd, rest := args[0], args[1:]
	verb, ok := verbs[cmd]
	if !ok {
		switch cmd {
		case "version", "--version":
			fmt.Fprintln(stdio.Stdout, "tollgate", version)
			return 0
		case "help", "-h", "--help":
			fmt.Fprint(stdio.Stdout, cli.Usage(usage))
			return 0
		}
		fmt.Fprintf(stdio.Stderr, "tollgate: unknown command %q\n\n%s", cmd, cli.Usage(usage))
		return 2
	}
	// Ctrl-C and SIGTERM end the verb's context: a command closes what it
	// opened (a service it started, a database) and returns.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Exit(verb(ctx, rest, stdio), stdio.Stderr)
}

// verbs are the commands besides the window.
var verbs = map[string]func(ctx context.Context, args []string, stdio cli.IO) error{
	"serve": func(ctx context.Context, args []string, stdio cli.IO) error {
		return cli.Serve(ctx, args, stdio, version, frontend.Dist())
	},
	"login": cli.Login,
	"token": cli.Token,
	"quote": cli.Quote,
	"simulate": func(ctx context.Context, args []string, stdio cli.IO) error {
		return cli.Simulate(ctx, args, stdio, version)
	},
	"import":    cli.Import,
	"price":     cli.Price,
	"breaks":    cli.Breaks,
	"hook":      cli.Hook,
	"telemetry": cli.Telemetry,
	"ext": func(ctx context.Context, args []string, stdio cli.IO) error {
		return cli.Ext(ctx, args, stdio, version)
	},
	"doctor": func(ctx context.Context, args []string, stdio cli.IO) error {
		return cli.Doctor(ctx, args, stdio, version)
	},
	"install": cli.Install,
}
