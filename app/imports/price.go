package imports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"tollgate/app/config"
	"tollgate/app/importer"
	"tollgate/pricing"
	"tollgate/storage"
)

// `tollgate price FILE [--fold N]` checks the quote engine against what a
// provider really billed. For each fold of a session log it rebuilds the
// session up to the moment before the fold from the log's own figures,
// prices the rewrite that was about to happen with pricing.NewQuote, and
// sets the predicted cold tokens of the next request beside the uncached
// tokens the log shows that request was billed.
//
// The surface is rebuilt from the main-conversation requests since the
// previous fold: every request's prompt that grows past the previous one
// adds a unit of the difference (flagged as a cache breakpoint: harnesses
// like Claude Code cache every request's last message), and what came after
// the last request (its output, tool results) up to the fold's preTokens is
// one more unit, not yet sent. The envelope is the cached prefix of the
// first request after the previous fold; before the first fold, the
// smallest non-zero cache read of a request sent within the cache TTL of
// the one before it (a zero read after an idle gap is an expired cache, not
// an envelope). A summary fold summarizes the surface (less the tail dsh
// says it retained) into a checkpoint: first the profile's estimate, then
// the summary's actual size when the log tells it (dsh's checkpointTokens,
// else the summary text's length at 4 characters a token). A prune fold
// prunes, from where dsh says the first pruned unit starts, the tokens it
// says were shadowed.
//
// A fold of a format with a Predictor (Claude Code's: its PreCompact
// hook's prediction, replaying the transcript cut at each boundary with
// the project's earlier transcripts beside it as history) is priced with
// the prediction: the checkpoint is the predicted summary, and what the
// harness re-attaches after it is the plan's restoredTokens; the row
// carries the band and the summary call's predicted and billed cost.

// FoldPrice is one fold priced from its log.
type FoldPrice struct {
	Fold       int // 1-based, in log order
	At         time.Time
	Kind       string // summary | prune
	Trigger    string
	PreTokens  int64
	Envelope   int64
	Units      int
	IdleSecond float64
	// Checkpoint is the checkpoint priced: the estimate, or the actual size
	// (CheckpointActual); CheckpointEstimated says the size came from text.
	Checkpoint          int64
	CheckpointActual    bool
	CheckpointEstimated bool
	Order               string
	PredictedCold       int64
	ActualCold          *int64 // nil: the log shows no request after the fold
	CacheExpired        bool
	BreakPremiumUSD     float64
	Skipped             string // why the fold could not be priced
	// A predicted fold (its format's Predictor) has the band, the parts,
	// and the summary call's cost predicted beside the billed one (nil:
	// the log shows no summary call).
	Band                 *storage.ColdBand
	Parts                []importer.ForecastPart
	SummaryCallUSD       float64
	SummaryCallActualUSD *float64
	// SummaryCall is the summary call's predicted usage. Claude Code's
	// acompact transcripts record a streaming partial of its output (a few
	// tokens), so its billed cost lacks most of the output.
	SummaryCall pricing.Usage
}

// ErrorPercent is (predicted − actual) / actual in percent; ok is false
// without an actual figure.
func (f FoldPrice) ErrorPercent() (float64, bool) {
	if f.ActualCold == nil || *f.ActualCold == 0 {
		return 0, false
	}
	return float64(f.PredictedCold-*f.ActualCold) / float64(*f.ActualCold) * 100, true
}

// SessionLog is a whole session read from its log(s).
type SessionLog struct {
	session  importer.Session
	main     []*importer.Request // main-conversation requests, in order
	calls    []*importer.Request // compaction requests
	folds    []*importer.Fold
	harness  string
	profile  string
	provider string
	model    string
	// path and trace: the main log and its trace, for its format's
	// predictor (nil without one).
	path  string
	trace any
	pred  importer.Predictor
	// foldAfterCall: its format writes a fold when the summary call
	// returns (Format.FoldAfterCall).
	foldAfterCall bool
}

// Session is the log's session id.
func (sl *SessionLog) Session() string { return sl.session.ID }

// Requests counts the main conversation's requests.
func (sl *SessionLog) Requests() int { return len(sl.main) }

// Folds counts the log's folds.
func (sl *SessionLog) Folds() int { return len(sl.folds) }

// Pricing names what the log's requests are priced by: profile, provider
// and model.
func (sl *SessionLog) Pricing() (profile, provider, model string) {
	return sl.profile, sl.provider, sl.model
}

// ReadSessionLog reads a log whole, with its companions (a Claude Code
// transcript's subagents' transcripts: Format.Companions).
func ReadSessionLog(path, harness string) (*SessionLog, error) {
	files := []string{path}
	if harness == "" {
		head := make([]byte, 64<<10)
		f, err := importer.OpenRegular(path)
		if err != nil {
			return nil, err
		}
		n, _ := io.ReadFull(f, head)
		f.Close()
		harness = importer.Detect(path, head[:n])
		if harness == "" {
			return nil, fmt.Errorf("%s: cannot tell which harness wrote it (use --harness: %s)", path, strings.Join(importer.Harnesses(), ", "))
		}
	}
	f, ok := importer.Lookup(harness)
	if !ok {
		return nil, fmt.Errorf("%s: unknown harness %q (want one of %s)", path, harness, strings.Join(importer.Harnesses(), ", "))
	}
	if f.Companions != nil {
		files = append(files, f.Companions(path)...)
	}
	sl := &SessionLog{harness: harness, path: path, pred: f.Predictor, foldAfterCall: f.FoldAfterCall}
	byID := map[string]*importer.Request{}
	for i, file := range files {
		fh, err := importer.OpenRegular(file)
		if err != nil {
			return nil, err
		}
		res, err := importer.Parse(fh, importer.Options{Harness: harness, Path: file, AtEOF: true, Trace: i == 0 && sl.pred != nil})
		fh.Close()
		if err != nil {
			return nil, err
		}
		if i == 0 {
			sl.session = res.Session
			sl.trace = res.Trace
		}
		for _, rec := range res.Records {
			if q := rec.Request; q != nil {
				if old, ok := byID[q.ID]; ok {
					old.Usage = old.Usage.Max(q.Usage)
					if q.Purpose == importer.PurposeCompaction {
						old.Purpose = q.Purpose
					}
					continue
				}
				byID[q.ID] = q
				switch q.Purpose {
				case importer.PurposeConversation:
					sl.main = append(sl.main, q)
				case importer.PurposeCompaction:
					sl.calls = append(sl.calls, q)
				}
			}
			if fd := rec.Fold; fd != nil && i == 0 {
				sl.folds = append(sl.folds, fd)
			}
		}
	}
	// A request later found to be a summary call (Codex) leaves the main line.
	main := sl.main[:0]
	for _, q := range sl.main {
		if q.Purpose == importer.PurposeConversation {
			main = append(main, q)
		} else {
			sl.calls = append(sl.calls, q)
		}
	}
	sl.main = main
	sort.SliceStable(sl.calls, func(i, j int) bool { return sl.calls[i].At.Before(sl.calls[j].At) })
	sl.profile, sl.provider, sl.model = sl.session.Profile, sl.session.Provider, sl.session.Model
	if len(sl.main) > 0 {
		last := sl.main[len(sl.main)-1]
		sl.profile = firstNonEmpty(last.Profile, sl.profile)
		sl.provider = firstNonEmpty(last.Provider, sl.provider)
		sl.model = firstNonEmpty(sl.model, last.Model)
	}
	return sl, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// summaryCall finds the summary call of fold i: the compaction requests
// after the previous fold, up to this one.
func (sl *SessionLog) summaryCall(i int) *pricing.Usage {
	f := sl.folds[i]
	if f.Summary != nil {
		return f.Summary
	}
	var lo time.Time
	if i > 0 {
		lo = sl.folds[i-1].At
	}
	var u *pricing.Usage
	for _, c := range sl.calls {
		if (i == 0 || c.At.After(lo)) && !c.At.After(f.At) {
			s := c.Usage
			if u != nil {
				s = s.Add(*u)
			}
			u = &s
		}
	}
	return u
}

// priceFolds prices every fold of the log (only fold n when n > 0).
func PriceFolds(sl *SessionLog, settings *config.Settings, n int) ([]FoldPrice, error) {
	model, _, err := settings.ResolveModel(sl.profile, sl.provider, sl.model)
	if err != nil {
		return nil, err
	}
	if n > len(sl.folds) {
		return nil, fmt.Errorf("--fold %d: the log has %d folds", n, len(sl.folds))
	}
	// The predictor replays the log, learning from the logs beside it
	// (Claude Code: the project's earlier transcripts) and from each fold
	// before.
	var preds map[*importer.Fold]importer.Forecast
	if sl.trace != nil && sl.pred != nil {
		preds = sl.pred.PredictLog(sl.path, sl.trace)
	}
	var out []FoldPrice
	for i, f := range sl.folds {
		if n > 0 && i+1 != n {
			continue
		}
		var pred *importer.Forecast
		if p, ok := preds[f]; ok {
			pred = &p
		}
		rows, err := sl.priceFold(i, model, pred)
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", i+1, err)
		}
		out = append(out, rows...)
		_ = f
	}
	return out, nil
}

func (sl *SessionLog) priceFold(i int, model pricing.CacheModel, pred *importer.Forecast) ([]FoldPrice, error) {
	f := sl.folds[i]
	base := FoldPrice{Fold: i + 1, At: f.At, Kind: f.Kind, Trigger: f.Trigger, PreTokens: f.PreTokens, ActualCold: f.ActualCold}
	lo := 0
	if i > 0 {
		lo = sl.folds[i-1].Position
	}
	hi := min(f.Position, len(sl.main))
	if hi <= lo {
		base.Skipped = "no request between this fold and the one before"
		return []FoldPrice{base}, nil
	}
	reqs := sl.main[lo:hi]
	last := reqs[len(reqs)-1]

	// The envelope.
	var env int64
	if i > 0 && lo < len(sl.main) {
		env = sl.main[lo].Usage.CacheRead
	} else {
		ttl := time.Duration(model.TTLSeconds) * time.Second
		for j, r := range reqs {
			if r.Usage.CacheRead == 0 || j > 0 && r.At.Sub(reqs[j-1].At) > ttl {
				continue
			}
			if env == 0 || r.Usage.CacheRead < env {
				env = r.Usage.CacheRead
			}
		}
	}
	base.Envelope = env

	// The surface.
	var units []pricing.Unit
	var ends []int64 // tokens after the envelope at each unit's end
	prompts := make([]int64, len(reqs))
	for k, r := range reqs {
		prompts[k] = r.Usage.Prompt()
	}
	covered := pricing.Growth(env, prompts, func(k int, tokens int64) {
		units = append(units, pricing.Unit{ID: "u" + strconv.Itoa(len(units)), Tokens: tokens, Breakpoint: true})
		ends = append(ends, prompts[k]-env)
	})
	pre := f.PreTokens
	if pre == 0 {
		pre = last.Usage.Prompt() + last.Usage.Output
	}
	if pending := pre - covered; pending > 0 || len(units) == 0 {
		units = append(units, pricing.Unit{ID: "u" + strconv.Itoa(len(units)), Tokens: max(pending, 1)})
		covered += max(pending, 1)
		ends = append(ends, covered-env)
	}
	base.Units = len(units)
	at := f.At
	start := f.At
	if sl.foldAfterCall {
		// The boundary is written once the summary call returns; the
		// rewrite was decided when that call started.
		for _, c := range sl.calls {
			if !c.At.After(f.At) && c.At.After(last.At) {
				start = c.At
				break
			}
		}
	}
	base.IdleSecond = max(start.Sub(last.At).Seconds(), 0)

	req := pricing.QuoteRequest{Model: model, EnvelopeTokens: env, Units: units, ContextWindow: sl.session.ContextWindow,
		ThresholdTokens: sl.session.ThresholdTokens, IdleSeconds: base.IdleSecond, At: at}
	if req.ThresholdTokens > covered {
		req.ThresholdTokens = 0 // the fold happened: whatever the log says, the rewrite was wanted
	}
	var variants []FoldPrice
	switch f.Kind {
	case importer.KindPrune:
		req.Plan = prunePlan(f, units, ends)
		variants = append(variants, base)
	default:
		b := len(units) - 1
		if f.RetainedTokens > 0 {
			total := ends[len(ends)-1]
			for b > 0 && ends[b-1] > total-f.RetainedTokens {
				b--
			}
			for b > 0 && ends[b] > total-f.RetainedTokens {
				b--
			}
		}
		var instruction int64
		if call := sl.summaryCall(i); call != nil {
			instruction = max(call.Prompt()-covered, 0)
		}
		req.Plan = pricing.Plan{Summarize: &pricing.SummaryPlan{Start: units[0].ID, End: units[b].ID, InstructionTokens: instruction}}
		est := base
		est.Checkpoint = model.EstimatedSummaryTokens
		var restored int64
		if pred != nil {
			// What the harness re-attaches after the summary, predicted.
			p := pred
			est.Checkpoint = p.Summary
			restored = max(p.Cold-est.Checkpoint, 0)
			est.Band = &storage.ColdBand{Low: p.Low, High: p.High}
			est.Parts = p.Parts
			prices, _ := model.PricesAt(at)
			u := pricing.Usage{CacheRead: p.Call.Read, Output: p.Call.Output}
			if p.Call.TTLSeconds > 5*60 {
				u.CacheWrite1h = p.Call.Write
			} else {
				u.CacheWrite = p.Call.Write
			}
			est.SummaryCallUSD, est.SummaryCall = prices.Cost(u).Total, u
			if call := sl.summaryCall(i); call != nil {
				c := prices.Cost(*call).Total
				est.SummaryCallActualUSD = &c
			}
		}
		req.Plan.Summarize.RestoredTokens = restored
		variants = append(variants, est)
		if f.CheckpointTokens > 0 {
			act := base
			act.Checkpoint, act.CheckpointActual, act.CheckpointEstimated = f.CheckpointTokens, true, f.CheckpointEstimated
			variants = append(variants, act)
		}
	}
	for k := range variants {
		if req.Plan.Summarize != nil {
			req.Plan.Summarize.EstimatedTokens = variants[k].Checkpoint
		}
		q, err := pricing.NewQuote(req)
		if err != nil {
			return nil, err
		}
		variants[k].Order = q.Recommended
		variants[k].PredictedCold = q.ColdTokens
		variants[k].CacheExpired = q.CacheExpired
		variants[k].BreakPremiumUSD = q.CostUSD.BreakPremium
		if q.Summary != nil {
			variants[k].Checkpoint = q.Summary.CheckpointTokens
		}
	}
	return variants, nil
}

// prunePlan prunes the shadowed tokens from the unit where the first pruned
// unit starts (the first unit when the log does not say), unit by unit.
func prunePlan(f *importer.Fold, units []pricing.Unit, ends []int64) pricing.Plan {
	start := 0
	if f.FromTokens != nil {
		for start < len(units)-1 && ends[start] <= *f.FromTokens {
			start++
		}
	}
	left := max(f.ShadowedTokens, 1)
	var plan pricing.Plan
	for k := start; k < len(units) && left > 0; k++ {
		cut := min(units[k].Tokens, left)
		plan.Prune = append(plan.Prune, pricing.Prune{ID: units[k].ID, TokensAfter: units[k].Tokens - cut})
		left -= cut
	}
	return plan
}

// WritePriceTable writes the folds as `tollgate price` prints them.
func WritePriceTable(w io.Writer, rows []FoldPrice) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fold\tkind\ttrigger\tpre\tenvelope\tidle\tcheckpoint\tpredicted cold\tband\tactual cold\terror\t")
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\t\t\t\t\t\t%s\t\n", r.Fold, r.Kind, r.Trigger, pricing.FormatTokens(r.PreTokens), r.Skipped)
			continue
		}
		cp := "—"
		switch {
		case r.Kind == importer.KindPrune:
			cp = "(prune)"
		case r.CheckpointActual && r.CheckpointEstimated:
			cp = fmt.Sprintf("%s actual≈", pricing.FormatTokens(r.Checkpoint))
		case r.CheckpointActual:
			cp = fmt.Sprintf("%s actual", pricing.FormatTokens(r.Checkpoint))
		default:
			cp = fmt.Sprintf("%s est.", pricing.FormatTokens(r.Checkpoint))
		}
		actual, errPct := "—", "—"
		if r.ActualCold != nil {
			actual = strconv.FormatInt(*r.ActualCold, 10)
		}
		if e, ok := r.ErrorPercent(); ok {
			errPct = fmt.Sprintf("%+.1f%%", e)
		}
		idle := fmt.Sprintf("%.0fs", r.IdleSecond)
		if r.CacheExpired {
			idle += " (cold)"
		}
		band := "—"
		if r.Band != nil {
			band = pricing.FormatTokens(r.Band.Low) + "–" + pricing.FormatTokens(r.Band.High)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.Fold, r.Kind, r.Trigger, pricing.FormatTokens(r.PreTokens),
			pricing.FormatTokens(r.Envelope), idle, cp, r.PredictedCold, band, actual, errPct)
	}
	tw.Flush()
}

// PriceJSON is `tollgate price --format json`: one entry per fold, its
// prediction beside what was billed.
type PriceJSON struct {
	Session string          `json:"session"`
	Folds   []FoldPriceJSON `json:"folds"`
}

// FoldPriceJSON is one fold of PriceJSON.
type FoldPriceJSON struct {
	Fold                int               `json:"fold"`
	Trigger             string            `json:"trigger"`
	PreTokens           int64             `json:"preTokens"`
	PredictedColdTokens *int64            `json:"predictedColdTokens"`
	PredictedColdBand   *storage.ColdBand `json:"predictedColdBand"`
	ActualColdTokens    *int64            `json:"actualColdTokens"`
	ErrorPct            *float64          `json:"errorPct"`
	SummaryCall         *struct {
		PredictedUSD *float64 `json:"predictedUSD"`
		ActualUSD    *float64 `json:"actualUSD"`
	} `json:"summaryCall"`
	Skipped string `json:"skipped,omitempty"`
}

// WritePriceJSON writes the folds as `tollgate price --format json` does:
// the prediction of each fold (not the variant priced with the actual
// summary), indented.
func WritePriceJSON(w io.Writer, session string, rows []FoldPrice) error {
	out := PriceJSON{Session: session, Folds: []FoldPriceJSON{}}
	for _, r := range rows {
		if r.CheckpointActual {
			continue
		}
		f := FoldPriceJSON{Fold: r.Fold, Trigger: r.Trigger, PreTokens: r.PreTokens, ActualColdTokens: r.ActualCold, Skipped: r.Skipped}
		if r.Skipped == "" {
			pc := r.PredictedCold
			f.PredictedColdTokens = &pc
			f.PredictedColdBand = r.Band
			if e, ok := r.ErrorPercent(); ok {
				e = math.Round(e*10) / 10
				f.ErrorPct = &e
			}
		}
		if r.Band != nil {
			f.SummaryCall = &struct {
				PredictedUSD *float64 `json:"predictedUSD"`
				ActualUSD    *float64 `json:"actualUSD"`
			}{PredictedUSD: &r.SummaryCallUSD, ActualUSD: r.SummaryCallActualUSD}
		}
		out.Folds = append(out.Folds, f)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
