package cli

import (
	"context"
	"strconv"
	"strings"

	"tollgate/app/harness"
	"tollgate/app/importer"
)

// Hook is `tollgate hook HARNESS`: a harness's hook entry point, the Hook
// command its integration registers (app/harness).
func Hook(ctx context.Context, args []string, stdio IO) error {
	return runHarness(ctx, hookVerb, args, harness.Env{IO: stdio})
}

// A harnessVerb is a verb whose work each harness's integration does
// (`tollgate hook|ext|telemetry HARNESS`): its usage and the list of the
// harnesses it takes are built from the registry.
type harnessVerb struct {
	name    string
	command func(harness.Integration) *harness.Command
	// flags follows the harness names in the usage line; "" gives each
	// harness its command's own Synopsis.
	flags string
}

var hookVerb = harnessVerb{name: "hook", command: func(in harness.Integration) *harness.Command { return in.Hook }, flags: "[--install|--uninstall] [flags]"}

// runHarness runs `tollgate VERB HARNESS ARGS…`: the integration named
// (or aliased) HARNESS runs it. A command's wrong use exits 2, like every
// command's.
func runHarness(ctx context.Context, v harnessVerb, args []string, env harness.Env) error {
	var names, synopses []string
	for _, in := range harness.Registered() {
		if c := v.command(in); c != nil {
			names = append(names, in.Name)
			synopses = append(synopses, strings.TrimSpace(in.Name+" "+c.Synopsis))
		}
	}
	if len(args) == 0 {
		if v.flags != "" {
			return usagef("usage: tollgate %s %s %s", v.name, strings.Join(names, "|"), v.flags)
		}
		return usagef("usage: tollgate %s %s", v.name, strings.Join(synopses, " | "))
	}
	var cmd *harness.Command
	if in, ok := harness.Lookup(args[0]); ok {
		cmd = v.command(in)
	}
	if cmd == nil {
		return usagef("tollgate %s: unknown harness %q (want %s)", v.name, args[0], orList(names))
	}
	rest := args[1:]
	for _, name := range cmd.Seconds {
		rest = secondsToDuration(rest, name)
	}
	return harnessError(cmd.Run(ctx, rest, env))
}

// orList is "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// secondsToDuration lets --NAME take a bare number of seconds (Claude
// Code's settings count hook timeouts in seconds).
func secondsToDuration(args []string, name string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := strings.TrimLeft(out[i], "-")
		if a == name && i+1 < len(out) {
			if _, err := strconv.ParseFloat(out[i+1], 64); err == nil {
				out[i+1] += "s"
			}
			i++
		} else if v, ok := strings.CutPrefix(a, name+"="); ok && strings.HasPrefix(out[i], "-") {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				out[i] += "s"
			}
		}
	}
	return out
}

// Usage fills the harness names into the top-level usage text: {harnesses}
// (the log formats, for --harness), {hook}, {ext} and {telemetry} (the
// integrations with that verb), each joined by "|", from the registries.
func Usage(text string) string {
	names := func(command func(harness.Integration) *harness.Command) string {
		var out []string
		for _, in := range harness.Registered() {
			if command(in) != nil {
				out = append(out, in.Name)
			}
		}
		return strings.Join(out, "|")
	}
	return strings.NewReplacer(
		"{harnesses}", strings.Join(importer.Harnesses(), "|"),
		"{hook}", names(func(in harness.Integration) *harness.Command { return in.Hook }),
		"{ext}", names(func(in harness.Integration) *harness.Command { return in.Ext }),
		"{telemetry}", names(func(in harness.Integration) *harness.Command { return in.Telemetry }),
	).Replace(text)
}
