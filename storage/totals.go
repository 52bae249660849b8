package storage

import "tollgate/pricing"

// Totals is everything recorded for one harness and model, since the
// database began: what the Prometheus and OTLP exports count. Harness and
// model are the only labels (no session, no request: bounded cardinality).
type Totals struct {
	Harness  string
	Model    string
	Requests int64
	Tokens   pricing.Usage
	CostUSD  float64
}

// RewriteTotals counts the rewrites of one harness by decision ("allow",
// "decline", or "pending" while a question waits), with the cold tokens
// the declined ones avoided.
type RewriteTotals struct {
	Harness           string
	Decision          string
	Rewrites          int64
	AvoidedColdTokens int64
}

// BreakTotals sums the cache-break ledger of one harness by cause: how
// many breaks, the tokens they re-billed and what that cost above a warm
// cache.
type BreakTotals struct {
	Harness        string
	Cause          string
	Breaks         int64
	RebilledTokens int64
	PremiumUSD     float64
}
