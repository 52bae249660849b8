package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// The simulated coding session (DESIGN §4, issue 6): a harness that talks to
// tollgate through the real API (guard/client), with the prefix-cache
// simulator standing in for the provider. It shows what the order of a
// rewrite costs: pruning first breaks the prefix the summary call would
// have read from the cache; summarizing the untouched region first keeps
// the summary call warm up to its instruction.
//
// The script, for a window W (every figure derives from W, so the session
// has the same shape at every size):
//   - envelope (tools + system prompt): 1,000 tokens;
//   - each step: an assistant message of W/320 tokens (the previous
//     request's output) and a tool result of W/64 tokens, every third one
//     oversized at W/16;
//   - pressure when the context passes 0.8·W; the retained tail is the
//     newest 16 % of W; everything older is summarized into a checkpoint of
//     W/64 tokens, with a 470-token instruction;
//   - the pruner may cut oversized tool results older than the last step to
//     256 tokens, at most 6 % of W per rewrite: it rewrites, but cannot
//     clear the pressure alone.

// SimOptions configure one simulated session.
type SimOptions struct {
	Window  int64
	Steps   int
	Order   string // pricing.OrderPruneThenSummarize or pricing.OrderSummarizeThenPruneTail
	Mode    string // the session's mode override: ask, auto, off, or "" (inherit)
	Profile string
	Model   pricing.CacheModel
	Session string
	Start   time.Time
	// Wait is how long an ask may wait for an answer (0 = tollgate's own deadline).
	Wait time.Duration
}

// SimReport is what one simulated session cost, in tokens.
type SimReport struct {
	Session      string
	Window       int64
	Order        string
	Requests     int
	Folds        int
	Declined     int
	SummaryCalls []int64 // uncached tokens of each summary call
	Prompt       int64   // every prompt token sent
	Uncached     int64   // every prompt token not read from the cache
	HitRate      float64
}

const (
	simEnvelope    = 1000
	simInstruction = 470
	simPrunedTo    = 256
	simStep        = 20 * time.Second
)

type simUnit struct {
	id     string
	hash   string
	tokens int64
	kind   string
	pruned bool
}

// RunSimulation drives one scripted session through tollgate.
func RunSimulation(ctx context.Context, c *client.Client, o SimOptions) (SimReport, error) {
	if o.Window < 8000 {
		return SimReport{}, fmt.Errorf("window: %d is too small for the script (want ≥ 8000)", o.Window)
	}
	if o.Steps < 1 {
		return SimReport{}, fmt.Errorf("steps: want ≥ 1")
	}
	rep := SimReport{Session: o.Session, Window: o.Window, Order: o.Order}
	if o.Mode != "" {
		if err := c.SetMode(ctx, "session", o.Session, o.Mode); err != nil {
			return rep, fmt.Errorf("setting the session's mode: %w", err)
		}
	}
	w := o.Window
	threshold := w * 8 / 10
	tailBudget := w * 16 / 100
	family := "sim:" + o.Profile
	provider := pricing.NewSimulator(o.Model)
	now := o.Start
	if now.IsZero() {
		now = time.Now().UTC()
	}
	envelope := pricing.SimUnit{Hash: "envelope", Tokens: simEnvelope, Breakpoint: true}
	var units []simUnit
	reqN, foldN := 0, 0

	send := func(us []simUnit, extra *pricing.SimUnit, purpose, turn string, output int64) error {
		sim := make([]pricing.SimUnit, 0, len(us)+2)
		sim = append(sim, envelope)
		for _, u := range us {
			sim = append(sim, pricing.SimUnit{Hash: u.hash, Tokens: u.tokens})
		}
		if extra != nil {
			sim = append(sim, *extra)
		}
		if n := len(sim); n > 0 {
			sim[n-1].Breakpoint = true // the harness caches its whole prompt
		}
		res := provider.Send(pricing.SimRequest{Family: family, Units: sim, At: now})
		reqN++
		rep.Requests++
		rep.Prompt += res.PromptTokens
		rep.Uncached += res.ColdTokens
		if purpose == api.PurposeCompaction {
			rep.SummaryCalls = append(rep.SummaryCalls, res.ColdTokens)
		}
		_, err := c.RecordRequest(ctx, o.Session, client.Request{
			RequestID: fmt.Sprintf("%s-%d", o.Session, reqN), Harness: "simulate", Profile: o.Profile,
			Provider: "simulated", Model: o.Profile, Purpose: purpose, Turn: turn, At: now,
			ContextWindow: w, ThresholdTokens: threshold,
			Usage: client.Usage{InputTokens: res.ColdTokens, CacheReadTokens: res.CachedTokens, OutputTokens: output},
		})
		now = now.Add(simStep)
		return err
	}

	for step := 1; step <= o.Steps; step++ {
		turn := strconv.Itoa(step)
		asst := simUnit{id: fmt.Sprintf("a%d", step), hash: fmt.Sprintf("a%d", step), tokens: w / 320, kind: "assistant"}
		if err := send(units, nil, api.PurposeConversation, turn, asst.tokens); err != nil {
			return rep, err
		}
		result := simUnit{id: fmt.Sprintf("t%d", step), hash: fmt.Sprintf("t%d", step), tokens: w / 64, kind: "tool-result"}
		if step%3 == 0 {
			result.tokens = w / 16
		}
		units = append(units, asst, result)

		size := int64(simEnvelope)
		for _, u := range units {
			size += u.tokens
		}
		if size <= threshold {
			continue
		}
		req := simRewriteRequest(o, units, turn, threshold, tailBudget)
		d := c.AskRewrite(ctx, o.Session, req)
		if d.Decision != api.Allow {
			rep.Declined++
			continue
		}
		apply := d.Apply
		if d.Quote != nil {
			for i := range d.Quote.Alternatives {
				if alt := d.Quote.Alternatives[i]; alt.Order == o.Order {
					apply = &alt.Apply // this harness executes its own order
				}
			}
		}
		if apply == nil {
			continue
		}
		foldN++
		var err error
		units, err = simApply(units, apply, req.Plan, o.Order, func(region []simUnit) error {
			instr := pricing.SimUnit{Hash: fmt.Sprintf("instruction-%d", foldN), Tokens: simInstruction}
			return send(region, &instr, api.PurposeCompaction, turn, w/64)
		}, foldN, w/64)
		if err != nil {
			c.Outcome(ctx, d.Rewrite, false, err.Error())
			return rep, err
		}
		rep.Folds++
		if err := c.Outcome(ctx, d.Rewrite, true, ""); err != nil && !errors.Is(err, context.Canceled) {
			return rep, err
		}
	}
	// One last request so the final fold's actual cold tokens are billed.
	if err := send(units, nil, api.PurposeConversation, strconv.Itoa(o.Steps+1), w/320); err != nil {
		return rep, err
	}
	if rep.Prompt > 0 {
		rep.HitRate = 1 - float64(rep.Uncached)/float64(rep.Prompt)
	}
	return rep, nil
}

// simRewriteRequest builds the surface and plan the harness asks about.
func simRewriteRequest(o SimOptions, units []simUnit, turn string, threshold, tailBudget int64) api.RewriteRequest {
	surface := make([]pricing.Unit, len(units))
	for i, u := range units {
		surface[i] = pricing.Unit{ID: u.id, Tokens: u.tokens, Kind: u.kind}
	}
	// The retained tail: the newest units within 16 % of the window.
	b, tail := len(units)-1, int64(0)
	for b >= 0 && tail+units[b].tokens <= tailBudget {
		tail += units[b].tokens
		b--
	}
	var plan pricing.Plan
	if b >= 0 {
		plan.Summarize = &pricing.SummaryPlan{Start: units[0].id, End: units[b].id, EstimatedTokens: o.Window / 64, InstructionTokens: simInstruction}
	}
	// The pruner's budget: oversized results older than the last step.
	budget := o.Window * 6 / 100
	for i := 0; i < len(units)-2 && budget > 0; i++ {
		u := units[i]
		if u.kind != "tool-result" || u.pruned || u.tokens <= o.Window/32 {
			continue
		}
		plan.Prune = append(plan.Prune, pricing.Prune{ID: u.id, TokensAfter: simPrunedTo})
		budget -= u.tokens - simPrunedTo
	}
	wait := 0
	if o.Wait > 0 {
		wait = int(o.Wait / time.Second)
	}
	req := api.RewriteRequest{
		Profile: o.Profile, Turn: turn, Trigger: api.TriggerPressure, IdleSeconds: simStep.Seconds(),
		ContextWindow: o.Window, ThresholdTokens: threshold, EnvelopeTokens: simEnvelope,
		Surface: surface, Plan: plan,
	}
	if o.Wait > 0 {
		req.Wait = &wait
	}
	return req
}

// simApply executes a decision's apply in the given order and returns the
// new surface. summarize runs the summary call over the region it reads.
func simApply(units []simUnit, apply *pricing.Apply, plan pricing.Plan, order string, summarize func([]simUnit) error, fold int, checkpoint int64) ([]simUnit, error) {
	pruneSet := map[string]int64{}
	after := map[string]int64{}
	for _, p := range plan.Prune {
		after[p.ID] = p.TokensAfter
	}
	for _, id := range apply.Prune {
		pruneSet[id] = after[id]
	}
	prune := func() {
		for i := range units {
			if t, ok := pruneSet[units[i].id]; ok {
				units[i].tokens, units[i].pruned = t, true
				units[i].hash += "-pruned"
			}
		}
	}
	pruneFirst := order == pricing.OrderPruneThenSummarize
	if pruneFirst {
		prune()
	}
	if apply.Summarize != nil {
		end := -1
		for i, u := range units {
			if u.id == apply.Summarize.End {
				end = i
			}
		}
		if end < 0 {
			return units, fmt.Errorf("apply.summarize.end: no unit %q", apply.Summarize.End)
		}
		if err := summarize(units[:end+1]); err != nil {
			return units, err
		}
		cp := simUnit{id: fmt.Sprintf("checkpoint-%d", fold), hash: fmt.Sprintf("checkpoint-%d", fold), tokens: checkpoint, kind: "summary"}
		units = append([]simUnit{cp}, units[end+1:]...)
	}
	if !pruneFirst {
		prune()
	}
	return units, nil
}

// parseTokens reads 32k, 1.5M or 131072.
func parseTokens(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1024, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "m"):
		mult, s = 1024*1024, strings.TrimSuffix(s, "m")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q is not a token count (e.g. 128k)", s)
	}
	return int64(f * mult), nil
}

// RunSimulate is `tollgate simulate`.
func RunSimulate(args []string, stdio IO, version string) int {
	fset := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fset.SetOutput(stdio.Stderr)
	var common CommonFlags
	common.Register(fset, false)
	windows := fset.String("window", "32k,128k,512k", "context `WINDOWS`, comma-separated")
	steps := fset.Int("steps", 60, "tool steps per session")
	order := fset.String("order", "both", "prune-then-summarize, summarize-then-prune-tail or both")
	mode := fset.String("mode", "auto", "the simulated sessions' mode: auto, ask (answer in the UI) or off")
	profile := fset.String("profile", "deepseek-flash", "profile whose prices and cache model apply")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	var ws []int64
	for _, part := range strings.Split(*windows, ",") {
		n, err := parseTokens(part)
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate simulate: --window:", err)
			return 2
		}
		ws = append(ws, n)
	}
	orders := []string{pricing.OrderPruneThenSummarize, pricing.OrderSummarizeThenPruneTail}
	switch *order {
	case "both":
	case pricing.OrderPruneThenSummarize, pricing.OrderSummarizeThenPruneTail:
		orders = []string{*order}
	default:
		fmt.Fprintln(stdio.Stderr, "tollgate simulate: --order: want prune-then-summarize, summarize-then-prune-tail or both")
		return 2
	}
	if !ValidMode(*mode) {
		fmt.Fprintln(stdio.Stderr, "tollgate simulate: --mode: want ask, auto or off")
		return 2
	}
	home, err := ResolveHome(common.Home)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate simulate:", err)
		return 1
	}
	// Through the running tollgate when there is one (the sessions appear
	// in its dashboard live); else a temporary one on the same home.
	var ep client.Endpoint
	var settings *Settings
	if info, err := LiveInstance(home); err == nil {
		ep = client.Endpoint{URL: info.URL, Token: info.Token}
	} else {
		svc, err := Start(context.Background(), StartOptions{Home: home, Flags: Flags{Listen: "127.0.0.1:0"}, Version: version})
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate simulate:", err)
			return 1
		}
		defer svc.Close(context.Background())
		ep = client.Endpoint{URL: svc.URL, Token: svc.Token()}
		settings = svc.Settings()
	}
	if settings == nil {
		cfg, err := LoadConfig(home, Flags{})
		if err != nil {
			fmt.Fprintln(stdio.Stderr, "tollgate simulate:", err)
			return 1
		}
		settings = NewSettings(cfg)
	}
	model, _, err := settings.ResolveModel(*profile, "", *profile)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate simulate:", err)
		return 1
	}
	c := client.New(ep, nil)
	ctx := context.Background()
	if err := c.Register(ctx, client.Engine{Harness: "simulate", Version: version, Profile: *profile}); err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate simulate: registering with tollgate:", err)
		return 1
	}
	defer c.Close()
	stamp := time.Now().UTC().Format("20060102-150405")
	reports, err := simulateWindows(ctx, c, ws, orders, *steps, *mode, *profile, model, stamp)
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "tollgate simulate:", err)
		return 1
	}
	printSimReports(stdio.Stdout, reports)
	return 0
}

func simulateWindows(ctx context.Context, c *client.Client, ws []int64, orders []string, steps int, mode, profile string, model pricing.CacheModel, stamp string) ([]SimReport, error) {
	var reports []SimReport
	for _, w := range ws {
		for _, order := range orders {
			rep, err := RunSimulation(ctx, c, SimOptions{
				Window: w, Steps: steps, Order: order, Mode: mode, Profile: profile, Model: model,
				Session: fmt.Sprintf("sim-%s-%s-%s", stamp, windowLabel(w), order),
			})
			if err != nil {
				return reports, fmt.Errorf("window %s, %s: %w", windowLabel(w), order, err)
			}
			reports = append(reports, rep)
		}
	}
	return reports, nil
}

// windowLabel writes a window as it was asked for: 512k is 524,288 tokens.
func windowLabel(w int64) string {
	if w%(1<<20) == 0 {
		return strconv.FormatInt(w>>20, 10) + "M"
	}
	if w%1024 == 0 {
		return strconv.FormatInt(w>>10, 10) + "k"
	}
	return pricing.FormatTokens(w)
}

func printSimReports(out io.Writer, reports []SimReport) {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\torder\tfolds\tsummary calls (uncached)\thit rate\tsession uncached\tsession prompt\t")
	for _, r := range reports {
		calls := make([]string, len(r.SummaryCalls))
		for i, n := range r.SummaryCalls {
			calls[i] = pricing.FormatTokens(n)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.1f%%\t%s\t%s\t\n", windowLabel(r.Window), r.Order, r.Folds,
			strings.Join(calls, " "), 100*r.HitRate, pricing.FormatTokens(r.Uncached), pricing.FormatTokens(r.Prompt))
	}
	tw.Flush()
	// The comparison the simulation exists for.
	byWindow := map[int64]map[string]SimReport{}
	for _, r := range reports {
		if byWindow[r.Window] == nil {
			byWindow[r.Window] = map[string]SimReport{}
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
			windowLabel(r.Window), 100*(1-float64(sf.Uncached)/float64(pf.Uncached)), pricing.FormatTokens(pf.Uncached), pricing.FormatTokens(sf.Uncached))
	}
}

// simulateBody is POST /v1/simulate: "Try a simulated session" in the UI.
type simulateBody struct {
	Window string `json:"window"` // default 128k
	Steps  int    `json:"steps"`  // default 60
}

// handleSimulate runs the scripted session against this tollgate in the
// background: the cache-aware session in the configured mode (so a newcomer
// sees the dialog), the prune-first one in auto beside it for comparison.
func (s *Service) handleSimulate(w http.ResponseWriter, r *http.Request) {
	var b simulateBody
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil && !errors.Is(err, io.EOF) {
			writeAPIError(w, http.StatusBadRequest, "(body)", "want {\"window\":\"128k\",\"steps\":60}: "+err.Error())
			return
		}
	}
	window := int64(128 << 10)
	if b.Window != "" {
		n, err := parseTokens(b.Window)
		if err != nil || n < 8000 || n > 4<<20 {
			writeAPIError(w, http.StatusBadRequest, "window", "want 8k to 4M tokens, e.g. 128k")
			return
		}
		window = n
	}
	steps := 60
	if b.Steps != 0 {
		if b.Steps < 1 || b.Steps > 1000 {
			writeAPIError(w, http.StatusBadRequest, "steps", "want 1 to 1000")
			return
		}
		steps = b.Steps
	}
	if !s.simRunning.CompareAndSwap(false, true) {
		writeAPIError(w, http.StatusConflict, "", "a simulated session is already running")
		return
	}
	model, _, err := s.settings.ResolveModel(s.settings.DefaultProfile(), "", "deepseek-flash")
	if err != nil {
		s.simRunning.Store(false)
		writeAPIError(w, http.StatusBadRequest, "", "pricing the simulation: "+err.Error())
		return
	}
	profile := cmpOr(s.settings.DefaultProfile(), "deepseek-flash")
	stamp := time.Now().UTC().Format("20060102-150405")
	sessions := []string{
		fmt.Sprintf("sim-%s-%s", stamp, pricing.OrderSummarizeThenPruneTail),
		fmt.Sprintf("sim-%s-%s", stamp, pricing.OrderPruneThenSummarize),
	}
	go func() {
		defer s.simRunning.Store(false)
		ctx := s.background
		c := client.New(client.Endpoint{URL: s.URL, Token: s.Token()}, s.log)
		if err := c.Register(ctx, client.Engine{Harness: "simulate", Profile: profile}); err != nil {
			s.log.Error("simulation: registering", "err", err)
			return
		}
		defer c.Close()
		for i, order := range []string{pricing.OrderSummarizeThenPruneTail, pricing.OrderPruneThenSummarize} {
			mode := "" // the cache-aware session asks as configured
			if i == 1 {
				mode = ModeAuto
			}
			rep, err := RunSimulation(ctx, c, SimOptions{Window: window, Steps: steps, Order: order, Mode: mode, Profile: profile, Model: model, Session: sessions[i]})
			if ctx.Err() != nil {
				s.log.Info("simulation stopped: tollgate is closing", "session", sessions[i])
				return
			}
			if err != nil {
				s.log.Error("simulation failed", "session", sessions[i], "err", err)
				return
			}
			s.log.Info("simulated session done", "session", rep.Session, "folds", rep.Folds, "uncached", rep.Uncached, "summaryCalls", rep.SummaryCalls)
		}
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	json.NewEncoder(w).Encode(map[string]any{"sessions": sessions, "window": window, "steps": steps})
}

// writeAPIError writes the API's error shape from app-level routes.
func writeAPIError(w http.ResponseWriter, status int, field, message string) {
	code := map[int]string{400: "bad_request", 404: "not_found", 409: "conflict", 413: "too_large", 415: "unsupported_media_type"}[status]
	if code == "" {
		code = "internal"
	}
	if field != "" {
		message = field + ": " + message
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message, "field": field}})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
