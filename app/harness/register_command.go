package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// A Command is an integration's part of a tollgate verb: `tollgate hook
// NAME`, `tollgate ext NAME` or `tollgate telemetry NAME`. app/cli finds it
// by name, runs it, and turns its error into the exit status (a
// UsageError is 2, like any command's wrong use), so the harness folder
// implements it without importing app/cli.
type Command struct {
	// Synopsis follows the name in the usage line of a verb whose
	// commands take flags of their own (ext, telemetry):
	// "[--install [--dir DIR]]".
	Synopsis string
	// Seconds are the flags that also take a bare number of seconds, as
	// the harness's settings count a hook's timeout: app/cli turns "300"
	// into "300s" before Run sees them.
	Seconds []string
	// Run runs it with the arguments after the harness name.
	Run func(ctx context.Context, args []string, env Env) error
}

// Env is what app/cli hands a Command.
type Env struct {
	IO
	// Version is this binary's version.
	Version string
	// Telemetry is where the tollgate of the home --home names (dir as
	// given: "" is $TOLLGATE_HOME, else the default) takes a harness's
	// telemetry: its base URL (the OTLP routes are below it) and the
	// harness token. Set for `tollgate telemetry` only.
	Telemetry func(dir string) (url, token string, err error)
}

// IO bundles a command's streams so tests can capture them.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// UsageError is a wrong use of a command: app/cli exits 2. A nil Err has
// been reported already (the flag package printed what is wrong).
type UsageError struct {
	Err error
}

func (e *UsageError) Error() string {
	if e.Err == nil {
		return "usage error"
	}
	return e.Err.Error()
}

func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a wrong use of a command, with what is wrong.
func Usagef(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// HomeFlag registers --home, the flag of every command that finds a
// tollgate, into dir.
func HomeFlag(fs *flag.FlagSet, dir *string) {
	fs.StringVar(dir, "home", "", "tollgate home `DIR` (default $TOLLGATE_HOME, else ~/.config/tollgate)")
}

// NewFlags is a command's flag set, named as its usage names it ("hook
// claude-code"): its errors and usage go to stderr, and --home is
// registered into dir.
func NewFlags(name string, stdio IO, dir *string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	HomeFlag(fs, dir)
	return fs
}

// Parse parses a command's flags: -h is flag.ErrHelp (exit 0), a bad flag
// a UsageError the flag package has printed.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{}
	}
	return nil
}
