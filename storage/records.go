// Package storage holds tollgate's stored records and their errors: what the
// guard hands to its store and gets back, and the read models the dashboard
// serves. It has no database code and no cgo; storage/sqlite is today's
// implementation. guard/api names these records in its wire contract, so a
// record is declared once (ARCHITECTURE.md, "Domain types").
package storage

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"

	"tollgate/pricing"
)

// ErrNotFound is returned when a session or rewrite does not exist.
var ErrNotFound = errors.New("not found")

// ErrAlreadyDecided is returned when a rewrite already has its decision.
var ErrAlreadyDecided = errors.New("already decided")

// A stored time must fall in this window around now: far enough back for a
// log imported years after it was written, a day ahead for a clock that is
// off. "9999-12-31T23:59:59-14:00" parses, but it is year 10000 in UTC,
// which encoding/json cannot write: stored, it would break every read.
const (
	MaxPast   = 30 * 365 * 24 * time.Hour
	MaxFuture = 24 * time.Hour
)

// CheckTime says why t cannot be stored ("" when it can).
func CheckTime(t, now time.Time) string {
	switch {
	case t.Before(now.Add(-MaxPast)):
		return "more than 30 years before now"
	case t.After(now.Add(MaxFuture)):
		return "more than a day after now"
	}
	return ""
}

// MaxCostUSD bounds a stored cost: 2^40 tokens at the dearest price a
// profile may set is far below it.
const MaxCostUSD = 1e15

// CheckCost names the first cost that is not a finite amount from 0 to
// MaxCostUSD ("" when all are).
func CheckCost(c pricing.Cost) string {
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", c.Input}, {"cacheRead", c.CacheRead}, {"cacheWrite", c.CacheWrite}, {"output", c.Output}, {"total", c.Total}} {
		if !SaneUSD(f.v) {
			return "cost." + f.name
		}
	}
	return ""
}

// SaneUSD reports whether v is a finite amount within ±MaxCostUSD.
func SaneUSD(v float64) bool { return v >= -MaxCostUSD && v <= MaxCostUSD }

// SaneStoredTime reports whether a stored time can be written as RFC 3339
// (JSON): years 0 to 9999.
func SaneStoredTime(t time.Time) bool { y := t.Year(); return y >= 0 && y <= 9999 }

// Purposes of a request.
const (
	PurposeConversation = "conversation"
	PurposeCompaction   = "compaction"
	PurposeSubagent     = "subagent"
)

// Rewrite statuses.
const (
	StatusPending = "pending"
	StatusDecided = "decided"
)

// Spend buckets.
const (
	SpendByDay     = "day"
	SpendByProfile = "profile"
	SpendByModel   = "model"
)

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
	// LimitsAssumed says ContextWindow and ThresholdTokens are the
	// harness's defaults for the model, not what the session runs with (a
	// Claude Code transcript or its telemetry does not say; its settings
	// can change both): they fill a session that has none and never
	// replace what its hook said.
	LimitsAssumed bool
}

// HasLimits says m gives a window or a threshold.
func (m SessionMeta) HasLimits() bool { return m.ContextWindow > 0 || m.ThresholdTokens > 0 }

// TakeLimits folds the window and threshold a later row of the session
// gives into m's: limits the harness said replace assumed ones, assumed
// ones never replace said ones, and among one kind each figure given
// (> 0) replaces the earlier.
func (m *SessionMeta) TakeLimits(next SessionMeta) {
	switch {
	case !next.HasLimits():
	case !m.HasLimits(), m.LimitsAssumed && !next.LimitsAssumed:
		m.ContextWindow, m.ThresholdTokens, m.LimitsAssumed = next.ContextWindow, next.ThresholdTokens, next.LimitsAssumed
	case m.LimitsAssumed == next.LimitsAssumed:
		if next.ContextWindow > 0 {
			m.ContextWindow = next.ContextWindow
		}
		if next.ThresholdTokens > 0 {
			m.ThresholdTokens = next.ThresholdTokens
		}
	}
}

// Request is one routed request, priced, ready to store.
type Request struct {
	Session   SessionMeta
	RequestID string
	At        time.Time
	Purpose   string
	Turn      string
	Engine    string
	Profile   string
	Provider  string
	Model     string
	Usage     pricing.Usage
	Cost      pricing.Cost
	Prices    string // JSON of the prices used
	PricedBy  string
	OffPeak   bool
	// Via says where a request came from when a twin may come from the
	// other side: ViaOTLP (a harness's live telemetry) or ViaImport (its
	// log, read later or earlier). A request of one is matched with its
	// twin of the other and counted once (storage/sqlite, twins.go).
	Via string
	// MessageUUID is the harness's own id of the response when it tells
	// one (Claude Code: the assistant line's uuid, which its telemetry
	// sends as message.uuid): the exact key between the two sides.
	MessageUUID string
	// Thread is the conversation the request continues ("" the main one;
	// ThreadOf fills it for subagents and summary calls that do not say),
	// StartedBy what started it; TTLSeconds is its profile's ttlSeconds
	// (0: 300). The cache-break ledger reads all three.
	Thread     string
	StartedBy  string
	TTLSeconds int64
}

// ThreadOf is the thread a request belongs to when its source names none:
// the main conversation, one thread for the subagents, and a thread of its
// own for each summary call (a start, never compared with another).
func ThreadOf(purpose, thread, requestID string) string {
	switch {
	case thread != "":
		return thread
	case purpose == PurposeSubagent:
		return "subagent"
	case purpose == PurposeCompaction:
		return "compaction:" + requestID
	}
	return ""
}

// Where a request came from, when it may have a twin (Request.Via).
const (
	ViaOTLP   = "otlp"
	ViaImport = "import"
)

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
	// Break is the cache break the request showed, if any.
	Break *Break
}

// Break is one cache break of a session's ledger (GET
// /v1/sessions/{id}/breaks): a request that read less from the prefix cache
// than the previous request of its thread and model had sent.
type Break struct {
	Session   string    `json:"session,omitempty"`
	Seq       int64     `json:"seq"`
	At        time.Time `json:"at"`
	Thread    string    `json:"thread"`
	Model     string    `json:"model"`
	Cause     string    `json:"cause"` // rewrite | idle | family | prefix
	StartedBy string    `json:"startedBy"`
	// GapSeconds is the time since the previous request of the family,
	// TTLSeconds how long its entries were to live.
	GapSeconds           float64 `json:"gapSeconds"`
	TTLSeconds           int64   `json:"ttlSeconds"`
	ExpectedCachedTokens int64   `json:"expectedCachedTokens"`
	CacheReadTokens      int64   `json:"cacheReadTokens"`
	RebilledTokens       int64   `json:"rebilledTokens"`
	PremiumUSD           float64 `json:"premiumUSD"`
	// Rewrite is the fold or prune that caused it (cause rewrite), else null.
	Rewrite *string `json:"rewrite"`
}

// BreakOf turns a ledger entry into the stored record.
func BreakOf(session string, b pricing.Break) Break {
	out := Break{Session: session, Seq: b.Seq, At: b.At.UTC(), Thread: b.Thread, Model: b.Model, Cause: string(b.Cause), StartedBy: b.StartedBy,
		GapSeconds: b.GapSeconds, TTLSeconds: b.TTLSeconds, ExpectedCachedTokens: b.ExpectedCachedTokens,
		CacheReadTokens: b.CacheReadTokens, RebilledTokens: b.RebilledTokens, PremiumUSD: b.PremiumUSD}
	if b.Rewrite != "" {
		id := b.Rewrite
		out.Rewrite = &id
	}
	return out
}

// SessionBreaks is GET /v1/sessions/{id}/breaks.
type SessionBreaks struct {
	Breaks []Break `json:"breaks"`
}

// BreakSession is one session of the breaks summary.
type BreakSession struct {
	Session        string  `json:"session"`
	Title          string  `json:"title"`
	Harness        string  `json:"harness"`
	Breaks         int64   `json:"breaks"`
	RebilledTokens int64   `json:"rebilledTokens"`
	PremiumUSD     float64 `json:"premiumUSD"`
	// TopCause is the cause of most of its premium.
	TopCause string `json:"topCause"`
}

// BreakCauseStarted is one (cause, what started it) pair of the summary:
// what a plain-words line about a dominant cause needs.
type BreakCauseStarted struct {
	Cause          string  `json:"cause"`
	StartedBy      string  `json:"startedBy"`
	Breaks         int64   `json:"breaks"`
	RebilledTokens int64   `json:"rebilledTokens"`
	PremiumUSD     float64 `json:"premiumUSD"`
}

// BreakSummary is GET /v1/breaks?days=N.
type BreakSummary struct {
	Days  int       `json:"days"`
	Since time.Time `json:"since"`
	// ByCause sums the period's breaks per cause, the largest premium first.
	ByCause []pricing.CauseTotal `json:"byCause"`
	// ByStart splits them further by what started the request.
	ByStart []BreakCauseStarted `json:"byStart"`
	// Sessions are the costliest sessions, by premium.
	Sessions       []BreakSession `json:"sessions"`
	Breaks         int64          `json:"breaks"`
	RebilledTokens int64          `json:"rebilledTokens"`
	PremiumUSD     float64        `json:"premiumUSD"`
}

// SummaryCall is the usage of a fold's summary call, when known.
type SummaryCall struct {
	pricing.Usage
	CostUSD float64
}

// Rewrite is one asked (or imported) context rewrite.
type Rewrite struct {
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
	AnsweredBy    string // the owner's door of a user's answer: window, browser, tray, owner-token
	Order         string
	PreTokens     int64
	PredictedCold *int64
	// PredictedBand is where the prediction may fall (nil: none given).
	PredictedBand *ColdBand
	ActualCold    *int64
	CostUSD       float64 // break premium of the chosen order
	SummaryCall   *SummaryCall
	DeadlineAt    time.Time
	DecidedAt     time.Time
	Applied       *bool
	OutcomeError  string
	Plan          string // JSON: ids and token counts only
	Quote         string // JSON
}

// ---- read models (the JSON the dashboard reads) ----

// Session is one row of GET /v1/sessions.
type Session struct {
	ID                string        `json:"id"`
	Harness           string        `json:"harness"`
	Profile           string        `json:"profile"`
	Provider          string        `json:"provider"`
	Model             string        `json:"model"`
	Title             string        `json:"title"`
	StartedAt         time.Time     `json:"startedAt"`
	LastAt            time.Time     `json:"lastAt"`
	Requests          int64         `json:"requests"`
	Tokens            pricing.Usage `json:"tokens"`
	CostUSD           float64       `json:"costUSD"`
	HitRate           float64       `json:"hitRate"`
	Folds             int64         `json:"folds"`
	Rewrites          int64         `json:"rewrites"`
	Declined          int64         `json:"declined"`
	Mode              string        `json:"mode"`
	SessionMode       string        `json:"sessionMode,omitempty"`
	PricedByDefault   bool          `json:"pricedByDefault"`
	ContextWindow     int64         `json:"contextWindow"`
	ThresholdTokens   int64         `json:"thresholdTokens"`
	LastContextTokens int64         `json:"lastContextTokens"`
	// CacheWarmUntil is when the cache entries of the main conversation's
	// last request expire (its time plus the TTL they live by); null when
	// it showed no cache activity.
	CacheWarmUntil *time.Time `json:"cacheWarmUntil"`
}

// SessionList is GET /v1/sessions.
type SessionList struct {
	Sessions []Session `json:"sessions"`
	Next     *string   `json:"next"`
}

// Point is one main-conversation request in a series.
type Point struct {
	Seq           int64     `json:"seq"`
	At            time.Time `json:"at"`
	Purpose       string    `json:"purpose"`
	ContextTokens int64     `json:"contextTokens"`
	Input         int64     `json:"input"`
	CacheRead     int64     `json:"cacheRead"`
	CacheWrite    int64     `json:"cacheWrite"`
	CacheWrite1h  int64     `json:"cacheWrite1h"`
	Output        int64     `json:"output"`
	CostUSD       float64   `json:"costUSD"`
}

// FoldSummaryCall is a fold's summary call as the series shows it: one- and
// five-minute writes together.
type FoldSummaryCall struct {
	Input      int64   `json:"input"`
	CacheRead  int64   `json:"cacheRead"`
	CacheWrite int64   `json:"cacheWrite"`
	Output     int64   `json:"output"`
	CostUSD    float64 `json:"costUSD"`
}

// ColdBand is the range a fold's predicted cold tokens may fall in.
type ColdBand struct {
	Low  int64 `json:"low"`
	High int64 `json:"high"`
}

// Fold is one rewrite in a series: asked through the API or imported.
type Fold struct {
	Rewrite             string           `json:"rewrite"`
	Seq                 int64            `json:"seq"`
	At                  time.Time        `json:"at"`
	Kind                string           `json:"kind"`
	Trigger             string           `json:"trigger"`
	PreTokens           int64            `json:"preTokens"`
	PredictedColdTokens *int64           `json:"predictedColdTokens"`
	PredictedColdBand   *ColdBand        `json:"predictedColdBand"`
	ActualColdTokens    *int64           `json:"actualColdTokens"`
	SummaryCall         *FoldSummaryCall `json:"summaryCall"`
	Decision            string           `json:"decision"`
	Reason              string           `json:"reason"`
	AnsweredBy          string           `json:"answeredBy"` // window, browser, tray, owner-token ("" unless a user answered)
	Mode                string           `json:"mode"`
	Order               string           `json:"order"`
	Applied             *bool            `json:"applied"`
	CostUSD             float64          `json:"costUSD"`
	Source              string           `json:"source"`
	Turn                string           `json:"turn,omitempty"`
	// PruneCount is how many units the chosen order pruned (0 for a
	// summary-only fold, or where the log does not say).
	PruneCount int `json:"pruneCount"`
}

// FoldOf turns a stored rewrite into the series' fold shape.
func FoldOf(r Rewrite) Fold {
	f := Fold{
		Rewrite: r.ID, Seq: r.Seq, At: r.At, Kind: r.Kind, Trigger: r.Trigger, PreTokens: r.PreTokens,
		PredictedColdTokens: r.PredictedCold, PredictedColdBand: r.PredictedBand, ActualColdTokens: r.ActualCold, Decision: r.Decision, Reason: r.Reason, AnsweredBy: r.AnsweredBy,
		Mode: r.Mode, Order: r.Order, Applied: r.Applied, CostUSD: r.CostUSD, Source: r.Source, Turn: r.Turn,
	}
	if r.Quote != "" && r.Quote != "null" {
		// The quote's top level is the chosen (recommended) order.
		var q struct {
			Prune struct {
				Count int `json:"count"`
			} `json:"prune"`
		}
		if json.Unmarshal([]byte(r.Quote), &q) == nil {
			f.PruneCount = q.Prune.Count
		}
	}
	if r.SummaryCall != nil {
		sc := r.SummaryCall
		f.SummaryCall = &FoldSummaryCall{Input: sc.Input, CacheRead: sc.CacheRead, CacheWrite: sc.CacheWrite + sc.CacheWrite1h, Output: sc.Output, CostUSD: sc.CostUSD}
	}
	return f
}

// Series is GET /v1/sessions/{id}/series.
type Series struct {
	Session         Session `json:"session"`
	ContextWindow   int64   `json:"contextWindow"`
	ThresholdTokens int64   `json:"thresholdTokens"`
	Points          Points  `json:"points"`
	Folds           []Fold  `json:"folds"`
}

// Points encode themselves: a series of 10,000 requests is the dashboard's
// biggest answer, and reflection-driven encoding would be a quarter of its
// cost.
type Points []Point

// MarshalJSON writes the points with the same field names as Point's tags.
func (ps Points) MarshalJSON() ([]byte, error) {
	if ps == nil {
		return []byte("[]"), nil
	}
	b := make([]byte, 0, 64+len(ps)*200)
	b = append(b, '[')
	for i := range ps {
		p := &ps[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, p.Seq, 10)
		b = append(b, `,"at":"`...)
		b = p.At.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","purpose":`...)
		b = strconv.AppendQuote(b, p.Purpose) // a closed set of ASCII words: Go and JSON quoting agree
		b = append(b, `,"contextTokens":`...)
		b = strconv.AppendInt(b, p.ContextTokens, 10)
		b = append(b, `,"input":`...)
		b = strconv.AppendInt(b, p.Input, 10)
		b = append(b, `,"cacheRead":`...)
		b = strconv.AppendInt(b, p.CacheRead, 10)
		b = append(b, `,"cacheWrite":`...)
		b = strconv.AppendInt(b, p.CacheWrite, 10)
		b = append(b, `,"cacheWrite1h":`...)
		b = strconv.AppendInt(b, p.CacheWrite1h, 10)
		b = append(b, `,"output":`...)
		b = strconv.AppendInt(b, p.Output, 10)
		b = append(b, `,"costUSD":`...)
		b = appendFloat(b, p.CostUSD)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendFloat writes a float as encoding/json does for ordinary values.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// SpendRow is one bucket of GET /v1/spend.
type SpendRow struct {
	Key             string        `json:"key"`
	Requests        int64         `json:"requests"`
	CacheReadUSD    float64       `json:"cacheReadUSD"`
	ColdInputUSD    float64       `json:"coldInputUSD"`
	OutputUSD       float64       `json:"outputUSD"`
	BreakPremiumUSD float64       `json:"breakPremiumUSD"`
	TotalUSD        float64       `json:"totalUSD"`
	Tokens          pricing.Usage `json:"tokens"`
}

// Spend is GET /v1/spend.
type Spend struct {
	By                string     `json:"by"`
	TZ                string     `json:"tz"`
	Rows              []SpendRow `json:"rows"`
	Totals            SpendRow   `json:"totals"`
	HitRate           float64    `json:"hitRate"`
	Folds             int64      `json:"folds"`
	Declined          int64      `json:"declined"`
	AvoidedColdTokens int64      `json:"avoidedColdTokens"`
}

// ExportedRequest is one request as exported (CSV/JSON).
type ExportedRequest struct {
	Session       string        `json:"session"`
	RequestID     string        `json:"requestId"`
	Seq           int64         `json:"seq"`
	At            time.Time     `json:"at"`
	Purpose       string        `json:"purpose"`
	Turn          string        `json:"turn"`
	Profile       string        `json:"profile"`
	Provider      string        `json:"provider"`
	Model         string        `json:"model"`
	Usage         pricing.Usage `json:"usage"`
	ContextTokens int64         `json:"contextTokens"`
	Cost          pricing.Cost  `json:"costUSD"`
	Prices        string        `json:"-"`
	PricedBy      string        `json:"pricedBy"`
	OffPeak       bool          `json:"offPeak"`
}
