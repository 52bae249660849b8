package clienttest

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// LoadResult is what Load measured: every round trip, and the wall time
// of the whole load.
type LoadResult struct {
	Latencies []time.Duration
	Elapsed   time.Duration
}

// Load sends total requests on client from `clients` goroutines, request
// i (0 to total-1) made by req, and records each round trip with its body
// read. An answer whose status is not wantStatus, or a transport error,
// fails tb and stops that goroutine. The benchmarks of the gate and the
// service measure their throughput and latency so.
func Load(tb testing.TB, client *http.Client, clients, total int, req func(i int) *http.Request, wantStatus int) LoadResult {
	var next atomic.Int64
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					break
				}
				r := req(i)
				t0 := time.Now()
				res, err := client.Do(r)
				if err != nil {
					tb.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mine = append(mine, time.Since(t0))
				if res.StatusCode != wantStatus {
					tb.Errorf("status %d, want %d", res.StatusCode, wantStatus)
					return
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return LoadResult{Latencies: all, Elapsed: time.Since(start)}
}
