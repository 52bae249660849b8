package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
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
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= perRound {
					n := seq.Add(1)
					body := fmt.Sprintf(`{"requestId":"r%d","profile":"deepseek-flash","provider":"deepseek","model":"deepseek-flash","turn":"1","usage":{"inputTokens":1200,"cacheReadTokens":250000,"outputTokens":900}}`, n)
					res, err := client.Do(clienttest.NewRequest("POST", fmt.Sprintf("%s/v1/sessions/s%d/requests", svc.URL, n%8), svc.Token(), body))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusCreated {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed += time.Since(start)
		acked += perRound
	}
	b.ReportMetric(float64(acked)/elapsed.Seconds(), "acked-req/s")
}
