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
