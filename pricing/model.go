package pricing

import (
	"fmt"
	"math"
	"time"
)

// CacheKind says which prefixes of a request a provider's cache can reuse.
type CacheKind string

const (
	// Positional caches reuse any shared prefix, rounded down to the
	// granularity, once it reaches the minimum prefix (DeepSeek, OpenAI before
	// GPT-5.6, vLLM, SGLang).
	Positional CacheKind = "positional"
	// Breakpoint caches reuse only prefixes that end where an earlier request
	// wrote a cache entry: the end of the envelope and the end of every unit
	// flagged as a breakpoint (Anthropic, OpenAI from GPT-5.6).
	Breakpoint CacheKind = "breakpoint"
)

// Prices are absolute USD prices per million tokens.
type Prices struct {
	// PricePerMTokens is the full input price, paid on a cache miss.
	PricePerMTokens float64 `json:"pricePerMTokens"`
	// CacheHitPricePerMTokens is paid for every input token read from the cache.
	CacheHitPricePerMTokens float64 `json:"cacheHitPricePerMTokens"`
	// CacheWritePricePerMTokens is paid for writing a token into a 5-minute
	// (or untyped) cache entry. 0 = writes are not billed: cold tokens cost
	// the miss price.
	CacheWritePricePerMTokens float64 `json:"cacheWritePricePerMTokens"`
	// CacheWrite1hPricePerMTokens is paid for writing a token into a one-hour
	// entry. 0 = falls back to the 5-minute write price, then the miss price.
	CacheWrite1hPricePerMTokens float64 `json:"cacheWrite1hPricePerMTokens"`
	// OutputPricePerMTokens is paid for every generated token.
	OutputPricePerMTokens float64 `json:"outputPricePerMTokens"`
}

// CacheModel describes how one provider model caches and bills prompts.
type CacheModel struct {
	Kind CacheKind `json:"cacheKind"`
	// Granularity is the storage unit of a positional cache: a reusable
	// prefix is rounded down to a multiple of it. Breakpoint caches ignore
	// it, but it must still be > 0 so that a half-filled profile is caught.
	Granularity int64 `json:"granularity"`
	// MinimumPrefix is the shortest prefix the provider caches at all.
	MinimumPrefix int64 `json:"minimumPrefix"`
	// TTLSeconds is how long an unused entry survives. A TTL above 300 s
	// selects the one-hour write price when one is set.
	TTLSeconds int64 `json:"ttlSeconds"`
	Prices
	// OffPeak, when set, scales every price by its factor inside its window.
	OffPeak *PriceWindow `json:"offPeak,omitempty"`
	// EstimatedSummaryTokens is the checkpoint size assumed when a plan does
	// not estimate its own.
	EstimatedSummaryTokens int64 `json:"estimatedSummaryTokens,omitempty"`
}

// FieldError is a validation error that names the offending field, e.g.
// `plan.prune[3].id: unknown unit "seq-99"`.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErrorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Validate reports the first invalid field of m, by its JSON name.
func (m CacheModel) Validate() error {
	switch m.Kind {
	case Positional, Breakpoint:
	default:
		return fieldErrorf("cacheKind", "must be %q or %q, not %q", Positional, Breakpoint, m.Kind)
	}
	if m.Granularity <= 0 {
		return fieldErrorf("granularity", "must be > 0")
	}
	if m.MinimumPrefix < 0 {
		return fieldErrorf("minimumPrefix", "must be >= 0")
	}
	if m.TTLSeconds <= 0 {
		return fieldErrorf("ttlSeconds", "must be > 0")
	}
	if m.EstimatedSummaryTokens < 0 {
		return fieldErrorf("estimatedSummaryTokens", "must be >= 0")
	}
	for _, p := range []struct {
		name  string
		value float64
	}{
		{"pricePerMTokens", m.PricePerMTokens},
		{"cacheHitPricePerMTokens", m.CacheHitPricePerMTokens},
		{"cacheWritePricePerMTokens", m.CacheWritePricePerMTokens},
		{"cacheWrite1hPricePerMTokens", m.CacheWrite1hPricePerMTokens},
		{"outputPricePerMTokens", m.OutputPricePerMTokens},
	} {
		if !(p.value >= 0) || math.IsInf(p.value, 0) {
			return fieldErrorf(p.name, "must be a finite price >= 0")
		}
	}
	if m.OffPeak != nil {
		if err := m.OffPeak.validate(); err != nil {
			return &FieldError{Field: "offPeak." + err.Field, Message: err.Message}
		}
	}
	return nil
}

// PricesAt returns the prices in force at `at` and whether they are the
// off-peak ones. An invalid window (see Validate) never matches, and neither
// does the zero time: a caller that forgot the time gets the base (for
// DeepSeek, peak) prices, an upper bound, rather than whatever window
// January 1st of year 1 falls in.
func (m CacheModel) PricesAt(at time.Time) (p Prices, offPeak bool) {
	p = m.Prices
	if m.OffPeak == nil || at.IsZero() || !m.OffPeak.contains(at) {
		return p, false
	}
	f := m.OffPeak.Factor
	p.PricePerMTokens *= f
	p.CacheHitPricePerMTokens *= f
	p.CacheWritePricePerMTokens *= f
	p.CacheWrite1hPricePerMTokens *= f
	p.OutputPricePerMTokens *= f
	return p, true
}

// cached returns how many of the first p tokens of a request a positional
// cache serves: p rounded down to the granularity, or 0 under the minimum.
func (m CacheModel) cachedPositional(p int64) int64 {
	if p <= 0 || p < m.MinimumPrefix {
		return 0
	}
	g := m.Granularity
	if g <= 1 {
		return p
	}
	return p / g * g
}

// cachedBoundary applies the minimum prefix to the largest breakpoint
// boundary b below a shared prefix.
func (m CacheModel) cachedBoundary(b int64) int64 {
	if b <= 0 || b < m.MinimumPrefix {
		return 0
	}
	return b
}

// Usage counts the tokens of one request. It is tollgate's one token-count
// type, from the wire to the database (ARCHITECTURE.md, "Domain types").
// The counts are disjoint: Input is neither read from nor written to the
// cache; CacheWrite is 5-minute (or untyped) writes, CacheWrite1h one-hour
// writes. The JSON spelling is the read models' ({"input", "cacheRead", …});
// guard/api spells it as the recording body does ({"inputTokens", …}).
type Usage struct {
	Input        int64 `json:"input"`
	CacheRead    int64 `json:"cacheRead"`
	CacheWrite   int64 `json:"cacheWrite"`
	CacheWrite1h int64 `json:"cacheWrite1h"`
	Output       int64 `json:"output"`
}

// Prompt is every input token of the request, cached or not.
func (u Usage) Prompt() int64 { return u.Input + u.CacheRead + u.CacheWrite + u.CacheWrite1h }

// Uncached is the part of the prompt not read from the cache.
func (u Usage) Uncached() int64 { return u.Input + u.CacheWrite + u.CacheWrite1h }

// Add sums two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, CacheRead: u.CacheRead + v.CacheRead, CacheWrite: u.CacheWrite + v.CacheWrite,
		CacheWrite1h: u.CacheWrite1h + v.CacheWrite1h, Output: u.Output + v.Output}
}

// Max is the field-wise maximum: the final figures of a streamed message
// whose snapshots only ever grow.
func (u Usage) Max(v Usage) Usage {
	return Usage{Input: max(u.Input, v.Input), CacheRead: max(u.CacheRead, v.CacheRead), CacheWrite: max(u.CacheWrite, v.CacheWrite),
		CacheWrite1h: max(u.CacheWrite1h, v.CacheWrite1h), Output: max(u.Output, v.Output)}
}

// MaxUsageTokens bounds every count tollgate accepts (2^40): a corrupt line
// or body cannot make an absurd figure.
const MaxUsageTokens = 1 << 40

// Clamped bounds every count to 0…MaxUsageTokens.
func (u Usage) Clamped() Usage {
	c := func(v int64) int64 { return min(max(v, 0), MaxUsageTokens) }
	return Usage{c(u.Input), c(u.CacheRead), c(u.CacheWrite), c(u.CacheWrite1h), c(u.Output)}
}

// Cost is a request's price in USD, split as its usage is.
type Cost struct {
	Input      float64 `json:"input"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"` // 5-minute and one-hour writes together
	Output     float64 `json:"output"`
	Total      float64 `json:"total"`
}

// write5m is the price of a 5-minute write; unbilled writes cost the miss price.
func (p Prices) write5m() float64 {
	if p.CacheWritePricePerMTokens > 0 {
		return p.CacheWritePricePerMTokens
	}
	return p.PricePerMTokens
}

// write1h is the price of a one-hour write, falling back to the 5-minute one.
func (p Prices) write1h() float64 {
	if p.CacheWrite1hPricePerMTokens > 0 {
		return p.CacheWrite1hPricePerMTokens
	}
	return p.write5m()
}

// coldPrice is what one uncached prompt token costs under a cache with the
// given TTL: the write price when writes are billed, else the miss price.
// Entries living longer than five minutes are one-hour writes.
func (p Prices) coldPrice(ttlSeconds int64) float64 {
	if ttlSeconds > 300 {
		return p.write1h()
	}
	return p.write5m()
}

// Cost prices one request's usage.
func (p Prices) Cost(u Usage) Cost {
	c := Cost{
		Input:      perM(u.Input, p.PricePerMTokens),
		CacheRead:  perM(u.CacheRead, p.CacheHitPricePerMTokens),
		CacheWrite: perM(u.CacheWrite, p.write5m()) + perM(u.CacheWrite1h, p.write1h()),
		Output:     perM(u.Output, p.OutputPricePerMTokens),
	}
	c.Total = c.Input + c.CacheRead + c.CacheWrite + c.Output
	return c
}

// perM prices n tokens at a per-million price.
func perM(n int64, pricePerM float64) float64 {
	return float64(n) * pricePerM / 1e6
}
