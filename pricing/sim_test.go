package pricing

import (
	"fmt"
	"testing"
	"time"
)

func simUnits(spec ...any) []SimUnit {
	// spec: hash, tokens, [breakpoint]… as ("a", 100), ("b", 50, true)
	var us []SimUnit
	for i := 0; i < len(spec); {
		u := SimUnit{Hash: spec[i].(string), Tokens: int64(spec[i+1].(int))}
		i += 2
		if i < len(spec) {
			if bp, ok := spec[i].(bool); ok {
				u.Breakpoint = bp
				i++
			}
		}
		us = append(us, u)
	}
	return us
}

func TestSimulator(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name  string
		model CacheModel
		reqs  []SimRequest
		want  []SimResult
	}{
		{
			name:  "a growing conversation reads its whole past",
			model: exact,
			reqs: []SimRequest{
				{Family: "f", Units: simUnits("env", 1000, "u0", 500), At: at(0)},
				{Family: "f", Units: simUnits("env", 1000, "u0", 500, "u1", 700), At: at(10)},
				{Family: "f", Units: simUnits("env", 1000, "u0", 500, "u1", 700, "u2", 300), At: at(20)},
			},
			want: []SimResult{{1500, 0, 1500}, {2200, 1500, 700}, {2500, 2200, 300}},
		},
		{
			name:  "the longest prefix over all earlier requests, not just the last",
			model: exact,
			reqs: []SimRequest{
				{Family: "f", Units: simUnits("env", 1000, "a", 500, "b", 500), At: at(0)},
				{Family: "f", Units: simUnits("env", 1000, "x", 100), At: at(1)},
				{Family: "f", Units: simUnits("env", 1000, "a", 500, "c", 10), At: at(2)},
			},
			want: []SimResult{{2000, 0, 2000}, {1100, 1000, 100}, {1510, 1500, 10}},
		},
		{
			name:  "families do not share",
			model: exact,
			reqs: []SimRequest{
				{Family: "high-effort", Units: simUnits("env", 1000, "a", 500), At: at(0)},
				{Family: "low-effort", Units: simUnits("env", 1000, "a", 500), At: at(1)},
			},
			want: []SimResult{{1500, 0, 1500}, {1500, 0, 1500}},
		},
		{
			name:  "entries expire after the TTL",
			model: exact, // ttl 300
			reqs: []SimRequest{
				{Family: "f", Units: simUnits("env", 1000), At: at(0)},
				{Family: "f", Units: simUnits("env", 1000), At: at(300)}, // just alive, and refreshed
				{Family: "f", Units: simUnits("env", 1000), At: at(601)}, // 301 s later: gone
			},
			want: []SimResult{{1000, 0, 1000}, {1000, 1000, 0}, {1000, 0, 1000}},
		},
		{
			name:  "granularity and minimum prefix",
			model: openAIStyle,
			reqs: []SimRequest{
				{Family: "f", Units: simUnits("env", 1000, "a", 500), At: at(0)},
				{Family: "f", Units: simUnits("env", 1000, "b", 500), At: at(1)},         // 1,000 < 1,024
				{Family: "f", Units: simUnits("env", 1000, "a", 500, "c", 1), At: at(2)}, // 1,500 → 1,408
			},
			want: []SimResult{{1500, 0, 1500}, {1500, 0, 1500}, {1501, 1408, 93}},
		},
		{
			name:  "breakpoints: the last message's entry serves the next request",
			model: anthropic5m,
			reqs: []SimRequest{
				{Family: "f", Units: simUnits("env", 2000, true, "m0", 500, true), At: at(0)},
				// m0 is not flagged here, but request 1 wrote an entry after it.
				{Family: "f", Units: simUnits("env", 2000, true, "m0", 500, "m1", 300, true), At: at(10)},
				// Shares env…m1 but m2 changed: the deepest entry is after m1.
				{Family: "f", Units: simUnits("env", 2000, true, "m0", 500, "m1", 300, "m2x", 50, true), At: at(20)},
				// Without any entry beyond the envelope's.
				{Family: "f", Units: simUnits("env", 2000, true, "other", 500), At: at(30)},
			},
			want: []SimResult{{2500, 0, 2500}, {2800, 2500, 300}, {2850, 2800, 50}, {2500, 2000, 500}},
		},
		{
			name:  "breakpoints: an entry read is refreshed, an entry only written expires",
			model: anthropic5m,
			reqs: []SimRequest{
				{Family: "f", Units: simUnits("env", 2000, true, "a", 500, true), At: at(0)},
				{Family: "f", Units: simUnits("env", 2000, "a", 500, "b", 10), At: at(200)},  // reads env+a, refreshes it
				{Family: "f", Units: simUnits("env", 2000, "a", 500, "c", 10), At: at(450)},  // 250 s after the read: alive
				{Family: "f", Units: simUnits("env", 2000, "a", 500, "d", 10), At: at(1000)}, // 550 s: gone
			},
			want: []SimResult{{2500, 0, 2500}, {2510, 2500, 10}, {2510, 2500, 10}, {2510, 0, 2510}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Simulate(tc.model, tc.reqs)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("Simulate =\n %v\nwant\n %v", got, tc.want)
			}
			if ref := refSimulate(tc.model, tc.reqs); fmt.Sprint(ref) != fmt.Sprint(tc.want) {
				t.Errorf("reference =\n %v\nwant\n %v", ref, tc.want)
			}
		})
	}
}

// refSimulate is the naive simulator: it keeps every earlier request and
// every written entry as a list, and compares unit by unit.
func refSimulate(m CacheModel, reqs []SimRequest) []SimResult {
	type entry struct {
		family  string
		prefix  []string
		touched time.Time
	}
	ttl := time.Duration(m.TTLSeconds) * time.Second
	var sent []SimRequest
	var entries []*entry
	same := func(prefix []string, us []SimUnit) bool {
		if len(prefix) > len(us) {
			return false
		}
		for i, h := range prefix {
			if us[i].Hash != h {
				return false
			}
		}
		return true
	}
	var out []SimResult
	for _, r := range reqs {
		var res SimResult
		tokensUpTo := func(k int) int64 {
			var s int64
			for _, u := range r.Units[:k] {
				s += u.Tokens
			}
			return s
		}
		res.PromptTokens = tokensUpTo(len(r.Units))
		if m.Kind == Breakpoint {
			var best *entry
			for _, e := range entries {
				if e.family == r.Family && r.At.Sub(e.touched) <= ttl && same(e.prefix, r.Units) && (best == nil || len(e.prefix) > len(best.prefix)) {
					best = e
				}
			}
			if best != nil {
				res.CachedTokens = m.cachedBoundary(tokensUpTo(len(best.prefix)))
				if res.CachedTokens > 0 {
					best.touched = r.At
				}
			}
		} else {
			longest := 0
			for _, e := range sent {
				if e.Family != r.Family || r.At.Sub(e.At) > ttl {
					continue
				}
				k := 0
				for k < len(e.Units) && k < len(r.Units) && e.Units[k].Hash == r.Units[k].Hash {
					k++
				}
				longest = max(longest, k)
			}
			res.CachedTokens = m.cachedPositional(tokensUpTo(longest))
		}
		res.ColdTokens = res.PromptTokens - res.CachedTokens
		out = append(out, res)
		sent = append(sent, r)
		for i, u := range r.Units {
			if !u.Breakpoint {
				continue
			}
			var prefix []string
			for _, v := range r.Units[:i+1] {
				prefix = append(prefix, v.Hash)
			}
			found := false
			for _, e := range entries {
				if e.family == r.Family && fmt.Sprint(e.prefix) == fmt.Sprint(prefix) && len(e.prefix) == len(prefix) {
					if r.At.After(e.touched) {
						e.touched = r.At
					}
					found = true
				}
			}
			if !found {
				entries = append(entries, &entry{family: r.Family, prefix: prefix, touched: r.At})
			}
		}
	}
	return out
}

// FuzzSimulatorAgainstReference replays random sessions (few hashes, so
// that prefixes are shared often) through both simulators.
func FuzzSimulatorAgainstReference(f *testing.F) {
	f.Add([]byte{1, 4, 0, 1, 2, 3, 0, 4, 0, 1, 2, 9, 1, 7, 0, 1})
	f.Add([]byte{0, 3, 1, 1, 1, 200, 2, 3, 1, 1, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &byteSource{b: data}
		m := CacheModel{Kind: Positional, Granularity: int64(1 + s.upTo(7)), MinimumPrefix: int64(s.upTo(30)), TTLSeconds: int64(1 + s.upTo(20))}
		if s.next()%2 == 1 {
			m.Kind = Breakpoint
		}
		var reqs []SimRequest
		clock := time.Unix(0, 0)
		for range s.upTo(8) {
			clock = clock.Add(time.Duration(s.upTo(12)) * time.Second)
			r := SimRequest{Family: fmt.Sprint(s.upTo(1)), At: clock}
			for range s.upTo(6) {
				h := s.upTo(3)
				// Equal hashes carry equal tokens, as content does.
				r.Units = append(r.Units, SimUnit{Hash: fmt.Sprint(h), Tokens: int64(h * 5), Breakpoint: s.next()%2 == 0})
			}
			reqs = append(reqs, r)
		}
		got, want := Simulate(m, reqs), refSimulate(m, reqs)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("model %+v\nreqs %+v\nSimulate  %v\nreference %v", m, reqs, got, want)
		}
	})
}
