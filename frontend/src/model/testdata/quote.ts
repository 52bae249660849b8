// A quote shaped like pricing.Quote's JSON, with the figures of the founding design's
// dialog example.
import type { PendingRewrite, Quote, QuoteOrdering } from "../types";

export function ordering(over: Partial<QuoteOrdering> = {}): QuoteOrdering {
  return {
    order: "summarize-then-prune-tail",
    contextTokens: 838_861,
    contextWindow: 1_048_576,
    thresholdTokens: 838_861,
    prune: { count: 12, freedTokens: 31_000 },
    summary: { spanTokens: 544_000, checkpointTokens: 4_000, estimated: true },
    breakAt: { position: 0, unitId: "seq-8", cachedTokens: 13_000 },
    coldTokens: 255_000,
    coldShare: 0.95,
    nextRequestTokens: 268_000,
    summaryCall: { promptTokens: 557_470, cachedTokens: 557_000, coldTokens: 470, outputTokens: 4_000 },
    costUSD: { nextRequest: 0.077, summaryCall: 0.0081, baselineNextRequest: 0.005, breakPremium: 0.0801 },
    perRequestSavingUSD: 0.0034,
    breakEvenRequests: 24,
    cacheExpired: false,
    underThreshold: true,
    ...over,
  };
}

export function quote(over: Partial<Quote> = {}): Quote {
  const top = ordering(over);
  return { ...top, recommended: top.order, alternatives: [top], offPeak: false, ...over };
}

export function pending(over: Partial<PendingRewrite> = {}): PendingRewrite {
  return {
    rewrite: "r_1",
    session: "s1",
    harness: "dsh",
    profile: "deepseek-flash",
    trigger: "pressure",
    turn: "17",
    mode: "ask",
    quote: quote(),
    askedAt: "2026-11-30T10:00:00Z",
    deadlineAt: "2026-11-30T10:00:28Z",
    deadlineSeconds: 28,
    ...over,
  };
}
