package pricing

import (
	"cmp"
	"slices"
	"time"
)

// The cache-break ledger (ARCHITECTURE.md, "The cache-break ledger")
// finds, attributes and prices every prefix-cache break of a session from
// the usage its requests reported.
//
// Input: the session's requests in order, each with its thread (the main
// conversation, or one subagent), its family (the cache key as far as the log
// shows it: provider + model), its time, its usage, what started it, the
// rewrite recorded since the thread's previous request, and its profile's
// prices and ttlSeconds.
//
// Invariants (each a test in ledger_test.go):
//   - A request is compared only with the previous request of the same
//     thread AND family; the first request of a thread or family is a start,
//     never a break. The other threads never change its expectation.
//   - Its expectation is that previous request's prompt (input + cache read +
//     cache writes). It breaks when min(expectation, prompt) − cacheRead >
//     BreakTolerance, and then re-bills exactly that many tokens: after a
//     fold the new prompt's cold part, after an idle gap what had been cached.
//     Using min(expectation, prompt) rather than the expectation alone
//     keeps a history that got shorter (a prune that kept the cached
//     prefix) from counting as a break.
//   - A family that has shown no cache activity (no read, no write) in the
//     thread has nothing cached: no expectation, no break (providers without
//     a cache, local servers).
//   - The premium is what the re-billed tokens cost beyond reading them:
//     taken first from the request's one-hour writes, then its 5-minute
//     writes, then uncached input (Anthropic writes every token from the read
//     point to the last breakpoint, one-hour entries before 5-minute ones),
//     each at its price minus the hit price. It is never negative.
//   - Cause, first match: rewrite (a fold or prune was recorded between the
//     two requests), idle (the gap exceeds the TTL the family's entries live
//     by: 3,600 s after a one-hour write, else the profile's ttlSeconds; a
//     read-only request keeps the TTL), family (the thread's previous request
//     was of another family: a model switch starts a new cache), prefix
//     (something before the new content changed).
//   - Pure: no I/O, no clock; the same input gives the same ledger.

// BreakTolerance is how far below its expectation a request may read and
// still count as a hit: Anthropic's uncached tail after the last
// breakpoint, OpenAI's 128-token storage steps.
const BreakTolerance = 1024

// Hour-long entries live this long (Anthropic's "1h" cache_control).
const oneHourTTLSeconds = 3600

// BreakCause says why a cache break happened.
type BreakCause string

// The causes, in the order they are tried.
const (
	CauseRewrite BreakCause = "rewrite"
	CauseIdle    BreakCause = "idle"
	CauseFamily  BreakCause = "family"
	CausePrefix  BreakCause = "prefix"
)

// BreakCauses lists every cause, in the order they are tried.
var BreakCauses = []BreakCause{CauseRewrite, CauseIdle, CauseFamily, CausePrefix}

// LedgerRequest is one request as the ledger sees it.
type LedgerRequest struct {
	Seq    int64 // its position in the session (1-based)
	At     time.Time
	Thread string // "" is the main conversation
	// Family is the request's cache key as far as the log shows it
	// (provider + "/" + model): requests of different families never
	// share cache entries.
	Family    string
	Model     string
	Usage     Usage
	StartedBy string
	// Rewrite is the id of the fold or prune recorded between the thread's
	// previous request and this one ("" when none).
	Rewrite string
	// Prices and TTLSeconds are the request's profile's: what its tokens
	// cost and how long a 5-minute (or untyped) write lives.
	Prices     Prices
	TTLSeconds int64
}

// LedgerPrev is what the ledger remembers of a thread's family: its last
// request.
type LedgerPrev struct {
	Seq    int64
	At     time.Time
	Prompt int64
	// TTLSeconds is how long the family's entries live after that request;
	// 0 when the family has shown no cache activity in the thread yet.
	TTLSeconds int64
}

// Break is one prefix-cache break.
type Break struct {
	Seq       int64
	At        time.Time
	Thread    string
	Model     string
	Cause     BreakCause
	StartedBy string
	Rewrite   string // the rewrite's id when Cause is rewrite
	// GapSeconds is the time since the previous request of the family, and
	// TTLSeconds how long its entries were to live.
	GapSeconds float64
	TTLSeconds int64
	// ExpectedCachedTokens is the previous request's prompt,
	// CacheReadTokens what this one read, RebilledTokens
	// min(expected, prompt) − read.
	ExpectedCachedTokens int64
	CacheReadTokens      int64
	RebilledTokens       int64
	PremiumUSD           float64
}

// Next is the family's state after r: r is now its last request, and its
// entries live 3,600 s after a one-hour write, the profile's TTL after a
// 5-minute write, and as long as before after a read-only request.
func (p LedgerPrev) Next(r LedgerRequest) LedgerPrev {
	ttl := p.TTLSeconds
	u := r.Usage.Clamped()
	switch {
	case u.CacheWrite1h > 0:
		ttl = oneHourTTLSeconds
	case u.CacheWrite > 0 || (ttl == 0 && u.CacheRead > 0):
		ttl = max(r.TTLSeconds, 1)
	}
	return LedgerPrev{Seq: r.Seq, At: r.At, Prompt: u.Prompt(), TTLSeconds: ttl}
}

// BreakOf judges one request: prev is the previous request of its thread
// and family (nil when it is the first), threadFamily the family of the
// thread's previous request of any family ("" when none).
func BreakOf(prev *LedgerPrev, threadFamily string, r LedgerRequest) (Break, bool) {
	if prev == nil || prev.TTLSeconds == 0 {
		return Break{}, false
	}
	u := r.Usage.Clamped()
	expected := max(prev.Prompt, 0)
	rebilled := min(expected, u.Prompt()) - u.CacheRead
	if rebilled <= BreakTolerance {
		return Break{}, false
	}
	gap := r.At.Sub(prev.At)
	b := Break{
		Seq: r.Seq, At: r.At, Thread: r.Thread, Model: r.Model, StartedBy: r.StartedBy,
		GapSeconds: gap.Seconds(), TTLSeconds: prev.TTLSeconds,
		ExpectedCachedTokens: expected, CacheReadTokens: u.CacheRead, RebilledTokens: rebilled,
	}
	switch {
	case r.Rewrite != "":
		b.Cause, b.Rewrite = CauseRewrite, r.Rewrite
	case gap > time.Duration(prev.TTLSeconds)*time.Second:
		b.Cause = CauseIdle
	case threadFamily != "" && threadFamily != r.Family:
		b.Cause = CauseFamily
	default:
		b.Cause = CausePrefix
	}
	b.PremiumUSD = rebilledPremium(rebilled, u, r.Prices)
	return b, true
}

// rebilledPremium prices n re-billed tokens as the request was billed for
// them: its one-hour writes first, then its 5-minute writes, then uncached
// input, each beyond the hit price.
func rebilledPremium(n int64, u Usage, p Prices) float64 {
	w1 := min(n, u.CacheWrite1h)
	n -= w1
	w5 := min(n, u.CacheWrite)
	n -= w5
	hit := p.CacheHitPricePerMTokens
	return perM(w1, max(p.write1h()-hit, 0)) + perM(w5, max(p.write5m()-hit, 0)) + perM(n, max(p.PricePerMTokens-hit, 0))
}

// Ledger judges a session's requests one at a time, in order.
type Ledger struct {
	last   map[ledgerKey]LedgerPrev
	family map[string]string // thread → family of its last request
}

type ledgerKey struct{ thread, family string }

// Add judges r against what came before it and remembers it.
func (l *Ledger) Add(r LedgerRequest) (Break, bool) {
	if l.last == nil {
		l.last, l.family = map[ledgerKey]LedgerPrev{}, map[string]string{}
	}
	k := ledgerKey{r.Thread, r.Family}
	prev, seen := l.last[k]
	var pp *LedgerPrev
	if seen {
		pp = &prev
	}
	b, ok := BreakOf(pp, l.family[r.Thread], r)
	l.last[k] = prev.Next(r)
	l.family[r.Thread] = r.Family
	return b, ok
}

// Breaks is the ledger of one session's requests, in their order.
func Breaks(reqs []LedgerRequest) []Break {
	var l Ledger
	var out []Break
	for _, r := range reqs {
		if b, ok := l.Add(r); ok {
			out = append(out, b)
		}
	}
	return out
}

// CauseTotal sums the breaks of one cause.
type CauseTotal struct {
	Cause          BreakCause `json:"cause"`
	Breaks         int64      `json:"breaks"`
	RebilledTokens int64      `json:"rebilledTokens"`
	PremiumUSD     float64    `json:"premiumUSD"`
}

// TotalsByCause sums breaks per cause, the largest premium first (ties in
// the order of BreakCauses); causes without a break are left out.
func TotalsByCause(bs []Break) []CauseTotal {
	var sums [4]CauseTotal
	for i, c := range BreakCauses {
		sums[i].Cause = c
	}
	for _, b := range bs {
		i := slices.Index(BreakCauses, b.Cause)
		if i < 0 {
			continue
		}
		sums[i].Breaks++
		sums[i].RebilledTokens += b.RebilledTokens
		sums[i].PremiumUSD += b.PremiumUSD
	}
	out := make([]CauseTotal, 0, 4)
	for _, s := range sums {
		if s.Breaks > 0 {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b CauseTotal) int { return cmp.Compare(b.PremiumUSD, a.PremiumUSD) })
	return out
}
