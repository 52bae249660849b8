package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"tollgate/app/config"
	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/pricing"
)

// maxQuoteBody is the API's limit for surface-carrying bodies.
const maxQuoteBody = 16 << 20

// runQuote implements `tollgate quote [--format json|text] [--order ORDER]
// [--at RFC3339] [FILE|-]`: it reads the body of POST
// /v1/sessions/{session}/rewrites (plus an optional "cacheModel" object of
// pricing keys that override the named profile's), prices it and prints the
// quote as indented JSON, or with --format text the dialog's lines for the
// recommended ordering (or --order's). Without "cacheModel" the
// body's profile is resolved by profile (config, else built-in prices).
// Times default to now; --at fixes the price window.
//
// Exit status: 0 printed, 2 bad usage or bad input (the message names the
// field), 1 output failed.
func runQuote(args []string, stdin io.Reader, stdout, stderr io.Writer, profile func(name string) (pricing.CacheModel, bool)) error {
	fs := flag.NewFlagSet("quote", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "json", "output `format`: json or text (the dialog lines)")
	order := fs.String("order", "", "with --format text, describe this `ordering` instead of the recommended one")
	atFlag := fs.String("at", "", "price at this RFC 3339 `time` (default now; picks peak or off-peak prices)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: tollgate quote [--format json|text] [--order ORDER] [--at TIME] [FILE|-]")
		fmt.Fprintln(stderr, "Prices a rewrite body (as POSTed to /v1/sessions/{session}/rewrites), read from FILE or standard input.")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	fail := func(format string, a ...any) error {
		return usagef("tollgate quote: "+format, a...)
	}
	if *format != "json" && *format != "text" {
		return fail("--format: must be json or text, not %q", *format)
	}
	switch *order {
	case "", pricing.OrderPruneOnly, pricing.OrderPruneThenSummarize, pricing.OrderSummarizeThenPruneTail:
	default:
		return fail("--order: must be %s, %s or %s, not %q", pricing.OrderSummarizeThenPruneTail, pricing.OrderPruneThenSummarize, pricing.OrderPruneOnly, *order)
	}
	at := time.Now()
	if *atFlag != "" {
		t, err := time.Parse(time.RFC3339, *atFlag)
		if err != nil {
			return fail("--at: %q is not an RFC 3339 time", *atFlag)
		}
		at = t
	}

	in, name := stdin, "standard input"
	switch fs.NArg() {
	case 0:
	case 1:
		if p := fs.Arg(0); p != "-" {
			f, err := os.Open(p)
			if err != nil {
				return fail("%v", err)
			}
			defer f.Close()
			in, name = f, p
		}
	default:
		fs.Usage()
		return errUsage
	}
	body, err := io.ReadAll(io.LimitReader(in, maxQuoteBody+1))
	if err != nil {
		return fail("reading %s: %v", name, err)
	}
	if len(body) > maxQuoteBody {
		return fail("%s: the body exceeds 16 MiB", name)
	}

	req, err := api.DecodeRewriteRequest(body)
	if err != nil {
		return fail("%v", err)
	}
	model, err := quoteModel(&req, profile)
	if err != nil {
		return fail("%v", err)
	}
	q, err := pricing.NewQuote(req.ToQuoteRequest(model, at))
	if err != nil {
		var fe *pricing.FieldError
		if errors.As(err, &fe) {
			return fail("%s: %s", bodyField(fe.Field), strings.ReplaceAll(fe.Message, "units[", "surface["))
		}
		return fail("%v", err)
	}

	var out []byte
	if *format == "json" {
		if out, err = json.MarshalIndent(q, "", "  "); err != nil {
			return fmt.Errorf("tollgate quote: %w", err)
		}
		out = append(out, '\n')
	} else {
		o := q.Ordering
		if *order != "" {
			found := false
			for _, alt := range q.Alternatives {
				if alt.Order == *order {
					o, found = alt, true
				}
			}
			if !found {
				return fail("--order: %s does not apply to this plan (it has %s)", *order, orderNames(q.Alternatives))
			}
		}
		out = []byte(strings.Join(DialogLines(o, req.Surface), "\n") + "\n")
	}
	if _, err := stdout.Write(out); err != nil {
		return fmt.Errorf("tollgate quote: %w", err)
	}
	return nil
}

// quoteModel resolves the cache model: the named profile (config, else
// built-in, as the resolver does) with the body's cacheModel keys laid over
// it; a cacheModel alone is enough when it names every key.
func quoteModel(req *api.RewriteRequest, profile func(string) (pricing.CacheModel, bool)) (pricing.CacheModel, error) {
	hasOverride := len(req.CacheModel) > 0 && string(req.CacheModel) != "null"
	var base pricing.CacheModel
	found := false
	if req.Profile != "" && profile != nil {
		base, found = profile(req.Profile)
	}
	switch {
	case !found && req.Profile != "" && !hasOverride:
		return base, fmt.Errorf("profile: unknown profile %q (neither in the config nor among the built-in prices); add a \"cacheModel\" object", req.Profile)
	case !found && !hasOverride:
		return base, errors.New(`profile: is required without a "cacheModel" object`)
	}
	model, err := req.ApplyCacheModel(base)
	if err != nil {
		return model, err
	}
	if err := model.Validate(); err != nil {
		var fe *pricing.FieldError
		switch {
		case errors.As(err, &fe) && !hasOverride:
			return model, fmt.Errorf("profile %q: %s: %s", req.Profile, fe.Field, fe.Message)
		case errors.As(err, &fe) && !found && req.Profile != "":
			// A partial cacheModel over a profile nobody knows: the missing
			// key is a symptom, the unknown profile the cause.
			return model, fmt.Errorf("profile: unknown profile %q (neither in the config nor among the built-in prices), and the \"cacheModel\" object does not name every key: cacheModel.%s: %s", req.Profile, fe.Field, fe.Message)
		case errors.As(err, &fe):
			return model, fmt.Errorf("cacheModel.%s: %s", fe.Field, fe.Message)
		}
		return model, err
	}
	return model, nil
}

// bodyField renames pricing's field paths to the body's: units are the
// surface, the model is the cacheModel.
func bodyField(f string) string {
	switch {
	case strings.HasPrefix(f, "units"):
		return "surface" + strings.TrimPrefix(f, "units")
	case strings.HasPrefix(f, "model."):
		return "cacheModel." + strings.TrimPrefix(f, "model.")
	}
	return f
}

func orderNames(alts []pricing.Ordering) string {
	var names []string
	for _, o := range alts {
		names = append(names, o.Order)
	}
	return strings.Join(names, ", ")
}

// DialogLines are the lines the rewrite dialog shows for one
// ordering, e.g.
//
//	Context: 839k of 1.05M (rewrite at 839k)
//	Summarizes: ~4k checkpoint (estimated) instead of 544k
//	Then prunes 12 old tool results after it: 31k freed
//	Breaks the cache at position 0: 255k re-read in full (95% of the request) · $0.08
//	Pays for itself after ~24 requests
//
// When the cache has already expired, the dialog leads with that and drops
// the cost lines. surface names the kinds of the pruned units.
func DialogLines(o pricing.Ordering, surface []pricing.Unit) []string {
	var lines []string
	if o.CacheExpired {
		lines = append(lines, "Cache already expired — this rewrite costs nothing extra")
	}
	ctx := "Context: " + pricing.FormatTokens(o.ContextTokens)
	if o.ContextWindow > 0 {
		ctx += " of " + pricing.FormatTokens(o.ContextWindow)
	}
	if o.ThresholdTokens > 0 {
		ctx += " (rewrite at " + pricing.FormatTokens(o.ThresholdTokens) + ")"
	}
	lines = append(lines, ctx)

	pruned := prunedNoun(o, surface)
	freed := pricing.FormatTokens(o.Prune.FreedTokens) + " freed"
	summary := ""
	if o.Summary != nil {
		summary = fmt.Sprintf("~%s checkpoint (estimated) instead of %s",
			pricing.FormatTokens(o.Summary.CheckpointTokens), pricing.FormatTokens(o.Summary.SpanTokens))
	}
	switch {
	case o.Summary == nil && o.Prune.Count == 0:
		lines = append(lines, "Changes nothing")
	case o.Summary == nil:
		lines = append(lines, fmt.Sprintf("Prunes %s: %s", pruned, freed))
	case o.Order == pricing.OrderPruneThenSummarize && o.Prune.Count > 0:
		lines = append(lines, fmt.Sprintf("Prunes %s first: %s", pruned, freed), "Then summarizes: "+summary)
	default:
		lines = append(lines, "Summarizes: "+summary)
		if o.Prune.Count > 0 {
			lines = append(lines, fmt.Sprintf("Then prunes %s after it: %s", pruned, freed))
		}
	}
	if o.CacheExpired {
		return lines
	}

	cold := fmt.Sprintf("%s re-read in full (%d%% of the request) · %s",
		pricing.FormatTokens(o.ColdTokens), int(math.Round(o.ColdShare*100)), usd(o.CostUSD.BreakPremium))
	switch {
	case o.ColdTokens == 0:
		lines = append(lines, "Keeps the cache: nothing is re-read · "+usd(o.CostUSD.BreakPremium))
	case o.BreakAt.Position < 0:
		lines = append(lines, "Breaks the cache inside the envelope: "+cold)
	default:
		lines = append(lines, fmt.Sprintf("Breaks the cache at position %d: %s", o.BreakAt.Position, cold))
	}
	switch be := o.BreakEvenRequests; {
	case be == nil:
		lines = append(lines, "Never pays for itself: the context does not shrink")
	case *be == 0:
		lines = append(lines, "Pays for itself at once")
	case *be == 1:
		lines = append(lines, "Pays for itself after ~1 request")
	default:
		lines = append(lines, fmt.Sprintf("Pays for itself after ~%d requests", *be))
	}
	return lines
}

// prunedNoun says what an ordering prunes: "12 old tool results" when every
// pruned unit is a tool result, else "12 old units".
func prunedNoun(o pricing.Ordering, surface []pricing.Unit) string {
	toolResults := true
	for _, id := range o.Apply.Prune {
		for i := range surface {
			if surface[i].ID == id && surface[i].Kind != "tool-result" {
				toolResults = false
			}
		}
	}
	noun := "unit"
	if toolResults {
		noun = "tool result"
	}
	if o.Prune.Count != 1 {
		noun += "s"
	}
	return fmt.Sprintf("%d old %s", o.Prune.Count, noun)
}

// usd writes a dollar amount: cents from a cent on, two significant digits
// below (the premium of a small rewrite is often a fraction of a cent).
func usd(v float64) string {
	if v < 0 {
		return "-" + usd(-v)
	}
	if v == 0 || v >= 0.01 {
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "$" + strconv.FormatFloat(v, 'g', 2, 64)
}

// Quote is `tollgate quote`: it finds the home's configuration so a body
// naming a profile is priced with that profile (config, else built-in),
// then prices the body (runQuote).
func Quote(ctx context.Context, args []string, stdio IO) error {
	dirFlag, rest := extractHome(args)
	var settings *config.Settings
	if dir, err := home.ResolveHome(dirFlag); err == nil {
		if settings, err = loadSettings(dir); err != nil {
			return &ExitError{Code: 2, Err: err}
		}
	}
	resolve := func(name string) (pricing.CacheModel, bool) {
		if settings != nil {
			m, by, err := settings.ResolveModel(name, "", name)
			if err == nil && (by == config.PricedByProfile || by == config.PricedByBuiltin) {
				return m, true
			}
		}
		return pricing.Builtin("", name)
	}
	return runQuote(rest, stdio.Stdin, stdio.Stdout, stdio.Stderr, resolve)
}

// extractHome takes --home DIR / --home=DIR out of args.
func extractHome(args []string) (string, []string) {
	var dir string
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--home" || a == "-home":
			if i+1 < len(args) {
				dir = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--home=") || strings.HasPrefix(a, "-home="):
			dir = a[strings.Index(a, "=")+1:]
		default:
			rest = append(rest, a)
		}
	}
	return dir, rest
}
