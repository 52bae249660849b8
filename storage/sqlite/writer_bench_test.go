package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tollgate/pricing"
)

// BenchmarkRecordClients: n clients, each recording its own session and
// waiting for the ack (after COMMIT) before its next request, as harness
// hooks and plugins do. The group writer's company rule is judged here: a
// few clients must not wait on each other's commits (a timer linger halves
// 2–4 clients' throughput), many must share commits.
func BenchmarkRecordClients(b *testing.B) {
	ctx := context.Background()
	for _, clients := range []int{1, 2, 4, 8, 50} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			db := openTest(b)
			defer db.Close()
			var next atomic.Int64
			var wait atomic.Int64 // summed latency, ns
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						t := time.Now()
						r := req(fmt.Sprint("s", c), fmt.Sprint(i), t0.Add(time.Duration(i)*time.Second), pricing.Usage{Input: 5, CacheRead: 100 + i}, 0.01)
						if _, err := db.RecordRequest(ctx, r); err != nil {
							b.Error(err)
							return
						}
						wait.Add(int64(time.Since(t)))
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "acked-req/s")
			b.ReportMetric(float64(wait.Load())/float64(b.N)/1e3, "µs/ack")
		})
	}
}
