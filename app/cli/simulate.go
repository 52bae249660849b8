package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"tollgate/app"
	"tollgate/app/config"
	"tollgate/app/home"
	"tollgate/app/sim"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// Simulate is `tollgate simulate`: scripted sessions through the API, both
// rewrite orders compared.
func Simulate(ctx context.Context, args []string, stdio IO, version string) error {
	fset, common := newFlags("simulate", stdio, false)
	windows := fset.String("window", "32k,128k,512k", "context `WINDOWS`, comma-separated")
	steps := fset.Int("steps", 60, "tool steps per session")
	order := fset.String("order", "both", "prune-then-summarize, summarize-then-prune-tail or both")
	mode := fset.String("mode", "auto", "the simulated sessions' mode: auto, ask (answer in the UI) or off")
	profile := fset.String("profile", "deepseek-flash", "profile whose prices and cache model apply")
	if err := parse(fset, args); err != nil {
		return err
	}
	var ws []int64
	for _, part := range strings.Split(*windows, ",") {
		n, err := sim.ParseTokens(part)
		if err != nil {
			return usagef("tollgate simulate: --window: %v", err)
		}
		ws = append(ws, n)
	}
	orders := []string{pricing.OrderPruneThenSummarize, pricing.OrderSummarizeThenPruneTail}
	switch *order {
	case "both":
	case pricing.OrderPruneThenSummarize, pricing.OrderSummarizeThenPruneTail:
		orders = []string{*order}
	default:
		return usagef("tollgate simulate: --order: want prune-then-summarize, summarize-then-prune-tail or both")
	}
	if !config.ValidMode(*mode) {
		return usagef("tollgate simulate: --mode: want ask, auto or off")
	}
	dir, err := resolveHome(common)
	if err != nil {
		return fmt.Errorf("tollgate simulate: %w", err)
	}
	// Through the running tollgate when there is one (the sessions appear
	// in its dashboard live); else a temporary one on the same home. The
	// simulation sets its sessions' mode, so it runs as the owner.
	var ep client.Endpoint
	var settings *config.Settings
	if info, err := home.LiveInstance(dir); err == nil {
		owner, err := home.ReadOwnerToken(dir)
		if err != nil {
			return fmt.Errorf("tollgate simulate: %w", err)
		}
		ep = client.Endpoint{URL: info.URL, Token: owner}
	} else {
		svc, err := app.Start(ctx, app.StartOptions{Home: dir, Flags: config.Flags{Listen: "127.0.0.1:0"}, Version: version})
		if err != nil {
			return fmt.Errorf("tollgate simulate: %w", err)
		}
		// Closed however the command ends, Ctrl-C included (ctx is done
		// then, so the close gets a context of its own).
		defer func() {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			svc.Close(closeCtx)
		}()
		ep = client.Endpoint{URL: svc.URL, Token: svc.OwnerToken()}
		settings = svc.Settings()
	}
	if settings == nil {
		if settings, err = loadSettings(dir); err != nil {
			return fmt.Errorf("tollgate simulate: %w", err)
		}
	}
	model, _, err := settings.ResolveModel(*profile, "", *profile)
	if err != nil {
		return fmt.Errorf("tollgate simulate: %w", err)
	}
	c := client.New(ep, nil)
	if err := c.Register(ctx, client.Engine{Harness: "simulate", Version: version, Profile: *profile}); err != nil {
		return fmt.Errorf("tollgate simulate: registering with tollgate: %w", err)
	}
	defer c.Close()
	stamp := time.Now().UTC().Format("20060102-150405")
	reports, err := sim.Windows(ctx, c, ws, orders, *steps, *mode, *profile, model, stamp)
	if err != nil {
		return fmt.Errorf("tollgate simulate: %w", err)
	}
	printSimReports(stdio.Stdout, reports)
	return nil
}

func printSimReports(out io.Writer, reports []sim.SimReport) {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\torder\tfolds\tsummary calls (uncached)\thit rate\tsession uncached\tsession prompt\t")
	for _, r := range reports {
		calls := make([]string, len(r.SummaryCalls))
		for i, n := range r.SummaryCalls {
			calls[i] = pricing.FormatTokens(n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.1f%%\t%s\t%s\t\n", sim.WindowLabel(r.Window), r.Order, r.Folds,
			strings.Join(calls, " "), 100*r.HitRate, pricing.FormatTokens(r.Uncached), pricing.FormatTokens(r.Prompt))
	}
	tw.Flush()
	// The comparison the simulation exists for.
	byWindow := map[int64]map[string]sim.SimReport{}
	for _, r := range reports {
		if byWindow[r.Window] == nil {
			byWindow[r.Window] = map[string]sim.SimReport{}
		}
		byWindow[r.Window][r.Order] = r
	}
	for _, r := range reports {
		m := byWindow[r.Window]
		pf, okA := m[pricing.OrderPruneThenSummarize]
		sf, okB := m[pricing.OrderSummarizeThenPruneTail]
		if !okA || !okB || r.Order != pricing.OrderSummarizeThenPruneTail || pf.Uncached == 0 {
			continue
		}
		fmt.Fprintf(out, "%s: summarizing first cuts the session's uncached tokens by %.0f%% (%s → %s)\n",
			sim.WindowLabel(r.Window), 100*(1-float64(sf.Uncached)/float64(pf.Uncached)), pricing.FormatTokens(pf.Uncached), pricing.FormatTokens(sf.Uncached))
	}
}
