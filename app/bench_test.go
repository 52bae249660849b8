package app

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/app/config"
	"tollgate/guard/client/clienttest"
)

// BenchmarkServiceRecordRequests: what ARCHITECTURE.md, "Targets"'s "≥ 10,000 recorded
// requests/s acknowledged after commit (50 clients)" measures, through the
// whole service — real config, real pricing lookup, real SQLite file, real
// loopback HTTP. The 50 clients run in this process, on the same 2 cores.
func BenchmarkServiceRecordRequests(b *testing.B) {
	svc, err := Start(context.Background(), StartOptions{Home: b.TempDir(), Flags: config.Flags{Listen: "127.0.0.1:0"}, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(context.Background())
	const clients, perRound = 50, 5000
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	var seq atomic.Int64
	var acked int64
	var elapsed time.Duration
	for b.Loop() {
		r := clienttest.Load(b, client, clients, perRound, func(int) *http.Request {
			n := seq.Add(1)
			body := fmt.Sprintf(`{"requestId":"r%d","profile":"deepseek-flash","provider":"deepseek","model":"deepseek-flash","turn":"1","usage":{"inputTokens":1200,"cacheReadTokens":250000,"outputTokens":900}}`, n)
			return clienttest.NewRequest("POST", fmt.Sprintf("%s/v1/sessions/s%d/requests", svc.URL, n%8), svc.Token(), body)
		}, http.StatusCreated)
		elapsed += r.Elapsed
		acked += perRound
	}
	b.ReportMetric(float64(acked)/elapsed.Seconds(), "acked-req/s")
}
