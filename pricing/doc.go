// Package pricing prices a context rewrite exactly as a provider's prefix
// cache bills it. It is pure computation: no I/O, no clock (times are passed
// in), no package-level state, only the standard library.
//
// # Cache models
//
// A request of L prompt tokens whose longest reusable prefix is p costs
//
//	cached(p)·hit + (L − cached(p))·cold + out·output      (all per 1M tokens)
//
// where cold is the write price when the provider bills writes (the one-hour
// price when ttlSeconds > 300 and it is set, else the 5-minute one) and the
// miss price otherwise, and
//
//	positional: cached(p) = p >= minimumPrefix ? floor(p/granularity)·granularity : 0
//	breakpoint: cached(p) = the largest breakpoint boundary B <= p, if B >= minimumPrefix, else 0
//
// Breakpoint boundaries are where an earlier request wrote a cache entry: the
// end of the envelope (always) and the end of every unit flagged
// `breakpoint: true` — the boundary lies AFTER the flagged unit, as
// Anthropic's cache_control caches the prefix up to and including its block.
// The last unit of a request is NOT implicitly a boundary: a harness whose
// requests carry a breakpoint on their last message (Claude Code's automatic
// caching) flags that unit, and then the whole prompt of the last request is
// reusable. Granularity is ignored by breakpoint caches, though it must be > 0.
// Two simplifications, by design: every uncached token is
// billed as a write (Anthropic bills the tokens after a request's last
// breakpoint at the base input price, so a request whose last unit is not
// flagged is overstated by write − miss on that tail), and Anthropic's
// 20-block lookback from a breakpoint is not modelled (an entry further back
// than that would in fact be missed).
//
// # Quotes
//
// The surface is the envelope E (tools + system prompt, first and never
// rewritten) followed by units T0…Tn-1; P(k) = T0+…+Tk-1. A plan prunes
// some units in place (T′ after the prunes an ordering applies, P′ its
// prefix sums) and may summarize the span [a, b] into a checkpoint of C
// tokens with a summary call that appends I instruction tokens. f is the
// first pruned position the ordering applies (n when none).
//
// The cache holds every earlier request of the family: the last
// conversation request E+T0…Tn-1 and, when the summary call shares the family
// (sameFamily, default true), the summary call E+T′0…T′b+I. A request reuses
// the longest prefix it shares with either, a prefix always ending at a unit
// boundary:
//
//	prune only       next = E + P′(n)               shares E + P(f) with the last request
//	summary [a, b]   next = E + P′(a) + C + P′(n) − P′(b+1)
//	                 shares E + P′(a) with the summary call (same family),
//	                 else E + P(min(a, f)) with the last request; the tail after
//	                 the checkpoint is cold (a positional cache re-reads a shifted tail)
//	summary call     prompt = E + P′(b+1) + I, output C; shares E + P(min(f, b+1))
//	                 with the last request in the same family, nothing otherwise
//	baseline         the same context E + P(n) sent again: shares all of it
//
// When idleSeconds > ttlSeconds the last request is gone from the cache
// (cacheExpired): nothing is shared with it, the baseline is cold too, and
// the break premium shrinks to the summary call's output, C·output (0 for
// prune-only), by design — the re-reads are then paid with or
// without the rewrite. The summary call itself is always fresh.
//
// Per ordering:
//
//	breakAt.position    first surface index not wholly read from the cache in
//	                    the next request (the checkpoint stands at a); -1 when the
//	                    break lies inside the envelope, n when nothing breaks
//	coldTokens          nextRequestTokens − breakAt.cachedTokens; coldShare = coldTokens / nextRequestTokens
//	breakPremium        nextRequest + summaryCall − baselineNextRequest
//	perRequestSaving    (contextTokens − nextRequestTokens)·hit: later requests read the whole context from the cache
//	breakEvenRequests   ceil(breakPremium / perRequestSaving), 0 when the premium is <= 0,
//	                    null when nothing is saved
//
// # Orderings
//
//   - summarize-then-prune-tail: the summary over the untouched span, and only
//     the prunes after b (its call is warm up to I). A plan with only a
//     summary is priced under this name.
//   - prune-then-summarize: every prune first, then the summary over the
//     rewritten span (its call is cold from the first pruned unit). Listed
//     only when a prune lies at or before b; otherwise it is the same rewrite
//     as summarize-then-prune-tail.
//   - prune-only: every prune, no summary. Listed when the plan has no
//     summary (an empty plan is a no-op prune-only), or when it has prunes
//     and E + P′(n) is under the threshold.
//
// The recommended ordering is the cheapest (nextRequest + summaryCall) of
// those that bring the next request under thresholdTokens (0 = no
// threshold); when none does, the one leaving the smallest context. Ties keep
// the earlier ordering in the order above.
//
// # Simulator
//
// Simulator replays whole sessions (unit hashes, token counts, times, family
// keys) through the same cache model: a request reuses the longest prefix it
// shares with any live earlier request of its family (younger than the TTL),
// rounded as cached() above; for breakpoint caches, down to the deepest live
// entry an earlier request wrote at a flagged unit, and reading an entry
// refreshes it. Each request then becomes part of the cache.
//
// # Cache-break ledger
//
// Breaks (ledger.go) finds the prefix-cache breaks a session's reported
// usage shows — a request reading more than BreakTolerance tokens less than
// the previous request of its thread and family sent — and attributes each
// to a cause (rewrite, idle, family, prefix) and a premium at the request's
// prices. Its invariants are listed in ledger.go.
//
// # Validation
//
// NewQuote and CacheModel.Validate return a *FieldError naming the field by
// its JSON path, e.g. `plan.prune[3].id: unknown unit "seq-99"`; no input
// makes them panic. Token counts are bounded by 2^50 so no sum overflows.
package pricing
