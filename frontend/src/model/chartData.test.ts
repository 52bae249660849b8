import { describe, expect, it } from "vitest";
import { appendRecorded, coldChartData, contextChartData, indexAtOrBefore, lastDays, markerNear, predictedColdText, spendChartData } from "./chartData";
import type { Fold, Series, SeriesPoint } from "./types";

const point = (seq: number, contextTokens: number): SeriesPoint => ({
  seq, at: "2026-11-30T10:00:00Z", purpose: "conversation", contextTokens, input: 0, cacheRead: contextTokens, cacheWrite: 0, output: 10, costUSD: 0.001,
});
const fold = (seq: number, over: Partial<Fold> = {}): Fold => ({
  rewrite: `r_${seq}`, seq, at: "", kind: "summary", trigger: "pressure", preTokens: 800_000, predictedColdTokens: 255_000, actualColdTokens: 250_000,
  summaryCall: null, decision: "allow", reason: "user", mode: "ask", order: "summarize-then-prune-tail", applied: true, costUSD: 0.08, ...over,
});
const series = (n: number, folds: Fold[] = []): Series => ({
  session: {} as Series["session"],
  contextWindow: 1_048_576,
  thresholdTokens: 838_861,
  points: Array.from({ length: n }, (_, i) => point(i + 1, 1000 * (i + 1))),
  folds,
});

describe("chart 1: context per request", () => {
  it("aligns seq, context, threshold and window columns", () => {
    const d = contextChartData(series(3, [fold(2), fold(3, { decision: "decline", kind: "prune" }), fold(1, { applied: false })]));
    expect(d.seq).toEqual([1, 2, 3]);
    expect(d.context).toEqual([1000, 2000, 3000]);
    expect(d.threshold).toEqual([838_861, 838_861, 838_861]);
    expect(d.window).toEqual([1_048_576, 1_048_576, 1_048_576]);
    expect(d.markers.map((m) => [m.seq, m.kind, m.status])).toEqual([
      [2, "summary", "applied"],
      [3, "prune", "declined"],
      [1, "summary", "not-applied"],
    ]);
  });
  it("no threshold → a null column (no line)", () => {
    const s = series(2);
    s.thresholdTokens = 0;
    expect(contextChartData(s).threshold).toEqual([null, null]);
  });
  it("10,000 points build fast", () => {
    const s = series(10_000);
    const t0 = performance.now();
    const d = contextChartData(s);
    expect(d.seq.length).toBe(10_000);
    expect(performance.now() - t0).toBeLessThan(100);
  });
  it("live requests append only newer main-conversation points", () => {
    const d = contextChartData(series(2));
    const ev = { session: "s", requestId: "x", seq: 3, at: "", purpose: "conversation", contextTokens: 5000, costUSD: 0 };
    const next = appendRecorded(d, ev)!;
    expect(next.seq).toEqual([1, 2, 3]);
    expect(next.context[2]).toBe(5000);
    expect(next.threshold.length).toBe(3);
    expect(appendRecorded(d, { ...ev, purpose: "compaction" })).toBeNull();
    expect(appendRecorded(d, { ...ev, seq: 2 })).toBeNull();
  });
  it("binary search and nearest marker", () => {
    const pts = [{ s: 1 }, { s: 5 }, { s: 9 }];
    expect(indexAtOrBefore(pts, 0, (p) => p.s)).toBe(-1);
    expect(indexAtOrBefore(pts, 5, (p) => p.s)).toBe(1);
    expect(indexAtOrBefore(pts, 8, (p) => p.s)).toBe(1);
    expect(indexAtOrBefore(pts, 100, (p) => p.s)).toBe(2);
    const markers = contextChartData(series(10, [fold(3), fold(8)])).markers;
    expect(markerNear(markers, 7.2, 1)?.seq).toBe(8);
    expect(markerNear(markers, 5.5, 1)).toBeNull();
  });
});

describe("chart 2: cold tokens per fold", () => {
  it("a predicted figure with its band, as the tooltip says it", () => {
    expect(predictedColdText(fold(10, { predictedColdTokens: 14_100, predictedColdBand: { low: 11_300, high: 16_800 } }))).toBe("14,100 tokens (11–17k)");
    expect(predictedColdText(fold(10, { predictedColdTokens: 14_100, predictedColdBand: null }))).toBe("14,100 tokens");
    expect(predictedColdText(fold(10, { predictedColdTokens: null }))).toBe("not priced");
  });

  it("predicted beside actual, null when not measured", () => {
    const d = coldChartData([fold(10), fold(20, { actualColdTokens: null }), fold(30, { predictedColdTokens: null })]);
    expect(d.x).toEqual([1, 2, 3]);
    expect(d.predicted).toEqual([255_000, 255_000, null]);
    expect(d.actual).toEqual([250_000, null, 250_000]);
    expect(d.labels).toEqual(["#10", "#20", "#30"]);
  });
});

describe("overview: spend stacks", () => {
  it("lastDays crosses month ends", () => {
    expect(lastDays("2026-12-02", 4)).toEqual(["2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02"]);
    expect(lastDays("nonsense", 3)).toEqual([]);
  });
  it("fills missing days with zero and stacks bottom-up", () => {
    const row = (key: string, a: number, b: number, c: number, d: number) => ({ key, requests: 1, cacheReadUSD: a, coldInputUSD: b, outputUSD: c, breakPremiumUSD: d, totalUSD: a + b + c + d });
    const d = spendChartData({ rows: [row("2026-11-30", 1, 2, 3, 4), row("2026-11-28", 0.5, 0, 0, 0), row("2026-10-01", 9, 9, 9, 9)] }, "2026-11-30", 3);
    expect(d.days).toEqual(["2026-11-28", "2026-11-29", "2026-11-30"]);
    expect(d.raw.cacheReadUSD).toEqual([0.5, 0, 1]);
    expect(d.stacked).toEqual([
      [0.5, 0, 1],
      [0.5, 0, 3],
      [0.5, 0, 6],
      [0.5, 0, 10],
    ]);
    expect(d.totals).toEqual([0.5, 0, 10]);
  });
});
