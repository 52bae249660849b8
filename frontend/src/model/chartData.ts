// Series → chart data. uPlot wants column arrays aligned on one x axis;
// building them is pure and tested here, the chart component only draws.

import { formatInt, formatTokenRange } from "../format";
import type { Fold, RequestRecorded, Series, Spend, SpendFigures } from "./types";

// ---- chart 1: context fill per request ------------------------------------

export interface FoldMarker {
  seq: number;
  kind: Fold["kind"];
  /** allowed and applied (or not reported), declined, or allowed but not applied. */
  status: "applied" | "declined" | "not-applied";
  fold: Fold;
}

export interface ContextChartData {
  /** x: the request's sequence number in the session. */
  seq: number[];
  context: number[];
  /** The same value at every x, so it draws as a line and shows in the legend. */
  threshold: (number | null)[];
  window: (number | null)[];
  markers: FoldMarker[];
  /** Index of each point by seq, for tooltips. */
  thresholdTokens: number;
  contextWindow: number;
}

export function foldStatus(f: Fold): FoldMarker["status"] {
  if (f.decision === "decline") return "declined";
  if (f.applied === false) return "not-applied";
  return "applied";
}

export function contextChartData(s: Series): ContextChartData {
  const pts = s.points;
  const n = pts.length;
  const seq = new Array<number>(n);
  const context = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    seq[i] = pts[i]!.seq;
    context[i] = pts[i]!.contextTokens;
  }
  const th = s.thresholdTokens > 0 ? s.thresholdTokens : null;
  const win = s.contextWindow > 0 ? s.contextWindow : null;
  return {
    seq,
    context,
    threshold: new Array<number | null>(n).fill(th),
    window: new Array<number | null>(n).fill(win),
    markers: s.folds.map((f) => ({ seq: f.seq, kind: f.kind, status: foldStatus(f), fold: f })),
    thresholdTokens: s.thresholdTokens,
    contextWindow: s.contextWindow,
  };
}

/**
 * A live request.recorded: appended when it is a main-conversation request
 * newer than the last point (the series holds those only). Returns null when
 * nothing changes.
 */
export function appendRecorded(d: ContextChartData, ev: RequestRecorded): ContextChartData | null {
  if (ev.purpose && ev.purpose !== "conversation") return null;
  const last = d.seq[d.seq.length - 1];
  if (last !== undefined && ev.seq <= last) return null;
  const th = d.thresholdTokens > 0 ? d.thresholdTokens : null;
  const win = d.contextWindow > 0 ? d.contextWindow : null;
  return {
    ...d,
    seq: [...d.seq, ev.seq],
    context: [...d.context, ev.contextTokens],
    threshold: [...d.threshold, th],
    window: [...d.window, win],
  };
}

/** Binary search over ascending keys: the index of the last item with key ≤ x (-1 if none). */
export function indexAtOrBefore<T>(items: readonly T[], x: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = items.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (key(items[mid]!) <= x) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The fold nearest to x within `tolerance` requests, for the tooltip. */
export function markerNear(markers: readonly FoldMarker[], x: number, tolerance: number): FoldMarker | null {
  let best: FoldMarker | null = null;
  let bestDist = Infinity;
  for (const m of markers) {
    const d = Math.abs(m.seq - x);
    if (d <= tolerance && d < bestDist) {
      best = m;
      bestDist = d;
    }
  }
  return best;
}

// ---- chart 2: cold tokens per fold, predicted beside actual ---------------

export interface ColdChartData {
  /** x: 1…n, one slot per fold. */
  x: number[];
  predicted: (number | null)[];
  actual: (number | null)[];
  labels: string[];
  folds: Fold[];
}

export function coldChartData(folds: readonly Fold[]): ColdChartData {
  return {
    x: folds.map((_, i) => i + 1),
    predicted: folds.map((f) => f.predictedColdTokens),
    actual: folds.map((f) => f.actualColdTokens),
    labels: folds.map((f) => `#${f.seq}`),
    folds: [...folds],
  };
}

/** A fold's predicted cold tokens as the tooltip says them: "14,100 tokens (11–17k)". */
export function predictedColdText(f: Fold): string {
  if (f.predictedColdTokens === null) return "not priced";
  const band = f.predictedColdBand;
  const range = band && band.high > band.low ? ` (${formatTokenRange(band.low, band.high)})` : "";
  return `${formatInt(f.predictedColdTokens)} tokens${range}`;
}

// ---- overview: spend per day, stacked --------------------------------------

export const SPEND_STACKS = [
  { key: "cacheReadUSD", label: "Cache-hit input" },
  { key: "coldInputUSD", label: "Cold input" },
  { key: "outputUSD", label: "Output" },
  { key: "breakPremiumUSD", label: "Break premium" },
] as const;

export type SpendStackKey = (typeof SPEND_STACKS)[number]["key"];

export interface SpendChartData {
  x: number[];
  days: string[];
  /** Each stack's own figure per day (for tooltips and the legend). */
  raw: Record<SpendStackKey, number[]>;
  /** Running sums bottom-up: stacked[i] = raw[0] + … + raw[i] (what is drawn). */
  stacked: number[][];
  totals: number[];
}

/** The n calendar days ending at endKey ("2026-11-30"), oldest first. */
export function lastDays(endKey: string, n: number): string[] {
  const end = Date.parse(endKey + "T00:00:00Z");
  if (Number.isNaN(end)) return [];
  const out: string[] = [];
  for (let i = n - 1; i >= 0; i--) out.push(new Date(end - i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

export function spendChartData(spend: Pick<Spend, "rows">, endKey: string, days = 30): SpendChartData {
  const keys = lastDays(endKey, days);
  const byKey = new Map<string, SpendFigures>(spend.rows.map((r) => [r.key, r]));
  const raw = {} as Record<SpendStackKey, number[]>;
  for (const s of SPEND_STACKS) raw[s.key] = keys.map((k) => byKey.get(k)?.[s.key] ?? 0);
  const stacked: number[][] = [];
  let running = keys.map(() => 0);
  for (const s of SPEND_STACKS) {
    running = running.map((v, i) => v + raw[s.key][i]!);
    stacked.push(running);
  }
  return { x: keys.map((_, i) => i), days: keys, raw, stacked, totals: running };
}
