package telemetry_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tollgate/app/telemetry"
)

// promName is the name the collector's Prometheus exporter gives a pushed
// metric: dots to underscores, counters end in _total (braced units are
// annotations and add nothing).
func promName(otel string, counter bool) string {
	n := strings.ReplaceAll(otel, ".", "_")
	if counter {
		n += "_total"
	}
	return n
}

// The team recipe in integrations/otel holds together: the collector
// config parses, every dashboard query is valid PromQL (Debian's promtool
// checks it) over only the metrics tollgate pushes, and the Prometheus
// config is valid.
func TestTeamRecipe(t *testing.T) {
	dir := filepath.Join("..", "..", "integrations", "otel")
	var collector map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &collector); err != nil {
		t.Fatalf("collector.yaml: %v", err)
	}
	if _, ok := collector["service"].(map[string]any)["pipelines"].(map[string]any)["metrics"]; !ok {
		t.Fatal("collector.yaml has no metrics pipeline")
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	known := map[string]bool{
		promName(telemetry.MetricTokenUsage, true): true, promName(telemetry.MetricCost, true): true,
		promName(telemetry.MetricRequests, true): true, promName(telemetry.MetricRewrites, true): true,
		promName(telemetry.MetricAvoided, true): true, promName(telemetry.MetricArmed, false): true,
		promName(telemetry.MetricBreaks, true): true, promName(telemetry.MetricRebilled, true): true,
		promName(telemetry.MetricPremium, true): true,
	}
	grafana := strings.NewReplacer("$__range", "1d", "$__rate_interval", "5m", "$user", ".*", "$harness", ".*")
	name := regexp.MustCompile(`\b(tollgate_[a-z_]+|gen_ai_[a-z_]+)\{`)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			expr := grafana.Replace(tg.Expr)
			for _, m := range name.FindAllStringSubmatch(expr, -1) {
				if !known[m[1]] {
					t.Errorf("%q queries %s, which tollgate does not push", p.Title, m[1])
				}
			}
			n++
			b, _ := json.Marshal(expr)
			rules.WriteString("      - record: dashboard:q" + string(rune('a'+n)) + "\n        expr: " + string(b) + "\n")
		}
	}
	if n < 8 {
		t.Fatalf("%d queries", n)
	}
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("promtool is absent (Debian's prometheus package, `make deps`): PromQL not checked")
	}
	f := filepath.Join(t.TempDir(), "rules.yml")
	os.WriteFile(f, []byte(rules.String()), 0o600)
	if out, err := exec.Command("promtool", "check", "rules", f).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, rules.String())
	}
	if out, err := exec.Command("promtool", "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}
