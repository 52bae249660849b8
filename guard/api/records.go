package api

import (
	"errors"
	"time"

	"tollgate/pricing"
)

// The records below are what the guard hands to its store and gets back.
// storage declares them as aliases, so *storage.DB satisfies the guard's
// Store interface without the guard importing storage.

// ErrNotFound is returned when a session or rewrite does not exist.
var ErrNotFound = errors.New("not found")

// ErrAlreadyDecided is returned when a rewrite already has its decision.
var ErrAlreadyDecided = errors.New("already decided")

// Prompt is a request's prompt size: every input token, cached or not.
func (t Tokens) Prompt() int64 { return t.Input + t.CacheRead + t.CacheWrite + t.CacheWrite1h }

// Uncached is the part of the prompt not read from the cache.
func (t Tokens) Uncached() int64 { return t.Input + t.CacheWrite + t.CacheWrite1h }

// TokensOf converts pricing usage to token counts.
func TokensOf(u pricing.Usage) Tokens {
	return Tokens{Input: u.InputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, CacheWrite1h: u.CacheWrite1hTokens, Output: u.OutputTokens}
}

// SessionMeta is what a request or rewrite says about its session. Empty
// fields never overwrite known ones: a session keeps the first harness,
// profile, provider and model it was seen with, and the latest window and
// threshold.
type SessionMeta struct {
	ID              string
	Harness         string
	Profile         string
	Provider        string
	Model           string
	Title           string
	ContextWindow   int64
	ThresholdTokens int64
}

// Purposes of a request.
const (
	PurposeConversation = "conversation"
	PurposeCompaction   = "compaction"
	PurposeSubagent     = "subagent"
)

// RequestRecord is one routed request, priced, ready to store.
type RequestRecord struct {
	Session   SessionMeta
	RequestID string
	At        time.Time
	Purpose   string
	Turn      string
	Engine    string
	Profile   string
	Provider  string
	Model     string
	Usage     Tokens
	Cost      pricing.Cost
	Prices    string // JSON of the prices used
	PricedBy  string
	OffPeak   bool
}

// StoredRequest is a committed request row.
type StoredRequest struct {
	SessionID     string
	RequestID     string
	Seq           int64
	At            time.Time
	Purpose       string
	ContextTokens int64
	Cost          pricing.Cost
	PricedBy      string
	OffPeak       bool
	// Duplicate is set when the request id was stored before: nothing new
	// was written and the fields are the first answer's.
	Duplicate bool
}

// SummaryCallUsage is the usage of a fold's summary call, when known.
type SummaryCallUsage struct {
	Tokens
	CostUSD float64
}

// Rewrite statuses.
const (
	StatusPending = "pending"
	StatusDecided = "decided"
)

// RewriteRecord is one asked (or imported) context rewrite.
type RewriteRecord struct {
	ID            string
	Session       SessionMeta
	Seq           int64 // requests of the session recorded before it
	At            time.Time
	Engine        string
	Turn          string
	Trigger       string
	Kind          string // summary | prune
	Source        string // api | import
	Mode          string
	Status        string
	Decision      string
	Reason        string
	Order         string
	PreTokens     int64
	PredictedCold *int64
	ActualCold    *int64
	CostUSD       float64 // break premium of the chosen order
	SummaryCall   *SummaryCallUsage
	DeadlineAt    time.Time
	DecidedAt     time.Time
	Applied       *bool
	OutcomeError  string
	Plan          string // JSON: ids and token counts only
	Quote         string // JSON
}
