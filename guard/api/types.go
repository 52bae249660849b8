// Package api holds the wire types of tollgate's v1 API: request bodies,
// answers, read models and event payloads. It is a leaf of plain types (and
// their decoders) shared by the guard (which serves them), storage (which
// reads them out of SQLite) and guard/client (which harnesses link).
package api

import (
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
}

// Series is GET /v1/sessions/{id}/series.
type Series struct {
	Session         Session `json:"session"`
	ContextWindow   int64   `json:"contextWindow"`
	ThresholdTokens int64   `json:"thresholdTokens"`
	Points          []Point `json:"points"`
	Folds           []Fold  `json:"folds"`
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
