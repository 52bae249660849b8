package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app"
	"tollgate/app/apptest"
	"tollgate/app/config"
	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
	"tollgate/storage"
)

const prometheusBin = "/usr/bin/prometheus"

// startService starts a tollgate that also serves the Prometheus page
// without a token on a loopback port (--metrics-listen).
func startService(t *testing.T) *app.Service {
	t.Helper()
	return apptest.StartWith(t, t.TempDir(), config.Flags{Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0"})
}

// record fills a service with requests of two harnesses and three models,
// through the API and over OTLP.
func record(t *testing.T, svc *app.Service) {
	t.Helper()
	now := time.Now().UTC()
	for i, m := range []string{"deepseek-flash", "deepseek-pro", "deepseek-flash"} {
		st, raw := postJSON(t, svc, "/v1/sessions/dsh-"+strconv.Itoa(i)+"/requests", api.RequestReport{
			RequestID: "r" + strconv.Itoa(i), Harness: "dsh", Provider: "deepseek", Model: m, At: api.At(now.Add(-time.Duration(i) * time.Minute)),
			Usage: &api.UsageReport{Input: 1000 + int64(i), CacheRead: 50000, CacheWrite: 700, Output: 300},
		}, nil)
		if st != http.StatusCreated {
			t.Fatalf("%d %s", st, raw)
		}
	}
	if st, raw := send(t, svc, "/otlp/v1/logs", "application/json", jsonBody(t, export("prom", 4, now.Add(-time.Hour), false))); st != http.StatusOK {
		t.Fatalf("%d %s", st, raw)
	}
}

func scrape(t *testing.T, u, token string) (int, string) {
	t.Helper()
	res, b := clienttest.Do(t, http.MethodGet, u, token, nil)
	return res.StatusCode, string(b)
}

// The page: behind the token on the API listener, open on the metrics
// listener, bounded labels (no session ids).
func TestPrometheusPage(t *testing.T) {
	svc := startService(t)
	record(t, svc)
	if st, _ := scrape(t, svc.URL+"/metrics", ""); st != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d", st)
	}
	st, page := scrape(t, svc.URL+"/metrics", svc.Token())
	if st != http.StatusOK {
		t.Fatalf("%d %s", st, page)
	}
	if st, open := scrape(t, svc.MetricsURL, ""); st != http.StatusOK || open != page {
		t.Fatalf("--metrics-listen: %d\n%s\nwant\n%s", st, open, page)
	}
	// A page that rebinds its own name to 127.0.0.1 reads nothing.
	req, _ := http.NewRequest(http.MethodGet, svc.MetricsURL, nil)
	req.Host = "evil.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("Host evil.example: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	for _, want := range []string{
		`tollgate_tokens_total{harness="claude-code",kind="cache_write_1h",model="claude-sonnet-4-5"} 4000`,
		`tollgate_tokens_total{harness="dsh",kind="input",model="deepseek-flash"} 2002`,
		`tollgate_requests_total{harness="claude-code",model="claude-sonnet-4-5"} 4`,
		`tollgate_armed 0`,
		`tollgate_store_up 1`,
		`tollgate_telemetry_last_event_timestamp_seconds{harness="claude-code"}`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s in\n%s", want, page)
		}
	}
	for _, leak := range []string{"prom", "dsh-0", "session"} {
		if strings.Contains(page, `"`+leak+`"`) || strings.Contains(page, leak+`=`) {
			t.Errorf("a session label (%s) on the page", leak)
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// promQuery asks Prometheus' query API for one scalar.
func promQuery(t *testing.T, base, q string) (float64, bool) {
	t.Helper()
	res, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer res.Body.Close()
	var body struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(res.Body).Decode(&body) != nil || body.Status != "success" || len(body.Data.Result) != 1 {
		return 0, false
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// A real Prometheus (Debian's) scrapes a real tollgate — through the
// token (authorization.credentials_file) and through --metrics-listen —
// and its query API returns the totals tollgate's own /v1/spend reads.
func TestRealPrometheusScrapesTheSameTotals(t *testing.T) {
	if _, err := os.Stat(prometheusBin); err != nil {
		t.Skipf("%s is absent: `make deps` installs Debian's prometheus package (APT_TEST)", prometheusBin)
	}
	svc := startService(t)
	record(t, svc)
	var spend storage.Spend
	if st := getJSON(t, svc, "/v1/spend?days=2", &spend); st != http.StatusOK {
		t.Fatalf("spend: %d", st)
	}
	if spend.Totals.Requests != 7 {
		t.Fatalf("spend %+v", spend.Totals)
	}

	var breaks storage.BreakSummary
	if st := getJSON(t, svc, "/v1/breaks?days=2", &breaks); st != http.StatusOK || breaks.Breaks == 0 {
		t.Fatalf("breaks: %d %+v (the OTLP session re-writes its tail: the ledger should see breaks)", st, breaks)
	}

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(svc.Token()), 0o600); err != nil {
		t.Fatal(err)
	}
	target := strings.TrimPrefix(svc.URL, "http://")
	open := strings.TrimSuffix(strings.TrimPrefix(svc.MetricsURL, "http://"), "/metrics")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: tollgate
    authorization:
      credentials_file: %s
    static_configs:
      - targets: ['%s']
  - job_name: tollgate-open
    static_configs:
      - targets: ['%s']
`, tokenFile, target, open)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prometheusBin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	logFile, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	base := "http://" + addr
	tok := spend.Totals.Tokens
	checks := []struct {
		query string
		want  float64
	}{
		{`sum(tollgate_cost_usd_total{job="tollgate"})`, spend.Totals.TotalUSD},
		{`sum(tollgate_requests_total{job="tollgate"})`, float64(spend.Totals.Requests)},
		{`sum(tollgate_tokens_total{job="tollgate",kind="input"})`, float64(tok.Input)},
		{`sum(tollgate_tokens_total{job="tollgate",kind="cache_read"})`, float64(tok.CacheRead)},
		{`sum(tollgate_tokens_total{job="tollgate",kind="cache_write_5m"})`, float64(tok.CacheWrite)},
		{`sum(tollgate_tokens_total{job="tollgate",kind="cache_write_1h"})`, float64(tok.CacheWrite1h)},
		{`sum(tollgate_tokens_total{job="tollgate",kind="output"})`, float64(tok.Output)},
		{`sum(tollgate_cost_usd_total{job="tollgate-open"})`, spend.Totals.TotalUSD},
		{`sum(tollgate_cache_breaks_total{job="tollgate"})`, float64(breaks.Breaks)},
		{`sum(tollgate_cache_rebilled_tokens_total{job="tollgate"})`, float64(breaks.RebilledTokens)},
		{`sum(tollgate_cache_break_premium_usd_total{job="tollgate"})`, breaks.PremiumUSD},
		{`up{job="tollgate"}`, 1},
		{`tollgate_armed{job="tollgate"}`, 0},
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range checks {
		for {
			got, ok := promQuery(t, base, c.query)
			if ok && math.Abs(got-c.want) <= 1e-9*math.Max(1, math.Abs(c.want)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s = %v (answered: %v), want %v as /v1/spend says", c.query, got, ok, c.want)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}
