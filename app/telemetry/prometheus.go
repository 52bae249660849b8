package telemetry

import (
	"context"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"tollgate/guard/api"
	"tollgate/storage"
)

// MetricsRoute is the Prometheus scrape on the API listener, behind the
// bearer token (Prometheus: authorization.credentials_file). The optional
// --metrics-listen address serves the same page without a token, on
// loopback only.
const MetricsRoute = "GET /metrics"

// Source is what the exports count: every stored request and rewrite.
type Source interface {
	Totals(ctx context.Context) ([]storage.Totals, error)
	RewriteTotals(ctx context.Context) ([]storage.RewriteTotals, error)
	BreakTotals(ctx context.Context) ([]storage.BreakTotals, error)
}

// Token kinds, the kind label of tollgate_tokens_total.
var tokenKinds = [5]string{"input", "cache_read", "cache_write_5m", "cache_write_1h", "output"}

func kindCounts(u storage.Totals) [5]int64 {
	t := u.Tokens
	return [5]int64{t.Input, t.CacheRead, t.CacheWrite, t.CacheWrite1h, t.Output}
}

// maxModels bounds the model label: the costliest models keep their name,
// the rest are summed under "other".
const maxModels = 50

// Figures reads the exports' figures from a Source: the totals per harness
// and model (the model label bounded), the rewrites per harness and
// decision, the armed state and when each harness last sent telemetry.
type Figures struct {
	Source   Source
	Armed    func() bool
	Receiver *Receiver
}

// totals reads the request totals, bounding the model label.
func (f *Figures) totals(ctx context.Context) ([]storage.Totals, error) {
	ts, err := f.Source.Totals(ctx)
	if err != nil {
		return nil, err
	}
	models := map[string]float64{}
	for _, t := range ts {
		models[t.Model] += t.CostUSD
	}
	if len(models) <= maxModels {
		return ts, nil
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Slice(names, func(i, j int) bool {
		return models[names[i]] > models[names[j]] || models[names[i]] == models[names[j]] && names[i] < names[j]
	})
	keep := map[string]bool{}
	for _, m := range names[:maxModels-1] {
		keep[m] = true
	}
	merged := map[[2]string]*storage.Totals{}
	var out []storage.Totals
	for _, t := range ts {
		if !keep[t.Model] {
			t.Model = "other"
		}
		k := [2]string{t.Harness, t.Model}
		if m, ok := merged[k]; ok {
			m.Requests += t.Requests
			m.CostUSD += t.CostUSD
			m.Tokens = m.Tokens.Add(t.Tokens)
			continue
		}
		out = append(out, t)
		merged[k] = &out[len(out)-1]
	}
	return out, nil
}

var (
	descRequests = prometheus.NewDesc("tollgate_requests_total", "Billed model requests recorded, by harness and model.", []string{"harness", "model"}, nil)
	descTokens   = prometheus.NewDesc("tollgate_tokens_total",
		"Tokens of the recorded requests by harness, model and kind (input: uncached; cache_read; cache_write_5m; cache_write_1h; output).",
		[]string{"harness", "model", "kind"}, nil)
	descCost     = prometheus.NewDesc("tollgate_cost_usd_total", "Cost of the recorded requests in US dollars, by harness and model.", []string{"harness", "model"}, nil)
	descRewrites = prometheus.NewDesc("tollgate_rewrites_total",
		"Context rewrites (folds, prunes) by harness and decision (allow, decline, pending).", []string{"harness", "decision"}, nil)
	descAvoided = prometheus.NewDesc("tollgate_cold_tokens_avoided_total",
		"Cold tokens the declined rewrites would have re-billed, by harness.", []string{"harness"}, nil)
	descArmed     = prometheus.NewDesc("tollgate_armed", "1 when the guard is armed (a live engine or a verified hook integration), else 0.", nil, nil)
	descTelemetry = prometheus.NewDesc("tollgate_telemetry_last_event_timestamp_seconds",
		"When tollgate last received a request event over OTLP from a harness (unix seconds).", []string{"harness"}, nil)
	descUp     = prometheus.NewDesc("tollgate_store_up", "1 when the figures could be read from the database.", nil, nil)
	descBreaks = prometheus.NewDesc("tollgate_cache_breaks_total",
		"Cache breaks of the ledger by harness and cause (rewrite, idle, family, prefix).", []string{"harness", "cause"}, nil)
	descRebilled = prometheus.NewDesc("tollgate_cache_rebilled_tokens_total",
		"Tokens the cache breaks re-billed, by harness and cause.", []string{"harness", "cause"}, nil)
	descPremium = prometheus.NewDesc("tollgate_cache_break_premium_usd_total",
		"What the cache breaks cost above a warm cache, in US dollars, by harness and cause.", []string{"harness", "cause"}, nil)
)

// collector is the Prometheus view of the Figures: computed at each
// scrape from the database, so a restart loses nothing and the totals are
// those /v1/spend reads.
type collector struct{ f *Figures }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descTokens, descCost, descRewrites, descAvoided, descArmed, descTelemetry, descUp,
		descBreaks, descRebilled, descPremium} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up := 1.0
	if ts, err := c.f.totals(ctx); err != nil {
		up = 0
	} else {
		for _, t := range ts {
			ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(t.Requests), t.Harness, t.Model)
			ch <- prometheus.MustNewConstMetric(descCost, prometheus.CounterValue, t.CostUSD, t.Harness, t.Model)
			for i, n := range kindCounts(t) {
				ch <- prometheus.MustNewConstMetric(descTokens, prometheus.CounterValue, float64(n), t.Harness, t.Model, tokenKinds[i])
			}
		}
	}
	if rs, err := c.f.Source.RewriteTotals(ctx); err != nil {
		up = 0
	} else {
		avoided := map[string]int64{}
		for _, r := range rs {
			ch <- prometheus.MustNewConstMetric(descRewrites, prometheus.CounterValue, float64(r.Rewrites), r.Harness, r.Decision)
			avoided[r.Harness] += r.AvoidedColdTokens
		}
		for h, n := range avoided {
			ch <- prometheus.MustNewConstMetric(descAvoided, prometheus.CounterValue, float64(n), h)
		}
	}
	if bs, err := c.f.Source.BreakTotals(ctx); err != nil {
		up = 0
	} else {
		for _, b := range bs {
			ch <- prometheus.MustNewConstMetric(descBreaks, prometheus.CounterValue, float64(b.Breaks), b.Harness, b.Cause)
			ch <- prometheus.MustNewConstMetric(descRebilled, prometheus.CounterValue, float64(b.RebilledTokens), b.Harness, b.Cause)
			ch <- prometheus.MustNewConstMetric(descPremium, prometheus.CounterValue, b.PremiumUSD, b.Harness, b.Cause)
		}
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up)
	if c.f.Armed != nil {
		armed := 0.0
		if c.f.Armed() {
			armed = 1
		}
		ch <- prometheus.MustNewConstMetric(descArmed, prometheus.GaugeValue, armed)
	}
	if c.f.Receiver != nil {
		for h, t := range c.f.Receiver.lastEvents() {
			ch <- prometheus.MustNewConstMetric(descTelemetry, prometheus.GaugeValue, float64(t.UnixMilli())/1000, h)
		}
	}
}

// PrometheusHandler serves the figures in Prometheus' text format.
func (f *Figures) PrometheusHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{f})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// LoopbackOnly admits only requests addressed to a loopback name: the
// --metrics-listen page has no token, so a web page that rebinds its own
// DNS name to 127.0.0.1 must not read it through the user's browser.
func LoopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			api.WriteError(w, http.StatusForbidden, "Host", strconv.Quote(r.Host)+" is not a loopback name")
			return
		}
		next.ServeHTTP(w, r)
	})
}
