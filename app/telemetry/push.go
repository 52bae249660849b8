package telemetry

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// PushOptions configure the OTLP metric push (export.otlp in config.yaml,
// else the standard OTEL_EXPORTER_OTLP_* variables).
type PushOptions struct {
	// Endpoint is the collector's OTLP/HTTP base URL (/v1/metrics is
	// appended); "" reads OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT (and _HEADERS) as the OTel SDK does.
	Endpoint string
	Headers  map[string]string
	Interval time.Duration
	// User is the user.id attribute on every point ("" = none): a team
	// splits its dashboards by developer with it.
	User    string
	Version string
	// Self is this tollgate's own URL: an environment that points the
	// OTel SDK at tollgate (a shell set up for Claude Code's telemetry) is
	// not a collector to push to.
	Self string
}

// PushConfigured says whether the options (or the environment) name a
// collector to push to.
func PushConfigured(o PushOptions) bool {
	if o.Endpoint != "" {
		return true
	}
	ep := os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if ep == "" {
		ep = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	return ep != "" && (o.Self == "" || !strings.HasPrefix(ep, o.Self))
}

// The pushed metrics. Names follow the OpenTelemetry GenAI semantic
// conventions where one exists — gen_ai.client.token.usage, by
// gen_ai.token.type (input, output) and gen_ai.request.model; the input
// kinds the conventions name as cache-read and cache-creation input
// tokens are told apart by tollgate.token.kind (input, cache_read,
// cache_creation_5m, cache_creation_1h, output) — and tollgate.* where none
// does. tollgate sends running totals (cumulative sums) of what was billed,
// not a per-request histogram: the requests are the harness's, tollgate
// counts them.
const (
	MetricTokenUsage = "gen_ai.client.token.usage"
	MetricCost       = "tollgate.cost.usd"
	MetricRequests   = "tollgate.requests"
	MetricRewrites   = "tollgate.rewrites"
	MetricAvoided    = "tollgate.cold_tokens.avoided"
	MetricArmed      = "tollgate.armed"
	MetricBreaks     = "tollgate.cache.breaks"
	MetricRebilled   = "tollgate.cache.rebilled_tokens"
	MetricPremium    = "tollgate.cache.break_premium.usd"
)

var pushKinds = [5][2]string{{"input", "input"}, {"input", "cache_read"}, {"input", "cache_creation_5m"}, {"input", "cache_creation_1h"}, {"output", "output"}}

// Push starts pushing the figures every o.Interval until stop is called
// (stop pushes once more, then shuts the exporter down).
func (f *Figures) Push(ctx context.Context, o PushOptions) (stop func(context.Context) error, err error) {
	var opts []otlpmetrichttp.Option
	if o.Endpoint != "" {
		opts = append(opts, otlpmetrichttp.WithEndpointURL(strings.TrimSuffix(o.Endpoint, "/")+"/v1/metrics"))
		if len(o.Headers) > 0 {
			opts = append(opts, otlpmetrichttp.WithHeaders(o.Headers))
		}
	}
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", "tollgate"), attribute.String("service.version", o.Version)))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(o.Interval))))
	m := mp.Meter("tollgate")
	tokens, err1 := m.Int64ObservableCounter(MetricTokenUsage, metric.WithUnit("{token}"), metric.WithDescription("Tokens billed, by harness, model and kind."))
	cost, err2 := m.Float64ObservableCounter(MetricCost, metric.WithUnit("{USD}"), metric.WithDescription("Cost billed in US dollars, by harness and model."))
	requests, err3 := m.Int64ObservableCounter(MetricRequests, metric.WithUnit("{request}"), metric.WithDescription("Billed model requests, by harness and model."))
	rewrites, err4 := m.Int64ObservableCounter(MetricRewrites, metric.WithUnit("{rewrite}"), metric.WithDescription("Context rewrites by harness and decision."))
	avoided, err5 := m.Int64ObservableCounter(MetricAvoided, metric.WithUnit("{token}"), metric.WithDescription("Cold tokens the declined rewrites would have re-billed."))
	armed, err6 := m.Int64ObservableGauge(MetricArmed, metric.WithDescription("1 when the guard is armed."))
	breaks, err7 := m.Int64ObservableCounter(MetricBreaks, metric.WithUnit("{break}"), metric.WithDescription("Cache breaks by harness and cause."))
	rebilled, err8 := m.Int64ObservableCounter(MetricRebilled, metric.WithUnit("{token}"), metric.WithDescription("Tokens the cache breaks re-billed."))
	premium, err9 := m.Float64ObservableCounter(MetricPremium, metric.WithUnit("{USD}"), metric.WithDescription("What the cache breaks cost above a warm cache."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7, err8, err9); err != nil {
		mp.Shutdown(ctx)
		return nil, err
	}
	var user []attribute.KeyValue
	if o.User != "" {
		user = []attribute.KeyValue{attribute.String("user.id", o.User)}
	}
	with := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributes(append(kv, user...)...)
	}
	_, err = m.RegisterCallback(func(ctx context.Context, ob metric.Observer) error {
		ts, err := f.totals(ctx)
		if err != nil {
			return err
		}
		for _, t := range ts {
			h, model := attribute.String("tollgate.harness", t.Harness), attribute.String("gen_ai.request.model", t.Model)
			ob.ObserveFloat64(cost, t.CostUSD, with(h, model))
			ob.ObserveInt64(requests, t.Requests, with(h, model))
			for i, n := range kindCounts(t) {
				ob.ObserveInt64(tokens, n, with(h, model, attribute.String("gen_ai.token.type", pushKinds[i][0]), attribute.String("tollgate.token.kind", pushKinds[i][1])))
			}
		}
		rs, err := f.Source.RewriteTotals(ctx)
		if err != nil {
			return err
		}
		byHarness := map[string]int64{}
		for _, r := range rs {
			ob.ObserveInt64(rewrites, r.Rewrites, with(attribute.String("tollgate.harness", r.Harness), attribute.String("tollgate.decision", r.Decision)))
			byHarness[r.Harness] += r.AvoidedColdTokens
		}
		for h, n := range byHarness {
			ob.ObserveInt64(avoided, n, with(attribute.String("tollgate.harness", h)))
		}
		bs, err := f.Source.BreakTotals(ctx)
		if err != nil {
			return err
		}
		for _, b := range bs {
			kv := with(attribute.String("tollgate.harness", b.Harness), attribute.String("tollgate.cause", b.Cause))
			ob.ObserveInt64(breaks, b.Breaks, kv)
			ob.ObserveInt64(rebilled, b.RebilledTokens, kv)
			ob.ObserveFloat64(premium, b.PremiumUSD, kv)
		}
		if f.Armed != nil {
			a := int64(0)
			if f.Armed() {
				a = 1
			}
			ob.ObserveInt64(armed, a, with())
		}
		return nil
	}, tokens, cost, requests, rewrites, avoided, armed, breaks, rebilled, premium)
	if err != nil {
		mp.Shutdown(ctx)
		return nil, err
	}
	return func(ctx context.Context) error {
		ferr := mp.ForceFlush(ctx)
		return errors.Join(ferr, mp.Shutdown(ctx))
	}, nil
}
