// Package sim is the simulated coding session (ARCHITECTURE.md, "The
// simulator"): a harness that talks
// to tollgate through the real API (guard/client), with the prefix-cache
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
package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

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
			Provider: "simulated", Model: o.Profile, Purpose: purpose, Turn: api.Turn(turn), At: api.At(now),
			ContextWindow: w, ThresholdTokens: threshold,
			Usage: api.Report(pricing.Usage{Input: res.ColdTokens, CacheRead: res.CachedTokens, Output: output}),
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
func ParseTokens(s string) (int64, error) {
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

// Windows runs one session per window and order.
func Windows(ctx context.Context, c *client.Client, ws []int64, orders []string, steps int, mode, profile string, model pricing.CacheModel, stamp string) ([]SimReport, error) {
	var reports []SimReport
	for _, w := range ws {
		for _, order := range orders {
			rep, err := RunSimulation(ctx, c, SimOptions{
				Window: w, Steps: steps, Order: order, Mode: mode, Profile: profile, Model: model,
				Session: fmt.Sprintf("sim-%s-%s-%s", stamp, WindowLabel(w), order),
			})
			if err != nil {
				return reports, fmt.Errorf("window %s, %s: %w", WindowLabel(w), order, err)
			}
			reports = append(reports, rep)
		}
	}
	return reports, nil
}

// WindowLabel writes a window as it was asked for: 512k is 524,288 tokens.
func WindowLabel(w int64) string {
	if w%(1<<20) == 0 {
		return strconv.FormatInt(w>>20, 10) + "M"
	}
	if w%1024 == 0 {
		return strconv.FormatInt(w>>10, 10) + "k"
	}
	return pricing.FormatTokens(w)
}
