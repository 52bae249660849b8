package app

import (
	"encoding/json"
	"time"

	"tollgate/guard/api"
	"tollgate/pricing"
	"tollgate/storage"
)

// PricedUsage is a request's cost together with the prices that made it,
// because history keeps the price it was billed at (DESIGN §5).
type PricedUsage struct {
	Cost     pricing.Cost
	Prices   string // JSON of the prices used (after any off-peak factor)
	PricedBy PricedBy
	OffPeak  bool
}

// PriceUsage prices one request per DESIGN §3: the named profile, else the
// built-in table by provider and model, else the default profile (flagged);
// at the price window its time falls in.
func (s *Settings) PriceUsage(profile, provider, model string, at time.Time, u pricing.Usage) (PricedUsage, error) {
	m, by, err := s.ResolveModel(profile, provider, model)
	if err != nil {
		return PricedUsage{}, err
	}
	prices, offPeak := m.PricesAt(at)
	b, _ := json.Marshal(prices)
	return PricedUsage{Cost: prices.Cost(u), Prices: string(b), PricedBy: by, OffPeak: offPeak}, nil
}

// StorageUsage converts the pricing package's usage to storage's token counts.
func StorageUsage(u pricing.Usage) storage.Usage { return api.TokensOf(u) }
