package pricing

import (
	"math"
)

// This file is the naive reference the fast path is checked against: it
// materialises every request of a rewrite as the list of its pieces
// (envelope, units as they stand, checkpoint, instruction) and compares two
// requests piece by piece, exactly as a prefix cache sees them. It shares no
// code with quote.go beyond the cache model's rounding rules, which it
// restates.

type refPiece struct {
	key        string // content identity: equal keys = equal tokens
	tokens     int64
	breakpoint bool // an entry is written after this piece
	pos        int  // surface position the piece stands at (-1: envelope)
}

type refOrdering struct {
	order                              string
	ctx, next, cached, cold            int64
	pos                                int
	unitID                             string
	hasCall                            bool
	callPrompt, callCached, callOut    int64
	count                              int
	freed                              int64
	spanTokens                         int64
	nextUSD, callUSD, baseUSD, premium float64
	saving                             float64
	breakEven                          int64 // -1 = null
	under                              bool
	applyPrune                         []string
	applyStart, applyEnd               string
}

// refShared counts the leading pieces x and y have in common.
func refShared(x, y []refPiece) int {
	k := 0
	for k < len(x) && k < len(y) && x[k].key == y[k].key && x[k].tokens == y[k].tokens {
		k++
	}
	return k
}

// refCached is what a request reads from cache entries of `earlier` when the
// two share their first k pieces.
func refCached(m CacheModel, earlier []refPiece, k int) int64 {
	var sum, boundary int64
	for i := 0; i < k; i++ {
		sum += earlier[i].tokens
		if earlier[i].breakpoint {
			boundary = sum
		}
	}
	if m.Kind == Breakpoint {
		if boundary > 0 && boundary >= m.MinimumPrefix {
			return boundary
		}
		return 0
	}
	if sum > 0 && sum >= m.MinimumPrefix {
		return sum / m.Granularity * m.Granularity
	}
	return 0
}

func refTokens(ps []refPiece) int64 {
	var s int64
	for _, p := range ps {
		s += p.tokens
	}
	return s
}

// refQuote prices every applicable ordering the slow way.
func refQuote(req QuoteRequest) (alts []refOrdering, recommended string) {
	m := req.Model
	n := len(req.Units)
	pos := func(id string) int {
		for i, u := range req.Units {
			if u.ID == id {
				return i
			}
		}
		return -1
	}
	after := map[int]int64{}
	for _, p := range req.Plan.Prune {
		after[pos(p.ID)] = p.TokensAfter
	}
	prices, _ := m.PricesAt(req.At)
	hit := prices.CacheHitPricePerMTokens
	cold := prices.PricePerMTokens
	if m.TTLSeconds > 300 && prices.CacheWrite1hPricePerMTokens > 0 {
		cold = prices.CacheWrite1hPricePerMTokens
	} else if prices.CacheWritePricePerMTokens > 0 {
		cold = prices.CacheWritePricePerMTokens
	}
	usd := func(n int64, p float64) float64 { return float64(n) * p / 1e6 }
	expired := req.IdleSeconds > float64(m.TTLSeconds)

	env := refPiece{key: "envelope", tokens: req.EnvelopeTokens, breakpoint: true, pos: -1}
	unit := func(i int, pruned bool) refPiece {
		u := req.Units[i]
		if pruned {
			return refPiece{key: "pruned:" + u.ID, tokens: after[i], breakpoint: u.Breakpoint, pos: i}
		}
		return refPiece{key: "unit:" + u.ID, tokens: u.Tokens, breakpoint: u.Breakpoint, pos: i}
	}
	last := []refPiece{env}
	for i := range n {
		last = append(last, unit(i, false))
	}
	ctx := refTokens(last)
	baseCached := int64(0)
	if !expired {
		baseCached = refCached(m, last, len(last))
	}
	baseUSD := usd(baseCached, hit) + usd(ctx-baseCached, cold)

	s := req.Plan.Summarize
	a, b := -1, -1
	var ckpt, instr int64
	same := true
	if s != nil {
		a, b = pos(s.Start), pos(s.End)
		ckpt = s.EstimatedTokens
		if ckpt == 0 {
			ckpt = m.EstimatedSummaryTokens
		}
		instr = s.InstructionTokens
		same = s.SameFamily == nil || *s.SameFamily
	}

	price := func(order string, applies func(i int) bool, summary bool) refOrdering {
		o := refOrdering{order: order, ctx: ctx, breakEven: -1, applyPrune: []string{}}
		for i := range n {
			if _, ok := after[i]; ok && applies(i) {
				o.count++
				o.freed += req.Units[i].Tokens - after[i]
				o.applyPrune = append(o.applyPrune, req.Units[i].ID)
			}
		}
		isPruned := func(i int) bool { _, ok := after[i]; return ok && applies(i) }
		var next []refPiece
		var sources [][]refPiece
		if !expired {
			sources = append(sources, last)
		}
		if summary {
			call := []refPiece{env}
			for i := 0; i <= b; i++ {
				call = append(call, unit(i, isPruned(i)))
			}
			spanStart := refTokens(call[:a+1])
			o.spanTokens = refTokens(call) - spanStart
			call = append(call, refPiece{key: "instruction", tokens: instr, breakpoint: true, pos: -2})
			o.hasCall = true
			o.callPrompt = refTokens(call)
			if same && !expired {
				o.callCached = refCached(m, last, refShared(last, call))
			}
			o.callOut = ckpt
			o.callUSD = usd(o.callCached, hit) + usd(o.callPrompt-o.callCached, cold) + usd(ckpt, prices.OutputPricePerMTokens)
			if same {
				sources = append(sources, call)
			}
			next = append(next, env)
			for i := 0; i < a; i++ {
				next = append(next, unit(i, isPruned(i)))
			}
			next = append(next, refPiece{key: "checkpoint", tokens: ckpt, pos: a})
			if s.RestoredTokens > 0 {
				next = append(next, refPiece{key: "restored", tokens: s.RestoredTokens, pos: a})
			}
			for i := b + 1; i < n; i++ {
				next = append(next, unit(i, isPruned(i)))
			}
			o.applyStart, o.applyEnd = s.Start, s.End
		} else {
			next = append(next, env)
			for i := range n {
				next = append(next, unit(i, isPruned(i)))
			}
		}
		o.next = refTokens(next)
		shared := -1
		for _, src := range sources {
			k := refShared(src, next)
			if c := refCached(m, src, k); c > o.cached || (c == o.cached && k > shared) {
				o.cached, shared = c, k
			}
		}
		o.cold = o.next - o.cached
		// breakAt: the first piece after the envelope that is not shared or
		// not wholly cached.
		o.pos = -1
		if shared >= 1 && o.cached >= req.EnvelopeTokens {
			o.pos = n
			end := req.EnvelopeTokens
			for i := 1; i < len(next); i++ {
				end += next[i].tokens
				if i >= shared || end > o.cached {
					o.pos = next[i].pos
					break
				}
			}
			if o.pos < n && o.pos >= 0 {
				o.unitID = req.Units[o.pos].ID
			}
		}
		o.nextUSD = usd(o.cached, hit) + usd(o.cold, cold)
		o.baseUSD = baseUSD
		if expired {
			if summary {
				o.premium = usd(ckpt, prices.OutputPricePerMTokens)
			}
		} else {
			o.premium = o.nextUSD + o.callUSD - baseUSD
		}
		o.saving = usd(ctx-o.next, hit)
		if o.saving > 0 {
			o.breakEven = 0
			if o.premium > 0 {
				o.breakEven = int64(math.Ceil(o.premium/o.saving - 1e-9))
			}
		}
		o.under = req.ThresholdTokens == 0 || o.next < req.ThresholdTokens
		return o
	}

	all := func(int) bool { return true }
	if s != nil {
		alts = append(alts, price(OrderSummarizeThenPruneTail, func(i int) bool { return i > b }, true))
		beforeOrIn := false
		for i := range after {
			if i <= b {
				beforeOrIn = true
			}
		}
		if beforeOrIn {
			alts = append(alts, price(OrderPruneThenSummarize, all, true))
		}
		if len(after) > 0 {
			po := price(OrderPruneOnly, all, false)
			if po.under {
				alts = append(alts, po)
			}
		}
	} else {
		alts = append(alts, price(OrderPruneOnly, all, false))
	}

	best := 0
	for i := 1; i < len(alts); i++ {
		x, y := alts[i], alts[best]
		switch {
		case x.under && !y.under:
			best = i
		case x.under && y.under && x.nextUSD+x.callUSD < y.nextUSD+y.callUSD:
			best = i
		case !x.under && !y.under && x.next < y.next:
			best = i
		}
	}
	return alts, alts[best].order
}
