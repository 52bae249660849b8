package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"tollgate/app"
	"tollgate/app/home"
	"tollgate/guard/client"
)

// Serve is `tollgate serve`: the API and the browser UI, no window, until
// ctx ends (Ctrl-C, SIGTERM) or the listener stops.
func Serve(ctx context.Context, args []string, stdio IO, version string, assets fs.FS) error {
	fset, common := newFlags("serve", stdio, true)
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, "usage: tollgate serve [--home DIR] [--listen ADDR] [--insecure-listen] [--mode MODE]\n\nRuns the API and the browser UI without a window and prints a login URL.")
		fset.PrintDefaults()
	}
	dir, err := parseHome(fset, common, args)
	if err != nil {
		return err
	}
	svc, err := app.Start(ctx, app.StartOptions{Home: dir, Flags: common.Flags(fset), Version: version, Assets: assets, Follow: true})
	if err != nil {
		var running *home.AlreadyRunningError
		if errors.As(err, &running) {
			return fmt.Errorf("%w\nOpen it in a browser with the URL `tollgate login --home %s` prints.", err, dir)
		}
		return err
	}
	fmt.Fprintf(stdio.Stdout, "tollgate %s serving %s (home %s)\n", version, svc.URL, dir)
	fmt.Fprintf(stdio.Stdout, "Open the dashboard (link works once, for 5 minutes):\n  %s\n", svc.Server.LoginURL())
	fmt.Fprintf(stdio.Stdout, "Harnesses find the API and token in %s\n", home.APIFilePath(dir))

	var served error
	select {
	case <-ctx.Done():
		fmt.Fprintf(stdio.Stderr, "tollgate: %v, shutting down\n", context.Cause(ctx))
	case err := <-svc.Done():
		served = fmt.Errorf("listener stopped: %w", err)
	}
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := svc.Close(closeCtx); err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: closing:", err)
	}
	return served
}

// Login is `tollgate login`: print a fresh single-use login URL.
func Login(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("login", stdio, false)
	if err := parse(fset, args); err != nil {
		return err
	}
	c, err := ownerClient(common)
	if err != nil {
		return err
	}
	u, err := c.LoginURL(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdio.Stdout, u)
	return nil
}

// Token is `tollgate token [--rotate]`.
func Token(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("token", stdio, false)
	rotate := fset.Bool("rotate", false, "replace the token and the owner token; clients must re-read api.json")
	dir, err := parseHome(fset, common, args)
	if err != nil {
		return err
	}
	if !*rotate {
		tok, err := home.LoadOrCreateToken(dir)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdio.Stdout, tok)
		return nil
	}
	// A running tollgate must learn the new token, so it rotates it itself.
	if c, err := ownerClient(common); err == nil {
		tok, err := c.RotateToken(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdio.Stdout, tok)
		fmt.Fprintln(stdio.Stderr, "token rotated; the running tollgate uses it now and api.json names it")
		return nil
	}
	if _, err := home.RotateOwnerToken(dir); err != nil {
		return err
	}
	tok, err := home.RotateToken(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdio.Stdout, tok)
	return nil
}

// ownerClient is a client of the running tollgate with the owner token
// (<home>/owner.token): login URLs and token rotation need the owner.
func ownerClient(common *CommonFlags) (*client.Client, error) {
	dir, err := resolveHome(common)
	if err != nil {
		return nil, err
	}
	info, err := home.LiveInstance(dir)
	if err != nil {
		return nil, err
	}
	owner, err := home.ReadOwnerToken(dir)
	if err != nil {
		return nil, err
	}
	return client.New(client.Endpoint{URL: info.URL, Token: owner}, nil), nil
}

// RaiseLive asks the running tollgate to bring its window to the front.
func RaiseLive(ctx context.Context, info home.APIInfo) error {
	return client.New(client.Endpoint{URL: info.URL, Token: info.Token}, nil).RaiseWindow(ctx)
}
