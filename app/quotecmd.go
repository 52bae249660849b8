package app

import (
	"fmt"
	"strings"

	"tollgate/pricing"
)

// RunQuoteCommand is `tollgate quote`: it finds the home's configuration so a
// body naming a profile is priced with that profile (config, else built-in),
// then hands over to RunQuote.
func RunQuoteCommand(args []string, stdio IO) int {
	home, rest := extractHome(args)
	var settings *Settings
	if dir, err := ResolveHome(home); err == nil {
		if cfg, err := LoadConfig(dir, Flags{}); err == nil {
			settings = NewSettings(cfg)
		} else {
			fmt.Fprintln(stdio.Stderr, "tollgate:", err)
			return 2
		}
	}
	resolve := func(name string) (pricing.CacheModel, bool) {
		if settings != nil {
			m, by, err := settings.ResolveModel(name, "", name)
			if err == nil && (by == PricedByProfile || by == PricedByBuiltin) {
				return m, true
			}
		}
		return pricing.Builtin("", name)
	}
	return RunQuote(rest, stdio.Stdin, stdio.Stdout, stdio.Stderr, resolve)
}

// extractHome takes --home DIR / --home=DIR out of args.
func extractHome(args []string) (string, []string) {
	var home string
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--home" || a == "-home":
			if i+1 < len(args) {
				home = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--home=") || strings.HasPrefix(a, "-home="):
			home = a[strings.Index(a, "=")+1:]
		default:
			rest = append(rest, a)
		}
	}
	return home, rest
}
