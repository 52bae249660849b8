package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tollgate/guard/api"
	"tollgate/pricing"
)

// builtinProfiles resolves a profile name as the config would without any
// profile of its own: by the built-in price table.
func builtinProfiles(name string) (pricing.CacheModel, bool) { return pricing.Builtin("", name) }

// dialogBody is the design's dialog case (§7) as a rewrite body: envelope
// 13,056, units u0…u399 of 1,360 tokens summarized (544k), a tail of 246
// units of 1,000 and 12 tool results of 3,000 pruned to 400 (one to 600),
// freeing 31k; context 839,056 in a 1,048,576 window, threshold 838,861.
func dialogBody(t *testing.T, extra map[string]any) []byte {
	t.Helper()
	var surface []pricing.Unit
	var prunes []pricing.Prune
	for i := range 400 {
		surface = append(surface, pricing.Unit{ID: fmt.Sprintf("u%d", i), Tokens: 1360, Kind: "assistant"})
	}
	for i := range 258 {
		id := fmt.Sprintf("u%d", 400+i)
		if i%20 == 5 && len(prunes) < 12 {
			surface = append(surface, pricing.Unit{ID: id, Tokens: 3000, Kind: "tool-result"})
			after := int64(400)
			if len(prunes) == 11 {
				after = 600
			}
			prunes = append(prunes, pricing.Prune{ID: id, TokensAfter: after})
			continue
		}
		surface = append(surface, pricing.Unit{ID: id, Tokens: 1000, Kind: "tool-result"})
	}
	body := map[string]any{
		"engine": "e_1", "profile": "deepseek-flash", "turn": 17, "trigger": "pressure", "deadlineSeconds": 28,
		"idleSeconds": 4, "contextWindow": 1048576, "thresholdTokens": 838861, "envelopeTokens": 13056,
		"surface": surface,
		"plan":    pricing.Plan{Prune: prunes, Summarize: &pricing.SummaryPlan{Start: "u0", End: "u399", EstimatedTokens: 4000, InstructionTokens: 470}},
	}
	for k, v := range extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const peakAt = "--at=2026-11-30T02:00:00Z" // a Monday, in DeepSeek's peak hours

func TestRunQuote(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rewrite.json")
	if err := os.WriteFile(file, dialogBody(t, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    []byte
		profile  func(string) (pricing.CacheModel, bool)
		wantCode int
		wantOut  string // exact standard output, when set
		wantErr  string // a substring of standard error
	}{
		{
			// The dialog's own ordering: the figures of the founding design's dialog, exactly.
			name:  "the dialog lines of the design's case",
			args:  []string{"--format", "text", "--order", "summarize-then-prune-tail", peakAt},
			stdin: dialogBody(t, nil), profile: builtinProfiles,
			wantOut: "Context: 839k of 1.05M (rewrite at 839k)\n" +
				"Summarizes: ~4k checkpoint (estimated) instead of 544k\n" +
				"Then prunes 12 old tool results after it: 31k freed\n" +
				"Breaks the cache at position 0: 255k re-read in full (95% of the request) · $0.08\n" +
				"Pays for itself after ~24 requests\n",
		},
		{
			// §4's rule recommends prune-only here: pruning alone brings the
			// context under the threshold, and it breaks the cache much later.
			name:  "the recommended ordering of the same case, from a file",
			args:  []string{"--format=text", peakAt, file},
			stdin: nil, profile: builtinProfiles,
			wantOut: "Context: 839k of 1.05M (rewrite at 839k)\n" +
				"Prunes 12 old tool results: 31k freed\n" +
				"Breaks the cache at position 404: 246k re-read in full (30% of the request) · $0.07\n" +
				"Pays for itself after ~388 requests\n",
		},
		{
			name:  "idle past the TTL: the dialog leads with the expired cache",
			args:  []string{"--format", "text", "--order", "summarize-then-prune-tail", peakAt, "-"},
			stdin: dialogBody(t, map[string]any{"idleSeconds": 4000}), profile: builtinProfiles,
			wantOut: "Cache already expired — this rewrite costs nothing extra\n" +
				"Context: 839k of 1.05M (rewrite at 839k)\n" +
				"Summarizes: ~4k checkpoint (estimated) instead of 544k\n" +
				"Then prunes 12 old tool results after it: 31k freed\n",
		},
		{
			name:  "a cacheModel alone, without any profile",
			args:  []string{"--format", "text", peakAt},
			stdin: dialogBody(t, map[string]any{"profile": "", "cacheModel": flashModel(t)}), profile: nil,
			wantOut: "Context: 839k of 1.05M (rewrite at 839k)\n" +
				"Prunes 12 old tool results: 31k freed\n" +
				"Breaks the cache at position 404: 246k re-read in full (30% of the request) · $0.07\n" +
				"Pays for itself after ~388 requests\n",
		},
		{
			name:    "cacheModel keys override the profile's: exact caching, 10x prices",
			args:    []string{"--format", "text", "--order", "summarize-then-prune-tail", peakAt},
			stdin:   dialogBody(t, map[string]any{"cacheModel": map[string]any{"granularity": 1, "pricePerMTokens": 3, "cacheHitPricePerMTokens": 0.06, "outputPricePerMTokens": 12}}),
			profile: builtinProfiles,
			wantOut: "Context: 839k of 1.05M (rewrite at 839k)\n" +
				"Summarizes: ~4k checkpoint (estimated) instead of 544k\n" +
				"Then prunes 12 old tool results after it: 31k freed\n" +
				"Breaks the cache at position 0: 255k re-read in full (95% of the request) · $0.80\n" +
				"Pays for itself after ~24 requests\n",
		},
		{name: "JSON by default", args: []string{peakAt}, stdin: dialogBody(t, nil), profile: builtinProfiles},

		// Bad input: exit 2, naming the field.
		{name: "invalid JSON", args: nil, stdin: []byte(`{"trigger":`), profile: builtinProfiles, wantCode: 2,
			wantErr: "tollgate quote: trigger: invalid JSON at offset 11: unexpected end of input"},
		{name: "a missing field", args: nil, stdin: []byte(`{"trigger":"manual","surface":[],"plan":{}}`), profile: builtinProfiles, wantCode: 2,
			wantErr: "tollgate quote: envelopeTokens: is required"},
		{name: "an unknown profile", stdin: dialogBody(t, map[string]any{"profile": "nope"}), profile: builtinProfiles, wantCode: 2,
			wantErr: `tollgate quote: profile: unknown profile "nope"`},
		{name: "an unknown profile under a partial cacheModel: the profile is the cause", stdin: dialogBody(t, map[string]any{"profile": "nope", "cacheModel": map[string]any{"granularity": 1}}),
			profile: builtinProfiles, wantCode: 2, wantErr: `tollgate quote: profile: unknown profile "nope"`},
		{name: "no profile and no cacheModel", stdin: dialogBody(t, map[string]any{"profile": ""}), profile: builtinProfiles, wantCode: 2,
			wantErr: `tollgate quote: profile: is required without a "cacheModel" object`},
		{name: "a bad cacheModel value", stdin: dialogBody(t, map[string]any{"cacheModel": map[string]any{"granularity": 0}}), profile: builtinProfiles, wantCode: 2,
			wantErr: "tollgate quote: cacheModel.granularity: must be > 0"},
		{name: "a cacheModel key of the wrong type", stdin: dialogBody(t, map[string]any{"cacheModel": map[string]any{"ttlSeconds": "1h"}}), profile: builtinProfiles, wantCode: 2,
			wantErr: "tollgate quote: cacheModel.ttlSeconds: must be a number, not a string"},
		{name: "an unknown unit in the plan", stdin: dialogBody(t, map[string]any{"plan": map[string]any{"prune": []any{map[string]any{"id": "seq-99", "tokensAfter": 1}}}}),
			profile: builtinProfiles, wantCode: 2, wantErr: `tollgate quote: plan.prune[0].id: unknown unit "seq-99"`},
		{name: "a duplicate unit", stdin: []byte(`{"profile":"deepseek-flash","trigger":"manual","envelopeTokens":1,"surface":[{"id":"a","tokens":1},{"id":"a","tokens":2}],"plan":{}}`),
			profile: builtinProfiles, wantCode: 2, wantErr: `tollgate quote: surface[1].id: duplicate id "a" (also surface[0])`},
		{name: "an order the plan lacks", args: []string{"--format=text", "--order=prune-then-summarize"}, stdin: dialogBody(t, nil), profile: builtinProfiles, wantCode: 2,
			wantErr: "--order: prune-then-summarize does not apply to this plan (it has summarize-then-prune-tail, prune-only)"},
		{name: "a bad format", args: []string{"--format=yaml"}, profile: builtinProfiles, wantCode: 2, wantErr: `--format: must be json or text, not "yaml"`},
		{name: "a bad time", args: []string{"--at=noon"}, profile: builtinProfiles, wantCode: 2, wantErr: `--at: "noon" is not an RFC 3339 time`},
		{name: "two files", args: []string{"a", "b"}, profile: builtinProfiles, wantCode: 2, wantErr: "usage: tollgate quote"},
		{name: "a missing file", args: []string{filepath.Join(dir, "missing.json")}, profile: builtinProfiles, wantCode: 2, wantErr: "no such file"},
		{name: "an unknown flag", args: []string{"--fast"}, profile: builtinProfiles, wantCode: 2, wantErr: "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Exit(runQuote(tc.args, bytes.NewReader(tc.stdin), &stdout, &stderr, tc.profile), &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.wantCode, stderr.String())
			}
			if tc.wantOut != "" && stdout.String() != tc.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tc.wantOut)
			}
			if tc.wantErr != "" && !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tc.wantErr)
			}
			if tc.wantCode != 0 && stdout.Len() > 0 {
				t.Errorf("output on failure: %s", stdout.String())
			}
		})
	}
}

func flashModel(t *testing.T) pricing.CacheModel {
	m, ok := pricing.Builtin("deepseek", "deepseek-flash")
	if !ok {
		t.Fatal("no deepseek-flash")
	}
	return m
}

func TestRunQuoteJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Exit(runQuote([]string{peakAt}, bytes.NewReader(dialogBody(t, nil)), &stdout, &stderr, builtinProfiles), &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "{\n  \"order\": \"prune-only\",\n  \"contextTokens\": 839056,") {
		t.Errorf("not indented by 2 or not led by the recommended order:\n%.200s", stdout.String())
	}
	var q pricing.Quote
	if err := json.Unmarshal(stdout.Bytes(), &q); err != nil {
		t.Fatal(err)
	}
	if q.Recommended != pricing.OrderPruneOnly || len(q.Alternatives) != 2 || q.Alternatives[0].Order != pricing.OrderSummarizeThenPruneTail {
		t.Fatalf("quote %+v", q)
	}
	tail := q.Alternatives[0]
	if tail.NextRequestTokens != 268_056 || tail.ColdTokens != 255_000 || tail.BreakAt.Position != 0 || tail.BreakAt.UnitID != "u0" ||
		tail.SummaryCall.PromptTokens != 557_526 || *tail.BreakEvenRequests != 24 || tail.Apply.Summarize.End != "u399" || len(tail.Apply.Prune) != 12 {
		t.Errorf("summarize-then-prune-tail %+v", tail)
	}
	// Every §4 key is there, the summary objects null for prune-only.
	var raw map[string]any
	_ = json.Unmarshal(stdout.Bytes(), &raw)
	for _, k := range []string{"contextTokens", "contextWindow", "thresholdTokens", "prune", "summary", "breakAt", "coldTokens", "coldShare",
		"nextRequestTokens", "summaryCall", "costUSD", "perRequestSavingUSD", "breakEvenRequests", "cacheExpired", "recommended", "order", "apply", "alternatives"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %q in the quote", k)
		}
	}
	if raw["summary"] != nil || raw["summaryCall"] != nil {
		t.Errorf("prune-only has a summary: %v %v", raw["summary"], raw["summaryCall"])
	}
}

func TestDialogLinesVariants(t *testing.T) {
	surface := []pricing.Unit{{ID: "a", Tokens: 1000, Kind: "tool-result"}, {ID: "b", Tokens: 1000, Kind: "user"}, {ID: "c", Tokens: 1000, Kind: "tool-result"}}
	model := pricing.CacheModel{Kind: pricing.Positional, Granularity: 1, TTLSeconds: 300,
		Prices: pricing.Prices{PricePerMTokens: 1, CacheHitPricePerMTokens: 0.1, OutputPricePerMTokens: 2}}
	for _, tc := range []struct {
		name string
		plan pricing.Plan
		want []string
	}{
		{"one pruned tool result", pricing.Plan{Prune: []pricing.Prune{{ID: "c", TokensAfter: 0}}}, []string{
			// The pruned unit is the last: nothing before it changes.
			"Context: 3.5k", "Prunes 1 old tool result: 1k freed",
			"Keeps the cache: nothing is re-read · -$0.0001",
			"Pays for itself at once"}},
		{"pruning something else", pricing.Plan{Prune: []pricing.Prune{{ID: "b", TokensAfter: 10}, {ID: "a", TokensAfter: 10}}}, []string{
			"Context: 3.5k", "Prunes 2 old units: 2k freed",
			"Breaks the cache at position 0: 1k re-read in full (67% of the request) · $0.00072",
			"Pays for itself after ~4 requests"}},
		{"prune first, then summarize", pricing.Plan{Prune: []pricing.Prune{{ID: "a", TokensAfter: 10}},
			Summarize: &pricing.SummaryPlan{Start: "b", End: "c", EstimatedTokens: 100}}, nil},
		{"an empty plan", pricing.Plan{}, []string{"Context: 3.5k", "Changes nothing", "Keeps the cache: nothing is re-read · $0.00",
			"Never pays for itself: the context does not shrink"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := api.RewriteRequest{EnvelopeTokens: 500, Surface: surface, Plan: tc.plan}
			q, err := pricing.NewQuote(r.ToQuoteRequest(model, time.Time{}))
			if err != nil {
				t.Fatal(err)
			}
			o := q.Ordering
			if tc.want == nil { // describe prune-then-summarize
				for _, alt := range q.Alternatives {
					if alt.Order == pricing.OrderPruneThenSummarize {
						o = alt
					}
				}
				lines := DialogLines(o, surface)
				if lines[1] != "Prunes 1 old tool result first: 990 freed" || lines[2] != "Then summarizes: ~100 checkpoint (estimated) instead of 2k" {
					t.Errorf("lines %q", lines)
				}
				return
			}
			if got := DialogLines(o, surface); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
