package guard

import (
	"context"
	"time"

	"tollgate/guard/api"
	"tollgate/pricing"
	"tollgate/storage"
)

// Store is what the guard needs of the database. The guard imports the
// records (storage) but never the database code (storage/sqlite): the app
// hands it a *sqlite.DB, which implements Store with those same records
// (guard/api's read models are aliases of storage's), and the guard's tests
// run against a real SQLite file all the same.
type Store interface {
	RecordRequest(ctx context.Context, r storage.Request) (storage.StoredRequest, error)
	CreateRewrite(ctx context.Context, r storage.Rewrite) (storage.Rewrite, error)
	DecideRewrite(ctx context.Context, id, decision, reason, mode, order, answeredBy string, at time.Time) error
	SetRewriteOutcome(ctx context.Context, id string, applied bool, errText string) error
	Rewrite(ctx context.Context, id string) (storage.Rewrite, error)
	ExpirePending(ctx context.Context, at time.Time) (int64, error)
	SetSessionMode(ctx context.Context, sessionID, mode string, at time.Time) error
	SessionModes(ctx context.Context) (map[string]string, error)

	Sessions(ctx context.Context, limit int, before string) (api.SessionList, error)
	Session(ctx context.Context, id string) (api.Session, error)
	SessionMeta(ctx context.Context, id string) (storage.SessionMeta, error)
	Series(ctx context.Context, id string) (api.Series, error)
	Spend(ctx context.Context, by string, loc *time.Location, since time.Time) (api.Spend, error)
	SessionBreaks(ctx context.Context, id string) (api.SessionBreaks, error)
	BreakSummary(ctx context.Context, since time.Time, limit int) (api.BreakSummary, error)
	DeleteSession(ctx context.Context, id string) error
	DeleteAll(ctx context.Context) (int64, error)
}

// Settings is the part of the configuration the guard reads and changes.
// The app implements it on top of config.yaml.
type Settings interface {
	GlobalMode() string
	SetGlobalMode(mode string) error
	ProfileMode(profile string) (string, bool)
	SetProfileMode(profile, mode string) error
	AskTimeout() time.Duration
	// GuardManual says whether compactions the user typed are asked about
	// too (the profile's guardManual key); by default they are allowed.
	GuardManual(profile string) bool
}

// Pricer prices requests and finds the cache model of a rewrite. The app
// implements it with the profile lookup of ARCHITECTURE.md, "The API".
type Pricer interface {
	// PriceRequest prices one request's usage at time at.
	PriceRequest(profile, provider, model string, at time.Time, u pricing.Usage) (PricedRequest, error)
	// CacheModel is the cache model used to quote a rewrite.
	CacheModel(profile, provider, model string) (pricing.CacheModel, error)
}

// PricedRequest is a request's cost and the prices that made it.
type PricedRequest struct {
	Cost     pricing.Cost
	Prices   string // JSON of the prices used
	PricedBy string // profile | builtin | default | none
	OffPeak  bool
	// TTLSeconds is the cache model's ttlSeconds (0: 300), for the
	// cache-break ledger.
	TTLSeconds int64
}

// FieldNamer is an error that names the field, key or line it is about.
type FieldNamer interface {
	FieldName() string
}
