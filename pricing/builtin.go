package pricing

import (
	"strings"
)

// BuiltinPrice is one entry of the built-in price table. A profile's own
// keys win over it (the app merges them); Builtin is the fallback by
// provider + model.
type BuiltinPrice struct {
	Provider string   `json:"provider"`
	Model    string   `json:"model"`
	Aliases  []string `json:"aliases,omitempty"`
	CacheModel
	Source string `json:"source"` // where the figures were read
	Date   string `json:"date"`   // when they were read (YYYY-MM-DD)
	Note   string `json:"note,omitempty"`
}

// Cache models shared by a provider's entries.
//
// Anthropic: only prefixes ending at a cache_control breakpoint are reused;
// the default entry lives 5 minutes (a profile with ttlSeconds 3600 selects
// the one-hour write price). Minimum cacheable prompt per model, from
// https://platform.claude.com/docs/en/build-with-claude/prompt-caching
// (read 2026-11-30): 1024 for Sonnet 4.5/4.6, 4096 for Opus 4.5/4.6 and Haiku 4.5.
//
// OpenAI (before GPT-5.6): any prefix from 1,024 tokens on, in steps of 128,
// writes not billed; in-memory retention "typically 5 to 10 minutes of
// inactivity, at most one hour", so the TTL is the 300 s lower bound.
// https://developers.openai.com/api/docs/guides/prompt-caching (read 2026-11-30).
//
// DeepSeek: positional, 64-token storage unit (an approximation, see
// pricing/doc.go), writes not billed, entries kept for hours: TTL 3600 s.
func anthropicModel(minimumPrefix int64, p Prices) CacheModel {
	return CacheModel{Kind: Breakpoint, Granularity: 1, MinimumPrefix: minimumPrefix, TTLSeconds: 300, Prices: p, EstimatedSummaryTokens: 4000}
}

func openAIModel(p Prices) CacheModel {
	return CacheModel{Kind: Positional, Granularity: 128, MinimumPrefix: 1024, TTLSeconds: 300, Prices: p, EstimatedSummaryTokens: 4000}
}

func deepSeekModel(p Prices, offPeak *PriceWindow) CacheModel {
	return CacheModel{Kind: Positional, Granularity: 64, MinimumPrefix: 64, TTLSeconds: 3600, Prices: p, OffPeak: offPeak, EstimatedSummaryTokens: 4000}
}

// Google (Gemini API): implicit caching, on by default since Gemini 2.5,
// reuses any prefix a recent request shared once it reaches the model's
// minimum; cached tokens are billed at a tenth of the input price and
// writes are not billed (storage is billed only for explicit caches, which
// Gemini CLI does not create). Google documents no granularity (usage
// reports cachedContentTokenCount to the token) and no lifetime ("no fixed
// time, but it should be a few minutes", Philipp Schmid of Google DeepMind,
// quoted at simonwillison.net 2025-05-09), so the TTL is 300 s like
// OpenAI's lower bound. Minimum prefixes from the caching page
// (https://ai.google.dev/gemini-api/docs/caching, snapshot of 2026-06-26
// read 2026-12-01): 2,048 for 2.5 Flash and 2.5 Pro, 4,096 for 3.x Pro,
// 1,024 for 3 Flash Preview. Prices are those of prompts up to 200k tokens:
// 2.5 Pro and 3 Pro bill more above (input ×2), where a quote is a lower
// bound.
func googleModel(minimumPrefix int64, p Prices) CacheModel {
	return CacheModel{Kind: Positional, Granularity: 1, MinimumPrefix: minimumPrefix, TTLSeconds: 300, Prices: p, EstimatedSummaryTokens: 4000}
}

// deepSeekOffPeak is DeepSeek's schedule since 2026-08-16 (weekends since
// 2026-08-23): peak 01:00-04:00 and 06:00-10:00 UTC Monday to Friday, every
// other hour at half price. The Chinese page pins the weekdays to Beijing
// time; with the current windows both readings agree at every hour of the
// week. Chinese public holidays (off-peak too) are not modelled: on those
// days a quote states the peak price, an upper bound.
func deepSeekOffPeak() *PriceWindow {
	return &PriceWindow{
		Days:   []string{"mon-fri"},
		UTC:    []string{"00:00-01:00", "04:00-06:00", "10:00-24:00"},
		AllDay: []string{"sat-sun"},
		Factor: 0.5,
	}
}

const (
	srcDeepSeek  = "https://api-docs.deepseek.com/quick_start/pricing"
	srcAnthropic = "https://platform.claude.com/docs/en/about-claude/pricing"
	srcOpenAI    = "https://developers.openai.com/api/docs/pricing"
	srcGoogle    = "https://ai.google.dev/gemini-api/docs/pricing"
	readGoogle   = "2026-12-01"
	readOn       = "2026-11-30"
)

// builtinTable returns a fresh copy of the table, so no caller can change
// another's prices.
func builtinTable() []BuiltinPrice {
	return []BuiltinPrice{
		// ── DeepSeek ── peak prices; the off-peak window halves them.
		// Source srcDeepSeek, read 2026-11-30: deepseek-flash (DeepSeek-V4.1-Flash)
		// cache hit $0.006, miss $0.30, output $1.20 per 1M at peak.
		{Provider: "deepseek", Model: "deepseek-flash", Aliases: []string{"deepseek-v4-flash", "deepseek-v4.1-flash", "deepseek-v4-flash-vision-exp"},
			CacheModel: deepSeekModel(Prices{PricePerMTokens: 0.30, CacheHitPricePerMTokens: 0.006, OutputPricePerMTokens: 1.20}, deepSeekOffPeak()),
			Source:     srcDeepSeek, Date: readOn,
			Note: "peak prices; off-peak (weekdays outside 01-04 and 06-10 UTC, weekends) at half. Legacy deepseek-v4-flash ids are served and billed as Flash."},
		// Source srcDeepSeek, read 2026-11-30: deepseek-v4-pro (DeepSeek-V4-Pro-0813)
		// cache hit $0.044, miss $1.32, output $3.96 per 1M at peak.
		{Provider: "deepseek", Model: "deepseek-v4-pro",
			CacheModel: deepSeekModel(Prices{PricePerMTokens: 1.32, CacheHitPricePerMTokens: 0.044, OutputPricePerMTokens: 3.96}, deepSeekOffPeak()),
			Source:     srcDeepSeek, Date: readOn, Note: "peak prices; off-peak at half"},
		// deepseek-chat and deepseek-reasoner were retired on 2026-07-24 15:59 UTC;
		// until then they were served by deepseek-v4-flash, whose last flat price
		// (before peak/off-peak billing began on 2026-08-16) was hit $0.0028,
		// miss $0.14, output $0.28 (srcDeepSeek, version page for
		// DeepSeek-V4-Pro-0813, read 2026-11-30). FLAGGED: kept to price old
		// sessions; the page does not list these names.
		{Provider: "deepseek", Model: "deepseek-chat",
			CacheModel: deepSeekModel(Prices{PricePerMTokens: 0.14, CacheHitPricePerMTokens: 0.0028, OutputPricePerMTokens: 0.28}, nil),
			Source:     srcDeepSeek, Date: readOn, Note: "retired 2026-07-24; last price of deepseek-v4-flash, which served it"},
		{Provider: "deepseek", Model: "deepseek-reasoner",
			CacheModel: deepSeekModel(Prices{PricePerMTokens: 0.14, CacheHitPricePerMTokens: 0.0028, OutputPricePerMTokens: 0.28}, nil),
			Source:     srcDeepSeek, Date: readOn, Note: "retired 2026-07-24; last price of deepseek-v4-flash (thinking), which served it"},

		// ── Anthropic ── base input, 5-minute write (1.25×), 1-hour write (2×),
		// cache hit (0.1×), output; srcAnthropic "Model pricing", read 2026-11-30.
		// Opus 4.6: $5 / $6.25 / $10 / $0.50 / $25.
		{Provider: "anthropic", Model: "claude-opus-4-6", Aliases: []string{"opus"},
			CacheModel: anthropicModel(4096, Prices{PricePerMTokens: 5, CacheWritePricePerMTokens: 6.25, CacheWrite1hPricePerMTokens: 10, CacheHitPricePerMTokens: 0.50, OutputPricePerMTokens: 25}),
			Source:     srcAnthropic, Date: readOn,
			Note: `alias "opus" as Claude Code used it in early 2026; a profile wins`},
		// Opus 4.5: same prices as Opus 4.6.
		{Provider: "anthropic", Model: "claude-opus-4-5",
			CacheModel: anthropicModel(4096, Prices{PricePerMTokens: 5, CacheWritePricePerMTokens: 6.25, CacheWrite1hPricePerMTokens: 10, CacheHitPricePerMTokens: 0.50, OutputPricePerMTokens: 25}),
			Source:     srcAnthropic, Date: readOn},
		// Opus 4.7: same prices. FLAGGED: minimum prefix 2048 from a secondary
		// source (dev.to "Claude's prompt cache fails silently below 1,024 tokens", read 2026-11-30).
		{Provider: "anthropic", Model: "claude-opus-4-7",
			CacheModel: anthropicModel(2048, Prices{PricePerMTokens: 5, CacheWritePricePerMTokens: 6.25, CacheWrite1hPricePerMTokens: 10, CacheHitPricePerMTokens: 0.50, OutputPricePerMTokens: 25}),
			Source:     srcAnthropic, Date: readOn, Note: "minimum prefix from a secondary source"},
		// Sonnet 4.5: $3 / $3.75 / $6 / $0.30 / $15.
		{Provider: "anthropic", Model: "claude-sonnet-4-5", Aliases: []string{"sonnet"},
			CacheModel: anthropicModel(1024, Prices{PricePerMTokens: 3, CacheWritePricePerMTokens: 3.75, CacheWrite1hPricePerMTokens: 6, CacheHitPricePerMTokens: 0.30, OutputPricePerMTokens: 15}),
			Source:     srcAnthropic, Date: readOn,
			Note: `alias "sonnet" as Claude Code used it in early 2026 (Sonnet 4.5/4.6, same price); a profile wins`},
		// Sonnet 4.6: same prices as Sonnet 4.5.
		{Provider: "anthropic", Model: "claude-sonnet-4-6",
			CacheModel: anthropicModel(1024, Prices{PricePerMTokens: 3, CacheWritePricePerMTokens: 3.75, CacheWrite1hPricePerMTokens: 6, CacheHitPricePerMTokens: 0.30, OutputPricePerMTokens: 15}),
			Source:     srcAnthropic, Date: readOn},
		// Haiku 4.5: $1 / $1.25 / $2 / $0.10 / $5 (the 1.25×/2×/0.1× rule on
		// its $1/$5 list price, platform.claude.com/docs/en/models/haiku-4-5/overview).
		{Provider: "anthropic", Model: "claude-haiku-4-5", Aliases: []string{"haiku"},
			CacheModel: anthropicModel(4096, Prices{PricePerMTokens: 1, CacheWritePricePerMTokens: 1.25, CacheWrite1hPricePerMTokens: 2, CacheHitPricePerMTokens: 0.10, OutputPricePerMTokens: 5}),
			Source:     srcAnthropic, Date: readOn},

		// ── OpenAI ── input, cached input, output; writes are not billed.
		// FLAGGED: the official page was not readable here. gpt-5.2-codex
		// $1.75 / $0.175 / $14 per 1M is GitHub's published table
		// (github/docs data/tables/copilot/models-and-pricing.yml, read
		// 2026-11-30), and agrees with OpenAI's Codex rate card (43.75 / 4.375 /
		// 350 credits per 1M at 25 credits = $1, checked 2026-05-13 by the
		// codex-ops crate).
		{Provider: "openai", Model: "gpt-5.2-codex",
			CacheModel: openAIModel(Prices{PricePerMTokens: 1.75, CacheHitPricePerMTokens: 0.175, OutputPricePerMTokens: 14}),
			Source:     srcOpenAI, Date: readOn, Note: "figures from secondary sources that agree"},
		// gpt-5.2: same figures, same sources (FLAGGED as above).
		{Provider: "openai", Model: "gpt-5.2",
			CacheModel: openAIModel(Prices{PricePerMTokens: 1.75, CacheHitPricePerMTokens: 0.175, OutputPricePerMTokens: 14}),
			Source:     srcOpenAI, Date: readOn, Note: "figures from secondary sources that agree"},
		// gpt-5.3-codex: same figures, same sources (FLAGGED as above).
		{Provider: "openai", Model: "gpt-5.3-codex",
			CacheModel: openAIModel(Prices{PricePerMTokens: 1.75, CacheHitPricePerMTokens: 0.175, OutputPricePerMTokens: 14}),
			Source:     srcOpenAI, Date: readOn, Note: "figures from secondary sources that agree"},
		// gpt-5.4: $2.50 / $0.25 / $15 (Codex rate card 62.5 / 6.25 / 375
		// credits; FLAGGED: secondary source).
		{Provider: "openai", Model: "gpt-5.4",
			CacheModel: openAIModel(Prices{PricePerMTokens: 2.50, CacheHitPricePerMTokens: 0.25, OutputPricePerMTokens: 15}),
			Source:     srcOpenAI, Date: readOn, Note: "figures from secondary sources that agree"},
		// gpt-5.4-mini: $0.75 / $0.075 / $4.50 (FLAGGED: secondary source).
		{Provider: "openai", Model: "gpt-5.4-mini",
			CacheModel: openAIModel(Prices{PricePerMTokens: 0.75, CacheHitPricePerMTokens: 0.075, OutputPricePerMTokens: 4.50}),
			Source:     srcOpenAI, Date: readOn, Note: "figures from secondary sources"},
		// gpt-5.5: $5 / $0.50 / $30 (Codex rate card 125 / 12.5 / 750 credits;
		// FLAGGED: secondary source).
		{Provider: "openai", Model: "gpt-5.5",
			CacheModel: openAIModel(Prices{PricePerMTokens: 5, CacheHitPricePerMTokens: 0.50, OutputPricePerMTokens: 30}),
			Source:     srcOpenAI, Date: readOn, Note: "figures from secondary sources that agree"},

		// ── Google ── input, cached input (0.1×), output (thinking included),
		// for prompts up to 200k tokens. FLAGGED: the official page
		// (srcGoogle) was not readable here; the figures are those every
		// secondary source read 2026-12-01 quotes from it and agree on
		// (discuss.ai.google.dev threads 92919 and 107349, deploybase.ai
		// "Gemini API Pricing 2026", aifreeapi.com "Gemini API Pricing 2026").
		// gemini-2.5-pro (Gemini CLI's default model): $1.25 / $0.125 / $10.
		{Provider: "google", Model: "gemini-2.5-pro",
			CacheModel: googleModel(2048, Prices{PricePerMTokens: 1.25, CacheHitPricePerMTokens: 0.125, OutputPricePerMTokens: 10}),
			Source:     srcGoogle, Date: readGoogle, Note: "prompts up to 200k tokens (above: input $2.50, output $15); figures from secondary sources that agree"},
		// gemini-2.5-flash: $0.30 / $0.03 / $2.50.
		{Provider: "google", Model: "gemini-2.5-flash",
			CacheModel: googleModel(2048, Prices{PricePerMTokens: 0.30, CacheHitPricePerMTokens: 0.03, OutputPricePerMTokens: 2.50}),
			Source:     srcGoogle, Date: readGoogle, Note: "figures from secondary sources that agree"},
		// gemini-2.5-flash-lite: $0.10 / $0.01 / $0.40; its minimum prefix is
		// not on the caching page: 2.5 Flash's is assumed.
		{Provider: "google", Model: "gemini-2.5-flash-lite",
			CacheModel: googleModel(2048, Prices{PricePerMTokens: 0.10, CacheHitPricePerMTokens: 0.01, OutputPricePerMTokens: 0.40}),
			Source:     srcGoogle, Date: readGoogle, Note: "figures from secondary sources; minimum prefix assumed from 2.5 Flash"},
		// gemini-3-pro-preview (Gemini CLI's preview model): $2 / $0.20 / $12.
		{Provider: "google", Model: "gemini-3-pro-preview",
			CacheModel: googleModel(4096, Prices{PricePerMTokens: 2, CacheHitPricePerMTokens: 0.20, OutputPricePerMTokens: 12}),
			Source:     srcGoogle, Date: readGoogle, Note: "prompts up to 200k tokens (above: input $4, output $18); figures from secondary sources"},
		// gemini-3-flash-preview: $0.50 / $0.05 / $3.
		{Provider: "google", Model: "gemini-3-flash-preview",
			CacheModel: googleModel(1024, Prices{PricePerMTokens: 0.50, CacheHitPricePerMTokens: 0.05, OutputPricePerMTokens: 3}),
			Source:     srcGoogle, Date: readGoogle, Note: "figures from secondary sources"},
	}
}

// BuiltinPrices returns a copy of the built-in price table.
func BuiltinPrices() []BuiltinPrice { return builtinTable() }

// Builtin finds the built-in cache model of a provider's model. Matching is
// tolerant: case, a "provider/" prefix, a dated suffix
// (claude-sonnet-4-5-20250929, gpt-5.2-codex-2025-12-11), Claude Code's
// "[1m]" suffix and dots for dashes (claude-opus-4.6) are ignored, aliases
// (sonnet) count. provider may be empty; a provider the table does not know
// (a gateway, a harness name) is ignored rather than trusted.
func Builtin(provider, model string) (CacheModel, bool) {
	table := builtinTable()
	provider = strings.ToLower(strings.TrimSpace(provider))
	knownProvider := false
	for i := range table {
		if table[i].Provider == provider {
			knownProvider = true
			break
		}
	}
	for _, name := range candidateNames(model) {
		for i := range table {
			e := &table[i]
			if knownProvider && e.Provider != provider {
				continue
			}
			if e.Model == name || contains(e.Aliases, name) {
				return e.CacheModel, true
			}
		}
	}
	return CacheModel{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// candidateNames returns the spellings of model to try, most literal first.
func candidateNames(model string) []string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimSuffix(m, "[1m]")
	names := []string{m}
	if d := stripDate(m); d != m {
		names = append(names, d)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "claude") && strings.Contains(n, ".") {
			names = append(names, strings.ReplaceAll(n, ".", "-"))
		}
	}
	return names
}

// stripDate removes a trailing -YYYYMMDD or -YYYY-MM-DD.
func stripDate(m string) string {
	isDigits := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return s != ""
	}
	if n := len(m); n > 9 && m[n-9] == '-' && isDigits(m[n-8:]) {
		return m[:n-9]
	}
	if n := len(m); n > 11 && m[n-11] == '-' && m[n-6] == '-' && m[n-3] == '-' &&
		isDigits(m[n-10:n-6]) && isDigits(m[n-5:n-3]) && isDigits(m[n-2:]) {
		return m[:n-11]
	}
	return m
}
