package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// UsageReport is pricing.Usage as the recording body spells it
// (ARCHITECTURE.md, "Recording a request"): {"inputTokens", "cacheReadTokens",
// "cacheWriteTokens", "cacheWrite1hTokens", "outputTokens"}. It is the same
// type under the wire's key names: convert with pricing.Usage(r) and
// UsageReport(u), never field by field.
type UsageReport pricing.Usage

// usageReportKeys are the wire's key names, in field order.
var usageReportKeys = [5]string{"inputTokens", "cacheReadTokens", "cacheWriteTokens", "cacheWrite1hTokens", "outputTokens"}

// usageReportJSON carries the wire's key names for encoding/json.
type usageReportJSON struct {
	Input        int64 `json:"inputTokens"`
	CacheRead    int64 `json:"cacheReadTokens"`
	CacheWrite   int64 `json:"cacheWriteTokens"`
	CacheWrite1h int64 `json:"cacheWrite1hTokens"`
	Output       int64 `json:"outputTokens"`
}

// MarshalJSON writes the wire's key names.
func (r UsageReport) MarshalJSON() ([]byte, error) { return json.Marshal(usageReportJSON(r)) }

// UnmarshalJSON reads the wire's key names (into r itself: the two structs
// differ only in their tags).
func (r *UsageReport) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, (*usageReportJSON)(r)) }

// Check names the first count outside 0…2^40, as "usage.<key>".
func (r UsageReport) Check() (field string, ok bool) {
	for i, v := range [5]int64{r.Input, r.CacheRead, r.CacheWrite, r.CacheWrite1h, r.Output} {
		if v < 0 || v > pricing.MaxUsageTokens {
			return "usage." + usageReportKeys[i], false
		}
	}
	return "", true
}

// UsageKeysHint lists the keys of a usage report, for error messages.
var UsageKeysHint = fmt.Sprintf("{%s, %s, %s, %s, %s}", usageReportKeys[0], usageReportKeys[1], usageReportKeys[2], usageReportKeys[3], usageReportKeys[4])

// RequestReport is the body of POST /v1/sessions/{session}/requests: one
// routed request's usage. guard/client sends it and the guard decodes it.
type RequestReport struct {
	RequestID       string       `json:"requestId"`
	Engine          string       `json:"engine,omitempty"`
	Harness         string       `json:"harness,omitempty"`
	Title           string       `json:"title,omitempty"`
	Profile         string       `json:"profile,omitempty"`
	Provider        string       `json:"provider,omitempty"`
	Model           string       `json:"model,omitempty"`
	Purpose         string       `json:"purpose,omitempty"`   // conversation | compaction | subagent
	Thread          string       `json:"thread,omitempty"`    // the conversation it continues ("" the main one; each subagent its own): the cache-break ledger's unit
	StartedBy       string       `json:"startedBy,omitempty"` // what the harness appended since the thread's previous request (user-prompt, tool-result, task-notification, …); absent: the purpose
	Turn            Turn         `json:"turn,omitempty"`
	At              string       `json:"at,omitempty"` // RFC 3339 (see At); absent: when the guard receives it
	ContextWindow   int64        `json:"contextWindow,omitempty"`
	ThresholdTokens int64        `json:"thresholdTokens,omitempty"`
	Usage           *UsageReport `json:"usage"` // required
}

// At formats a request's time as RequestReport.At wants it ("" for the zero
// time: the guard then takes the time it receives the report).
func At(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Report is a usage as a RequestReport carries it.
func Report(u pricing.Usage) *UsageReport {
	r := UsageReport(u)
	return &r
}

// Turn is a harness turn: an opaque string, though a JSON number is accepted
// too and kept as its text ("17").
type Turn string

var stringType = reflect.TypeFor[string]()

// UnmarshalJSON accepts a string, a number or null.
func (t *Turn) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = Turn(s)
	case string(b) == "null":
		*t = ""
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return &json.UnmarshalTypeError{Value: string(b), Type: stringType}
		}
		*t = Turn(n.String())
	}
	return nil
}

// Wire values shared with storage's records.
const (
	PurposeConversation = storage.PurposeConversation
	PurposeCompaction   = storage.PurposeCompaction
	PurposeSubagent     = storage.PurposeSubagent

	StatusPending = storage.StatusPending
	StatusDecided = storage.StatusDecided
)
