package cli

import (
	"context"
	"fmt"
	"strings"

	"tollgate/app/importer"
	"tollgate/app/imports"
)

// Price is `tollgate price FILE [--fold N] [--format text|json] [--home DIR] [--harness H]`.
func Price(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("price", stdio, false)
	fold := fset.Int("fold", 0, "price only fold `N` (1-based; default: every fold)")
	harness := harnessFlag(fset, "FILE", false)
	format := fset.String("format", "text", "output `FORMAT`: text (the table) or json")
	fset.Usage = func() {
		fmt.Fprint(stdio.Stderr, `usage: tollgate price FILE [--fold N] [--format text|json] [--home DIR] [--harness H]

Rebuilds the session in FILE (a Claude Code transcript with its subagents, a
Codex rollout or a dsh log) up to the moment before each fold, prices the
rewrite with the quote engine and the home's prices, and compares the
predicted cold tokens of the next request with what the log shows was billed.
Claude Code folds are predicted as the PreCompact hook predicts them (the
summary, the files Claude Code restores, the base), with a band.

`)
		fset.PrintDefaults()
	}
	// FILE may come before the flags.
	var files []string
	rest := args
	for len(rest) > 0 {
		if err := parse(fset, rest); err != nil {
			return err
		}
		if fset.NArg() == 0 {
			break
		}
		files = append(files, fset.Arg(0))
		rest = fset.Args()[1:]
	}
	if len(files) != 1 {
		fset.Usage()
		return errUsage
	}
	if *harness != "" && !imports.ValidHarness(*harness) {
		return usagef("tollgate price: --harness %q: want one of %s", *harness, strings.Join(importer.Harnesses(), ", "))
	}
	if *format != "text" && *format != "json" {
		return usagef("tollgate price: --format %q: want text or json", *format)
	}
	if *fold < 0 {
		return usagef("tollgate price: --fold: want a fold number from 1")
	}
	dir, err := resolveHome(common)
	if err != nil {
		return err
	}
	settings, err := loadSettings(dir)
	if err != nil {
		return err
	}
	sl, err := imports.ReadSessionLog(files[0], *harness)
	if err != nil {
		return fmt.Errorf("tollgate price: %w", err)
	}
	if sl.Folds() == 0 && *format == "text" {
		fmt.Fprintf(stdio.Stdout, "%s: %s, %d requests, no fold to price\n", files[0], sl.Session(), sl.Requests())
		return nil
	}
	rows, err := imports.PriceFolds(sl, settings, *fold)
	if err != nil {
		return fmt.Errorf("tollgate price: %w", err)
	}
	if *format == "json" {
		return imports.WritePriceJSON(stdio.Stdout, sl.Session(), rows)
	}
	profile, provider, name := sl.Pricing()
	model, by, _ := settings.ResolveModel(profile, provider, name)
	fmt.Fprintf(stdio.Stdout, "%s\nsession %s · %s %s (priced by %s: %s cache, min prefix %d, TTL %ds) · %d main requests, %d folds\n\n",
		files[0], sl.Session(), provider, name, by, model.Kind, model.MinimumPrefix, model.TTLSeconds, sl.Requests(), sl.Folds())
	imports.WritePriceTable(stdio.Stdout, rows)
	return nil
}
