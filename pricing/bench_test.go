package pricing

import (
	"fmt"
	"testing"
	"time"
)

// bigRequest is a 1,000,000-token surface of 5,000 units of 200 tokens,
// a breakpoint every 500, with a realistic plan: a summary of the first 3,000 units and 12
// prunes after it, plus 3 before it.
func bigRequest(m CacheModel) QuoteRequest {
	units := make([]Unit, 5000)
	for i := range units {
		units[i] = Unit{ID: fmt.Sprintf("seq-%d", i), Tokens: 200, Kind: "tool-result", Breakpoint: i%500 == 499}
	}
	var prunes []Prune
	for _, i := range []int{100, 900, 2000, 3100, 3300, 3500, 3700, 3900, 4100, 4300, 4500, 4700, 4800, 4900, 4950} {
		prunes = append(prunes, Prune{ID: units[i].ID, TokensAfter: 20})
	}
	return QuoteRequest{
		Model: m, EnvelopeTokens: 13_000, Units: units, ContextWindow: 1_048_576, ThresholdTokens: 838_861,
		Plan: Plan{Prune: prunes, Summarize: summarize("seq-0", "seq-2999", 4000, 470)},
		At:   peak,
	}
}

// BenchmarkQuote5kUnits is the §9 target: a quote over a 1M-token,
// 5,000-unit surface in <= 100 µs and <= 10 allocations beyond the result
// (the result itself takes 2 + one apply list per ordering).
func BenchmarkQuote5kUnits(b *testing.B) {
	for _, bc := range []struct {
		name  string
		model CacheModel
	}{{"positional", flash(b)}, {"breakpoint", anthropic5m}} {
		b.Run(bc.name, func(b *testing.B) {
			req := bigRequest(bc.model)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewQuote(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// scriptedSession is a 60-step coding session in a 512k window: each step
// adds an assistant message and a tool result reported as 16 content
// blocks; when the context crosses 80% of the window, the oldest steps are
// folded into a 4k checkpoint by a summary call of the same family.
func scriptedSession(steps int, window int64) []SimRequest {
	t := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	env := SimUnit{Hash: "envelope", Tokens: 13_000, Breakpoint: true}
	var history []SimUnit
	var reqs []SimRequest
	context := func() int64 {
		n := env.Tokens
		for _, u := range history {
			n += u.Tokens
		}
		return n
	}
	folds := 0
	for step := range steps {
		t = t.Add(20 * time.Second)
		history = append(history, SimUnit{Hash: fmt.Sprintf("a%d", step), Tokens: 500})
		for blk := range 16 {
			history = append(history, SimUnit{Hash: fmt.Sprintf("r%d.%d", step, blk), Tokens: 500})
		}
		if context() > window*8/10 {
			keep := 17 * 10 // the last ten steps stay verbatim
			span := history[:len(history)-keep]
			call := append(append([]SimUnit{env}, span...), SimUnit{Hash: fmt.Sprintf("instr%d", folds), Tokens: 470, Breakpoint: true})
			reqs = append(reqs, SimRequest{Family: "conv", Units: call, At: t})
			folds++
			history = append([]SimUnit{{Hash: fmt.Sprintf("ckpt%d", folds), Tokens: 4000}}, history[len(history)-keep:]...)
		}
		units := append([]SimUnit{env}, history...)
		units[len(units)-1].Breakpoint = true
		reqs = append(reqs, SimRequest{Family: "conv", Units: units, At: t})
	}
	return reqs
}

// BenchmarkSimulator60Steps512k is the §9-style target for the simulator:
// a 60-step session at a 512k window in <= 50 ms.
func BenchmarkSimulator60Steps512k(b *testing.B) {
	for _, bc := range []struct {
		name  string
		model CacheModel
	}{{"positional", flash(b)}, {"breakpoint", anthropic5m}} {
		b.Run(bc.name, func(b *testing.B) {
			reqs := scriptedSession(60, 512*1024)
			b.ReportAllocs()
			for b.Loop() {
				Simulate(bc.model, reqs)
			}
		})
	}
}

func TestScriptedSessionFolds(t *testing.T) {
	reqs := scriptedSession(60, 512*1024)
	res := Simulate(flash(t), reqs)
	ref := refSimulate(flash(t), reqs)
	if fmt.Sprint(res) != fmt.Sprint(ref) {
		t.Fatalf("simulator and reference differ on the scripted session")
	}
	if len(reqs) <= 60 {
		t.Fatalf("the session never folded: %d requests", len(reqs))
	}
}

func BenchmarkFormatTokens(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		FormatTokens(838_861)
	}
}
