package telemetry

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"tollgate/pricing"
	"tollgate/storage"
)

type fakeSource struct{ totals []storage.Totals }

func (f fakeSource) Totals(context.Context) ([]storage.Totals, error) { return f.totals, nil }
func (f fakeSource) BreakTotals(context.Context) ([]storage.BreakTotals, error) {
	return []storage.BreakTotals{{Harness: "dsh", Cause: "idle", Breaks: 3, RebilledTokens: 5000, PremiumUSD: 0.25}}, nil
}

func (f fakeSource) RewriteTotals(context.Context) ([]storage.RewriteTotals, error) {
	return []storage.RewriteTotals{{Harness: "dsh", Decision: "decline", Rewrites: 2, AvoidedColdTokens: 900}}, nil
}

// However many models a database holds, the page names at most maxModels
// of them: the costliest keep their name, the rest are "other" — and no
// token or dollar is lost on the way.
func TestModelLabelIsBounded(t *testing.T) {
	var src fakeSource
	var want pricing.Usage
	var cost float64
	for i := 0; i < 3*maxModels; i++ {
		u := pricing.Usage{Input: int64(i + 1), Output: 1}
		src.totals = append(src.totals, storage.Totals{Harness: "dsh", Model: fmt.Sprintf("m-%03d", i), Requests: 1, Tokens: u, CostUSD: float64(i)})
		want = want.Add(u)
		cost += float64(i)
	}
	f := &Figures{Source: src}
	ts, err := f.totals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]bool{}
	var got pricing.Usage
	var gotCost float64
	for _, x := range ts {
		models[x.Model] = true
		got = got.Add(x.Tokens)
		gotCost += x.CostUSD
	}
	if len(models) != maxModels || !models["other"] || !models[fmt.Sprintf("m-%03d", 3*maxModels-1)] || models["m-000"] {
		t.Fatalf("%d models: %v", len(models), models)
	}
	if got != want || gotCost != cost {
		t.Fatalf("%+v %v, want %+v %v", got, gotCost, want, cost)
	}
	rec := httptest.NewRecorder()
	f.PrometheusHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	page := rec.Body.String()
	if n := strings.Count(page, "tollgate_requests_total{"); n != maxModels {
		t.Fatalf("%d request series", n)
	}
	if !strings.Contains(page, `tollgate_cold_tokens_avoided_total{harness="dsh"} 900`) || !strings.Contains(page, `tollgate_rewrites_total{decision="decline",harness="dsh"} 2`) ||
		!strings.Contains(page, `tollgate_cache_break_premium_usd_total{cause="idle",harness="dsh"} 0.25`) {
		t.Fatal(page)
	}
}
