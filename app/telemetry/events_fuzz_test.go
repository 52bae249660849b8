package telemetry

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"tollgate/pricing"
)

// Seeds: one api_request and its assistant_response as Claude Code 2.1.332
// sends them (counts as intValue), the same with string counts (older
// versions), a Codex completion and a Gemini response — written by hand
// after the shapes of the real capture, with made-up ids.
var fuzzSeeds = []string{
	`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"claude-code"}}]},"scopeLogs":[{"scope":{"name":"com.anthropic.claude_code.events"},"logRecords":[` +
		`{"timeUnixNano":"1796108706041000000","body":{"stringValue":"claude_code.api_request"},"attributes":[{"key":"session.id","value":{"stringValue":"s-1"}},{"key":"event.sequence","value":{"intValue":6}},{"key":"prompt.id","value":{"stringValue":"p-1"}},{"key":"model","value":{"stringValue":"claude-sonnet-4-5"}},{"key":"input_tokens","value":{"intValue":21546}},{"key":"output_tokens","value":{"intValue":8}},{"key":"cache_read_tokens","value":{"intValue":0}},{"key":"cache_creation_tokens","value":{"intValue":0}},{"key":"cache_creation_5m_tokens","value":{"intValue":0}},{"key":"cache_creation_1h_tokens","value":{"intValue":0}},{"key":"cost_usd","value":{"doubleValue":0.06}},{"key":"duration_ms","value":{"intValue":30}},{"key":"query_source","value":{"stringValue":"sdk"}}]},` +
		`{"timeUnixNano":"1796108706041000000","body":{"stringValue":"claude_code.assistant_response"},"attributes":[{"key":"session.id","value":{"stringValue":"s-1"}},{"key":"event.sequence","value":{"intValue":7}},{"key":"prompt.id","value":{"stringValue":"p-1"}},{"key":"message.uuid","value":{"stringValue":"u-1"}}]}]}]}]}`,
	`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"observedTimeUnixNano":"1796108706041000000","body":{"stringValue":"claude_code.api_request"},"attributes":[{"key":"session.id","value":{"stringValue":"s-2"}},{"key":"model","value":{"stringValue":"claude-opus-4[1m]"}},{"key":"input_tokens","value":{"stringValue":"12"}},{"key":"output_tokens","value":{"stringValue":"300"}},{"key":"cache_read_tokens","value":{"stringValue":"90000"}},{"key":"cache_creation_tokens","value":{"stringValue":"1200"}},{"key":"query_source","value":{"stringValue":"agent:builtin"}}]}]}]}]}`,
	`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":"codex.sse_event","timeUnixNano":"1796108706041000000","attributes":[{"key":"event.kind","value":{"stringValue":"response.completed"}},{"key":"conversation.id","value":{"stringValue":"c-1"}},{"key":"model","value":{"stringValue":"gpt-5-codex"}},{"key":"input_token_count","value":{"intValue":5000}},{"key":"cached_token_count","value":{"intValue":4000}},{"key":"output_token_count","value":{"intValue":70}}]}]}]}]}`,
	`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gemini-cli"}}]},"scopeLogs":[{"logRecords":[{"timeUnixNano":"1796108706041000000","attributes":[{"key":"event.name","value":{"stringValue":"gemini_cli.api_response"}},{"key":"session.id","value":{"stringValue":"g-1"}},{"key":"model","value":{"stringValue":"gemini-2.5-pro"}},{"key":"input_token_count","value":{"intValue":800}},{"key":"cached_content_token_count","value":{"intValue":600}},{"key":"output_token_count","value":{"intValue":20}},{"key":"thoughts_token_count","value":{"intValue":5}},{"key":"tool_token_count","value":{"intValue":7}}]}]}]}]}`,
}

// FuzzRequests: whatever bytes arrive, decoding either encoding and reading
// the requests never panics, and every request read has a session, an id
// and counts within bounds.
func FuzzRequests(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), true)
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON([]byte(s)); err != nil {
			f.Fatal(err)
		}
		pb, _ := req.MarshalProto()
		f.Add(pb, false)
	}
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		req := plogotlp.NewExportRequest()
		var err error
		if asJSON {
			err = req.UnmarshalJSON(data)
		} else {
			err = req.UnmarshalProto(data)
		}
		if err != nil {
			return
		}
		b, err := Requests(req.Logs(), now)
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("an error without a field: %v", err)
			}
			return
		}
		for _, r := range b.Requests {
			u := r.Usage
			if r.Session.ID == "" || r.RequestID == "" || len(r.RequestID) > 1024 {
				t.Fatalf("%+v", r)
			}
			for _, n := range []int64{u.Input, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Output} {
				if n < 0 || n > 3*pricing.MaxUsageTokens {
					t.Fatalf("count %d in %+v", n, u)
				}
			}
		}
	})
}

// The seeds read as the requests they describe.
func TestSeedsReadAsRequests(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	want := []struct {
		session, purpose, uuid string
		u                      pricing.Usage
	}{
		{"claude-code:s-1", "conversation", "u-1", pricing.Usage{Input: 21546, Output: 8}},
		{"claude-code:s-2", "subagent", "", pricing.Usage{Input: 12, CacheRead: 90000, CacheWrite: 1200, Output: 300}},
		{"codex:c-1", "conversation", "", pricing.Usage{Input: 1000, CacheRead: 4000, Output: 70}},
		{"gemini:g-1", "conversation", "", pricing.Usage{Input: 207, CacheRead: 600, Output: 25}}, // the tool-use prompt is input
	}
	for i, s := range fuzzSeeds {
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		b, err := Requests(req.Logs(), now)
		if err != nil || len(b.Requests) != 1 {
			t.Fatalf("seed %d: %v %+v", i, err, b)
		}
		r, w := b.Requests[0], want[i]
		if r.Session.ID != w.session || r.Purpose != w.purpose || r.MessageUUID != w.uuid || r.Usage != w.u {
			t.Errorf("seed %d: %s %s %q %+v", i, r.Session.ID, r.Purpose, r.MessageUUID, r.Usage)
		}
	}
}
