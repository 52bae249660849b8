// Package api holds the wire types of tollgate's v1 API: request bodies,
// answers, read models and event payloads. It is a leaf of plain types (and
// their decoders) shared by the guard (which serves them), storage (which
// reads them out of SQLite) and guard/client (which harnesses link).
package api

import (
	"math"
	"strconv"
	"time"

	"tollgate/pricing"
)

// Tokens are token counts by kind, disjoint.
type Tokens struct {
	Input        int64 `json:"input"`
	CacheRead    int64 `json:"cacheRead"`
	CacheWrite   int64 `json:"cacheWrite"`
	CacheWrite1h int64 `json:"cacheWrite1h"`
	Output       int64 `json:"output"`
}

// Session is one row of GET /v1/sessions.
type Session struct {
	ID                string    `json:"id"`
	Harness           string    `json:"harness"`
	Profile           string    `json:"profile"`
	Provider          string    `json:"provider"`
	Model             string    `json:"model"`
	Title             string    `json:"title"`
	StartedAt         time.Time `json:"startedAt"`
	LastAt            time.Time `json:"lastAt"`
	Requests          int64     `json:"requests"`
	Tokens            Tokens    `json:"tokens"`
	CostUSD           float64   `json:"costUSD"`
	HitRate           float64   `json:"hitRate"`
	Folds             int64     `json:"folds"`
	Rewrites          int64     `json:"rewrites"`
	Declined          int64     `json:"declined"`
	Mode              string    `json:"mode"`
	SessionMode       string    `json:"sessionMode,omitempty"`
	PricedByDefault   bool      `json:"pricedByDefault"`
	ContextWindow     int64     `json:"contextWindow"`
	ThresholdTokens   int64     `json:"thresholdTokens"`
	LastContextTokens int64     `json:"lastContextTokens"`
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

// SummaryCall is the usage of a fold's summary call.
type SummaryCall struct {
	Input      int64   `json:"input"`
	CacheRead  int64   `json:"cacheRead"`
	CacheWrite int64   `json:"cacheWrite"`
	Output     int64   `json:"output"`
	CostUSD    float64 `json:"costUSD"`
}

// Fold is one rewrite in a series: asked through the API or imported.
type Fold struct {
	Rewrite             string       `json:"rewrite"`
	Seq                 int64        `json:"seq"`
	At                  time.Time    `json:"at"`
	Kind                string       `json:"kind"`
	Trigger             string       `json:"trigger"`
	PreTokens           int64        `json:"preTokens"`
	PredictedColdTokens *int64       `json:"predictedColdTokens"`
	ActualColdTokens    *int64       `json:"actualColdTokens"`
	SummaryCall         *SummaryCall `json:"summaryCall"`
	Decision            string       `json:"decision"`
	Reason              string       `json:"reason"`
	Mode                string       `json:"mode"`
	Order               string       `json:"order"`
	Applied             *bool        `json:"applied"`
	CostUSD             float64      `json:"costUSD"`
	Source              string       `json:"source"`
	Turn                string       `json:"turn,omitempty"`
	// PruneCount is how many units the chosen order pruned (0 for a
	// summary-only fold, or where the log does not say).
	PruneCount int `json:"pruneCount"`
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
// biggest answer, and reflection-driven encoding was a quarter of its cost.
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
	Key             string  `json:"key"`
	Requests        int64   `json:"requests"`
	CacheReadUSD    float64 `json:"cacheReadUSD"`
	ColdInputUSD    float64 `json:"coldInputUSD"`
	OutputUSD       float64 `json:"outputUSD"`
	BreakPremiumUSD float64 `json:"breakPremiumUSD"`
	TotalUSD        float64 `json:"totalUSD"`
	Tokens          Tokens  `json:"tokens"`
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

// Decision is the gate's answer about one rewrite.
type Decision struct {
	Rewrite  string         `json:"rewrite"`
	Status   string         `json:"status"` // pending | decided
	Session  string         `json:"session"`
	Decision string         `json:"decision,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Mode     string         `json:"mode"`
	Order    string         `json:"order,omitempty"`
	Apply    *pricing.Apply `json:"apply,omitempty"`
	Quote    *pricing.Quote `json:"quote"`
	Message  string         `json:"message,omitempty"`
	// DeadlineAt is when a pending question declines on its own.
	DeadlineAt *time.Time `json:"deadlineAt,omitempty"`
}

// Decisions and reasons (DESIGN §2: a closed list).
const (
	Allow   = "allow"
	Decline = "decline"

	ReasonUser               = "user"
	ReasonAuto               = "auto"
	ReasonOff                = "off"
	ReasonMuted              = "muted"
	ReasonNoQuestionProvider = "no-question-provider"
	ReasonTimeout            = "timeout"
	ReasonPricingFailed      = "pricing-failed"
	ReasonManual             = "manual"
	ReasonUnguarded          = "unguarded" // produced by clients only
)

// Answer choices of POST /v1/rewrites/{id}/answer.
const (
	ChoiceAllowOnce     = "allow-once"
	ChoiceNotNow        = "not-now"
	ChoiceAlwaysSession = "always-session"
)

// RecordedRequest is the 201 answer of POST /v1/sessions/{s}/requests.
type RecordedRequest struct {
	Session       string       `json:"session"`
	RequestID     string       `json:"requestId"`
	Seq           int64        `json:"seq"`
	ContextTokens int64        `json:"contextTokens"`
	CostUSD       float64      `json:"costUSD"`
	Cost          pricing.Cost `json:"cost"`
	PricedBy      string       `json:"pricedBy"`
	OffPeak       bool         `json:"offPeak"`
}

// ModeState is GET /v1/mode.
type ModeState struct {
	Mode        string `json:"mode"`
	Label       string `json:"label"`
	Scope       string `json:"scope"`
	Armed       bool   `json:"armed"`
	Global      string `json:"global"`
	ProfileMode string `json:"profileMode,omitempty"`
	SessionMode string `json:"sessionMode,omitempty"`
}

// Event payloads.
type (
	RewritePending struct {
		Rewrite         string         `json:"rewrite"`
		Session         string         `json:"session"`
		Harness         string         `json:"harness"`
		Profile         string         `json:"profile"`
		Trigger         string         `json:"trigger"`
		Turn            string         `json:"turn"`
		Mode            string         `json:"mode"`
		Quote           *pricing.Quote `json:"quote"`
		AskedAt         time.Time      `json:"askedAt"`
		DeadlineAt      time.Time      `json:"deadlineAt"`
		DeadlineSeconds float64        `json:"deadlineSeconds"`
	}
	RewriteDecided struct {
		Rewrite    string `json:"rewrite"`
		Session    string `json:"session"`
		Decision   string `json:"decision"`
		Reason     string `json:"reason"`
		Mode       string `json:"mode"`
		Order      string `json:"order"`
		AnsweredBy string `json:"answeredBy"`
	}
	RequestRecorded struct {
		Session       string    `json:"session"`
		RequestID     string    `json:"requestId"`
		Seq           int64     `json:"seq"`
		At            time.Time `json:"at"`
		Purpose       string    `json:"purpose"`
		ContextTokens int64     `json:"contextTokens"`
		CostUSD       float64   `json:"costUSD"`
	}
	ModeChanged struct {
		Scope   string `json:"scope"`
		Profile string `json:"profile,omitempty"`
		Session string `json:"session,omitempty"`
		Mode    string `json:"mode"`
	}
	EnginesChanged struct {
		Armed   bool `json:"armed"`
		Engines int  `json:"engines"`
	}
)

// ExportedRequest is one request as exported (CSV/JSON).
type ExportedRequest struct {
	Session       string       `json:"session"`
	RequestID     string       `json:"requestId"`
	Seq           int64        `json:"seq"`
	At            time.Time    `json:"at"`
	Purpose       string       `json:"purpose"`
	Turn          string       `json:"turn"`
	Profile       string       `json:"profile"`
	Provider      string       `json:"provider"`
	Model         string       `json:"model"`
	Usage         Tokens       `json:"usage"`
	ContextTokens int64        `json:"contextTokens"`
	Cost          pricing.Cost `json:"costUSD"`
	Prices        string       `json:"-"`
	PricedBy      string       `json:"pricedBy"`
	OffPeak       bool         `json:"offPeak"`
}
