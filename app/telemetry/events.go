// Package telemetry is tollgate's OpenTelemetry: the OTLP/HTTP receiver
// harnesses export their per-request usage to (/otlp/v1/logs and
// /otlp/v1/metrics on the API listener, with the API's bearer token), and
// the team exports — Prometheus (/metrics) and OTLP metric push. Decoding
// is the OpenTelemetry project's own (collector/pdata's plogotlp and
// pmetricotlp), never a hand-written protobuf reader (ARCHITECTURE.md,
// "Telemetry").
package telemetry

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"tollgate/app/harness"
	"tollgate/app/importer"
	"tollgate/pricing"
	"tollgate/storage"
)

// The events that carry one billed request each, by harness:
//
//   - Claude Code (CLAUDE_CODE_ENABLE_TELEMETRY=1): claude_code.api_request,
//     with model, input_tokens (uncached), output_tokens, cache_read_tokens,
//     cache_creation_tokens (+ _5m/_1h since 2.1), cost_usd, duration_ms,
//     session.id, prompt.id, event.sequence — numbers (intValue) since
//     2.1.332, strings before: both are read. The claude_code.assistant_response
//     that follows it (same prompt.id, next event.sequence) names the
//     transcript line's uuid (message.uuid). Session: session.id.
//   - Codex ([otel] exporter = otlp-http): codex.sse_event of event.kind
//     response.completed, with input_token_count (cached included, OpenAI's
//     convention), cached_token_count, output_token_count; session:
//     conversation.id.
//   - Gemini CLI (GEMINI_TELEMETRY_*): gemini_cli.api_response, with
//     input_token_count (cached included), cached_content_token_count,
//     output_token_count, thoughts_token_count (billed as output),
//     tool_token_count (the tool-use prompt, billed as input); session:
//     session.id.
//
// An event's namespace (claude_code, codex, gemini_cli) names the harness
// whose export it is (the integrations' harness.OTel), and the requests
// are stored under that harness's name, with the importer's session id
// (importer.SessionID), so live usage and the later import of the same
// session merge. Other events, and the events of a harness this binary
// does not register, are counted as seen and otherwise ignored.
const (
	eventClaudeRequest  = "claude_code.api_request"
	eventClaudeResponse = "claude_code.assistant_response"
	eventCodexSSE       = "codex.sse_event"
	eventGeminiResponse = "gemini_cli.api_response"
)

// otelNames are the registered integrations' OpenTelemetry names
// (harness.OTel): the harness of each event namespace, and the namespace
// of each service.name whose records carry bare event names. Integrations
// register from init functions, before any export arrives, so the
// registry is read once.
var otelNames = sync.OnceValue(func() otelNameMaps {
	n := otelNameMaps{harness: map[string]string{}, namespace: map[string]string{}}
	for _, in := range harness.Registered() {
		if o := in.OTel; o != nil {
			n.harness[o.Namespace] = in.Name
			if o.Service != "" {
				n.namespace[o.Service] = o.Namespace
			}
		}
	}
	return n
})

type otelNameMaps struct {
	harness   map[string]string // event namespace → harness name
	namespace map[string]string // service.name → event namespace
}

// harnessOf is the harness whose export names an event name ("" when no
// registered integration's does).
func harnessOf(event string) string {
	ns, _, _ := strings.Cut(event, ".")
	return otelNames().harness[ns]
}

// FieldError is a malformed part of an export: Field is its path in the
// OTLP document (resourceLogs[0].scopeLogs[0].logRecords[6].attributes.input_tokens).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Batch is what one logs export reports.
type Batch struct {
	Requests []storage.Request
	// Events counts the log records read; Last is the newest event time
	// per harness (for the Integrations page's "receiving telemetry").
	Events int
	Last   map[string]time.Time
	// Links name the transcript line of a request received in an earlier
	// export (its assistant_response came in this one).
	Links []Link
}

// Link is a message uuid for a request already received.
type Link struct {
	Session, RequestID, UUID string
}

// maxIDLen bounds the strings taken into ids.
const maxIDLen = 256

// oldest is the earliest event time taken: anything before is a clock or
// encoding fault, as is anything more than a day ahead of now.
var oldest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Requests reads the billed requests an OTLP logs export reports. A
// request event that cannot be read fails the whole export (the caller
// stores nothing): its error names the field.
func Requests(logs plog.Logs, now time.Time) (Batch, error) {
	b := Batch{Last: map[string]time.Time{}}
	type key struct {
		session, prompt string
		seq             int64
	}
	claude := map[key]int{}       // api_request → index in b.Requests
	responses := map[key]string{} // assistant_response at (prompt, seq) → message.uuid
	rls := logs.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		service := strAttr(rl.Resource().Attributes(), "service.name")
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				b.Events++
				path := "resourceLogs[" + strconv.Itoa(i) + "].scopeLogs[" + strconv.Itoa(j) + "].logRecords[" + strconv.Itoa(k) + "]"
				ev := event{path: path, attrs: lr.Attributes()}
				name := eventName(lr, service)
				switch name {
				case eventClaudeRequest, eventClaudeResponse, eventCodexSSE, eventGeminiResponse:
				default:
					continue
				}
				h := harnessOf(name)
				if h == "" {
					continue
				}
				at, err := ev.time(lr, now)
				if err != nil {
					return b, err
				}
				var r *storage.Request
				switch name {
				case eventClaudeRequest:
					r, err = ev.claudeRequest(at, h)
					if r != nil {
						claude[key{r.Session.ID, ev.str("prompt.id"), ev.sequence()}] = len(b.Requests)
					}
				case eventClaudeResponse:
					if u := ev.str("message.uuid"); u != "" && len(u) <= maxIDLen {
						responses[key{importer.SessionID(h, ev.str("session.id")), ev.str("prompt.id"), ev.sequence()}] = u
					}
				case eventCodexSSE:
					r, err = ev.codexRequest(at, h)
				case eventGeminiResponse:
					r, err = ev.geminiRequest(at, h)
				}
				if err != nil {
					return b, err
				}
				if r != nil {
					b.Requests = append(b.Requests, *r)
					if at.After(b.Last[r.Session.Harness]) {
						b.Last[r.Session.Harness] = at
					}
				}
			}
		}
	}
	// The response that follows a request names its transcript line; one
	// whose request came in an earlier export links that request.
	for k, i := range claude {
		if k.prompt == "" || k.seq < 0 {
			continue
		}
		if u, ok := responses[key{k.session, k.prompt, k.seq + 1}]; ok {
			b.Requests[i].MessageUUID = u
			delete(responses, key{k.session, k.prompt, k.seq + 1})
		}
	}
	for k, u := range responses {
		if k.prompt != "" && k.seq > 0 {
			b.Links = append(b.Links, Link{Session: k.session, RequestID: "otel:" + truncate(k.prompt, maxIDLen) + ":" + strconv.FormatInt(k.seq-1, 10), UUID: u})
		}
	}
	return b, nil
}

// eventName is the record's event name: the OTLP EventName field, else a
// string body (Claude Code: "claude_code.api_request"), else the
// event.name attribute, prefixed by the service's namespace when bare
// (harness.OTel.Service).
func eventName(lr plog.LogRecord, service string) string {
	if n := lr.EventName(); n != "" {
		return n
	}
	if body := lr.Body(); body.Type() == pcommon.ValueTypeStr && strings.Contains(body.Str(), ".") && len(body.Str()) < 64 {
		return body.Str()
	}
	n := strAttr(lr.Attributes(), "event.name")
	if n != "" && !strings.Contains(n, ".") {
		if ns, ok := otelNames().namespace[service]; ok {
			n = ns + "." + n
		}
	}
	return n
}

func strAttr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// event reads one record's attributes, naming its path in errors.
type event struct {
	path  string
	attrs pcommon.Map
}

func (e event) fail(attr, msg string) *FieldError {
	f := e.path
	if attr != "" {
		f += ".attributes." + attr
	}
	return &FieldError{Field: f, Message: msg}
}

func (e event) str(k string) string { return strAttr(e.attrs, k) }

// sequence is event.sequence, or -1.
func (e event) sequence() int64 {
	n, ok, err := e.count("event.sequence")
	if !ok || err != nil {
		return -1
	}
	return n
}

// count reads a token count: an integer, an integral double, or a string
// of digits (Claude Code before 2.1.332 sent strings).
func (e event) count(k string) (int64, bool, error) {
	v, ok := e.attrs.Get(k)
	if !ok {
		return 0, false, nil
	}
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeDouble:
		d := v.Double()
		if math.IsNaN(d) || math.IsInf(d, 0) || d != math.Trunc(d) || math.Abs(d) > 1<<53 {
			return 0, true, e.fail(k, "want a whole number, got "+strconv.FormatFloat(d, 'g', -1, 64))
		}
		n = int64(d)
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		p, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, true, e.fail(k, "want a whole number, got "+strconv.Quote(truncate(v.Str(), 40)))
		}
		n = p
	default:
		return 0, true, e.fail(k, "want a whole number, got a "+strings.ToLower(v.Type().String()))
	}
	if n < 0 || n > pricing.MaxUsageTokens {
		return 0, true, e.fail(k, "must be between 0 and 2^40")
	}
	return n, true, nil
}

// counts reads the named counts; required ones must be present.
func (e event) counts(required []string, optional ...string) (map[string]int64, error) {
	out := make(map[string]int64, len(required)+len(optional))
	for _, k := range required {
		n, ok, err := e.count(k)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, e.fail(k, "required: the event's token count")
		}
		out[k] = n
	}
	for _, k := range optional {
		n, _, err := e.count(k)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

// id reads a required identifier attribute.
func (e event) id(k string) (string, error) {
	v, ok := e.attrs.Get(k)
	if !ok {
		return "", e.fail(k, "required: the harness's session id")
	}
	s := v.AsString()
	if s == "" || len(s) > maxIDLen || strings.ContainsAny(s, "\x00\n") {
		return "", e.fail(k, "want a non-empty id of at most 256 bytes")
	}
	return s, nil
}

func (e event) model() (string, error) {
	m := e.str("model")
	if len(m) > maxIDLen {
		return "", e.fail("model", "longer than 256 bytes")
	}
	return m, nil
}

// time is the event's time: the record's timestamp, else its observed
// time, else event.timestamp, else now.
func (e event) time(lr plog.LogRecord, now time.Time) (time.Time, error) {
	at, field := lr.Timestamp().AsTime(), "timeUnixNano"
	if lr.Timestamp() == 0 {
		at, field = lr.ObservedTimestamp().AsTime(), "observedTimeUnixNano"
	}
	if lr.Timestamp() == 0 && lr.ObservedTimestamp() == 0 {
		s := e.str("event.timestamp")
		if s == "" {
			return now.UTC(), nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, e.fail("event.timestamp", "want an RFC 3339 time")
		}
		at, field = t, "attributes.event.timestamp"
	}
	if at.Before(oldest) || at.After(now.Add(24*time.Hour)) {
		return time.Time{}, &FieldError{Field: e.path + "." + field, Message: at.UTC().Format(time.RFC3339) + " is not a plausible time for an event"}
	}
	return at.UTC(), nil
}

// requestID is stable across a retried export: the harness's own
// coordinates of the event.
func (e event) requestID(at time.Time, parts ...string) string {
	id := "otel"
	for _, p := range parts {
		id += ":" + truncate(p, maxIDLen)
	}
	if seq := e.sequence(); seq >= 0 {
		return id + ":" + strconv.FormatInt(seq, 10)
	}
	return id + ":t" + strconv.FormatInt(at.UnixNano(), 10)
}

// fields reads what every harness's request event names: its session id
// (under sessionKey), its model and its token counts (required ones and
// the others).
func (e event) fields(sessionKey string, required []string, optional ...string) (session, model string, c map[string]int64, err error) {
	if session, err = e.id(sessionKey); err != nil {
		return
	}
	if model, err = e.model(); err != nil {
		return
	}
	c, err = e.counts(required, optional...)
	return
}

// request is the stored request of an event of harness h: its session
// (importer.SessionID) priced by provider and model, received over OTLP.
func request(h, provider, session, model string, window int64, id string, at time.Time, purpose string, u pricing.Usage) *storage.Request {
	return &storage.Request{
		Session: storage.SessionMeta{ID: importer.SessionID(h, session), Harness: h, Provider: provider, Model: model, ContextWindow: window,
			LimitsAssumed: window > 0}, // the model's window, not the session's settings
		RequestID: id, At: at, Purpose: purpose, Provider: provider, Model: model, Usage: u, Via: storage.ViaOTLP,
	}
}

func (e event) claudeRequest(at time.Time, h string) (*storage.Request, error) {
	session, model, c, err := e.fields("session.id", []string{"input_tokens", "output_tokens"},
		"cache_read_tokens", "cache_creation_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens")
	if err != nil {
		return nil, err
	}
	u := pricing.Usage{Input: c["input_tokens"], CacheRead: c["cache_read_tokens"], Output: c["output_tokens"]}
	// cache_creation_tokens is the sum; the split (when sent) types it,
	// an untyped remainder counting as 5-minute writes (as the importer does).
	w5, w1, all := c["cache_creation_5m_tokens"], c["cache_creation_1h_tokens"], c["cache_creation_tokens"]
	u.CacheWrite, u.CacheWrite1h = w5, w1
	if rest := all - w5 - w1; rest > 0 {
		u.CacheWrite += rest
	}
	purpose := storage.PurposeConversation
	switch qs := e.str("query_source"); {
	case qs == "compact":
		purpose = storage.PurposeCompaction
	case strings.HasPrefix(qs, "agent"):
		purpose = storage.PurposeSubagent
	}
	window := int64(200_000)
	if strings.HasSuffix(model, "[1m]") {
		window = 1_000_000
	}
	if model == "" {
		window = 0
	}
	return request(h, "anthropic", session, model, window, e.requestID(at, e.str("prompt.id")), at, purpose, u), nil
}

func (e event) codexRequest(at time.Time, h string) (*storage.Request, error) {
	if e.str("event.kind") != "response.completed" {
		return nil, nil
	}
	session, model, c, err := e.fields("conversation.id", []string{"input_token_count", "output_token_count"}, "cached_token_count")
	if err != nil {
		return nil, err
	}
	cached := min(c["cached_token_count"], c["input_token_count"])
	u := pricing.Usage{Input: c["input_token_count"] - cached, CacheRead: cached, Output: c["output_token_count"]}
	return request(h, "openai", session, model, 0, e.requestID(at), at, storage.PurposeConversation, u), nil
}

func (e event) geminiRequest(at time.Time, h string) (*storage.Request, error) {
	session, model, c, err := e.fields("session.id", []string{"input_token_count", "output_token_count"}, "cached_content_token_count", "thoughts_token_count", "tool_token_count")
	if err != nil {
		return nil, err
	}
	cached := min(c["cached_content_token_count"], c["input_token_count"])
	// The tool-use prompt is billed as input beside the prompt, as the
	// session file's import counts it (app/harness/gemini): both witnesses
	// of one request must agree to be counted once.
	u := pricing.Usage{Input: c["input_token_count"] - cached + c["tool_token_count"], CacheRead: cached, Output: c["output_token_count"] + c["thoughts_token_count"]}
	return request(h, "google", session, model, 0, e.requestID(at, e.str("prompt_id")), at, storage.PurposeConversation, u), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
