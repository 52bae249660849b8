package sim

import (
	"context"
	"testing"

	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// The reference result in shape (pricing/doc.go): at every window the summary
// call of the cache-aware order costs about its instruction, the prune-first
// order re-reads the whole region (≥ 10× that), and the whole session's
// uncached tokens fall by about a third or more.
func TestSimulationReproducesTheReferenceShape(t *testing.T) {
	svc, dir := StartService.Start(t, "")
	// The simulation sets its sessions' mode: it runs as the owner.
	owner, err := home.ReadOwnerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(client.Endpoint{URL: svc.URL, Token: owner}, nil)
	ctx := context.Background()
	if err := c.Register(ctx, client.Engine{Harness: "simulate"}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	model, ok := pricing.Builtin("deepseek", "deepseek-flash")
	if !ok {
		t.Fatal("no built-in deepseek-flash prices")
	}
	reports, err := Windows(ctx, c, []int64{32 << 10, 128 << 10, 512 << 10},
		[]string{pricing.OrderPruneThenSummarize, pricing.OrderSummarizeThenPruneTail}, 60, "auto", "deepseek-flash", model, "test")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(reports); i += 2 {
		pf, sf := reports[i], reports[i+1]
		if len(sf.SummaryCalls) == 0 || len(pf.SummaryCalls) != len(sf.SummaryCalls) {
			t.Fatalf("window %d: summary calls %v vs %v", sf.Window, pf.SummaryCalls, sf.SummaryCalls)
		}
		for j := range sf.SummaryCalls {
			if sf.SummaryCalls[j] > 2000 {
				t.Errorf("window %d, fold %d: cache-aware summary call re-reads %d tokens, want ≤ 2,000", sf.Window, j, sf.SummaryCalls[j])
			}
			if pf.SummaryCalls[j] < 10*sf.SummaryCalls[j] {
				t.Errorf("window %d, fold %d: prune-first summary call re-reads %d tokens, want ≥ 10× the cache-aware %d", pf.Window, j, pf.SummaryCalls[j], sf.SummaryCalls[j])
			}
		}
		// The script is deterministic: 30 % at 32k, 36 % at 128k and 512k.
		if saving := 1 - float64(sf.Uncached)/float64(pf.Uncached); saving < 0.28 {
			t.Errorf("window %d: the session's uncached tokens fall by %.0f%%, want about a third or more", sf.Window, 100*saving)
		}
	}
	// The sessions and their folds are in the dashboard.
	var series api.Series
	if err := c.Get(ctx, "/v1/sessions/"+reports[1].Session+"/series", &series); err != nil {
		t.Fatal(err)
	}
	if len(series.Folds) != reports[1].Folds || len(series.Points) < 60 || series.Folds[0].ActualColdTokens == nil {
		t.Fatalf("series: %d folds (want %d), %d points", len(series.Folds), reports[1].Folds, len(series.Points))
	}
}
