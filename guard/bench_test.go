package guard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
	"tollgate/pricing"
	"tollgate/storage"
)

// The gate's targets (ARCHITECTURE.md, "Targets") are measured here, over real loopback HTTP
// with a real SQLite file, side by side in one run:
//
//	go test -run '^$' -bench 'Gate|Record|Series' -benchtime 3x ./guard/
//
// Latencies are reported as p50/p99 metrics; ratios compare the gate with a
// handler that only reads and decodes the same body with encoding/json.

const benchClients = 50

// benchBody is a rewrite request over n units and ~1M tokens.
func benchBody(n int) []byte {
	per := int64(1_000_000 / n)
	surface := make([]map[string]any, n)
	for i := range surface {
		surface[i] = map[string]any{"id": fmt.Sprintf("seq-%d", i), "tokens": per, "kind": "tool-result", "breakpoint": false}
	}
	prunes := []map[string]any{}
	for i := n * 3 / 4; i < n; i += 7 {
		prunes = append(prunes, map[string]any{"id": fmt.Sprintf("seq-%d", i), "tokensAfter": per / 10})
	}
	b, _ := json.Marshal(map[string]any{
		"engine": "", "profile": "deepseek-flash", "turn": "17", "trigger": "pressure", "deadlineSeconds": 28, "idleSeconds": 4,
		"contextWindow": 1048576, "thresholdTokens": 838861, "envelopeTokens": 13000, "surface": surface,
		"plan": map[string]any{"prune": prunes, "summarize": map[string]any{"start": "seq-0", "end": fmt.Sprintf("seq-%d", n/2), "estimatedTokens": 4000, "instructionTokens": 470}},
	})
	return b
}

// decodeOnly is the floor: read the body and decode it with encoding/json.
func decodeOnly() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req api.RewriteRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"units":%d}`, len(req.Surface))
	})
}

// load posts total bodies to url with token from `clients` goroutines and
// records each round trip (clienttest.Load).
func load(b *testing.B, client *http.Client, url, token string, clients, total int, body func(i int) []byte, wantStatus int) clienttest.LoadResult {
	return clienttest.Load(b, client, clients, total, func(i int) *http.Request {
		return clienttest.NewRequest("POST", url, token, body(i))
	}, wantStatus)
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}}
}

// BenchmarkGateAuto: the gate round trip in auto mode (priced, decided,
// committed) beside the decode-only floor, 50 concurrent clients, in
// alternating rounds so both see the same machine.
func BenchmarkGateAuto(b *testing.B) {
	for _, units := range []int{500, 5000} {
		b.Run(fmt.Sprintf("units=%d", units), func(b *testing.B) {
			g := newGate(b, ModeAuto)
			floor := httptest.NewServer(decodeOnly())
			defer floor.Close()
			body := benchBody(units)
			client := benchClient()
			perRound := benchClients * 4
			var gate, base []time.Duration
			for b.Loop() {
				r := load(b, client, g.ts.URL+"/v1/sessions/bench/rewrites", testToken, benchClients, perRound, func(int) []byte { return body }, 200)
				gate = append(gate, r.Latencies...)
				r = load(b, client, floor.URL, testToken, benchClients, perRound, func(int) []byte { return body }, 200)
				base = append(base, r.Latencies...)
			}
			gp50, gp99 := percentile(gate, 0.50), percentile(gate, 0.99)
			bp50, bp99 := percentile(base, 0.50), percentile(base, 0.99)
			b.ReportMetric(float64(gp50.Microseconds()), "gate-p50-µs")
			b.ReportMetric(float64(gp99.Microseconds()), "gate-p99-µs")
			b.ReportMetric(float64(bp50.Microseconds()), "decode-p50-µs")
			b.ReportMetric(float64(bp99.Microseconds()), "decode-p99-µs")
			b.ReportMetric(float64(gp50)/float64(bp50), "ratio-p50")
			b.ReportMetric(float64(gp99)/float64(bp99), "ratio-p99")
		})
	}
}

// BenchmarkGateAutoSingleClient: one client, no contention: the latency a
// harness sees on an idle machine.
func BenchmarkGateAutoSingleClient(b *testing.B) {
	for _, units := range []int{500, 5000} {
		b.Run(fmt.Sprintf("units=%d", units), func(b *testing.B) {
			g := newGate(b, ModeAuto)
			body := benchBody(units)
			client := benchClient()
			var lat []time.Duration
			for b.Loop() {
				r := load(b, client, g.ts.URL+"/v1/sessions/bench/rewrites", testToken, 1, 1, func(int) []byte { return body }, 200)
				lat = append(lat, r.Latencies...)
			}
			b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
			b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
		})
	}
}

// decodeAndAck is the recording route's floor: read the body, decode it as
// the route does, and acknowledge it with the route's answer, storing
// nothing.
func decodeAndAck() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b api.RequestReport
		if !decodeJSON(w, r, &b) {
			return
		}
		writeJSON(w, http.StatusCreated, api.RecordedRequest{Session: r.PathValue("session"), RequestID: b.RequestID, Seq: 1, ContextTokens: 1})
	})
}

// BenchmarkRecordRequests: requests acknowledged after commit (a real
// SQLite file), 50 clients on loopback, in rounds alternating with a
// server that only decodes and acknowledges the same reports; the ratio of
// their throughputs is the target (≥ 0.5; ARCHITECTURE.md, "Targets").
func BenchmarkRecordRequests(b *testing.B) {
	g := newGate(b, ModeAuto)
	mux := http.NewServeMux()
	mux.Handle("POST /v1/sessions/{session}/requests", decodeAndAck())
	floor := httptest.NewServer(mux)
	defer floor.Close()
	client := benchClient()
	var seq atomic.Int64
	body := func(int) []byte {
		n := seq.Add(1)
		return []byte(fmt.Sprintf(`{"requestId":"r%d","profile":"deepseek-flash","purpose":"conversation","turn":"1","usage":{"inputTokens":1200,"cacheReadTokens":250000,"outputTokens":900}}`, n))
	}
	const perRound = 5000
	var total int
	var elapsed, floorElapsed time.Duration
	var lat, floorLat []time.Duration
	for b.Loop() {
		path := fmt.Sprintf("/v1/sessions/s%d/requests", seq.Load()%8)
		r := load(b, client, g.ts.URL+path, testToken, benchClients, perRound, body, 201)
		total += perRound
		elapsed += r.Elapsed
		lat = append(lat, r.Latencies...)
		r = load(b, client, floor.URL+path, testToken, benchClients, perRound, body, 201)
		floorElapsed += r.Elapsed
		floorLat = append(floorLat, r.Latencies...)
	}
	recorded, decoded := float64(total)/elapsed.Seconds(), float64(total)/floorElapsed.Seconds()
	b.ReportMetric(recorded, "acked-req/s")
	b.ReportMetric(decoded, "decode-req/s")
	b.ReportMetric(recorded/decoded, "ratio")
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(percentile(floorLat, 0.5).Microseconds()), "decode-p50-µs")
}

// BenchmarkSeries10k: GET /v1/sessions/{id}/series for 10,000 requests,
// end to end (query, JSON, loopback).
func BenchmarkSeries10k(b *testing.B) {
	g := newGate(b, ModeAuto)
	var recs []storage.Request
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 10000; i++ {
		recs = append(recs, storage.Request{
			Session: storage.SessionMeta{ID: "big", ContextWindow: 1048576, ThresholdTokens: 838861}, RequestID: fmt.Sprint(i),
			At: t0.Add(time.Duration(i) * time.Second), Usage: pricing.Usage{Input: 100, CacheRead: int64(i * 80), Output: 50},
		})
	}
	if _, err := g.store.RecordRequests(context.Background(), recs); err != nil {
		b.Fatal(err)
	}
	client := benchClient()
	for b.Loop() {
		res, err := client.Do(clienttest.NewRequest("GET", g.ts.URL+"/v1/sessions/big/series", testToken, nil))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || n < 10000*50 {
			b.Fatalf("series: %d, %d bytes", res.StatusCode, n)
		}
	}
}
