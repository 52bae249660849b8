package guard

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage/sqlite"
)

// testSettings is config.yaml in memory: the guard's tests exercise the
// gate, not the YAML writer (app's tests do that).
type testSettings struct {
	mu          sync.Mutex
	global      string
	profiles    map[string]string
	askTimeout  time.Duration
	guardManual map[string]bool
}

func newTestSettings(mode string) *testSettings {
	return &testSettings{global: mode, profiles: map[string]string{}, askTimeout: 120 * time.Second, guardManual: map[string]bool{}}
}

func (t *testSettings) GlobalMode() string { t.mu.Lock(); defer t.mu.Unlock(); return t.global }
func (t *testSettings) SetGlobalMode(m string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.global = m
	return nil
}
func (t *testSettings) ProfileMode(p string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.profiles[strings.ToLower(p)]
	return m, ok
}
func (t *testSettings) SetProfileMode(p, m string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m == "" {
		delete(t.profiles, strings.ToLower(p))
	} else {
		t.profiles[strings.ToLower(p)] = m
	}
	return nil
}
func (t *testSettings) AskTimeout() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.askTimeout
}
func (t *testSettings) GuardManual(p string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.guardManual[p]
}

// testModel is a DeepSeek-like positional cache: granularity 64, misses at
// $0.30/M, hits at $0.006/M, output $1.20/M, writes not billed.
var testModel = pricing.CacheModel{
	Kind: pricing.Positional, Granularity: 64, MinimumPrefix: 64, TTLSeconds: 3600,
	Prices:                 pricing.Prices{PricePerMTokens: 0.30, CacheHitPricePerMTokens: 0.006, OutputPricePerMTokens: 1.20},
	EstimatedSummaryTokens: 4000,
}

// testPricer prices with testModel; the profile "broken" fails, to test
// the pricing-failed rule.
type testPricer struct{}

func (testPricer) PriceRequest(profile, provider, model string, at time.Time, u pricing.Usage) (PricedRequest, error) {
	return PricedRequest{Cost: testModel.Prices.Cost(u), Prices: `{"pricePerMTokens":0.3,"cacheHitPricePerMTokens":0.006}`, PricedBy: "profile",
		TTLSeconds: testModel.TTLSeconds}, nil
}

func (testPricer) CacheModel(profile, provider, model string) (pricing.CacheModel, error) {
	if profile == "broken" {
		return pricing.CacheModel{}, &pricing.FieldError{Field: "profiles.broken.granularity", Message: "must be > 0"}
	}
	return testModel, nil
}

func openTestStore(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tollgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
