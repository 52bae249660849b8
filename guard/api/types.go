// Package api holds the wire types of tollgate's v1 API: request bodies,
// answers and event payloads, and the names of the read models (declared in
// storage, which has no cgo). It is plain types and their decoders, shared by
// the guard (which serves them) and guard/client (which harnesses link).
package api

import (
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// The read models and records are storage's (a record is declared once);
// these names keep the wire contract readable in one place.
type (
	Session         = storage.Session
	SessionList     = storage.SessionList
	Point           = storage.Point
	Points          = storage.Points
	SummaryCall     = storage.FoldSummaryCall
	Fold            = storage.Fold
	Series          = storage.Series
	SpendRow        = storage.SpendRow
	Spend           = storage.Spend
	ExportedRequest = storage.ExportedRequest
	// The cache-break ledger: GET /v1/sessions/{id}/breaks, GET /v1/breaks,
	// and the break.detected event (a Break with its session).
	Break         = storage.Break
	SessionBreaks = storage.SessionBreaks
	BreakSummary  = storage.BreakSummary
	BreakSession  = storage.BreakSession
)

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

// Decisions and reasons (ARCHITECTURE.md, "Modes and decisions": a closed list).
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
	// ReasonQuestionLimit: tollgate already holds as many questions as it
	// takes (per session or in all) and allows this one unasked: a
	// tollgate that cannot take a question must not block the harness.
	ReasonQuestionLimit = "question-limit"
	ReasonUnguarded     = "unguarded" // produced by clients only
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
		Rewrite string         `json:"rewrite"`
		Session string         `json:"session"`
		Harness string         `json:"harness"`
		Profile string         `json:"profile"`
		Trigger string         `json:"trigger"`
		Turn    string         `json:"turn"`
		Mode    string         `json:"mode"`
		Quote   *pricing.Quote `json:"quote"`
		// Prediction is the harness's account of the cold tokens, when it
		// sent one (RewriteRequest.Prediction).
		Prediction      *ColdPrediction `json:"prediction,omitempty"`
		AskedAt         time.Time       `json:"askedAt"`
		DeadlineAt      time.Time       `json:"deadlineAt"`
		DeadlineSeconds float64         `json:"deadlineSeconds"`
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

// Integration is an installed hook integration, as GET /v1/engines and the
// Integrations page show it.
type Integration struct {
	Name string `json:"name"`
	// Label is how the UI names the harness ("Claude Code"), Title the
	// Integrations page's heading of it ("DeepSeek-Reasonix"), About the
	// page's paragraph on it and Setup its copy-ready setup snippet; the
	// integration registry (app/harness) fills them.
	Label     string `json:"label,omitempty"`
	Title     string `json:"title,omitempty"`
	About     string `json:"about,omitempty"`
	Setup     string `json:"setup,omitempty"`
	Installed bool   `json:"installed"`
	Verified  bool   `json:"verified"`
	// Detail is the integration's state in a line (what is installed
	// where, or what to run); Note what always holds of the harness (what a
	// decline does, why it cannot be gated), which the Integrations page
	// says in its own words and doctor prints after the detail.
	Detail       string `json:"detail"`
	Note         string `json:"note,omitempty"`
	LastDecision string `json:"lastDecision,omitempty"`
	// State is IntegrationObserved for a harness tollgate reads but cannot
	// gate (Gemini CLI) whose sessions are on this machine; "" otherwise
	// (the state follows from Installed and Verified). An observed
	// integration never arms the guard.
	State string `json:"state,omitempty"`
}

// IntegrationObserved is Integration.State for a harness whose sessions
// tollgate imports and prices but whose rewrites it cannot hold.
const IntegrationObserved = "observed"

// Harness is one harness tollgate knows, as GET /v1/harnesses lists it: a
// registered integration, a log format, or both.
type Harness struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Aliases are other harness names its engines register under.
	Aliases []string `json:"aliases,omitempty"`
	// Gated says tollgate can hold its rewrites: an integration that is
	// not only observed. A harness tollgate only imports is not gated.
	Gated bool `json:"gated"`
	// Logs is how tollgate reads its logs: HarnessLogLines or
	// HarnessLogDatabase; "" when it reads none.
	Logs string `json:"logs,omitempty"`
	// Decline is what a declined question does beyond skipping the
	// rewrite, where the harness cannot skip only that; "" when it skips
	// only the rewrite.
	Decline string `json:"decline,omitempty"`
}

// Harness.Logs: log files of lines (what an upload imports), or one
// database file read session by session.
const (
	HarnessLogLines    = "lines"
	HarnessLogDatabase = "database"
)

// HarnessList is GET /v1/harnesses.
type HarnessList struct {
	Harnesses []Harness `json:"harnesses"`
}
