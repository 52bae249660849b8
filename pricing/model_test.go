package pricing

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

func TestPricesAtDeepSeekWindows(t *testing.T) {
	m := flash(t)
	day := func(d, h, min int) time.Time { return time.Date(2026, 11, 30+d, h, min, 0, 0, time.UTC) } // d=0: Monday
	for _, tc := range []struct {
		name    string
		at      time.Time
		offPeak bool
	}{
		{"Monday 00:30, before the first peak", day(0, 0, 30), true},
		{"Monday 01:00, first peak starts", day(0, 1, 0), false},
		{"Monday 03:59", day(0, 3, 59), false},
		{"Monday 04:00, lull", day(0, 4, 0), true},
		{"Monday 06:00, second peak", day(0, 6, 0), false},
		{"Monday 09:59", day(0, 9, 59), false},
		{"Monday 10:00, off-peak until midnight", day(0, 10, 0), true},
		{"Friday 23:59", day(4, 23, 59), true},
		{"Saturday 02:00, weekend", day(5, 2, 0), true},
		{"Sunday 07:00, weekend", day(6, 7, 0), true},
		{"in another zone, judged in UTC", time.Date(2026, 11, 30, 10, 0, 0, 0, time.FixedZone("CST", 8*3600)), false},
		{"the zero time: base prices", time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, off := m.PricesAt(tc.at)
			want := 0.30
			if tc.offPeak {
				want = 0.15
			}
			if off != tc.offPeak || !closeTo(p.PricePerMTokens, want) || !closeTo(p.OutputPricePerMTokens, want*4) {
				t.Errorf("PricesAt(%v) = %+v, %v; want off-peak %v", tc.at, p, off, tc.offPeak)
			}
		})
	}
}

func TestPriceWindowShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    PriceWindow
		at   time.Time
		in   bool
	}{
		{"wraps past midnight, late side", PriceWindow{UTC: []string{"16:30-00:30"}, Factor: 0.5}, time.Date(2026, 1, 1, 23, 0, 0, 0, time.UTC), true},
		{"wraps past midnight, early side", PriceWindow{UTC: []string{"16:30-00:30"}, Factor: 0.5}, time.Date(2026, 1, 1, 0, 29, 59, 0, time.UTC), true},
		{"wraps past midnight, outside", PriceWindow{UTC: []string{"16:30-00:30"}, Factor: 0.5}, time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC), false},
		{"whole day", PriceWindow{UTC: []string{"00:00-24:00"}, Factor: 0.5}, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), true},
		{"empty utc is the whole day", PriceWindow{Days: []string{"thu"}, Factor: 0.5}, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), true},
		{"day range wrapping the week", PriceWindow{Days: []string{"fri-mon"}, Factor: 0.5}, time.Date(2026, 1, 4, 12, 0, 0, 0, time.UTC), true},
		{"day outside the range", PriceWindow{Days: []string{"fri-mon"}, Factor: 0.5}, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), false},
		{"full day names", PriceWindow{Days: []string{"Thursday"}, Factor: 0.5}, time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := exact
			m.OffPeak = &tc.w
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if _, in := m.PricesAt(tc.at); in != tc.in {
				t.Errorf("in window = %v, want %v", in, tc.in)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*CacheModel)
		want   string
	}{
		{"valid", func(*CacheModel) {}, ""},
		{"unknown kind", func(m *CacheModel) { m.Kind = "lru" }, `cacheKind: must be "positional" or "breakpoint", not "lru"`},
		{"granularity 0", func(m *CacheModel) { m.Granularity = 0 }, "granularity: must be > 0"},
		{"negative minimum prefix", func(m *CacheModel) { m.MinimumPrefix = -1 }, "minimumPrefix: must be >= 0"},
		{"ttl 0", func(m *CacheModel) { m.TTLSeconds = 0 }, "ttlSeconds: must be > 0"},
		{"negative price", func(m *CacheModel) { m.CacheWrite1hPricePerMTokens = -1 }, "cacheWrite1hPricePerMTokens: must be a finite price >= 0"},
		{"negative summary estimate", func(m *CacheModel) { m.EstimatedSummaryTokens = -1 }, "estimatedSummaryTokens: must be >= 0"},
		{"off-peak factor 0", func(m *CacheModel) { m.OffPeak = &PriceWindow{} }, "offPeak.factor: must be > 0"},
		{"off-peak bad range", func(m *CacheModel) { m.OffPeak = &PriceWindow{UTC: []string{"10:00-10:00"}, Factor: 1} }, `offPeak.utc[0]: "10:00-10:00" is not a range like 10:00-24:00`},
		{"off-peak bad hour", func(m *CacheModel) { m.OffPeak = &PriceWindow{UTC: []string{"10:00-25:00"}, Factor: 1} }, `offPeak.utc[0]: "10:00-25:00" is not a range like 10:00-24:00`},
		{"off-peak bad all-day", func(m *CacheModel) { m.OffPeak = &PriceWindow{AllDay: []string{"weekend"}, Factor: 1} }, `offPeak.allDay[0]: "weekend" is not a weekday or a range like sat-sun`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := exact
			tc.change(&m)
			err := m.Validate()
			if got := errString(err); got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCost(t *testing.T) {
	u := Usage{Input: 1000, CacheRead: 100_000, CacheWrite: 2000, CacheWrite1h: 3000, Output: 500}
	for _, tc := range []struct {
		name   string
		prices Prices
		want   Cost
	}{
		{"writes billed (Anthropic)", anthropic5m.Prices, Cost{Input: 3000e-6, CacheRead: 30000e-6, CacheWrite: 2000*3.75e-6 + 3000*6e-6, Output: 7500e-6}},
		{"writes not billed: cold tokens at the miss price", exact.Prices, Cost{Input: 1000e-6, CacheRead: 10000e-6, CacheWrite: 5000e-6, Output: 1000e-6}},
		{"no 1h price: falls back to the 5m one", Prices{PricePerMTokens: 1, CacheWritePricePerMTokens: 2}, Cost{Input: 1000e-6, CacheWrite: 10000e-6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.prices.Cost(u)
			tc.want.Total = tc.want.Input + tc.want.CacheRead + tc.want.CacheWrite + tc.want.Output
			if !closeTo(got.Input, tc.want.Input) || !closeTo(got.CacheRead, tc.want.CacheRead) || !closeTo(got.CacheWrite, tc.want.CacheWrite) ||
				!closeTo(got.Output, tc.want.Output) || !closeTo(got.Total, tc.want.Total) {
				t.Errorf("Cost = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFormatTokens(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {470, "470"}, {999, "999"}, {1000, "1k"}, {1234, "1.2k"}, {4000, "4k"}, {4470, "4.5k"},
		{9949, "9.9k"}, {9950, "10k"}, {13_056, "13k"}, {31_000, "31k"}, {255_000, "255k"}, {544_000, "544k"},
		{838_861, "839k"}, {839_056, "839k"}, {999_499, "999k"}, {999_500, "1M"}, {1_000_000, "1M"},
		{1_048_576, "1.05M"}, {1_500_000, "1.5M"}, {12_345_678, "12.3M"}, {123_456_789, "123M"}, {-4000, "-4k"},
	} {
		if got := FormatTokens(tc.n); got != tc.want {
			t.Errorf("FormatTokens(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestBuiltinTable(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range BuiltinPrices() {
		if err := e.Validate(); err != nil {
			t.Errorf("%s/%s: %v", e.Provider, e.Model, err)
		}
		if e.Source == "" || !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(e.Date) {
			t.Errorf("%s/%s: source %q date %q", e.Provider, e.Model, e.Source, e.Date)
		}
		for _, name := range append([]string{e.Model}, e.Aliases...) {
			if seen[name] {
				t.Errorf("%q is listed twice", name)
			}
			seen[name] = true
		}
	}
	// Callers cannot change the table through what it returns.
	a := BuiltinPrices()
	a[0].OffPeak.Factor = 99
	if b := BuiltinPrices(); b[0].OffPeak.Factor == 99 {
		t.Error("BuiltinPrices shares state between calls")
	}
}

func TestBuiltinMatching(t *testing.T) {
	for _, tc := range []struct {
		provider, model string
		wantKind        CacheKind
		wantPrice       float64 // full input price; 0 = no match
	}{
		{"anthropic", "claude-opus-4-6", Breakpoint, 5},
		{"", "claude-sonnet-4-5-20250929", Breakpoint, 3},
		{"", "sonnet", Breakpoint, 3},
		{"anthropic", "claude-opus-4.6", Breakpoint, 5},
		{"", "claude-opus-4-6[1m]", Breakpoint, 5},
		{"", "anthropic/claude-haiku-4-5-20251001", Breakpoint, 1},
		{"openai", "gpt-5.2-codex", Positional, 1.75},
		{"", "GPT-5.2-Codex", Positional, 1.75},
		{"openai", "gpt-5.2-codex-2025-12-11", Positional, 1.75},
		{"deepseek", "deepseek-flash", Positional, 0.30},
		{"", "deepseek-v4-flash", Positional, 0.30},
		{"deepseek", "deepseek-v4-pro", Positional, 1.32},
		{"deepseek", "deepseek-chat", Positional, 0.14},
		{"", "deepseek-reasoner", Positional, 0.14},
		{"openrouter", "deepseek-flash", Positional, 0.30}, // an unknown provider is ignored
		{"google", "gemini-2.5-pro", Positional, 1.25},
		{"", "models/gemini-2.5-flash", Positional, 0.30}, // the API's resource name
		{"google", "gemini-3-pro-preview", Positional, 2},
		{"google", "claude-opus-4-6", "", 0},
		{"openai", "claude-opus-4-6", "", 0}, // a known provider must match
		{"", "llama-3", "", 0},
	} {
		m, ok := Builtin(tc.provider, tc.model)
		if ok != (tc.wantPrice != 0) || m.Kind != tc.wantKind || m.PricePerMTokens != tc.wantPrice {
			t.Errorf("Builtin(%q, %q) = %v %v %v, want %v %v", tc.provider, tc.model, m.Kind, m.PricePerMTokens, ok, tc.wantKind, tc.wantPrice)
		}
	}
	// Gemini bills cached input at a tenth, writes not at all, and caches
	// any prefix from the model's minimum on.
	g, _ := Builtin("google", "gemini-2.5-pro")
	if g.CacheHitPricePerMTokens != 0.125 || g.CacheWritePricePerMTokens != 0 || g.Granularity != 1 || g.MinimumPrefix != 2048 || g.OutputPricePerMTokens != 10 {
		t.Errorf("gemini-2.5-pro %+v", g)
	}
	m, _ := Builtin("anthropic", "claude-sonnet-4-5")
	if m.CacheWritePricePerMTokens != 3.75 || m.CacheWrite1hPricePerMTokens != 6 || m.MinimumPrefix != 1024 {
		t.Errorf("sonnet 4.5 write prices %+v", m)
	}
}

// TestBuiltinCoversSessionData checks that every model in the shared real
// session logs has a built-in price.
func TestBuiltinCoversSessionData(t *testing.T) {
	root, err := filepath.EvalSymlinks(filepath.Join("..", "..", "shared", "data"))
	if err != nil {
		t.Skip("no ../shared/data beside the project")
	} // a link (a checkout beside a linked data folder) is walked where it leads
	models := map[string]bool{}
	re := regexp.MustCompile(`"model":\s*"([^"]+)"`)
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".jsonl" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			for _, m := range re.FindAllSubmatch(sc.Bytes(), -1) {
				var name string
				if json.Unmarshal(append(append([]byte{'"'}, m[1]...), '"'), &name) == nil && name != "<synthetic>" {
					models[name] = true
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(models) == 0 {
		t.Fatal("no models found in the session data")
	}
	for name := range models {
		if _, ok := Builtin("", name); !ok {
			t.Errorf("model %q of the session data has no built-in price", name)
		}
	}
}

// Gemini's usage counts the cached tokens inside promptTokenCount; once
// split (input = prompt − cached) the cached part costs a tenth of the
// input price and nothing is billed for writing it.
func TestGeminiCacheModel(t *testing.T) {
	pro, ok := Builtin("google", "gemini-2.5-pro")
	if !ok {
		t.Fatal("no gemini-2.5-pro")
	}
	for _, tc := range []struct {
		name string
		u    Usage
		want float64
	}{
		{"a cold first request", Usage{Input: 10_000, Output: 200}, 10_000*1.25e-6 + 200*10e-6},
		{"9,000 of 10,000 read from the cache", Usage{Input: 1000, CacheRead: 9000, Output: 200}, 1000*1.25e-6 + 9000*0.125e-6 + 200*10e-6},
		{"thoughts are output", Usage{Input: 0, CacheRead: 4096, Output: 1500}, 4096*0.125e-6 + 1500*10e-6},
	} {
		if got := pro.Cost(tc.u); !closeTo(got.Total, tc.want) || got.CacheWrite != 0 {
			t.Errorf("%s: cost %+v, want total %g", tc.name, got, tc.want)
		}
	}
	// Positional to the token from the minimum prefix on.
	for _, tc := range []struct{ shared, cached int64 }{{2047, 0}, {2048, 2048}, {10_001, 10_001}} {
		if got := pro.cachedPositional(tc.shared); got != tc.cached {
			t.Errorf("a shared prefix of %d: %d cached, want %d", tc.shared, got, tc.cached)
		}
	}
	flash, _ := Builtin("google", "gemini-3-flash-preview")
	if flash.cachedPositional(1024) != 1024 || flash.cachedPositional(1023) != 0 {
		t.Errorf("gemini-3-flash-preview minimum prefix %d", flash.MinimumPrefix)
	}
}
