package telemetry_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"tollgate/app/apptest"
	"tollgate/app/telemetry"
	"tollgate/storage"
)

// pushed sums the newest cumulative point of each series of a metric by
// one attribute's value ("" sums everything), and says which user.id it saw.
func pushed(ms []pmetric.Metrics, name, attr string) (map[string]float64, string) {
	latest := map[string]float64{} // series identity → value
	key := map[string]string{}
	user := ""
	for _, m := range ms {
		rms := m.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				mets := sms.At(j).Metrics()
				for k := 0; k < mets.Len(); k++ {
					met := mets.At(k)
					if met.Name() != name {
						continue
					}
					var dps pmetric.NumberDataPointSlice
					switch met.Type() {
					case pmetric.MetricTypeSum:
						dps = met.Sum().DataPoints()
					case pmetric.MetricTypeGauge:
						dps = met.Gauge().DataPoints()
					}
					for d := 0; d < dps.Len(); d++ {
						dp := dps.At(d)
						id := fmt.Sprint(dp.Attributes().AsRaw())
						v := dp.DoubleValue()
						if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
							v = float64(dp.IntValue())
						}
						latest[id] = v
						if a, ok := dp.Attributes().Get(attr); ok {
							key[id] = a.AsString()
						}
						if u, ok := dp.Attributes().Get("user.id"); ok {
							user = u.Str()
						}
					}
				}
			}
		}
	}
	out := map[string]float64{}
	for id, v := range latest {
		out[key[id]] += v
	}
	return out, user
}

// tollgate pushes its figures to a real OTLP receiver (the collector's
// own otlpreceiver) configured by export.otlp, with the GenAI names and
// the user label, and they arrive with /v1/spend's totals.
func TestOTLPPushReachesARealReceiver(t *testing.T) {
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	addr := freePort(t)
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = freePort(t)
	sink := new(consumertest.MetricsSink)
	rcv, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rcv.Shutdown(context.Background()) })

	home := t.TempDir()
	yaml := fmt.Sprintf("export:\n  otlp:\n    endpoint: http://%s\n    interval: 1s\n    user: alice\n    headers:\n      X-Team: cache\n", addr)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := apptest.StartOn(t, home, "")
	record(t, svc)
	var spend storage.Spend
	if st := getJSON(t, svc, "/v1/spend?days=2", &spend); st != http.StatusOK {
		t.Fatalf("spend: %d", st)
	}
	var brk storage.BreakSummary
	getJSON(t, svc, "/v1/breaks?days=2", &brk)
	tok := spend.Totals.Tokens
	deadline := time.Now().Add(30 * time.Second)
	for {
		kinds, user := pushed(sink.AllMetrics(), telemetry.MetricTokenUsage, "tollgate.token.kind")
		types, _ := pushed(sink.AllMetrics(), telemetry.MetricTokenUsage, "gen_ai.token.type")
		cost, _ := pushed(sink.AllMetrics(), telemetry.MetricCost, "")
		reqs, _ := pushed(sink.AllMetrics(), telemetry.MetricRequests, "")
		premium, _ := pushed(sink.AllMetrics(), telemetry.MetricPremium, "")
		nbreaks, _ := pushed(sink.AllMetrics(), telemetry.MetricBreaks, "")
		ok := user == "alice" && kinds["input"] == float64(tok.Input) && kinds["cache_read"] == float64(tok.CacheRead) &&
			kinds["cache_creation_5m"] == float64(tok.CacheWrite) && kinds["cache_creation_1h"] == float64(tok.CacheWrite1h) &&
			kinds["output"] == float64(tok.Output) && types["output"] == float64(tok.Output) &&
			types["input"] == float64(tok.Input+tok.CacheRead+tok.CacheWrite+tok.CacheWrite1h) &&
			math.Abs(cost[""]-spend.Totals.TotalUSD) < 1e-9 && reqs[""] == float64(spend.Totals.Requests) &&
			brk.Breaks > 0 && nbreaks[""] == float64(brk.Breaks) && math.Abs(premium[""]-brk.PremiumUSD) < 1e-9
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pushed: kinds %v types %v cost %v requests %v breaks %v premium %v user %q; /v1/spend: %+v, /v1/breaks: %+v",
				kinds, types, cost, reqs, nbreaks, premium, user, spend.Totals, brk)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The resource names the service.
	rm := sink.AllMetrics()[0].ResourceMetrics().At(0).Resource().Attributes()
	if v, _ := rm.Get("service.name"); v.Str() != "tollgate" {
		t.Fatalf("resource %v", rm.AsRaw())
	}
}
