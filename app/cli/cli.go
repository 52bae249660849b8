// Package cli holds tollgate's commands, one file per `tollgate VERB`: its
// flags, its output and the error that becomes its exit status (main maps
// errors to exit statuses in one place). The work itself is done by the
// rooms the commands call (ARCHITECTURE.md, "Rooms").
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"tollgate/app/config"
	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/app/importer"
)

// ExitError is an error with the exit status it means. A nil Err has been
// reported already (the flag package printed the usage, or the command
// printed its own report): main then prints nothing more.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit statuses: 1 the command failed, 2 it was used wrongly.
var (
	errUsage  = &ExitError{Code: 2} // the flag package printed what is wrong
	errFailed = &ExitError{Code: 1} // the command printed why
)

// usagef is a wrong use of a command: exit status 2.
func usagef(format string, a ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, a...)}
}

// harnessError is a harness's command's error (app/harness) as the
// commands here return theirs: a harness.UsageError is exit status 2.
func harnessError(err error) error {
	var ue *harness.UsageError
	switch {
	case !errors.As(err, &ue):
		return err
	case ue.Err == nil:
		return errUsage
	}
	return &ExitError{Code: 2, Err: ue.Err}
}

// newFlags is a command's flag set, writing its errors and usage to stderr,
// with the common flags registered (--listen and --mode too when withListen).
func newFlags(name string, stdio IO, withListen bool) (*flag.FlagSet, *CommonFlags) {
	fset := flag.NewFlagSet(name, flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	common := &CommonFlags{}
	common.Register(fset, withListen)
	return fset, common
}

// parse parses a command's flags: -h is flag.ErrHelp (exit 0), a bad flag
// errUsage (the flag package has printed it).
func parse(fset *flag.FlagSet, args []string) error {
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// resolveHome is the home of a command's --home flag.
func resolveHome(common *CommonFlags) (string, error) { return home.ResolveHome(common.Home) }

// harnessFlag is --harness: the registered harness that wrote what ("the
// logs", "FILE"); without it the harness is detected, and a file named as
// a harness's database is that harness's (perFile).
func harnessFlag(fset *flag.FlagSet, what string, perFile bool) *string {
	def := "default: detect"
	if perFile {
		def += " per file"
		for _, f := range importer.Formats() {
			if f.Database != nil {
				def += "; " + f.Database.File + " is " + f.Label + "'s"
			}
		}
	}
	return fset.String("harness", "", "the `HARNESS` that wrote "+what+": "+strings.Join(importer.Harnesses(), ", ")+" ("+def+")")
}

// parseHome parses a command's flags (parse) and resolves the home its
// --home names (resolveHome).
func parseHome(fset *flag.FlagSet, common *CommonFlags, args []string) (string, error) {
	if err := parse(fset, args); err != nil {
		return "", err
	}
	return resolveHome(common)
}

// loadSettings reads a home's config.yaml for a command that prices without
// a running tollgate.
func loadSettings(dir string) (*config.Settings, error) {
	cfg, err := config.LoadConfig(dir, config.Flags{})
	if err != nil {
		return nil, err
	}
	return config.NewSettings(cfg), nil
}

// CommonFlags are the flags every command that starts or finds a tollgate takes.
type CommonFlags struct {
	Home           string
	Listen         string
	InsecureListen bool
	Mode           string
	MetricsListen  string
}

// Register adds --home, --listen, --insecure-listen and --mode to fs.
func (c *CommonFlags) Register(fs *flag.FlagSet, withListen bool) {
	harness.HomeFlag(fs, &c.Home)
	if withListen {
		fs.StringVar(&c.Listen, "listen", "", "API `ADDR`ess (default from config, 127.0.0.1:47631; port 0 = any free port)")
		fs.BoolVar(&c.InsecureListen, "insecure-listen", false, "allow a non-loopback --listen address")
		fs.StringVar(&c.Mode, "mode", "", "global `MODE` for this run: ask, auto or off (default from config)")
		fs.StringVar(&c.MetricsListen, "metrics-listen", "", "also serve the Prometheus page without a token on this loopback `ADDR`ess (e.g. 127.0.0.1:9464)")
	}
}

// Flags turns the parsed values into config overrides (only those given).
func (c *CommonFlags) Flags(fs *flag.FlagSet) config.Flags {
	var f config.Flags
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "listen":
			f.Listen = c.Listen
		case "insecure-listen":
			v := c.InsecureListen
			f.InsecureListen = &v
		case "mode":
			f.Mode = strings.ToLower(c.Mode)
		case "metrics-listen":
			f.MetricsListen = c.MetricsListen
		}
	})
	return f
}

// IO bundles a command's streams so tests can capture them. It is the
// harnesses' commands' type (they run without importing this package).
type IO = harness.IO

// Exit reports err on stderr and returns the exit status it means: 0 for
// nil or -h, an ExitError's code, else 1. main maps every command's error
// through it, so there is one place that decides exit statuses.
func Exit(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code := 1
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	}
	// A command's own errors name it ("tollgate import: …"); others get
	// the program's name.
	if msg := err.Error(); strings.HasPrefix(msg, "tollgate") {
		fmt.Fprintln(stderr, msg)
	} else {
		fmt.Fprintln(stderr, "tollgate:", msg)
	}
	return code
}
