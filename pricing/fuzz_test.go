package pricing

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"
)

// byteSource turns fuzz input into small numbers; exhausted, it yields zeros.
type byteSource struct {
	b []byte
	i int
}

func (s *byteSource) next() int {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return int(s.b[s.i-1])
}

func (s *byteSource) upTo(n int) int { return s.next() % (n + 1) }

// genQuoteRequest builds a small valid request from fuzz bytes: few units,
// few tokens, every cache kind and rounding, so that the naive reference
// stays cheap and corner cases (zero-token units, an envelope under the
// minimum prefix, prunes inside the span…) come up often.
func genQuoteRequest(data []byte) QuoteRequest {
	s := &byteSource{b: data}
	m := CacheModel{Kind: Positional, Granularity: int64(1 + s.upTo(63)), MinimumPrefix: int64(s.upTo(3) * s.upTo(200)),
		TTLSeconds: int64(1 + s.upTo(600)),
		Prices: Prices{PricePerMTokens: float64(1 + s.upTo(9)), CacheHitPricePerMTokens: float64(s.upTo(9)) / 10,
			OutputPricePerMTokens: float64(s.upTo(20))}, EstimatedSummaryTokens: int64(s.upTo(300))}
	if s.next()%2 == 1 {
		m.Kind = Breakpoint
	}
	if s.next()%3 == 0 {
		m.CacheWritePricePerMTokens = float64(s.upTo(10))
		m.CacheWrite1hPricePerMTokens = float64(s.upTo(10))
	}
	n := s.upTo(12)
	req := QuoteRequest{Model: m, EnvelopeTokens: int64(s.upTo(255) * s.upTo(3)), At: time.Unix(int64(s.next())*7919, 0)}
	for i := range n {
		req.Units = append(req.Units, Unit{ID: fmt.Sprintf("s%d", i), Tokens: int64(s.upTo(255) * s.upTo(2)), Breakpoint: s.next()%3 == 0})
	}
	if n > 0 {
		for range s.upTo(3) {
			i := s.upTo(n - 1)
			dup := false
			for _, p := range req.Plan.Prune {
				dup = dup || p.ID == req.Units[i].ID
			}
			if !dup {
				req.Plan.Prune = append(req.Plan.Prune, Prune{ID: req.Units[i].ID, TokensAfter: int64(s.upTo(int(req.Units[i].Tokens)))})
			}
		}
		if s.next()%2 == 1 {
			a := s.upTo(n - 1)
			b := a + s.upTo(n-1-a)
			sp := summarize(req.Units[a].ID, req.Units[b].ID, int64(s.upTo(200)), int64(s.upTo(50)))
			if s.next()%4 == 0 {
				sp = notSameFamily(sp)
			}
			req.Plan.Summarize = sp
		}
	}
	req.ThresholdTokens = int64(s.upTo(8) * 300)
	req.IdleSeconds = float64(s.upTo(700))
	return req
}

// FuzzQuoteAgainstReference is the differential test of the fast path: on any
// valid request, every ordering must equal the naive reference's, token for
// token, and the prefix-cache simulator must serve the same cached tokens.
func FuzzQuoteAgainstReference(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 10, 2, 50, 1, 2, 1, 0, 1, 5, 7, 3, 9, 200, 1, 0, 100, 1, 3, 40, 2, 1, 1, 8, 9, 1, 1, 0, 3, 2, 40, 20, 2, 5, 9, 1, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 200, 3, 12, 90, 1, 1, 90, 1, 0, 80, 2, 2, 90, 2, 0, 3, 5, 3, 9, 4, 1, 3, 2, 1, 3, 250, 100, 3, 6, 0, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		req := genQuoteRequest(data)
		q, err := NewQuote(req)
		if err != nil {
			t.Fatalf("generated request rejected: %v", err)
		}
		checkInvariants(t, req, q)
		checkAgainstReference(t, req, q)
		checkAgainstSimulator(t, req, q)
	})
}

// checkAgainstSimulator replays each ordering as the requests a provider
// would see — the last request, the summary call, the next request — and
// checks that the simulator's cache serves what the quote says.
func checkAgainstSimulator(t testing.TB, req QuoteRequest, q Quote) {
	t.Helper()
	t0 := time.Unix(1_000_000, 0)
	now := t0.Add(time.Duration(req.IdleSeconds * float64(time.Second)))
	env := SimUnit{Hash: "envelope", Tokens: req.EnvelopeTokens, Breakpoint: true}
	last := []SimUnit{env}
	for _, u := range req.Units {
		last = append(last, SimUnit{Hash: "unit:" + u.ID, Tokens: u.Tokens, Breakpoint: u.Breakpoint})
	}
	{
		sim := NewSimulator(req.Model)
		sim.Send(SimRequest{Family: "conv", Units: last, At: t0})
		base := sim.Send(SimRequest{Family: "conv", Units: last, At: now})
		want := q.Alternatives[0].CostUSD.BaselineNextRequest
		prices, _ := req.Model.PricesAt(req.At)
		got := perM(base.CachedTokens, prices.CacheHitPricePerMTokens) + perM(base.ColdTokens, prices.coldPrice(req.Model.TTLSeconds))
		if !closeTo(got, want) {
			t.Errorf("baseline: simulator costs %v, quote %v", got, want)
		}
	}
	for _, o := range q.Alternatives {
		applied := map[string]int64{}
		for _, id := range o.Apply.Prune {
			for _, p := range req.Plan.Prune {
				if p.ID == id {
					applied[id] = p.TokensAfter
				}
			}
		}
		unit := func(u Unit) SimUnit {
			if after, ok := applied[u.ID]; ok {
				return SimUnit{Hash: "pruned:" + u.ID, Tokens: after, Breakpoint: u.Breakpoint}
			}
			return SimUnit{Hash: "unit:" + u.ID, Tokens: u.Tokens, Breakpoint: u.Breakpoint}
		}
		sim := NewSimulator(req.Model)
		sim.Send(SimRequest{Family: "conv", Units: last, At: t0})
		next := []SimUnit{env}
		if o.Apply.Summarize == nil {
			for _, u := range req.Units {
				next = append(next, unit(u))
			}
		} else {
			a, b := -1, -1
			for i, u := range req.Units {
				if u.ID == o.Apply.Summarize.Start {
					a = i
				}
				if u.ID == o.Apply.Summarize.End {
					b = i
				}
			}
			call := []SimUnit{env}
			for _, u := range req.Units[:b+1] {
				call = append(call, unit(u))
			}
			call = append(call, SimUnit{Hash: "instruction", Tokens: req.Plan.Summarize.InstructionTokens, Breakpoint: true})
			family := "conv"
			if s := req.Plan.Summarize; s.SameFamily != nil && !*s.SameFamily {
				family = "summary"
			}
			got := sim.Send(SimRequest{Family: family, Units: call, At: now})
			if got.PromptTokens != o.SummaryCall.PromptTokens || got.CachedTokens != o.SummaryCall.CachedTokens {
				t.Errorf("%s: summary call simulated %+v, quoted %+v", o.Order, got, *o.SummaryCall)
			}
			for _, u := range req.Units[:a] {
				next = append(next, unit(u))
			}
			next = append(next, SimUnit{Hash: "checkpoint", Tokens: o.SummaryCall.OutputTokens})
			for _, u := range req.Units[b+1:] {
				next = append(next, unit(u))
			}
		}
		got := sim.Send(SimRequest{Family: "conv", Units: next, At: now})
		if got.PromptTokens != o.NextRequestTokens || got.CachedTokens != o.BreakAt.CachedTokens {
			t.Errorf("%s: next request simulated %+v, quoted next %d cached %d", o.Order, got, o.NextRequestTokens, o.BreakAt.CachedTokens)
		}
	}
}

// FuzzQuoteJSON decodes arbitrary JSON into a QuoteRequest and quotes it:
// no input may panic, and an accepted one must satisfy the invariants.
func FuzzQuoteJSON(f *testing.F) {
	f.Add([]byte(`{"model":{"cacheKind":"positional","granularity":64,"minimumPrefix":64,"ttlSeconds":3600,"pricePerMTokens":0.3,"cacheHitPricePerMTokens":0.006,"outputPricePerMTokens":1.2},
		"envelopeTokens":13000,"units":[{"id":"a","tokens":5},{"id":"b","tokens":7,"breakpoint":true}],
		"plan":{"prune":[{"id":"b","tokensAfter":1}],"summarize":{"start":"a","end":"a","estimatedTokens":2}},"thresholdTokens":10}`))
	f.Add([]byte(`{"model":{"cacheKind":"breakpoint","granularity":1,"ttlSeconds":300,"offPeak":{"days":["sat-sun"],"utc":["22:00-02:00"],"factor":0.5}},"units":[{"id":"a","tokens":-1}]}`))
	f.Add([]byte(`{"model":{"cacheKind":"positional","granularity":1,"ttlSeconds":1},"units":[{"id":"a","tokens":1125899906842624},{"id":"b","tokens":1125899906842624}]}`))
	f.Add([]byte(`{"plan":{"summarize":{"start":"x","end":"y"}},"idleSeconds":1e308}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var req QuoteRequest
		if json.Unmarshal(data, &req) != nil {
			return
		}
		q, err := NewQuote(req)
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("error %T %v does not name its field", err, err)
			}
			return
		}
		checkInvariants(t, req, q)
		for _, o := range q.Alternatives {
			if math.IsNaN(o.CostUSD.BreakPremium) || math.IsNaN(o.ColdShare) {
				t.Fatalf("NaN in %+v", o)
			}
		}
	})
}

// FuzzPriceWindow parses arbitrary window specs: never a panic, and a window
// that validates answers for every hour of the week.
func FuzzPriceWindow(f *testing.F) {
	f.Add("mon-fri", "10:00-24:00", "sat-sun", 0.5)
	f.Add("fri-mon", "22:30-01:15", "", 2.0)
	f.Add("xyz", "24:00-24:00", "sun", 0.0)
	f.Fuzz(func(t *testing.T, days, utc, allDay string, factor float64) {
		if len(days)+len(utc)+len(allDay) > 64 {
			return // longer specs add nothing but slow minimization
		}
		w := &PriceWindow{Days: []string{days}, UTC: []string{utc}, AllDay: []string{allDay}, Factor: factor}
		m := exact
		m.OffPeak = w
		valid := m.Validate() == nil
		for h := range 7 * 24 {
			p, off := m.PricesAt(time.Date(2026, 11, 30, h, 17, 0, 0, time.UTC))
			if valid && off && p.PricePerMTokens != exact.PricePerMTokens*factor {
				t.Fatalf("off-peak price %v", p.PricePerMTokens)
			}
		}
	})
}

// FuzzDuplicateIDs checks the hashed duplicate detection against a map: the
// same first duplicate (smallest second position, earliest first one).
func FuzzDuplicateIDs(f *testing.F) {
	f.Add([]byte{1, 2, 3, 2, 1}, uint16(0))
	f.Add([]byte{0, 0}, uint16(5000))
	f.Fuzz(func(t *testing.T, data []byte, spread uint16) {
		var units []Unit
		for _, b := range data {
			units = append(units, Unit{ID: fmt.Sprintf("id-%d", int(b)*int(spread+1)), Tokens: 1})
		}
		// Pad with unique ids so the bitset sees real collisions too.
		for i := range int(spread) % 20000 {
			units = append(units, Unit{ID: fmt.Sprintf("pad-%d", i), Tokens: 1})
		}
		want := ""
		seen := map[string]int{}
		for i, u := range units {
			if j, ok := seen[u.ID]; ok {
				want = fmt.Sprintf("units[%d].id: duplicate id %q (also units[%d])", i, u.ID, j)
				break
			}
			seen[u.ID] = i
		}
		_, err := NewQuote(QuoteRequest{Model: exact, Units: units})
		if got := errString(err); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
