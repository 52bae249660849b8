package pricing

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// Unit is one piece of the model-visible history after the envelope: a
// message, a tool call or a tool result, with its token count.
type Unit struct {
	ID     string `json:"id"`
	Tokens int64  `json:"tokens"`
	Kind   string `json:"kind,omitempty"`
	// Breakpoint marks a unit after which the harness asked for a cache
	// entry (Anthropic's cache_control); see the package doc.
	Breakpoint bool `json:"breakpoint,omitempty"`
}

// Prune replaces a unit's content in place by a shorter one (e.g. an old
// tool result by a stub) of TokensAfter tokens.
type Prune struct {
	ID          string `json:"id"`
	TokensAfter int64  `json:"tokensAfter"`
}

// SummaryPlan replaces the units Start…End (inclusive) by a checkpoint
// written by a separate summary call.
type SummaryPlan struct {
	Start string `json:"start"`
	End   string `json:"end"`
	// EstimatedTokens is the checkpoint size; 0 = the model's
	// EstimatedSummaryTokens.
	EstimatedTokens int64 `json:"estimatedTokens"`
	// InstructionTokens is the summary instruction appended to the span in
	// the summary call.
	InstructionTokens int64 `json:"instructionTokens"`
	// RestoredTokens is what the harness re-attaches after the checkpoint
	// (Claude Code: the files it restores, CLAUDE.md, hook output): new to
	// the cache, so cold in the next request, but no output of the call.
	RestoredTokens int64 `json:"restoredTokens,omitempty"`
	// SameFamily says whether the summary call shares the conversation's
	// request family (provider, model, effort, temperature, stop, tools) and
	// so its cache; nil = true.
	SameFamily *bool `json:"sameFamily,omitempty"`
}

// Plan is the rewrite a harness proposes.
type Plan struct {
	Prune     []Prune      `json:"prune,omitempty"`
	Summarize *SummaryPlan `json:"summarize,omitempty"`
}

// QuoteRequest is everything a quote needs. Nothing in it is read from the
// environment: At (the moment of the next request) picks the price window.
type QuoteRequest struct {
	Model CacheModel `json:"model"`
	// EnvelopeTokens is the static head of every request (tools + system
	// prompt), unchanged by any rewrite.
	EnvelopeTokens int64 `json:"envelopeTokens"`
	// Units is the surface: what the last request sent after the envelope, in order.
	Units           []Unit    `json:"units"`
	Plan            Plan      `json:"plan"`
	ContextWindow   int64     `json:"contextWindow"`
	ThresholdTokens int64     `json:"thresholdTokens"` // 0 = no threshold
	IdleSeconds     float64   `json:"idleSeconds"`     // since the last request
	At              time.Time `json:"at"`
}

// The orderings a quote compares.
const (
	OrderPruneThenSummarize     = "prune-then-summarize"
	OrderSummarizeThenPruneTail = "summarize-then-prune-tail"
	OrderPruneOnly              = "prune-only"
)

// PruneFigures counts the prunes an ordering applies.
type PruneFigures struct {
	Count       int   `json:"count"`
	FreedTokens int64 `json:"freedTokens"`
}

// SummaryFigures describes the checkpoint of an ordering with a summary.
type SummaryFigures struct {
	SpanTokens       int64 `json:"spanTokens"`       // the span as the summary call reads it
	CheckpointTokens int64 `json:"checkpointTokens"` // C
	Estimated        bool  `json:"estimated"`        // always true: C is a guess until the call returns
}

// BreakAt locates the first unit the next request does not read from the
// cache. Position is a surface index (0 = the first unit after the
// envelope); -1 means the break lies inside the envelope itself (cache
// expired, another family, or the envelope under the minimum prefix or not a
// multiple of the granularity); len(units) means nothing breaks.
type BreakAt struct {
	Position     int    `json:"position"`
	UnitID       string `json:"unitId"`
	CachedTokens int64  `json:"cachedTokens"`
}

// SummaryCallFigures are the token counts of the summary call.
type SummaryCallFigures struct {
	PromptTokens int64 `json:"promptTokens"`
	CachedTokens int64 `json:"cachedTokens"`
	ColdTokens   int64 `json:"coldTokens"`
	OutputTokens int64 `json:"outputTokens"` // = the checkpoint tokens C
}

// QuoteCosts are an ordering's prices in USD.
type QuoteCosts struct {
	NextRequest         float64 `json:"nextRequest"`
	SummaryCall         float64 `json:"summaryCall"`
	BaselineNextRequest float64 `json:"baselineNextRequest"`
	BreakPremium        float64 `json:"breakPremium"`
}

// Span names the summarized units.
type Span struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Apply is exactly what the harness should do for an ordering.
type Apply struct {
	Summarize *Span    `json:"summarize"`
	Prune     []string `json:"prune"` // in surface order; never null
}

// Ordering is one way of carrying out a plan, priced.
type Ordering struct {
	Order               string              `json:"order"`
	ContextTokens       int64               `json:"contextTokens"`
	ContextWindow       int64               `json:"contextWindow"`
	ThresholdTokens     int64               `json:"thresholdTokens"`
	Prune               PruneFigures        `json:"prune"`
	Summary             *SummaryFigures     `json:"summary"`
	BreakAt             BreakAt             `json:"breakAt"`
	ColdTokens          int64               `json:"coldTokens"`
	ColdShare           float64             `json:"coldShare"`
	NextRequestTokens   int64               `json:"nextRequestTokens"`
	SummaryCall         *SummaryCallFigures `json:"summaryCall"`
	CostUSD             QuoteCosts          `json:"costUSD"`
	PerRequestSavingUSD float64             `json:"perRequestSavingUSD"`
	BreakEvenRequests   *int64              `json:"breakEvenRequests"`
	CacheExpired        bool                `json:"cacheExpired"`
	Apply               Apply               `json:"apply"`
	UnderThreshold      bool                `json:"underThreshold"`
}

// Quote is the priced plan: the recommended ordering's figures at the top
// level, every applicable ordering in Alternatives (the recommended one
// included).
type Quote struct {
	Ordering
	Recommended  string     `json:"recommended"`
	Alternatives []Ordering `json:"alternatives"`
	// OffPeak says the quote used the model's off-peak prices.
	OffPeak bool `json:"offPeak"`
}

// maxTokens bounds every token count and sum so that no arithmetic can
// overflow (2^50 is a thousand times any context window).
const maxTokens = int64(1) << 50

// prunePos is a validated prune, located on the surface.
type prunePos struct {
	pos        int
	after      int64
	freedUpTo  int64 // freed tokens of this prune and every earlier one (surface order)
	planIndex  int
	id         string
	tokensOrig int64
}

// quoteState holds the validated request and the precomputed prefix sums.
type quoteState struct {
	req     *QuoteRequest
	model   CacheModel
	n       int
	env     int64   // E
	chunks  []int64 // chunks[c] = P(c·64), see prefix
	total   int64   // P(n)
	flagged []int32 // positions of breakpoint units, ascending
	prunes  []prunePos
	// summary
	hasSummary  bool
	a, b        int
	checkpoint  int64 // C
	restored    int64 // R: re-attached after the checkpoint
	instruction int64 // I
	sameFamily  bool
	// pricing
	prices  Prices
	offPeak bool
	cold    float64 // price of one uncached prompt token
	expired bool
}

// seq is a request made of the surface with the prunes from index `from` on
// applied (prunes are sorted by position). from == len(prunes) is the
// untouched surface.
type seq struct {
	q    *quoteState
	from int
}

// freedBefore returns the tokens freed by the applied prunes at positions < k.
func (s seq) freedBefore(k int) int64 {
	ps := s.q.prunes
	lo, hi := s.from, len(ps)
	for lo < hi { // first applied prune at position >= k
		mid := int(uint(lo+hi) >> 1)
		if ps[mid].pos < k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == s.from {
		return 0
	}
	base := int64(0)
	if s.from > 0 {
		base = ps[s.from-1].freedUpTo
	}
	return ps[lo-1].freedUpTo - base
}

// at returns E + P'(k): the tokens before unit k in this request.
func (s seq) at(k int) int64 {
	return s.q.env + s.q.prefix(k) - s.freedBefore(k)
}

// firstPruned returns the position of the first applied prune, or n.
func (s seq) firstPruned() int {
	if s.from < len(s.q.prunes) {
		return s.q.prunes[s.from].pos
	}
	return s.q.n
}

// cachedAt returns the tokens a request following s reads from the cache
// when it shares s's first m units with a live cached request (m < 0: it
// shares nothing, not even the envelope).
func (s seq) cachedAt(m int) int64 {
	if m < 0 {
		return 0
	}
	q := s.q
	if q.model.Kind == Breakpoint {
		// The largest entry at or below the shared prefix: the end of the
		// last flagged unit before m, else the envelope's end.
		j, _ := slices.BinarySearch(q.flagged, int32(m))
		boundary := q.env
		if j > 0 {
			boundary = s.at(int(q.flagged[j-1]) + 1)
		}
		return q.model.cachedBoundary(boundary)
	}
	return q.model.cachedPositional(s.at(m))
}

// breakAt locates the first unit of s (up to m) that is not wholly cached.
func (s seq) breakAt(cached int64, m int) BreakAt {
	q := s.q
	if cached < q.env || m < 0 {
		return BreakAt{Position: -1, CachedTokens: cached}
	}
	lo, hi := 0, m
	for lo < hi { // smallest k with E + P'(k+1) > cached
		mid := int(uint(lo+hi) >> 1)
		if s.at(mid+1) > cached {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	b := BreakAt{Position: lo, CachedTokens: cached}
	if lo < q.n {
		b.UnitID = q.req.Units[lo].ID
	}
	return b
}

// NewQuote validates req and prices every applicable ordering of its plan.
// Errors are *FieldError values naming the offending field.
func NewQuote(req QuoteRequest) (Quote, error) {
	q := quoteState{req: &req, model: req.Model}
	if err := q.validate(); err != nil {
		return Quote{}, err
	}
	q.prices, q.offPeak = req.Model.PricesAt(req.At)
	q.cold = q.prices.coldPrice(req.Model.TTLSeconds)
	q.expired = req.IdleSeconds > float64(req.Model.TTLSeconds)

	var kinds [3]string
	count := 0
	if q.hasSummary {
		kinds[count] = OrderSummarizeThenPruneTail
		count++
		// Prunes that all lie after the span make prune-then-summarize the
		// very same rewrite: list it only when it differs.
		if len(q.prunes) > 0 && q.prunes[0].pos <= q.b {
			kinds[count] = OrderPruneThenSummarize
			count++
		}
		if len(q.prunes) > 0 && q.underThreshold(q.contextTokens()-q.prunes[len(q.prunes)-1].freedUpTo) {
			kinds[count] = OrderPruneOnly
			count++
		}
	} else {
		kinds[count] = OrderPruneOnly
		count++
	}

	alts := make([]Ordering, count)
	extras := make([]orderingExtras, count)
	best := -1
	for i := range count {
		alts[i] = q.ordering(kinds[i], &extras[i])
		if best < 0 || better(&alts[i], &alts[best]) {
			best = i
		}
	}
	return Quote{Ordering: alts[best], Recommended: alts[best].Order, Alternatives: alts, OffPeak: q.offPeak}, nil
}

// better reports whether ordering x beats y: under the threshold first, then
// the cheaper next request + summary call; when neither is under the
// threshold, the smaller context. Ties keep the earlier ordering.
func better(x, y *Ordering) bool {
	if x.UnderThreshold != y.UnderThreshold {
		return x.UnderThreshold
	}
	if x.UnderThreshold {
		return x.CostUSD.NextRequest+x.CostUSD.SummaryCall < y.CostUSD.NextRequest+y.CostUSD.SummaryCall
	}
	return x.NextRequestTokens < y.NextRequestTokens
}

func (q *quoteState) contextTokens() int64 { return q.env + q.total }

// prefix returns P(k) = T0+…+Tk-1 from the stored sum at the multiple of 64
// below k: at most 63 additions, and 64 times less memory than a full array.
func (q *quoteState) prefix(k int) int64 {
	if k >= q.n {
		return q.total
	}
	c := k >> chunkShift
	p := q.chunks[c]
	for _, u := range q.req.Units[c<<chunkShift : k] {
		p += u.Tokens
	}
	return p
}

func (q *quoteState) underThreshold(tokens int64) bool {
	return q.req.ThresholdTokens == 0 || tokens < q.req.ThresholdTokens
}

// orderingExtras backs an ordering's pointers with one allocation per quote.
type orderingExtras struct {
	summary   SummaryFigures
	call      SummaryCallFigures
	breakEven int64
	span      Span
}

// ordering prices one way of carrying out the plan (see the package doc).
func (q *quoteState) ordering(order string, x *orderingExtras) Ordering {
	req := q.req
	hit := q.prices.CacheHitPricePerMTokens
	ctx := q.contextTokens()

	applied := seq{q: q, from: 0}
	withSummary := order != OrderPruneOnly
	if order == OrderSummarizeThenPruneTail {
		applied.from = len(q.prunes)
		for i, p := range q.prunes {
			if p.pos > q.b {
				applied.from = i
				break
			}
		}
	}
	untouched := seq{q: q, from: len(q.prunes)}

	o := Ordering{
		Order:           order,
		ContextTokens:   ctx,
		ContextWindow:   req.ContextWindow,
		ThresholdTokens: req.ThresholdTokens,
		CacheExpired:    q.expired,
	}
	o.Prune.Count = len(q.prunes) - applied.from
	o.Prune.FreedTokens = applied.freedBefore(q.n + 1)
	o.Apply.Prune = make([]string, 0, o.Prune.Count)
	for _, p := range q.prunes[applied.from:] {
		o.Apply.Prune = append(o.Apply.Prune, p.id)
	}

	// Baseline: the same context sent again, read from the last request.
	baseShared := q.n
	if q.expired {
		baseShared = -1
	}
	baseCached := untouched.cachedAt(baseShared)
	o.CostUSD.BaselineNextRequest = perM(baseCached, hit) + perM(ctx-baseCached, q.cold)

	firstPruned := applied.firstPruned()
	var next, nextShared int64 = 0, 0
	var m int
	if !withSummary {
		next = applied.at(q.n)
		m = firstPruned // shared with the last request up to the first pruned unit
		if q.expired {
			m = -1
		}
	} else {
		a, b := q.a, q.b
		// The summary call replays E + T'0…T'b + I. It reads from the last
		// request up to the first unit it changed (a prune at or before b,
		// else the instruction) — only in the same family and while the cache lives.
		prompt := applied.at(b+1) + q.instruction
		callShared := -1
		if q.sameFamily && !q.expired {
			callShared = min(firstPruned, b+1)
		}
		callCached := applied.cachedAt(callShared)
		x.call = SummaryCallFigures{
			PromptTokens: prompt,
			CachedTokens: callCached,
			ColdTokens:   prompt - callCached,
			OutputTokens: q.checkpoint,
		}
		o.SummaryCall = &x.call
		o.CostUSD.SummaryCall = perM(callCached, hit) + perM(prompt-callCached, q.cold) + perM(q.checkpoint, q.prices.OutputPricePerMTokens)

		x.summary = SummaryFigures{
			SpanTokens:       applied.at(b+1) - applied.at(a),
			CheckpointTokens: q.checkpoint,
			Estimated:        true,
		}
		o.Summary = &x.summary
		x.span = Span{Start: req.Units[a].ID, End: req.Units[b].ID}
		o.Apply.Summarize = &x.span

		// Next request: E + T'0…T'a-1 + C + R + T'b+1…T'n-1. It shares
		// E + P(min(a, f)) with the last request and, in the same family,
		// E + P'(a) with the summary call; everything after the checkpoint is cold.
		next = applied.at(a) + q.checkpoint + q.restored + (applied.at(q.n) - applied.at(b+1))
		m = -1
		if !q.expired {
			m = min(a, firstPruned)
		}
		if q.sameFamily {
			m = a
		}
	}
	nextShared = applied.cachedAt(m)
	o.NextRequestTokens = next
	o.BreakAt = applied.breakAt(nextShared, m)
	o.ColdTokens = next - nextShared
	if next > 0 {
		o.ColdShare = float64(o.ColdTokens) / float64(next)
	}
	o.CostUSD.NextRequest = perM(nextShared, hit) + perM(next-nextShared, q.cold)
	o.UnderThreshold = q.underThreshold(next)

	if q.expired {
		// The baseline is itself cold: the break costs nothing extra, and
		// what remains is the summary call's output (§4).
		if withSummary {
			o.CostUSD.BreakPremium = perM(q.checkpoint, q.prices.OutputPricePerMTokens)
		}
	} else {
		o.CostUSD.BreakPremium = o.CostUSD.NextRequest + o.CostUSD.SummaryCall - o.CostUSD.BaselineNextRequest
	}

	// Every later request reads the whole context from the cache, so a
	// smaller context saves the difference in cached reads.
	o.PerRequestSavingUSD = perM(ctx-next, hit)
	if o.PerRequestSavingUSD > 0 {
		x.breakEven = 0
		if o.CostUSD.BreakPremium > 0 {
			// The epsilon keeps float noise (23.000000001) from adding a request.
			x.breakEven = int64(math.Ceil(o.CostUSD.BreakPremium/o.PerRequestSavingUSD - 1e-9))
		}
		o.BreakEvenRequests = &x.breakEven
	}
	return o
}

func indexed(name string, i int) string {
	return name + "[" + strconv.Itoa(i) + "]"
}

// validate checks req field by field and precomputes the prefix sums.
func (q *quoteState) validate() error {
	req := q.req
	if err := req.Model.Validate(); err != nil {
		fe := err.(*FieldError)
		return &FieldError{Field: "model." + fe.Field, Message: fe.Message}
	}
	switch {
	case req.EnvelopeTokens < 0 || req.EnvelopeTokens > maxTokens:
		return fieldErrorf("envelopeTokens", "must be between 0 and 2^50, not %d", req.EnvelopeTokens)
	case req.ContextWindow < 0:
		return fieldErrorf("contextWindow", "must be >= 0, not %d", req.ContextWindow)
	case req.ThresholdTokens < 0:
		return fieldErrorf("thresholdTokens", "must be >= 0, not %d", req.ThresholdTokens)
	case !(req.IdleSeconds >= 0) || math.IsInf(req.IdleSeconds, 0):
		return fieldErrorf("idleSeconds", "must be a finite number >= 0")
	}
	q.env = req.EnvelopeTokens
	q.n = len(req.Units)

	// The plan's ids first, so that one pass over the units finds them all.
	seed := newSeed()
	ids := newPlanIDs(len(req.Plan.Prune) + 2)
	if len(req.Plan.Prune) > 0 {
		q.prunes = make([]prunePos, len(req.Plan.Prune))
		for i, p := range req.Plan.Prune {
			q.prunes[i].pos = ids.add(p.ID, hash32(seed, p.ID)) // a ref until resolved below
		}
	}
	startRef, endRef := -1, -1
	if s := req.Plan.Summarize; s != nil {
		startRef = ids.add(s.Start, hash32(seed, s.Start))
		endRef = ids.add(s.End, hash32(seed, s.End))
	}
	if err := q.scanUnits(seed, &ids); err != nil {
		return err
	}

	// Prunes, located and sorted by position.
	if len(req.Plan.Prune) > 0 {
		for i, p := range req.Plan.Prune {
			field := indexed("plan.prune", i)
			pos := ids.refs[q.prunes[i].pos].pos
			if pos < 0 {
				return fieldErrorf(field+".id", "unknown unit %q", p.ID)
			}
			orig := req.Units[pos].Tokens
			if p.TokensAfter < 0 {
				return fieldErrorf(field+".tokensAfter", "must be >= 0, not %d", p.TokensAfter)
			}
			if p.TokensAfter > orig {
				return fieldErrorf(field+".tokensAfter", "%d exceeds the %d tokens of unit %q", p.TokensAfter, orig, p.ID)
			}
			q.prunes[i] = prunePos{pos: pos, after: p.TokensAfter, planIndex: i, id: p.ID, tokensOrig: orig}
		}
		slices.SortFunc(q.prunes, func(x, y prunePos) int {
			if x.pos != y.pos {
				return x.pos - y.pos
			}
			return x.planIndex - y.planIndex
		})
		freed := int64(0)
		for i := range q.prunes {
			p := &q.prunes[i]
			if i > 0 && q.prunes[i-1].pos == p.pos {
				return fieldErrorf(indexed("plan.prune", p.planIndex)+".id", "unit %q is listed twice (also plan.prune[%d])", p.id, q.prunes[i-1].planIndex)
			}
			freed += p.tokensOrig - p.after
			p.freedUpTo = freed
		}
	}

	if s := req.Plan.Summarize; s != nil {
		q.hasSummary = true
		if s.Start == "" {
			return fieldErrorf("plan.summarize.start", "must not be empty")
		}
		if s.End == "" {
			return fieldErrorf("plan.summarize.end", "must not be empty")
		}
		if q.a = ids.refs[startRef].pos; q.a < 0 {
			return fieldErrorf("plan.summarize.start", "unknown unit %q", s.Start)
		}
		if q.b = ids.refs[endRef].pos; q.b < 0 {
			return fieldErrorf("plan.summarize.end", "unknown unit %q", s.End)
		}
		if q.a > q.b {
			return fieldErrorf("plan.summarize", "reversed span: start %q (position %d) comes after end %q (position %d)", s.Start, q.a, s.End, q.b)
		}
		if s.EstimatedTokens < 0 || s.EstimatedTokens > maxTokens {
			return fieldErrorf("plan.summarize.estimatedTokens", "must be between 0 and 2^50, not %d", s.EstimatedTokens)
		}
		if s.InstructionTokens < 0 || s.InstructionTokens > maxTokens {
			return fieldErrorf("plan.summarize.instructionTokens", "must be between 0 and 2^50, not %d", s.InstructionTokens)
		}
		q.checkpoint = s.EstimatedTokens
		if q.checkpoint == 0 {
			q.checkpoint = req.Model.EstimatedSummaryTokens
			if q.checkpoint > maxTokens {
				return fieldErrorf("model.estimatedSummaryTokens", "must be at most 2^50, not %d", q.checkpoint)
			}
		}
		if s.RestoredTokens < 0 || s.RestoredTokens > maxTokens {
			return fieldErrorf("plan.summarize.restoredTokens", "must be between 0 and 2^50, not %d", s.RestoredTokens)
		}
		q.restored = s.RestoredTokens
		q.instruction = s.InstructionTokens
		q.sameFamily = s.SameFamily == nil || *s.SameFamily
	}
	return nil
}
