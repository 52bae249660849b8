package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"tollgate/app/home"
	"tollgate/storage/sqlite"
)

// Breaks is `tollgate breaks [--days N] [--session ID] [--format json|text]`:
// the cache-break ledger from the home's database (ARCHITECTURE.md, "The
// cache-break ledger"), whether or not a tollgate is running.
func Breaks(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("breaks", stdio, false)
	days := fset.Int("days", 30, "sum the last `N` days (from the start of today, local time)")
	session := fset.String("session", "", "list every break of session `ID` instead")
	format := fset.String("format", "text", "`FORMAT` of the output: text or json (the API's shapes)")
	limit := fset.Int("limit", 10, "name at most `N` sessions")
	fset.Usage = func() {
		fmt.Fprint(stdio.Stderr, `usage: tollgate breaks [--home DIR] [--days N] [--session ID] [--format json|text]

Where the prefix cache went: every request that read less from the cache
than the previous request of its thread and model had sent, with its cause
(rewrite, idle, family, prefix), what started it and what re-billing the
lost prefix cost. Without --session, the breaks of the last N days by cause
and the costliest sessions.

`)
		fset.PrintDefaults()
	}
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usagef("tollgate breaks: unexpected argument %q", fset.Arg(0))
	}
	if *days < 1 || *days > 3660 {
		return usagef("tollgate breaks: --days %d: want 1 to 3660", *days)
	}
	if *limit < 1 || *limit > 100 {
		return usagef("tollgate breaks: --limit %d: want 1 to 100", *limit)
	}
	if *format != "text" && *format != "json" {
		return usagef("tollgate breaks: --format %q: want text or json", *format)
	}
	dir, err := resolveHome(common)
	if err != nil {
		return err
	}
	db, err := sqlite.Open(ctx, home.DBPath(dir))
	if err != nil {
		return err
	}
	defer db.Close()
	if *session != "" {
		list, err := db.SessionBreaks(ctx, *session)
		if err != nil {
			return fmt.Errorf("tollgate breaks: session %q: %w", *session, err)
		}
		if *format == "json" {
			return writeJSONTo(stdio.Stdout, list)
		}
		if len(list.Breaks) == 0 {
			fmt.Fprintf(stdio.Stdout, "session %s: no cache breaks\n", *session)
			return nil
		}
		var rebilled int64
		var premium float64
		tw := tabwriter.NewWriter(stdio.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "seq\twhen\tthread\tcause\tstarted by\tgap\tre-billed\tpremium\t")
		for _, b := range list.Breaks {
			thread := b.Thread
			if thread == "" {
				thread = "main"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", b.Seq, b.At.Local().Format("2006-01-02 15:04:05"), thread, b.Cause,
				or(b.StartedBy, "—"), gap(b.GapSeconds), b.RebilledTokens, usd(b.PremiumUSD))
			rebilled += b.RebilledTokens
			premium += b.PremiumUSD
		}
		tw.Flush()
		fmt.Fprintf(stdio.Stdout, "\n%d breaks re-billed %d tokens: %s beyond cache hits\n", len(list.Breaks), rebilled, usd(premium))
		return nil
	}
	now := time.Now()
	since := time.Date(now.Year(), now.Month(), now.Day()-(*days-1), 0, 0, 0, 0, time.Local)
	sum, err := db.BreakSummary(ctx, since, *limit)
	if err != nil {
		return fmt.Errorf("tollgate breaks: %w", err)
	}
	sum.Days = *days
	if *format == "json" {
		return writeJSONTo(stdio.Stdout, sum)
	}
	fmt.Fprintf(stdio.Stdout, "Lost to cache breaks since %s: %s (%d breaks, %d tokens re-billed)\n",
		since.Format("2006-01-02"), usd(sum.PremiumUSD), sum.Breaks, sum.RebilledTokens)
	if sum.Breaks == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(stdio.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\ncause\tbreaks\tre-billed\tpremium\t")
	for _, c := range sum.ByCause {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", c.Cause, c.Breaks, c.RebilledTokens, usd(c.PremiumUSD))
	}
	tw.Flush()
	tw = tabwriter.NewWriter(stdio.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\ncostliest sessions\tbreaks\tpremium\tmostly\t")
	for _, s := range sum.Sessions {
		name := s.Session
		if s.Title != "" {
			name += " (" + s.Title + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", name, s.Breaks, usd(s.PremiumUSD), s.TopCause)
	}
	return tw.Flush()
}

func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// gap writes seconds as the dashboard does: 5 s, 19 min 13 s, 4 h 11 min.
func gap(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}
