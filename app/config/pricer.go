package config

import (
	"encoding/json"
	"time"

	"tollgate/pricing"
)

// PricedUsage is a request's cost together with the prices that made it,
// because history keeps the price it was billed at (ARCHITECTURE.md, "Invariants").
type PricedUsage struct {
	Cost     pricing.Cost
	Prices   string // JSON of the prices used (after any off-peak factor)
	PricedBy PricedBy
	OffPeak  bool
	// TTLSeconds is the cache model's ttlSeconds: how long a 5-minute (or
	// untyped) cache write lives, for the cache-break ledger.
	TTLSeconds int64
}

// PriceUsage prices one request per ARCHITECTURE.md, "The API": the named profile, else the
// built-in table by provider and model, else the default profile (flagged);
// at the price window its time falls in.
func (s *Settings) PriceUsage(profile, provider, model string, at time.Time, u pricing.Usage) (PricedUsage, error) {
	r := s.resolved(profile, provider, model)
	if r.err != nil {
		return PricedUsage{}, r.err
	}
	prices, offPeak := r.model.PricesAt(at)
	text := r.peakJSON
	if offPeak || prices != r.model.Prices {
		b, _ := json.Marshal(prices)
		text = string(b)
	}
	return PricedUsage{Cost: prices.Cost(u), Prices: text, PricedBy: r.by, OffPeak: offPeak, TTLSeconds: r.model.TTLSeconds}, nil
}

// resolvedModel is one lookup's outcome, kept until the profiles change:
// every recorded request is priced, and resolving walks the config and the
// built-in table.
type resolvedModel struct {
	model    pricing.CacheModel
	by       PricedBy
	err      error
	peakJSON string // the model's own prices as JSON
}

func (s *Settings) resolved(profile, provider, model string) resolvedModel {
	key := profile + "\x00" + provider + "\x00" + model
	s.cacheMu.Lock()
	r, ok := s.cache[key]
	gen := s.cacheGen
	s.cacheMu.Unlock()
	if ok {
		return r
	}
	r.model, r.by, r.err = s.ResolveModel(profile, provider, model)
	b, _ := json.Marshal(r.model.Prices)
	r.peakJSON = string(b)
	s.cacheMu.Lock()
	// A profile edit while we resolved makes this answer stale: use it
	// once, keep it not.
	if gen == s.cacheGen {
		if s.cache == nil || len(s.cache) > 4096 { // many distinct names: start over
			s.cache = map[string]resolvedModel{}
		}
		s.cache[key] = r
	}
	s.cacheMu.Unlock()
	return r
}

// forgetResolved drops cached lookups after a profile changed.
func (s *Settings) forgetResolved() {
	s.cacheMu.Lock()
	s.cache = nil
	s.cacheGen++
	s.cacheMu.Unlock()
}
