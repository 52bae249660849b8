package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// CommonFlags are the flags every command that starts or finds a tollgate takes.
type CommonFlags struct {
	Home           string
	Listen         string
	InsecureListen bool
	Mode           string
}

// Register adds --home, --listen, --insecure-listen and --mode to fs.
func (c *CommonFlags) Register(fs *flag.FlagSet, withListen bool) {
	fs.StringVar(&c.Home, "home", "", "tollgate home `DIR` (default $TOLLGATE_HOME, else ~/.config/tollgate)")
	if withListen {
		fs.StringVar(&c.Listen, "listen", "", "API `ADDR`ess (default from config, 127.0.0.1:47631; port 0 = any free port)")
		fs.BoolVar(&c.InsecureListen, "insecure-listen", false, "allow a non-loopback --listen address")
		fs.StringVar(&c.Mode, "mode", "", "global `MODE` for this run: ask, auto or off (default from config)")
	}
}

// Flags turns the parsed values into config overrides (only those given).
func (c *CommonFlags) Flags(fs *flag.FlagSet) Flags {
	var f Flags
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "listen":
			f.Listen = c.Listen
		case "insecure-listen":
			v := c.InsecureListen
			f.InsecureListen = &v
		case "mode":
			f.Mode = strings.ToLower(c.Mode)
		}
	})
	return f
}

// IO bundles a command's streams so tests can capture them.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// RunServe is `tollgate serve`: the API and the browser UI, no window.
func RunServe(args []string, stdio IO, version string, assets fs.FS) int {
	fset := flag.NewFlagSet("serve", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common CommonFlags
	common.Register(fset, true)
	fset.Usage = func() {
		fmt.Fprintln(stdio.Stderr, "usage: tollgate serve [--home DIR] [--listen ADDR] [--insecure-listen] [--mode MODE]\n\nRuns the API and the browser UI without a window and prints a login URL.")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return 2
	}
	home, err := ResolveHome(common.Home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	svc, err := Start(context.Background(), StartOptions{Home: home, Flags: common.Flags(fset), Version: version, Assets: assets})
	if err != nil {
		var running *AlreadyRunningError
		if errors.As(err, &running) {
			fmt.Fprintf(stdio.Stderr, "tollgate: %v\nOpen it in a browser with the URL `tollgate login --home %s` prints.\n", err, home)
			return 1
		}
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	fmt.Fprintf(stdio.Stdout, "tollgate %s serving %s (home %s)\n", version, svc.URL, home)
	fmt.Fprintf(stdio.Stdout, "Open the dashboard (link works once, for 5 minutes):\n  %s\n", svc.Server.LoginURL())
	fmt.Fprintf(stdio.Stdout, "Harnesses find the API and token in %s\n", APIFilePath(home))

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	code := 0
	select {
	case sig := <-sigs:
		fmt.Fprintf(stdio.Stderr, "tollgate: %v, shutting down\n", sig)
	case err := <-svc.Done():
		fmt.Fprintln(stdio.Stderr, "tollgate: listener stopped:", err)
		code = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate: closing:", err)
	}
	return code
}

// LiveInstance finds the tollgate running on home, if any, and checks it
// answers with the token api.json names.
func LiveInstance(home string) (APIInfo, error) {
	info, err := ReadAPIInfo(home)
	if errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("tollgate is not running on %s (no api.json): start it with `tollgate` or `tollgate serve`", home)
	}
	if err != nil {
		return info, err
	}
	if !ProcessAlive(info.PID) {
		return info, fmt.Errorf("tollgate is not running on %s (api.json names pid %d, which has exited)", home, info.PID)
	}
	return info, nil
}

// callLive sends an authenticated request to the running tollgate.
func callLive(info APIInfo, method, path string, out any) error {
	req, err := http.NewRequest(method, info.URL+path, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+info.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("reaching tollgate at %s: %w", info.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
			return fmt.Errorf("%s %s: %s", method, path, e.Error.Message)
		}
		return fmt.Errorf("%s %s: HTTP %d", method, path, res.StatusCode)
	}
	if out != nil && len(body) > 0 {
		return json.Unmarshal(body, out)
	}
	return nil
}

// RunLogin is `tollgate login`: print a fresh single-use login URL.
func RunLogin(args []string, stdio IO) int {
	fset := flag.NewFlagSet("login", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common CommonFlags
	common.Register(fset, false)
	if err := fset.Parse(args); err != nil {
		return 2
	}
	home, err := ResolveHome(common.Home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	info, err := LiveInstance(home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	var out struct {
		URL string `json:"url"`
	}
	if err := callLive(info, http.MethodPost, "/v1/login", &out); err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	fmt.Fprintln(stdio.Stdout, out.URL)
	return 0
}

// RunToken is `tollgate token [--rotate]`.
func RunToken(args []string, stdio IO) int {
	fset := flag.NewFlagSet("token", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common CommonFlags
	common.Register(fset, false)
	rotate := fset.Bool("rotate", false, "replace the token; clients must re-read api.json")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	home, err := ResolveHome(common.Home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	if !*rotate {
		tok, err := LoadOrCreateToken(home)
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate:", err)
			return 1
		}
		fmt.Fprintln(stdio.Stdout, tok)
		return 0
	}
	// A running tollgate must learn the new token, so it rotates it itself.
	if info, err := LiveInstance(home); err == nil {
		var out struct {
			Token string `json:"token"`
		}
		if err := callLive(info, http.MethodPost, "/v1/token/rotate", &out); err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate:", err)
			return 1
		}
		fmt.Fprintln(stdio.Stdout, out.Token)
		fmt.Fprintln(stdio.Stderr, "token rotated; the running tollgate uses it now and api.json names it")
		return 0
	}
	tok, err := RotateToken(home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate:", err)
		return 1
	}
	fmt.Fprintln(stdio.Stdout, tok)
	return 0
}

// RaiseLive asks the running tollgate to bring its window to the front.
func RaiseLive(info APIInfo) error {
	return callLive(info, http.MethodPost, "/v1/window/raise", nil)
}
