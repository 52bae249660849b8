package pricing

import (
	"fmt"
	"math"
	"testing"
	"time"
)

var ledgerT0 = time.Date(2026, 2, 12, 20, 0, 0, 0, time.UTC)

// opusPrices are Anthropic's Opus 4.6 prices: $5 miss, $6.25 5-minute write,
// $10 one-hour write, $0.50 hit.
var opusPrices = Prices{PricePerMTokens: 5, CacheHitPricePerMTokens: 0.5, CacheWritePricePerMTokens: 6.25, CacheWrite1hPricePerMTokens: 10, OutputPricePerMTokens: 25}

const opusFamily = "anthropic/claude-opus-4-6"

func lq(seq int64, thread, family string, sec int, u Usage) LedgerRequest {
	return LedgerRequest{Seq: seq, At: ledgerT0.Add(time.Duration(sec) * time.Second), Thread: thread, Family: family,
		Model: family, Usage: u, Prices: opusPrices, TTLSeconds: 300}
}

func TestLedgerCauses(t *testing.T) {
	type want struct {
		seq      int64
		cause    BreakCause
		rebilled int64
	}
	fold := lq(9, "", opusFamily, 3003, Usage{Input: 1, CacheRead: 21000, CacheWrite1h: 4000})
	fold.Rewrite = "r_fold"
	cases := []struct {
		name string
		reqs []LedgerRequest
		want []want
	}{
		{"a start is no break", []LedgerRequest{lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000})}, nil},
		{"1,024 below is still a hit", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000}),
			lq(2, "", opusFamily, 10, Usage{Input: 1, CacheRead: 20003 - 1024, CacheWrite: 2000}),
		}, nil},
		{"1,025 below is a prefix break", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000}),
			lq(2, "", opusFamily, 10, Usage{Input: 1, CacheRead: 20003 - 1025, CacheWrite: 2000}),
		}, []want{{2, CausePrefix, 1025}}},
		{"idle past the 5-minute TTL", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000}),
			lq(2, "", opusFamily, 301, Usage{Input: 1, CacheWrite: 21000}),
		}, []want{{2, CauseIdle, 20003}}},
		{"exactly the TTL is not idle", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000}),
			lq(2, "", opusFamily, 300, Usage{Input: 1, CacheWrite: 21000}),
		}, []want{{2, CausePrefix, 20003}}},
		{"a one-hour write lives an hour", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite1h: 20000}),
			lq(2, "", opusFamily, 3000, Usage{Input: 1, CacheRead: 20003, CacheWrite1h: 100}),
			lq(3, "", opusFamily, 6000, Usage{Input: 1, CacheRead: 10000, CacheWrite1h: 10104}),
			lq(4, "", opusFamily, 9601, Usage{Input: 1, CacheWrite1h: 20105}),
		}, []want{{3, CausePrefix, 10104}, {4, CauseIdle, 20105}}},
		{"a read-only request keeps the TTL it was written with", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite1h: 20000}),
			lq(2, "", opusFamily, 1000, Usage{Input: 1, CacheRead: 20003}),
			lq(3, "", opusFamily, 2000, Usage{Input: 1, CacheRead: 20004}),
		}, nil},
		{"a rewrite between, linked", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 30000}),
			fold,
		}, []want{{9, CauseRewrite, 4001}}},
		{"a rewrite wins over idle", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 30000}),
			func() LedgerRequest { r := fold; r.At = ledgerT0.Add(time.Hour); return r }(),
		}, []want{{9, CauseRewrite, 4001}}},
		{"a model switch starts a cache, the return is a family break", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000}),
			lq(2, "", "anthropic/claude-sonnet-4-5", 10, Usage{Input: 1, CacheWrite: 22000}),
			lq(3, "", opusFamily, 20, Usage{Input: 1, CacheRead: 10000, CacheWrite: 12000}),
		}, []want{{3, CauseFamily, 10003}}},
		{"threads never set each other's expectation", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 20000}),
			lq(2, "agent-a", opusFamily, 5, Usage{Input: 3, CacheWrite: 9000}),
			lq(3, "", opusFamily, 10, Usage{Input: 1, CacheRead: 20003, CacheWrite: 10}),
			lq(4, "agent-a", opusFamily, 15, Usage{Input: 1, CacheRead: 9003, CacheWrite: 10}),
		}, nil},
		{"no cache activity, no break", []LedgerRequest{
			lq(1, "", "local/qwen", 0, Usage{Input: 5000}),
			lq(2, "", "local/qwen", 9999, Usage{Input: 6000}),
		}, nil},
		{"a read-only positional cache breaks too", []LedgerRequest{
			lq(1, "", "deepseek/chat", 0, Usage{Input: 5000}),
			lq(2, "", "deepseek/chat", 10, Usage{Input: 1000, CacheRead: 4992}),
			lq(3, "", "deepseek/chat", 20, Usage{Input: 7000}),
		}, []want{{3, CausePrefix, 5992}}},
		{"a shorter history that kept its prefix is no break", []LedgerRequest{
			lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite: 80000}),
			lq(2, "", opusFamily, 10, Usage{Input: 3, CacheRead: 50000}),
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Breaks(c.reqs)
			if len(got) != len(c.want) {
				t.Fatalf("%d breaks, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				if b := got[i]; b.Seq != w.seq || b.Cause != w.cause || b.RebilledTokens != w.rebilled {
					t.Errorf("break %d = seq %d %s %d, want %+v", i, b.Seq, b.Cause, b.RebilledTokens, w)
				}
			}
		})
	}
}

func TestLedgerPremiumAndFields(t *testing.T) {
	bs := Breaks([]LedgerRequest{
		lq(1, "", opusFamily, 0, Usage{Input: 3, CacheWrite1h: 20000}),
		lq(2, "", opusFamily, 2590, Usage{Input: 1001, CacheRead: 14003, CacheWrite1h: 3000, CacheWrite: 2000, Output: 9}),
	})
	if len(bs) != 1 {
		t.Fatalf("breaks %+v", bs)
	}
	b := bs[0]
	// 6,000 re-billed: 3,000 one-hour writes, 2,000 5-minute writes, 1,000 uncached input.
	want := (3000*(10-0.5) + 2000*(6.25-0.5) + 1000*(5-0.5)) / 1e6
	if b.RebilledTokens != 6000 || math.Abs(b.PremiumUSD-want) > 1e-12 {
		t.Errorf("rebilled %d premium %v, want 6000 %v", b.RebilledTokens, b.PremiumUSD, want)
	}
	if b.GapSeconds != 2590 || b.TTLSeconds != 3600 || b.ExpectedCachedTokens != 20003 || b.CacheReadTokens != 14003 || b.Cause != CausePrefix {
		t.Errorf("fields %+v", b)
	}
	// Writes not billed (OpenAI, DeepSeek): every re-billed token at miss − hit.
	r := lq(2, "", "openai/gpt-5", 10, Usage{Input: 3000})
	r.Prices = Prices{PricePerMTokens: 1.25, CacheHitPricePerMTokens: 0.125}
	b, ok := BreakOf(&LedgerPrev{Seq: 1, At: ledgerT0, Prompt: 3000, TTLSeconds: 300}, "openai/gpt-5", r)
	if !ok || math.Abs(b.PremiumUSD-3000*1.125/1e6) > 1e-12 {
		t.Errorf("openai %+v %v", b, ok)
	}
	// Absurd counts are clamped, never overflow into a negative premium.
	r.Usage = Usage{Input: math.MaxInt64, CacheWrite1h: math.MaxInt64}
	b, ok = BreakOf(&LedgerPrev{Prompt: math.MaxInt64, TTLSeconds: 300}, "", r)
	if !ok || b.PremiumUSD < 0 || b.RebilledTokens <= 0 {
		t.Errorf("clamped %+v", b)
	}
}

func TestTotalsByCause(t *testing.T) {
	bs := []Break{
		{Cause: CauseIdle, RebilledTokens: 10, PremiumUSD: 1},
		{Cause: CausePrefix, RebilledTokens: 20, PremiumUSD: 2},
		{Cause: CauseIdle, RebilledTokens: 30, PremiumUSD: 3},
		{Cause: "bogus", RebilledTokens: 99, PremiumUSD: 99},
	}
	got := TotalsByCause(bs)
	want := []CauseTotal{{CauseIdle, 2, 40, 4}, {CausePrefix, 1, 20, 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("totals %v, want %v", got, want)
	}
	if len(TotalsByCause(nil)) != 0 {
		t.Error("no breaks, no totals")
	}
}

// referenceBreaks is the ledger written the slow, obvious way: for every
// request, search backwards for its previous request of the same thread and
// family, and replay that family's whole history for its TTL.
func referenceBreaks(reqs []LedgerRequest) []Break {
	var out []Break
	for i, r := range reqs {
		u := r.Usage.Clamped()
		prev := -1
		for j := i - 1; j >= 0; j-- {
			if reqs[j].Thread == r.Thread && reqs[j].Family == r.Family {
				prev = j
				break
			}
		}
		if prev < 0 {
			continue
		}
		var ttl int64
		for j := 0; j <= prev; j++ {
			q := reqs[j]
			if q.Thread != r.Thread || q.Family != r.Family {
				continue
			}
			qu := q.Usage.Clamped()
			if qu.CacheWrite1h > 0 {
				ttl = 3600
			} else if qu.CacheWrite > 0 || (ttl == 0 && qu.CacheRead > 0) {
				ttl = max(q.TTLSeconds, 1)
			}
		}
		if ttl == 0 {
			continue
		}
		pu := reqs[prev].Usage.Clamped()
		expected := pu.Input + pu.CacheRead + pu.CacheWrite + pu.CacheWrite1h
		prompt := u.Input + u.CacheRead + u.CacheWrite + u.CacheWrite1h
		rebilled := min(expected, prompt) - u.CacheRead
		if rebilled <= 1024 {
			continue
		}
		threadFamily := ""
		for j := i - 1; j >= 0; j-- {
			if reqs[j].Thread == r.Thread {
				threadFamily = reqs[j].Family
				break
			}
		}
		gap := r.At.Sub(reqs[prev].At)
		b := Break{Seq: r.Seq, At: r.At, Thread: r.Thread, Model: r.Model, StartedBy: r.StartedBy, GapSeconds: gap.Seconds(),
			TTLSeconds: ttl, ExpectedCachedTokens: expected, CacheReadTokens: u.CacheRead, RebilledTokens: rebilled}
		if r.Rewrite != "" {
			b.Cause, b.Rewrite = CauseRewrite, r.Rewrite
		} else if gap.Seconds() > float64(ttl) {
			b.Cause = CauseIdle
		} else if threadFamily != r.Family {
			b.Cause = CauseFamily
		} else {
			b.Cause = CausePrefix
		}
		// Premium, token by token in billing order.
		var usd float64
		w1, w5 := u.CacheWrite1h, u.CacheWrite
		p := r.Prices
		write5 := p.CacheWritePricePerMTokens
		if write5 == 0 {
			write5 = p.PricePerMTokens
		}
		write1 := p.CacheWrite1hPricePerMTokens
		if write1 == 0 {
			write1 = write5
		}
		w1n := min(rebilled, w1)
		w5n := min(rebilled-w1n, w5)
		missN := rebilled - w1n - w5n
		usd += float64(w1n) * max(write1-p.CacheHitPricePerMTokens, 0) / 1e6
		usd += float64(w5n) * max(write5-p.CacheHitPricePerMTokens, 0) / 1e6
		usd += float64(missN) * max(p.PricePerMTokens-p.CacheHitPricePerMTokens, 0) / 1e6
		b.PremiumUSD = usd
		out = append(out, b)
	}
	return out
}

// genLedger builds a small session from fuzz bytes: two threads, three
// families, gaps around the TTLs, reads near the expectation, rewrites.
func genLedger(data []byte) []LedgerRequest {
	s := &byteSource{b: data}
	fams := []string{"anthropic/opus", "anthropic/sonnet", "deepseek/chat"}
	n := s.upTo(40)
	var reqs []LedgerRequest
	at := ledgerT0
	var last int64
	for i := range n {
		at = at.Add(time.Duration(s.upTo(255)*s.upTo(30)) * time.Second)
		u := Usage{Input: int64(s.upTo(3000)), Output: int64(s.upTo(50))}
		switch s.upTo(3) {
		case 0:
			u.CacheRead = last - int64(s.upTo(2048))
		case 1:
			u.CacheRead = int64(s.upTo(255) * 100)
		}
		u.CacheRead = max(u.CacheRead, 0)
		switch s.upTo(3) {
		case 1:
			u.CacheWrite = int64(s.upTo(255) * 20)
		case 2:
			u.CacheWrite1h = int64(s.upTo(255) * 20)
		}
		last = u.Prompt()
		r := LedgerRequest{Seq: int64(i + 1), At: at, Thread: []string{"", "agent-1"}[s.upTo(1)], Family: fams[s.upTo(2)],
			Usage: u, TTLSeconds: int64(60 * (1 + s.upTo(9))),
			Prices: Prices{PricePerMTokens: float64(s.upTo(9)), CacheHitPricePerMTokens: float64(s.upTo(9)) / 4,
				CacheWritePricePerMTokens: float64(s.upTo(9)), CacheWrite1hPricePerMTokens: float64(s.upTo(12))}}
		r.Model = r.Family
		if s.upTo(7) == 0 {
			r.Rewrite = fmt.Sprintf("r%d", i)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

func FuzzLedgerAgainstReference(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 10, 3, 0, 0, 1, 0, 200, 1, 0, 0, 0, 4, 1, 1, 2, 3, 0, 0, 2, 255, 255, 255, 3, 2})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, twice over, and then rests for an hour"))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs := genLedger(data)
		got, want := Breaks(reqs), referenceBreaks(reqs)
		if len(got) != len(want) {
			t.Fatalf("%d breaks, reference %d\n got %+v\nwant %+v", len(got), len(want), got, want)
		}
		for i := range got {
			g, w := got[i], want[i]
			if math.Abs(g.PremiumUSD-w.PremiumUSD) > 1e-9*max(1, math.Abs(w.PremiumUSD)) {
				t.Fatalf("break %d premium %v, reference %v", i, g.PremiumUSD, w.PremiumUSD)
			}
			g.PremiumUSD = w.PremiumUSD
			if g != w {
				t.Fatalf("break %d\n got %+v\nwant %+v", i, g, w)
			}
			if g.RebilledTokens <= BreakTolerance || g.PremiumUSD < 0 {
				t.Fatalf("break %d out of its invariants: %+v", i, g)
			}
		}
	})
}

// TestLedgerMatchesReference runs the differential on many generated
// sessions outside fuzzing, so `go test` covers it too.
func TestLedgerMatchesReference(t *testing.T) {
	breaks := 0
	for i := range 2000 {
		data := make([]byte, 256)
		x := uint32(i*2654435761 + 1)
		for j := range data {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			data[j] = byte(x)
		}
		reqs := genLedger(data)
		got, want := Breaks(reqs), referenceBreaks(reqs)
		breaks += len(got)
		if fmt.Sprintf("%.6v", got) != fmt.Sprintf("%.6v", want) {
			t.Fatalf("session %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if breaks < 1000 {
		t.Errorf("only %d breaks in 2,000 sessions: the generator misses the interesting cases", breaks)
	}
}

func BenchmarkLedger(b *testing.B) {
	// A 10,000-request session: two threads, a break every 50 requests.
	reqs := make([]LedgerRequest, 10_000)
	var ctx int64 = 20_000
	for i := range reqs {
		u := Usage{Input: 3, CacheRead: ctx, CacheWrite: 500, Output: 200}
		if i%50 == 49 {
			u.CacheRead = 20_000
		}
		ctx = u.Prompt()
		reqs[i] = lq(int64(i+1), []string{"", "agent-1"}[i%7/6], opusFamily, i*10, u)
	}
	b.ReportAllocs()
	for b.Loop() {
		Breaks(reqs)
	}
}
