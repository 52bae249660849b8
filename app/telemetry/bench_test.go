package telemetry_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"tollgate/app/apptest"
	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
)

// benchEvents is how many api_request events one iteration receives, in
// exports of at most 512 records (the OTel SDKs' default batch).
const (
	benchEvents = 10_000
	benchBatch  = 512
)

// BenchmarkReceive10k: 10,000 Claude Code api_request events received
// over OTLP/HTTP JSON, beside the same 10,000 requests recorded through
// POST /v1/sessions/{id}/requests, in one run against one real tollgate
// (SQLite in a temp dir, loopback HTTP). The target: OTLP at most 2× the
// API. Run: go test -run '^$' -bench Receive10k -count 6 ./app/telemetry
func BenchmarkReceive10k(b *testing.B) {
	svc, _ := apptest.Start(b, "auto")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func(path, contentType string, body []byte, want int) {
		req := clienttest.NewRequest(http.MethodPost, svc.URL+path, svc.Token(), body)
		req.Header.Set("Content-Type", contentType)
		res, raw, err := clienttest.Send(client, req)
		if res == nil {
			b.Fatal(err)
		}
		if res.StatusCode != want {
			b.Fatalf("%s: %d %s", path, res.StatusCode, raw)
		}
	}
	at := time.Now().Add(-time.Hour).UTC()
	run := 0
	b.Run("otlp-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			run++
			var bodies [][]byte
			for start := 0; start < benchEvents; start += benchBatch {
				n := min(benchBatch, benchEvents-start)
				logs := export(fmt.Sprintf("bench-%d", run), n, at, false)
				recs := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
				for k := 0; k < recs.Len(); k++ { // distinct prompts and sequences across batches
					recs.At(k).Attributes().PutStr("prompt.id", "p-"+strconv.Itoa(start+k))
				}
				bodies = append(bodies, jsonBody(b, logs))
			}
			b.StartTimer()
			for _, body := range bodies {
				post("/otlp/v1/logs", "application/json", body, http.StatusOK)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchEvents), "ns/event")
	})
	b.Run("api-post", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			run++
			bodies := make([][]byte, benchEvents)
			for k := range bodies {
				bodies[k], _ = json.Marshal(api.RequestReport{
					RequestID: "r-" + strconv.Itoa(k), Harness: "claude-code", Provider: "anthropic", Model: "claude-sonnet-4-5",
					At:    api.At(at.Add(time.Duration(k) * time.Second)),
					Usage: &api.UsageReport{Input: int64(100 + k), Output: 50, CacheRead: 20000, CacheWrite: 2000, CacheWrite1h: 1000},
				})
			}
			path := fmt.Sprintf("/v1/sessions/bench-api-%d/requests", run)
			b.StartTimer()
			for _, body := range bodies {
				post(path, "application/json", body, http.StatusCreated)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchEvents), "ns/event")
	})
}
