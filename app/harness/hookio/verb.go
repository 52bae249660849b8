package hookio

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/app/importer"
	"tollgate/guard/api"
	"tollgate/guard/client"
)

// The events a compaction hook is installed under.
const (
	PreCompact  = "PreCompact"
	PostCompact = "PostCompact"
)

// CheckEvent checks what every compaction hook's input holds: the event
// (PreCompact or PostCompact) and the session id. Errors name the field.
func CheckEvent(event, session string) error {
	switch {
	case event != PreCompact && event != PostCompact:
		return fmt.Errorf("hook_event_name: %q is neither PreCompact nor PostCompact (install the hook under those only)", event)
	case strings.TrimSpace(session) == "":
		return errors.New("session_id: missing")
	case len(session) > 256:
		return errors.New("session_id: longer than 256 bytes")
	}
	return nil
}

// Dial finds the tollgate of home for a command hook, with a logger of
// warnings to stderr. When none is running it says so on stderr and
// reports false: the compaction goes on unguarded (the hook fails open).
func Dial(home string, stderr io.Writer) (*client.Client, *slog.Logger, bool) {
	ep, err := client.Discover(home)
	if err != nil {
		fmt.Fprintln(stderr, "tollgate is not running (", err, ") — allowing the compaction unguarded")
		return nil, nil, false
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return client.New(ep, log), log, true
}

// Verb is the skeleton of a command hook's `tollgate hook NAME`: the hook
// itself, reading the harness's JSON on stdin, or with --install and
// --uninstall the edit of the harness's settings. The flags every command
// hook has (--home, --timeout, --profile, --install, --uninstall) are
// here; a harness adds its own with Flags.
type Verb struct {
	Name string
	// Usage is printed before the flags on -h and on a wrong flag.
	Usage string
	// DefaultTimeout is --timeout's default when the hook runs;
	// InstallTimeout the timeout --install writes unless --timeout is
	// given. TimeoutHelp, ProfileHelp, InstallHelp and UninstallHelp are
	// the flags' help.
	DefaultTimeout, InstallTimeout                       time.Duration
	TimeoutHelp, ProfileHelp, InstallHelp, UninstallHelp string
	// Flags adds the harness's own other flags.
	Flags func(fs *flag.FlagSet)
	// Run is the hook, with the tollgate home resolved. It never fails.
	Run func(ctx context.Context, env harness.Env, home, profile string, timeout time.Duration)
	// SettingsFlag names the flag that says where the harness's settings
	// are (a file or a folder), SettingsHelp its help, and DefaultSettings
	// where they are when it is not given. Install and Uninstall edit
	// them and say what they did on env.Stdout; dir is --home as given.
	SettingsFlag, SettingsHelp string
	DefaultSettings            func(getenv func(string) string) (string, error)
	Install                    func(env harness.Env, settings, dir, profile string, timeout time.Duration) error
	Uninstall                  func(env harness.Env, settings string) error
}

// Command is the registry's `tollgate hook NAME` that runs the Verb verb
// makes, a new one (with its own flag values) for every run; a bare number
// of seconds is taken for --timeout, as the harnesses' settings count it.
func Command(verb func() Verb) *harness.Command {
	return &harness.Command{Seconds: []string{"timeout"}, Run: func(ctx context.Context, args []string, env harness.Env) error {
		return verb().run(ctx, args, env)
	}}
}

func (v Verb) run(ctx context.Context, args []string, env harness.Env) error {
	var dir string
	fset := harness.NewFlags("hook "+v.Name, env.IO, &dir)
	timeout := fset.Duration("timeout", v.DefaultTimeout, v.TimeoutHelp)
	profile := fset.String("profile", "", v.ProfileHelp)
	install := fset.Bool("install", false, v.InstallHelp)
	uninstall := fset.Bool("uninstall", false, v.UninstallHelp)
	settings := fset.String(v.SettingsFlag, "", v.SettingsHelp)
	if v.Flags != nil {
		v.Flags(fset)
	}
	fset.Usage = func() {
		fmt.Fprintln(env.Stderr, v.Usage)
		fset.PrintDefaults()
	}
	if err := harness.Parse(fset, args); err != nil {
		return err
	}
	if !*install && !*uninstall {
		tollgateHome, _ := home.ResolveHome(dir)
		v.Run(ctx, env, tollgateHome, *profile, *timeout)
		return nil
	}
	where := *settings
	if where == "" {
		d, err := v.DefaultSettings(os.Getenv)
		if err != nil {
			return err
		}
		where = d
	}
	if *uninstall {
		return v.Uninstall(env, where)
	}
	t := v.InstallTimeout
	fset.Visit(func(f *flag.Flag) {
		if f.Name == "timeout" {
			t = *timeout
		}
	})
	return v.Install(env, where, dir, *profile, t)
}

// Report is a parsed request as a command hook records it over the API
// (folds are left to `tollgate import`); the hook adds what its harness
// knows of the session (harness, profile, window, threshold).
func Report(q *importer.Request) client.Request {
	return client.Request{RequestID: q.ID, Provider: q.Provider, Model: q.Model, Purpose: q.Purpose, Thread: q.Thread, StartedBy: q.StartedBy,
		At: api.At(q.At), Usage: api.Report(q.Usage)}
}

// ReportLanded handles a PostCompact: the compaction a question allowed
// has landed, so its rewrite's outcome is applied (the next recorded
// request then yields the actual cold tokens beside the prediction). Of
// the session's allowed folds not yet reported, it takes the last one
// better accepts over the one taken so far (nil at the first); none:
// compacted unasked (tollgate was not running), or reported already.
func ReportLanded(ctx context.Context, c *client.Client, session string, better func(f, taken *api.Fold) bool) error {
	var series api.Series
	if err := c.Get(ctx, "/v1/sessions/"+url.PathEscape(session)+"/series", &series); err != nil {
		return err
	}
	var taken *api.Fold
	for i := range series.Folds {
		f := &series.Folds[i]
		if f.Source != "api" || f.Decision != api.Allow || f.Applied != nil {
			continue
		}
		if better(f, taken) {
			taken = f
		}
	}
	if taken == nil {
		return nil
	}
	return c.Outcome(ctx, taken.Rewrite, true, "")
}

// A CompactInput is a compaction hook's input: it names its event and
// its session.
type CompactInput interface{ Event() (name, session string) }

// DecodeCompact decodes a compaction hook's input into in (Decode, naming
// what is expected) and checks its event and session (CheckEvent).
func DecodeCompact(b []byte, what string, in CompactInput) error {
	if err := Decode(b, what, in); err != nil {
		return err
	}
	return CheckEvent(in.Event())
}

// CommandLine is the command a harness's settings run as tollgate's hook,
// as --install writes it: `<exe> hook NAME --timeout SECONDS`, then
// --home (absolute) and --profile when given, each shell-quoted.
func CommandLine(exe, name, dir, profile string, seconds int) string {
	cmd := home.ShellQuote(exe) + " hook " + name + " --timeout " + strconv.Itoa(seconds)
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			cmd += " --home " + home.ShellQuote(abs)
		}
	}
	if profile != "" {
		cmd += " --profile " + home.ShellQuote(profile)
	}
	return cmd
}

// Options tune one decision of a command hook.
type Options struct {
	Home    string        // tollgate home, for the Integrations page's marker ("" = none)
	Profile string        // pricing profile ("" = by provider and model)
	Timeout time.Duration // the hook's timeout in the harness's settings
	Getenv  func(string) string
	Now     func() time.Time
	Log     *slog.Logger
}

// WithDefaults fills the options left unset: the clock, the environment,
// and timeout for a hook given none.
func (o Options) WithDefaults(timeout time.Duration) Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Timeout <= 0 {
		o.Timeout = timeout
	}
	return o
}
