//go:build !desktop

package main

import (
	"fmt"
	"os"
	"syscall"

	"tollgate/app/cli"
	"tollgate/app/home"
)

// runWindow replaces this process with the window binary (home.WindowBinary:
// next to this one, or in ../lib/tollgate), passing the arguments, the
// environment and argv[0] through unchanged. exec keeps the PID, so the
// single-instance lock, api.json's pid, the desktop's startup notification
// and a SIGTERM sent to `tollgate` all reach the window as they did when
// one binary held both. It returns only when the window cannot be started.
func runWindow(args []string, stdio cli.IO) int {
	self, err := home.Executable()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "tollgate: finding this binary to start the window: %v\n", err)
		return 1
	}
	window, err := home.WindowBinary(self)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "tollgate: %v\nThe commands work without it; `tollgate serve` runs the browser UI.\n", err)
		return 1
	}
	argv := append([]string{os.Args[0]}, args...)
	err = syscall.Exec(window, argv, os.Environ())
	fmt.Fprintf(stdio.Stderr, "tollgate: starting the window %s: %v\n", window, err)
	return 1
}
