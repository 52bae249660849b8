package pricing

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"tollgate/test/wanterr"
)

// Test models with round prices, so that costs can be checked by hand.
var (
	// exact: every prefix reusable, miss $1, hit $0.10, output $2 per 1M.
	exact = CacheModel{Kind: Positional, Granularity: 1, TTLSeconds: 300,
		Prices: Prices{PricePerMTokens: 1, CacheHitPricePerMTokens: 0.1, OutputPricePerMTokens: 2}}
	// gran64: DeepSeek-style storage unit.
	gran64 = CacheModel{Kind: Positional, Granularity: 64, MinimumPrefix: 64, TTLSeconds: 3600,
		Prices: Prices{PricePerMTokens: 1, CacheHitPricePerMTokens: 0.1, OutputPricePerMTokens: 2}}
	// openAIStyle: 128-token steps from 1,024 tokens on.
	openAIStyle = CacheModel{Kind: Positional, Granularity: 128, MinimumPrefix: 1024, TTLSeconds: 300,
		Prices: Prices{PricePerMTokens: 1, CacheHitPricePerMTokens: 0.1, OutputPricePerMTokens: 2}}
	// anthropic5m and anthropic1h: breakpoint caches billing writes at 1.25× and 2×.
	anthropic5m = CacheModel{Kind: Breakpoint, Granularity: 1, MinimumPrefix: 1024, TTLSeconds: 300,
		Prices: Prices{PricePerMTokens: 3, CacheWritePricePerMTokens: 3.75, CacheWrite1hPricePerMTokens: 6, CacheHitPricePerMTokens: 0.3, OutputPricePerMTokens: 15}}
	anthropic1h = func() CacheModel { m := anthropic5m; m.TTLSeconds = 3600; return m }()
)

// peak and offPeak are moments in and out of DeepSeek's peak hours.
var (
	peak    = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC) // Monday 02:00 UTC
	offPeak = time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC) // Sunday
)

func flash(t testing.TB) CacheModel {
	m, ok := Builtin("deepseek", "deepseek-flash")
	if !ok {
		t.Fatal("no built-in deepseek-flash")
	}
	return m
}

// surface builds units u0…u(n-1) with the given token counts.
func surface(tokens ...int64) []Unit {
	us := make([]Unit, len(tokens))
	for i, t := range tokens {
		us[i] = Unit{ID: fmt.Sprintf("u%d", i), Tokens: t, Kind: "tool-result"}
	}
	return us
}

func repeat(n int, tokens int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = tokens
	}
	return out
}

func flagged(us []Unit, ids ...int) []Unit {
	for _, i := range ids {
		us[i].Breakpoint = true
	}
	return us
}

func summarize(start, end string, checkpoint, instruction int64) *SummaryPlan {
	return &SummaryPlan{Start: start, End: end, EstimatedTokens: checkpoint, InstructionTokens: instruction}
}

func notSameFamily(s *SummaryPlan) *SummaryPlan {
	f := false
	s.SameFamily = &f
	return s
}

func ptr(n int64) *int64 { return &n }

// figures are the token-exact facts of one ordering a case pins down.
type figures struct {
	Order                  string
	Next, Cached           int64
	Pos                    int
	UnitID                 string
	CallPrompt, CallCached int64 // -1: no summary call
	Count                  int
	Freed                  int64
	Under                  bool
}

func figuresOf(o Ordering) figures {
	f := figures{Order: o.Order, Next: o.NextRequestTokens, Cached: o.BreakAt.CachedTokens,
		Pos: o.BreakAt.Position, UnitID: o.BreakAt.UnitID, CallPrompt: -1, CallCached: -1,
		Count: o.Prune.Count, Freed: o.Prune.FreedTokens, Under: o.UnderThreshold}
	if o.SummaryCall != nil {
		f.CallPrompt, f.CallCached = o.SummaryCall.PromptTokens, o.SummaryCall.CachedTokens
	}
	return f
}

// dialogSurface is the design's dialog case (§7): envelope 13,056 tokens
// (204 × 64, so that DeepSeek's 64-token unit holds it whole), 400 span units
// of 1,360 tokens (u0…u399 = 544,000), then a tail of 258 units: 246 of
// 1,000 and 12 old tool results of 3,000 at u405, u425, …, u625, pruned to
// 400 (eleven) and 600 (one), freeing 31,000.
func dialogRequest(t testing.TB, at time.Time) QuoteRequest {
	tokens := repeat(400, 1360)
	var prunes []Prune
	for i := range 258 {
		pos := 400 + i
		if i%20 == 5 && len(prunes) < 12 {
			tokens = append(tokens, 3000)
			after := int64(400)
			if len(prunes) == 11 {
				after = 600
			}
			prunes = append(prunes, Prune{ID: fmt.Sprintf("u%d", pos), TokensAfter: after})
			continue
		}
		tokens = append(tokens, 1000)
	}
	return QuoteRequest{
		Model:           flash(t),
		EnvelopeTokens:  13_056,
		Units:           surface(tokens...),
		Plan:            Plan{Prune: prunes, Summarize: summarize("u0", "u399", 4000, 470)},
		ContextWindow:   1_048_576,
		ThresholdTokens: 838_861,
		At:              at,
	}
}

type quoteCase struct {
	name        string
	req         QuoteRequest
	wantErr     string // the exact error; "" = success
	recommended string
	want        []figures             // every alternative, in order
	costs       map[string]QuoteCosts // USD, checked to 1e-12 where given
	breakEven   map[string]*int64     // checked where given
	expired     bool
}

func quoteCases(t testing.TB) []quoteCase {
	ten := surface(repeat(10, 1000)...)
	return []quoteCase{
		{
			name: "empty plan",
			req:  QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(1000, 1000, 1000)},
			// Nothing changes: the next request is the baseline, read whole.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 3500, Cached: 3500, Pos: 3, CallPrompt: -1, CallCached: -1, Under: true}},
			costs:       map[string]QuoteCosts{OrderPruneOnly: {NextRequest: 350e-6, BaselineNextRequest: 350e-6}},
			breakEven:   map[string]*int64{OrderPruneOnly: nil},
		},
		{
			name: "prune only",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...),
				Plan: Plan{Prune: []Prune{{ID: "u3", TokensAfter: 100}}}},
			// L = 10,500 − 900 = 9,600; shares E + P(3) = 3,500; 6,100 cold.
			// next = 3,500·0.1 + 6,100·1 = 6,450 µ$; baseline = 10,500·0.1 = 1,050 µ$;
			// premium 5,400 µ$; saving 900·0.1 = 90 µ$ → 60 requests.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 9600, Cached: 3500, Pos: 3, UnitID: "u3", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 900, Under: true}},
			costs:       map[string]QuoteCosts{OrderPruneOnly: {NextRequest: 6450e-6, BaselineNextRequest: 1050e-6, BreakPremium: 5400e-6}},
			breakEven:   map[string]*int64{OrderPruneOnly: ptr(60)},
		},
		{
			name: "summary only",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: ten,
				Plan: Plan{Summarize: summarize("u2", "u5", 300, 50)}},
			// next = E + P(2) + C + (P(10) − P(6)) = 500 + 2,000 + 300 + 4,000 = 6,800,
			// shared with the summary call up to the checkpoint: 2,500.
			// call = E + P(6) + I = 6,550, warm up to I: 6,500.
			recommended: OrderSummarizeThenPruneTail,
			want:        []figures{{Order: OrderSummarizeThenPruneTail, Next: 6800, Cached: 2500, Pos: 2, UnitID: "u2", CallPrompt: 6550, CallCached: 6500, Under: true}},
			// next = 2,500·0.1 + 4,300 = 4,550 µ$; call = 650 + 50 + 300·2 = 1,300 µ$;
			// baseline 1,050 µ$; premium 4,800 µ$; saving 3,700·0.1 = 370 µ$ → 13.
			costs:     map[string]QuoteCosts{OrderSummarizeThenPruneTail: {NextRequest: 4550e-6, SummaryCall: 1300e-6, BaselineNextRequest: 1050e-6, BreakPremium: 4800e-6}},
			breakEven: map[string]*int64{OrderSummarizeThenPruneTail: ptr(13)},
		},
		{
			name: "summary with restored tokens after the checkpoint",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: ten,
				Plan: Plan{Summarize: &SummaryPlan{Start: "u2", End: "u5", EstimatedTokens: 300, InstructionTokens: 50, RestoredTokens: 700}}},
			// As "summary only", and the 700 restored tokens follow the
			// checkpoint, cold: next = 7,500, 2,500 shared; the call is unchanged.
			recommended: OrderSummarizeThenPruneTail,
			want:        []figures{{Order: OrderSummarizeThenPruneTail, Next: 7500, Cached: 2500, Pos: 2, UnitID: "u2", CallPrompt: 6550, CallCached: 6500, Under: true}},
			// next = 250 + 5,000 = 5,250 µ$; premium 5,250 + 1,300 − 1,050 = 5,500 µ$;
			// saving 3,000·0.1 = 300 µ$ → 19.
			costs:     map[string]QuoteCosts{OrderSummarizeThenPruneTail: {NextRequest: 5250e-6, SummaryCall: 1300e-6, BaselineNextRequest: 1050e-6, BreakPremium: 5500e-6}},
			breakEven: map[string]*int64{OrderSummarizeThenPruneTail: ptr(19)},
		},
		{
			name:    "negative restored tokens",
			req:     QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: ten, Plan: Plan{Summarize: &SummaryPlan{Start: "u2", End: "u5", RestoredTokens: -1}}},
			wantErr: "plan.summarize.restoredTokens: must be between 0 and 2^50, not -1",
		},
		{
			name: "both orders, a prune before, inside and after the span",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...), ThresholdTokens: 8000,
				Plan: Plan{
					Prune:     []Prune{{ID: "u8", TokensAfter: 200}, {ID: "u1", TokensAfter: 100}, {ID: "u4", TokensAfter: 0}},
					Summarize: summarize("u3", "u6", 400, 50),
				}},
			// summarize-then-prune-tail applies u8 only: next = 500 + 3,000 + 400 + 2,200 = 6,100,
			//   warm to the checkpoint (3,500); its call reads E + P(7) = 7,500 of 7,550.
			// prune-then-summarize applies all: call = 500 + (7,000 − 900 − 1,000) + 50 = 5,650,
			//   cold from u1 (1,500 cached); next = 500 + 2,100 + 400 + 2,200 = 5,200, warm
			//   up to E + P′(3) = 2,600 — the summary call re-warmed the pruned prefix.
			// prune-only: 10,500 − 2,700 = 7,800 < 8,000, shares E + P(1) = 1,500.
			// Cost (µ$): tail 2,950 + 1,600 = 4,550; prune-first 2,860 + 5,100 = 7,960; prune-only 6,450.
			recommended: OrderSummarizeThenPruneTail,
			want: []figures{
				{Order: OrderSummarizeThenPruneTail, Next: 6100, Cached: 3500, Pos: 3, UnitID: "u3", CallPrompt: 7550, CallCached: 7500, Count: 1, Freed: 800, Under: true},
				{Order: OrderPruneThenSummarize, Next: 5200, Cached: 2600, Pos: 3, UnitID: "u3", CallPrompt: 5650, CallCached: 1500, Count: 3, Freed: 2700, Under: true},
				{Order: OrderPruneOnly, Next: 7800, Cached: 1500, Pos: 1, UnitID: "u1", CallPrompt: -1, CallCached: -1, Count: 3, Freed: 2700, Under: true},
			},
			costs: map[string]QuoteCosts{
				OrderSummarizeThenPruneTail: {NextRequest: 2950e-6, SummaryCall: 1600e-6, BaselineNextRequest: 1050e-6, BreakPremium: 3500e-6},
				OrderPruneThenSummarize:     {NextRequest: 2860e-6, SummaryCall: 5100e-6, BaselineNextRequest: 1050e-6, BreakPremium: 6910e-6},
				OrderPruneOnly:              {NextRequest: 6450e-6, BaselineNextRequest: 1050e-6, BreakPremium: 5400e-6},
			},
		},
		{
			name: "a prune before the span, summary call in the same family re-warms the pruned prefix",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...),
				Plan: Plan{Prune: []Prune{{ID: "u2", TokensAfter: 100}}, Summarize: summarize("u5", "u9", 300, 50)}},
			// prune-then-summarize: the call replays E + T′0…T′9 + I = 500 + 9,100 + 50 = 9,650,
			// cold from u2 (E + P(2) = 2,500 cached). The next request
			// E + T′0…T′4 + C = 500 + 4,100 + 300 = 4,900 shares E + P′(5) = 4,600 with the
			// call: the pruned u2 and u3, u4 after it come back warm.
			// summarize-then-prune-tail leaves u2 alone: next = 500 + 5,000 + 300 = 5,800.
			// prune-only: no threshold, so listed; shares E + P(2).
			// Cost (µ$): tail 850 + 1,700; prune-first 760 + 8,000; prune-only 7,350.
			recommended: OrderSummarizeThenPruneTail,
			want: []figures{
				{Order: OrderSummarizeThenPruneTail, Next: 5800, Cached: 5500, Pos: 5, UnitID: "u5", CallPrompt: 10550, CallCached: 10500, Under: true},
				{Order: OrderPruneThenSummarize, Next: 4900, Cached: 4600, Pos: 5, UnitID: "u5", CallPrompt: 9650, CallCached: 2500, Count: 1, Freed: 900, Under: true},
				{Order: OrderPruneOnly, Next: 9600, Cached: 2500, Pos: 2, UnitID: "u2", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 900, Under: true},
			},
		},
		{
			name: "sameFamily false: the summary call reuses and warms nothing",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...),
				Plan: Plan{Prune: []Prune{{ID: "u2", TokensAfter: 100}}, Summarize: notSameFamily(summarize("u5", "u9", 300, 50))}},
			// The same plan as above, but the next request only shares
			// E + P(min(a, f)) with the last request: E + P(5) for the tail order,
			// E + P(2) once u2 is pruned; both calls are wholly cold.
			recommended: OrderPruneOnly,
			want: []figures{
				{Order: OrderSummarizeThenPruneTail, Next: 5800, Cached: 5500, Pos: 5, UnitID: "u5", CallPrompt: 10550, CallCached: 0, Under: true},
				{Order: OrderPruneThenSummarize, Next: 4900, Cached: 2500, Pos: 2, UnitID: "u2", CallPrompt: 9650, CallCached: 0, Count: 1, Freed: 900, Under: true},
				{Order: OrderPruneOnly, Next: 9600, Cached: 2500, Pos: 2, UnitID: "u2", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 900, Under: true},
			},
		},
		{
			name: "break at position 0: the summary starts at the first unit",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 1000, Units: surface(1000, 1000, 1000, 1000, 1000),
				Plan: Plan{Summarize: summarize("u0", "u2", 100, 10)}},
			recommended: OrderSummarizeThenPruneTail,
			want:        []figures{{Order: OrderSummarizeThenPruneTail, Next: 3100, Cached: 1000, Pos: 0, UnitID: "u0", CallPrompt: 4010, CallCached: 4000, Under: true}},
		},
		{
			name: "break after the envelope: the first unit is pruned",
			req: QuoteRequest{Model: gran64, EnvelopeTokens: 1024, Units: surface(1000, 1000, 1000),
				Plan: Plan{Prune: []Prune{{ID: "u0", TokensAfter: 10}}}},
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 3034, Cached: 1024, Pos: 0, UnitID: "u0", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 990, Under: true}},
		},
		{
			name: "break inside the envelope: it is no multiple of the granularity",
			req: QuoteRequest{Model: gran64, EnvelopeTokens: 1000, Units: surface(1000, 1000, 1000),
				Plan: Plan{Prune: []Prune{{ID: "u0", TokensAfter: 10}}}},
			// cached(1,000) = 15·64 = 960 < E: the envelope's last 40 tokens are re-read.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 3010, Cached: 960, Pos: -1, CallPrompt: -1, CallCached: -1, Count: 1, Freed: 990, Under: true}},
		},
		{
			name: "granularity 64 rounds the shared prefix down",
			req: QuoteRequest{Model: gran64, EnvelopeTokens: 1000, Units: surface(1000, 1000, 1000),
				Plan: Plan{Prune: []Prune{{ID: "u2", TokensAfter: 10}}}},
			// shares E + P(2) = 3,000 → 46·64 = 2,944: u1 is partly cold.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 3010, Cached: 2944, Pos: 1, UnitID: "u1", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 990, Under: true}},
		},
		{
			name: "granularity 128 from 1,024: a shared prefix under the minimum is not cached",
			req: QuoteRequest{Model: openAIStyle, EnvelopeTokens: 900, Units: surface(100, 500, 500),
				Plan: Plan{Prune: []Prune{{ID: "u1", TokensAfter: 50}}}},
			// shares E + P(1) = 1,000 < 1,024 → nothing, not even the envelope.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 1550, Cached: 0, Pos: -1, CallPrompt: -1, CallCached: -1, Count: 1, Freed: 450, Under: true}},
		},
		{
			name: "granularity 128 from 1,024: above the minimum, rounded down",
			req: QuoteRequest{Model: openAIStyle, EnvelopeTokens: 900, Units: surface(100, 500, 500),
				Plan: Plan{Prune: []Prune{{ID: "u2", TokensAfter: 50}}}},
			// shares E + P(2) = 1,500 → 11·128 = 1,408: u1 (1,000…1,500) is partly cold.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 1550, Cached: 1408, Pos: 1, UnitID: "u1", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 450, Under: true}},
		},
		{
			name: "breakpoint cache, 5-minute writes billed at 1.25x",
			req: QuoteRequest{Model: anthropic5m, EnvelopeTokens: 2000, Units: flagged(surface(repeat(10, 1000)...), 3, 7, 9),
				Plan: Plan{Prune: []Prune{{ID: "u6", TokensAfter: 100}}}},
			// shares E + P(6) = 8,000, but the last entry below it ends after u3: 6,000.
			// L = 12,000 − 900 = 11,100; 5,100 cold at the write price $3.75.
			// next = 6,000·0.3 + 5,100·3.75 = 20,925 µ$; the baseline reads all 12,000
			// (u9, the last unit, is flagged): 3,600 µ$; premium 17,325 µ$;
			// saving 900·0.3 = 270 µ$ → ceil(64.17) = 65.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 11100, Cached: 6000, Pos: 4, UnitID: "u4", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 900, Under: true}},
			costs:       map[string]QuoteCosts{OrderPruneOnly: {NextRequest: 20925e-6, BaselineNextRequest: 3600e-6, BreakPremium: 17325e-6}},
			breakEven:   map[string]*int64{OrderPruneOnly: ptr(65)},
		},
		{
			name: "breakpoint cache, 1-hour writes billed at 2x",
			req: QuoteRequest{Model: anthropic1h, EnvelopeTokens: 2000, Units: flagged(surface(repeat(10, 1000)...), 3, 7, 9),
				Plan: Plan{Prune: []Prune{{ID: "u6", TokensAfter: 100}}}},
			// As above with cold tokens at $6: next = 1,800 + 30,600 = 32,400 µ$,
			// premium 28,800 µ$ → ceil(106.67) = 107.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 11100, Cached: 6000, Pos: 4, UnitID: "u4", CallPrompt: -1, CallCached: -1, Count: 1, Freed: 900, Under: true}},
			costs:       map[string]QuoteCosts{OrderPruneOnly: {NextRequest: 32400e-6, BaselineNextRequest: 3600e-6, BreakPremium: 28800e-6}},
			breakEven:   map[string]*int64{OrderPruneOnly: ptr(107)},
		},
		{
			name: "breakpoint cache without flagged units: only the envelope's entry",
			req: QuoteRequest{Model: anthropic5m, EnvelopeTokens: 2000, Units: surface(repeat(4, 1000)...),
				Plan: Plan{Summarize: summarize("u2", "u3", 500, 100)}},
			// The last unit is not flagged, so even the baseline reads only E.
			// The call and the next request share E + P(2) = 4,000 with cache entries at E only.
			recommended: OrderSummarizeThenPruneTail,
			want:        []figures{{Order: OrderSummarizeThenPruneTail, Next: 4500, Cached: 2000, Pos: 0, UnitID: "u0", CallPrompt: 6100, CallCached: 2000, Under: true}},
			costs: map[string]QuoteCosts{OrderSummarizeThenPruneTail: {
				NextRequest: (2000*0.3 + 2500*3.75) / 1e6, SummaryCall: (2000*0.3 + 4100*3.75 + 500*15) / 1e6,
				BaselineNextRequest: (2000*0.3 + 4000*3.75) / 1e6,
				BreakPremium:        (2000*0.3+2500*3.75)/1e6 + (2000*0.3+4100*3.75+500*15)/1e6 - (2000*0.3+4000*3.75)/1e6,
			}},
		},
		{
			name: "breakpoint cache under its minimum prefix",
			req: QuoteRequest{Model: anthropic5m, EnvelopeTokens: 500, Units: flagged(surface(300, 300, 300), 0, 2),
				Plan: Plan{Prune: []Prune{{ID: "u1", TokensAfter: 10}}}},
			// The only entry below E + P(1) ends at 800 < 1,024: nothing is cached.
			recommended: OrderPruneOnly,
			want:        []figures{{Order: OrderPruneOnly, Next: 1110, Cached: 0, Pos: -1, CallPrompt: -1, CallCached: -1, Count: 1, Freed: 290, Under: true}},
		},
		{
			name: "idle past the TTL: the cache expired",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...), IdleSeconds: 301,
				Plan: Plan{Summarize: summarize("u2", "u5", 300, 50)}},
			// The call is wholly cold; the next request still reads E + P(2) from it
			// (it just ran). The baseline is cold: 10,500 µ$. The premium is the
			// call's output only: 300·2 = 600 µ$; saving 370 µ$ → 2.
			recommended: OrderSummarizeThenPruneTail,
			expired:     true,
			want:        []figures{{Order: OrderSummarizeThenPruneTail, Next: 6800, Cached: 2500, Pos: 2, UnitID: "u2", CallPrompt: 6550, CallCached: 0, Under: true}},
			costs: map[string]QuoteCosts{OrderSummarizeThenPruneTail: {NextRequest: 4550e-6, SummaryCall: 7150e-6,
				BaselineNextRequest: 10500e-6, BreakPremium: 600e-6}},
			breakEven: map[string]*int64{OrderSummarizeThenPruneTail: ptr(2)},
		},
		{
			name: "idle past the TTL, prune only: the break costs nothing",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...), IdleSeconds: 3600,
				Plan: Plan{Prune: []Prune{{ID: "u3", TokensAfter: 100}}}},
			recommended: OrderPruneOnly,
			expired:     true,
			want:        []figures{{Order: OrderPruneOnly, Next: 9600, Cached: 0, Pos: -1, CallPrompt: -1, CallCached: -1, Count: 1, Freed: 900, Under: true}},
			costs:       map[string]QuoteCosts{OrderPruneOnly: {NextRequest: 9600e-6, BaselineNextRequest: 10500e-6}},
			breakEven:   map[string]*int64{OrderPruneOnly: ptr(0)},
		},
		{
			name: "nothing brings the context under the threshold: the smallest context wins",
			req: QuoteRequest{Model: exact, EnvelopeTokens: 500, Units: surface(repeat(10, 1000)...), ThresholdTokens: 1000,
				Plan: Plan{Prune: []Prune{{ID: "u1", TokensAfter: 0}}, Summarize: summarize("u3", "u6", 400, 50)}},
			recommended: OrderPruneThenSummarize,
			want: []figures{
				{Order: OrderSummarizeThenPruneTail, Next: 6900, Cached: 3500, Pos: 3, UnitID: "u3", CallPrompt: 7550, CallCached: 7500},
				{Order: OrderPruneThenSummarize, Next: 5900, Cached: 2500, Pos: 3, UnitID: "u3", CallPrompt: 6550, CallCached: 1500, Count: 1, Freed: 1000},
			},
		},
		{
			// The design's dialog (§7), priced with deepseek-flash at peak
			// (miss $0.30, hit $0.006, output $1.20; 64-token unit).
			//   context  = 13,056 + 544,000 + 282,000 = 839,056 ≥ 838,861
			//   summarize-then-prune-tail:
			//     next   = 13,056 + 4,000 + 282,000 − 31,000 = 268,056
			//     cached = E = 13,056 (204·64); cold = 255,000 = 95.1% of it
			//     call   = 13,056 + 544,000 + 470 = 557,526, warm to 557,056 (8,704·64)
			//     $next  = 13,056·0.006 + 255,000·0.30       = 76,578.336 µ$
			//     $call  = 557,056·0.006 + 470·0.30 + 4,000·1.20 = 8,283.336 µ$
			//     $base  = 839,040·0.006 + 16·0.30           = 5,039.04 µ$ (839,056 → 13,110·64)
			//     premium = 79,822.632 µ$ ≈ $0.08
			//     saving = (839,056 − 268,056)·0.006 = 3,426 µ$ → ceil(23.3) = 24 requests
			//   prune-only: 839,056 − 31,000 = 808,056 < 838,861, so it applies, and it
			//     is cheaper: it breaks only at u405 (E + P(405) = 562,056 → 562,048).
			//     So the rule of §4 recommends prune-only here, not the dialog's order.
			name:        "the design's dialog case",
			req:         dialogRequest(t, peak),
			recommended: OrderPruneOnly,
			want: []figures{
				{Order: OrderSummarizeThenPruneTail, Next: 268_056, Cached: 13_056, Pos: 0, UnitID: "u0", CallPrompt: 557_526, CallCached: 557_056, Count: 12, Freed: 31_000, Under: true},
				{Order: OrderPruneOnly, Next: 808_056, Cached: 562_048, Pos: 404, UnitID: "u404", CallPrompt: -1, CallCached: -1, Count: 12, Freed: 31_000, Under: true},
			},
			costs: map[string]QuoteCosts{
				OrderSummarizeThenPruneTail: {NextRequest: 76578.336e-6, SummaryCall: 8283.336e-6, BaselineNextRequest: 5039.04e-6, BreakPremium: 79822.632e-6},
				// next = 562,048·0.006 + 246,008·0.30 = 3,372.288 + 73,802.4 µ$
				OrderPruneOnly: {NextRequest: 77174.688e-6, BaselineNextRequest: 5039.04e-6, BreakPremium: 72135.648e-6},
			},
			breakEven: map[string]*int64{OrderSummarizeThenPruneTail: ptr(24), OrderPruneOnly: ptr(388)},
		},
		{
			name:        "the dialog case off-peak: every price halves",
			req:         dialogRequest(t, offPeak),
			recommended: OrderPruneOnly,
			want: []figures{
				{Order: OrderSummarizeThenPruneTail, Next: 268_056, Cached: 13_056, Pos: 0, UnitID: "u0", CallPrompt: 557_526, CallCached: 557_056, Count: 12, Freed: 31_000, Under: true},
				{Order: OrderPruneOnly, Next: 808_056, Cached: 562_048, Pos: 404, UnitID: "u404", CallPrompt: -1, CallCached: -1, Count: 12, Freed: 31_000, Under: true},
			},
			costs: map[string]QuoteCosts{
				OrderSummarizeThenPruneTail: {NextRequest: 76578.336e-6 / 2, SummaryCall: 8283.336e-6 / 2, BaselineNextRequest: 5039.04e-6 / 2, BreakPremium: 79822.632e-6 / 2},
			},
			breakEven: map[string]*int64{OrderSummarizeThenPruneTail: ptr(24)},
		},

		// Validation: every error names its field.
		{name: "granularity 0", req: QuoteRequest{Model: func() CacheModel { m := exact; m.Granularity = 0; return m }(), Units: surface(1)},
			wantErr: "model.granularity: must be > 0"},
		{name: "negative tokens", req: QuoteRequest{Model: exact, Units: surface(1, -2)},
			wantErr: "units[1].tokens: must be >= 0, not -2"},
		{name: "negative envelope", req: QuoteRequest{Model: exact, EnvelopeTokens: -1},
			wantErr: "envelopeTokens: must be between 0 and 2^50, not -1"},
		{name: "duplicate unit ids", req: QuoteRequest{Model: exact, Units: append(surface(1, 2, 3), Unit{ID: "u1", Tokens: 4})},
			wantErr: `units[3].id: duplicate id "u1" (also units[1])`},
		{name: "unknown unit in a prune", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3, 4),
			Plan: Plan{Prune: []Prune{{ID: "u0"}, {ID: "u1"}, {ID: "u2"}, {ID: "seq-99"}}}},
			wantErr: `plan.prune[3].id: unknown unit "seq-99"`},
		{name: "a prune listed twice", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3),
			Plan: Plan{Prune: []Prune{{ID: "u2"}, {ID: "u0"}, {ID: "u2", TokensAfter: 1}}}},
			wantErr: `plan.prune[2].id: unit "u2" is listed twice (also plan.prune[0])`},
		{name: "tokensAfter above the original", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3),
			Plan: Plan{Prune: []Prune{{ID: "u1", TokensAfter: 3}}}},
			wantErr: `plan.prune[0].tokensAfter: 3 exceeds the 2 tokens of unit "u1"`},
		{name: "negative tokensAfter", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3),
			Plan: Plan{Prune: []Prune{{ID: "u1", TokensAfter: -3}}}},
			wantErr: `plan.prune[0].tokensAfter: must be >= 0, not -3`},
		{name: "reversed span", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3),
			Plan: Plan{Summarize: summarize("u2", "u0", 1, 1)}},
			wantErr: `plan.summarize: reversed span: start "u2" (position 2) comes after end "u0" (position 0)`},
		{name: "empty span", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3),
			Plan: Plan{Summarize: summarize("", "u0", 1, 1)}},
			wantErr: `plan.summarize.start: must not be empty`},
		{name: "unknown span end", req: QuoteRequest{Model: exact, Units: surface(1, 2, 3),
			Plan: Plan{Summarize: summarize("u0", "u9", 1, 1)}},
			wantErr: `plan.summarize.end: unknown unit "u9"`},
		{name: "idle is not a number", req: QuoteRequest{Model: exact, IdleSeconds: math.NaN()},
			wantErr: `idleSeconds: must be a finite number >= 0`},
		{name: "bad off-peak window", req: QuoteRequest{Model: func() CacheModel {
			m := exact
			m.OffPeak = &PriceWindow{Days: []string{"mon-fry"}, Factor: 0.5}
			return m
		}()}, wantErr: `model.offPeak.days[0]: "mon-fry" is not a weekday or a range like mon-fri`},
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range quoteCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			q, err := NewQuote(tc.req)
			if wanterr.Typed[*FieldError](t, err, tc.wantErr) {
				return
			}
			if q.Recommended != tc.recommended || q.Order != tc.recommended {
				t.Errorf("recommended %q (order %q), want %q", q.Recommended, q.Order, tc.recommended)
			}
			var got []figures
			for _, o := range q.Alternatives {
				got = append(got, figuresOf(o))
				if o.CacheExpired != tc.expired {
					t.Errorf("%s: cacheExpired = %v", o.Order, o.CacheExpired)
				}
				if want, ok := tc.costs[o.Order]; ok && !closeCosts(o.CostUSD, want) {
					t.Errorf("%s: costs %+v, want %+v", o.Order, o.CostUSD, want)
				}
				if want, ok := tc.breakEven[o.Order]; ok {
					if (want == nil) != (o.BreakEvenRequests == nil) || (want != nil && *want != *o.BreakEvenRequests) {
						t.Errorf("%s: breakEvenRequests = %s, want %s", o.Order, fmtPtr(o.BreakEvenRequests), fmtPtr(want))
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("alternatives:\n got %+v\nwant %+v", got, tc.want)
			}
			checkInvariants(t, tc.req, q)
			checkAgainstReference(t, tc.req, q)
		})
	}
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func closeTo(x, y float64) bool {
	return math.Abs(x-y) <= 1e-12+1e-9*math.Max(math.Abs(x), math.Abs(y))
}

func closeCosts(x, y QuoteCosts) bool {
	return closeTo(x.NextRequest, y.NextRequest) && closeTo(x.SummaryCall, y.SummaryCall) &&
		closeTo(x.BaselineNextRequest, y.BaselineNextRequest) && closeTo(x.BreakPremium, y.BreakPremium)
}

// checkInvariants checks what must hold of every quote.
func checkInvariants(t testing.TB, req QuoteRequest, q Quote) {
	t.Helper()
	if len(q.Alternatives) == 0 {
		t.Fatal("no alternatives")
	}
	found := false
	for _, o := range q.Alternatives {
		if o.Order == q.Recommended {
			found = true
		}
		if o.ColdTokens != o.NextRequestTokens-o.BreakAt.CachedTokens || o.ColdTokens < 0 || o.BreakAt.CachedTokens < 0 {
			t.Errorf("%s: cold %d, next %d, cached %d", o.Order, o.ColdTokens, o.NextRequestTokens, o.BreakAt.CachedTokens)
		}
		if o.NextRequestTokens > 0 && !closeTo(o.ColdShare, float64(o.ColdTokens)/float64(o.NextRequestTokens)) {
			t.Errorf("%s: coldShare %v", o.Order, o.ColdShare)
		}
		if c := o.SummaryCall; c != nil && (c.ColdTokens != c.PromptTokens-c.CachedTokens || c.CachedTokens > c.PromptTokens) {
			t.Errorf("%s: summary call %+v", o.Order, *c)
		}
		if (o.Summary == nil) != (o.SummaryCall == nil) || (o.Summary == nil) != (o.Apply.Summarize == nil) {
			t.Errorf("%s: summary, summaryCall and apply.summarize disagree", o.Order)
		}
		if o.Apply.Prune == nil || len(o.Apply.Prune) != o.Prune.Count {
			t.Errorf("%s: apply.prune %v, count %d", o.Order, o.Apply.Prune, o.Prune.Count)
		}
		if !o.CacheExpired && !closeTo(o.CostUSD.BreakPremium, o.CostUSD.NextRequest+o.CostUSD.SummaryCall-o.CostUSD.BaselineNextRequest) {
			t.Errorf("%s: premium %v", o.Order, o.CostUSD.BreakPremium)
		}
		if o.BreakAt.Position < -1 || o.BreakAt.Position > len(req.Units) {
			t.Errorf("%s: breakAt %+v", o.Order, o.BreakAt)
		}
	}
	if !found {
		t.Errorf("recommended %q is not among the alternatives", q.Recommended)
	}
	// The JSON carries the §4 names.
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"contextTokens"`, `"contextWindow"`, `"thresholdTokens"`, `"prune":{"count"`, `"freedTokens"`,
		`"summary"`, `"breakAt":{"position"`, `"unitId"`, `"cachedTokens"`, `"coldTokens"`, `"coldShare"`, `"nextRequestTokens"`,
		`"summaryCall"`, `"costUSD":{"nextRequest"`, `"summaryCall"`, `"baselineNextRequest"`, `"breakPremium"`,
		`"perRequestSavingUSD"`, `"breakEvenRequests"`, `"cacheExpired"`, `"recommended"`, `"order"`, `"apply":{"summarize"`,
		`"alternatives":[{"order"`, `"underThreshold"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("quote JSON lacks %s: %s", key, b)
		}
	}
}

// checkAgainstReference compares every alternative with the naive reference.
func checkAgainstReference(t testing.TB, req QuoteRequest, q Quote) {
	t.Helper()
	ref, rec := refQuote(req)
	if rec != q.Recommended {
		t.Errorf("reference recommends %q, fast path %q", rec, q.Recommended)
	}
	if len(ref) != len(q.Alternatives) {
		t.Fatalf("reference has %d orderings, fast path %d", len(ref), len(q.Alternatives))
	}
	for i, r := range ref {
		o := q.Alternatives[i]
		call := SummaryCallFigures{}
		if o.SummaryCall != nil {
			call = *o.SummaryCall
		}
		span := Span{}
		if o.Apply.Summarize != nil {
			span = *o.Apply.Summarize
		}
		spanTokens := int64(0)
		if o.Summary != nil {
			spanTokens = o.Summary.SpanTokens
		}
		be := int64(-1)
		if o.BreakEvenRequests != nil {
			be = *o.BreakEvenRequests
		}
		got := fmt.Sprint(o.Order, o.ContextTokens, o.NextRequestTokens, o.BreakAt.CachedTokens, o.ColdTokens, o.BreakAt.Position, o.BreakAt.UnitID,
			o.SummaryCall != nil, call.PromptTokens, call.CachedTokens, call.OutputTokens, o.Prune.Count, o.Prune.FreedTokens, spanTokens,
			be, o.UnderThreshold, o.Apply.Prune, span.Start, span.End)
		want := fmt.Sprint(r.order, r.ctx, r.next, r.cached, r.cold, r.pos, r.unitID,
			r.hasCall, r.callPrompt, r.callCached, r.callOut, r.count, r.freed, r.spanTokens,
			r.breakEven, r.under, r.applyPrune, r.applyStart, r.applyEnd)
		if got != want {
			t.Errorf("ordering %d differs from the reference:\n fast %s\n  ref %s", i, got, want)
		}
		if !closeCosts(o.CostUSD, QuoteCosts{NextRequest: r.nextUSD, SummaryCall: r.callUSD, BaselineNextRequest: r.baseUSD, BreakPremium: r.premium}) ||
			!closeTo(o.PerRequestSavingUSD, r.saving) {
			t.Errorf("%s: costs %+v saving %v, reference %v %v %v %v saving %v", o.Order, o.CostUSD, o.PerRequestSavingUSD,
				r.nextUSD, r.callUSD, r.baseUSD, r.premium, r.saving)
		}
	}
}
