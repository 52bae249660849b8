//go:build desktop

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wailsapp/wails/v2"

	"tollgate/app"
	"tollgate/app/cli"
	"tollgate/app/desktop"
	"tollgate/app/home"
	"tollgate/frontend"
)

// runWindow runs the window in this process: this is the window binary.
func runWindow(args []string, stdio cli.IO) int {
	// Wails handles the window's signals itself (a second SIGTERM
	// handler of ours crashed GTK), so the window gets no signal context.
	return cli.Exit(runDesktop(context.Background(), args, stdio), stdio.Stderr)
}

// runDesktop opens the window. A second start on the same home raises the
// window of the first and exits.
func runDesktop(ctx context.Context, args []string, stdio cli.IO) error {
	fset := flag.NewFlagSet("tollgate", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common cli.CommonFlags
	common.Register(fset, true)
	hidden := fset.Bool("hidden", false, "start minimised to the tray; the window opens from the tray or when a question arrives")
	fset.Usage = func() { fmt.Fprint(stdio.Stderr, usage) }
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &cli.ExitError{Code: 2}
	}
	dir, err := home.ResolveHome(common.Home)
	if err != nil {
		return err
	}
	svc, err := app.Start(ctx, app.StartOptions{
		Home: dir, Flags: common.Flags(fset), Version: version, Assets: frontend.Dist(), Desktop: true, Follow: true,
	})
	var running *home.AlreadyRunningError
	switch {
	case errors.As(err, &running):
		if rerr := cli.RaiseLive(ctx, running.Info); rerr != nil {
			return fmt.Errorf("%v; it has no window to raise (%v)", err, rerr)
		}
		fmt.Fprintf(stdio.Stderr, "tollgate: %v; brought its window to the front\n", err)
		return nil
	case err != nil:
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		showStartError(err, stdio.Stderr)
		return &cli.ExitError{Code: 1}
	}
	win := desktop.NewWindow(svc.Server, svc.SetRaise, *hidden)
	runErr := wails.Run(win.Options())
	closeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := svc.Close(closeCtx); err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: closing:", err)
	}
	if runErr != nil {
		return fmt.Errorf("the window could not start: %v\nRun `tollgate serve` for the browser UI.", runErr)
	}
	return nil
}

// showStartError puts a start-up failure in a window when a display exists,
// so a user who launched tollgate from a menu sees it too.
func showStartError(err error, stderr io.Writer) {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	if werr := wails.Run(desktop.ErrorWindowOptions(err)); werr != nil {
		fmt.Fprintln(stderr, "tollgate: could not show the error window:", werr)
	}
}
