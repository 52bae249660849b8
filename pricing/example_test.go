package pricing_test

import (
	"fmt"
	"time"

	"tollgate/pricing"
)

// A positional cache with round prices: every prefix reusable, miss $1,
// hit $0.10, output $2 per million tokens.
var roundPrices = pricing.CacheModel{Kind: pricing.Positional, Granularity: 1, TTLSeconds: 300,
	Prices: pricing.Prices{PricePerMTokens: 1, CacheHitPricePerMTokens: 0.1, OutputPricePerMTokens: 2}}

// Pruning one old tool result: the next request reads the envelope and the
// units before the prune from the cache and sends the rest cold, once; every
// later request is 19,500 tokens smaller.
func ExampleNewQuote() {
	q, err := pricing.NewQuote(pricing.QuoteRequest{
		Model:          roundPrices,
		EnvelopeTokens: 10_000,
		Units: []pricing.Unit{
			{ID: "u0", Tokens: 20_000}, {ID: "u1", Tokens: 20_000},
			{ID: "u2", Tokens: 20_000, Kind: "tool-result"}, {ID: "u3", Tokens: 20_000},
		},
		Plan:          pricing.Plan{Prune: []pricing.Prune{{ID: "u2", TokensAfter: 500}}},
		ContextWindow: 128_000,
		IdleSeconds:   30,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("order:", q.Recommended)
	fmt.Printf("context %d → %d tokens, breaks at %s\n", q.ContextTokens, q.NextRequestTokens, q.BreakAt.UnitID)
	fmt.Printf("cold %d tokens (%.0f%%)\n", q.ColdTokens, 100*q.ColdShare)
	fmt.Printf("next request $%.4f instead of $%.4f: premium $%.4f\n", q.CostUSD.NextRequest, q.CostUSD.BaselineNextRequest, q.CostUSD.BreakPremium)
	fmt.Printf("saves $%.5f a request, even after %d\n", q.PerRequestSavingUSD, *q.BreakEvenRequests)
	// Output:
	// order: prune-only
	// context 90000 → 70500 tokens, breaks at u2
	// cold 20500 tokens (29%)
	// next request $0.0255 instead of $0.0090: premium $0.0165
	// saves $0.00195 a request, even after 9
}

// A plan with a summary and a prune inside its span is priced both ways;
// the quote recommends the ordering under the threshold whose next request
// and summary call cost least, and lists every ordering it compared.
func ExampleNewQuote_orderings() {
	q, err := pricing.NewQuote(pricing.QuoteRequest{
		Model:          roundPrices,
		EnvelopeTokens: 10_000,
		Units: []pricing.Unit{
			{ID: "u0", Tokens: 30_000}, {ID: "u1", Tokens: 30_000, Kind: "tool-result"},
			{ID: "u2", Tokens: 30_000}, {ID: "u3", Tokens: 5_000},
		},
		Plan: pricing.Plan{
			Prune:     []pricing.Prune{{ID: "u1", TokensAfter: 1_000}},
			Summarize: &pricing.SummaryPlan{Start: "u0", End: "u2", EstimatedTokens: 4_000, InstructionTokens: 500},
		},
		ContextWindow:   128_000,
		ThresholdTokens: 100_000,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range q.Alternatives {
		fmt.Printf("%-25s next %5d tokens (%5d cold)", o.Order, o.NextRequestTokens, o.ColdTokens)
		if c := o.SummaryCall; c != nil {
			fmt.Printf(", call %6d (%6d cached)", c.PromptTokens, c.CachedTokens)
		}
		fmt.Printf(": $%.4f\n", o.CostUSD.NextRequest+o.CostUSD.SummaryCall)
	}
	fmt.Println("recommended:", q.Recommended, "summarize", q.Apply.Summarize.Start+"…"+q.Apply.Summarize.End, "prune", q.Apply.Prune)
	// Output:
	// summarize-then-prune-tail next 19000 tokens ( 9000 cold), call 100500 (100000 cached): $0.0285
	// prune-then-summarize      next 19000 tokens ( 9000 cold), call  71500 ( 40000 cached): $0.0535
	// prune-only                next 76000 tokens (36000 cold): $0.0400
	// recommended: summarize-then-prune-tail summarize u0…u2 prune []
}

// A bad plan is refused with the field it is about.
func ExampleNewQuote_fieldError() {
	_, err := pricing.NewQuote(pricing.QuoteRequest{
		Model:          roundPrices,
		EnvelopeTokens: 10_000,
		Units:          []pricing.Unit{{ID: "u0", Tokens: 20_000}},
		Plan:           pricing.Plan{Prune: []pricing.Prune{{ID: "u9", TokensAfter: 100}}},
		ContextWindow:  128_000,
	})
	fmt.Println(err)
	// Output:
	// plan.prune[0].id: unknown unit "u9"
}

// DeepSeek's built-in model halves every price outside its weekday peak
// hours; a quote priced in that window says so (Quote.OffPeak).
func ExampleCacheModel_PricesAt() {
	m, _ := pricing.Builtin("deepseek", "deepseek-flash")
	monday := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	sunday := time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{monday, sunday} {
		p, offPeak := m.PricesAt(at)
		fmt.Printf("%s: miss $%.2f, hit $%.4f, off-peak %t\n", at.Weekday(), p.PricePerMTokens, p.CacheHitPricePerMTokens, offPeak)
	}
	// Output:
	// Monday: miss $0.30, hit $0.0060, off-peak false
	// Sunday: miss $0.15, hit $0.0030, off-peak true
}

// The ledger judges each request against the previous one of its thread
// and family: after a 10-minute pause the 5-minute cache is empty, and the
// third request writes again the prompt the second sent. The premium is
// those tokens at the write price minus the hit price.
func ExampleBreaks() {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	prices := pricing.Prices{PricePerMTokens: 3, CacheWritePricePerMTokens: 3.75, CacheHitPricePerMTokens: 0.3, OutputPricePerMTokens: 15}
	req := func(seq int64, at time.Duration, u pricing.Usage) pricing.LedgerRequest {
		return pricing.LedgerRequest{Seq: seq, At: start.Add(at), Family: "anthropic/claude-sonnet-4-5", Model: "claude-sonnet-4-5",
			Usage: u, StartedBy: "user-prompt", Prices: prices, TTLSeconds: 300}
	}
	for _, b := range pricing.Breaks([]pricing.LedgerRequest{
		req(1, 0, pricing.Usage{CacheWrite: 40_000, Output: 500}),
		req(2, time.Minute, pricing.Usage{CacheRead: 40_000, CacheWrite: 2_000, Output: 500}),
		req(3, 11*time.Minute, pricing.Usage{CacheWrite: 44_000, Output: 500}),
	}) {
		fmt.Printf("request %d: %s after %.0f s (TTL %d s), %d tokens re-billed, premium $%.4f\n",
			b.Seq, b.Cause, b.GapSeconds, b.TTLSeconds, b.RebilledTokens, b.PremiumUSD)
	}
	// Output:
	// request 3: idle after 600 s (TTL 300 s), 42000 tokens re-billed, premium $0.1449
}
