// The three charts, drawn with uPlot: context fill per request (with the
// threshold and window lines, a marker at every fold and a triangle at every
// cache break, coloured by its cause), cold tokens per
// fold (predicted beside actual), and spend per day (stacked). Legends and
// tooltips are ours, so every figure goes through format.ts.

import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatDateTime, formatDayKey, formatInt, formatTokens, formatUSD, formatUSDTick } from "../format";
import {
  indexAtOrBefore,
  markerNear,
  predictedColdText,
  SPEND_STACKS,
  type ColdChartData,
  type ContextChartData,
  type FoldMarker,
  type SpendChartData,
} from "../model/chartData";
import { breakNear, CAUSES, causeInfo, formatGap, startedByLabel, type BreakMarker } from "../model/breaks";
import type { SeriesPoint } from "../model/types";
import { el } from "./dom";

export const COLORS = {
  context: "#2458d6",
  threshold: "#d98a00",
  window: "#8a93a5",
  summary: "#7b3fc4",
  prune: "#0f8a7a",
  declined: "#b3261e",
  predicted: "#b9c4dd",
  actual: "#2458d6",
  stacks: ["#8fb3f0", "#2458d6", "#0f8a7a", "#d98a00"],
} as const;

const WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1_000, 2_000, 2_500, 5_000, 10_000, 20_000, 25_000, 50_000, 100_000];

export interface ChartHandle {
  destroy(): void;
}

/** Keeps the chart as wide as its box. */
function autoSize(u: uPlot, box: HTMLElement, height: number): () => void {
  const ro = new ResizeObserver(() => {
    const w = Math.max(200, Math.floor(box.clientWidth));
    if (w !== u.width) u.setSize({ width: w, height });
  });
  ro.observe(box);
  return () => ro.disconnect();
}

/** A tooltip that follows the cursor; content(idx, left) returns its lines. */
function tooltipPlugin(content: (u: uPlot, idx: number, left: number) => (string | Node)[] | null): uPlot.Plugin {
  let tip: HTMLDivElement;
  return {
    hooks: {
      init: (u) => {
        tip = el("div", { class: "chart-tip", role: "tooltip" });
        tip.style.display = "none";
        u.over.appendChild(tip);
        u.over.addEventListener("mouseleave", () => (tip.style.display = "none"));
      },
      setCursor: (u) => {
        const { idx, left, top } = u.cursor;
        if (idx === null || idx === undefined || left === undefined || left < 0 || top === undefined) {
          tip.style.display = "none";
          return;
        }
        const lines = content(u, idx, left);
        if (!lines || lines.length === 0) {
          tip.style.display = "none";
          return;
        }
        tip.replaceChildren(...lines.map((l) => (typeof l === "string" ? el("div", {}, l) : l)));
        tip.style.display = "block";
        const w = u.over.clientWidth;
        const flip = left > w * 0.6;
        tip.style.left = flip ? "" : `${left + 14}px`;
        tip.style.right = flip ? `${w - left + 14}px` : "";
        tip.style.top = `${Math.max(0, Math.min(top, u.over.clientHeight - 80))}px`;
      },
    },
  };
}

function legend(items: { label: string; color: string; dashed?: boolean }[]): HTMLElement {
  return el(
    "div",
    { class: "chart-legend" },
    ...items.map((i) =>
      el("span", { class: "legend-item" }, el("span", { class: "swatch" + (i.dashed ? " dashed" : ""), style: `--c:${i.color}` }), i.label),
    ),
  );
}

const tokenAxis = (label: string): uPlot.Axis => ({
  label,
  size: 60,
  values: (_u, splits) => splits.map((v) => formatTokens(v)),
  grid: { stroke: "#eceff4" },
});

// ---- chart 1 ------------------------------------------------------------------

export interface ContextChart extends ChartHandle {
  setData(d: ContextChartData): void;
}

function markerColor(m: FoldMarker): string {
  if (m.status === "declined") return COLORS.declined;
  return m.kind === "summary" ? COLORS.summary : COLORS.prune;
}

export function contextChart(box: HTMLElement, initial: ContextChartData, points: () => SeriesPoint[], breaks: () => BreakMarker[] = () => []): ContextChart {
  let data = initial;
  const height = 300;
  const drawMarkers: uPlot.Plugin = {
    hooks: {
      draw: (u) => {
        const ctx = u.ctx;
        const top = u.bbox.top;
        const bottom = u.bbox.top + u.bbox.height;
        ctx.save();
        for (const m of data.markers) {
          const x = Math.round(u.valToPos(m.seq, "x", true));
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.strokeStyle = markerColor(m);
          ctx.lineWidth = 2 * uPlot.pxRatio;
          ctx.setLineDash(m.status === "applied" ? [] : [4 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, bottom);
          ctx.stroke();
          // a small flag at the top says which kind it was
          ctx.fillStyle = markerColor(m);
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x + 8 * uPlot.pxRatio, top + 4 * uPlot.pxRatio);
          ctx.lineTo(x, top + 8 * uPlot.pxRatio);
          ctx.fill();
        }
        // Cache breaks: a triangle on the x axis at the breaking request,
        // coloured by its cause.
        const r = 6 * uPlot.pxRatio;
        for (const b of breaks()) {
          const x = Math.round(u.valToPos(b.seq, "x", true));
          if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
          ctx.fillStyle = b.color;
          ctx.strokeStyle = "#ffffff";
          ctx.lineWidth = 1 * uPlot.pxRatio;
          ctx.beginPath();
          ctx.moveTo(x, bottom - 2 * r);
          ctx.lineTo(x + r, bottom);
          ctx.lineTo(x - r, bottom);
          ctx.closePath();
          ctx.fill();
          ctx.stroke();
        }
        ctx.restore();
      },
    },
  };
  const tip = tooltipPlugin((u, idx, left) => {
    const pts = points();
    const seq = data.seq[idx];
    if (seq === undefined) return null;
    const lines: (string | Node)[] = [];
    const x = u.posToVal(left, "x");
    const xs = u.scales["x"];
    const perPx = ((xs?.max ?? 0) - (xs?.min ?? 0)) / Math.max(1, u.bbox.width / uPlot.pxRatio);
    const m = markerNear(data.markers, x, Math.max(1, perPx * 6));
    const b = m ? null : breakNear(breaks(), x, Math.max(1, perPx * 6));
    if (b) {
      const k = b.brk;
      lines.push(el("strong", {}, `Cache break at request ${formatInt(k.seq)}: ${causeInfo(k.cause).label.toLowerCase()}`));
      lines.push(`Started by: ${startedByLabel(k.startedBy)} · ${formatGap(k.gapSeconds)} after the previous request`);
      lines.push(`Read ${formatInt(k.cacheReadTokens)} of ${formatInt(k.expectedCachedTokens)} cached tokens`);
      lines.push(`Re-billed ${formatInt(k.rebilledTokens)} tokens: ${formatUSD(k.premiumUSD)}`);
      return lines;
    }
    if (m) {
      const f = m.fold;
      lines.push(el("strong", {}, `${f.kind === "summary" ? "Fold (summary)" : "Prune"} at request ${formatInt(f.seq)}`));
      lines.push(`${f.decision === "decline" ? "Declined" : "Allowed"} · ${f.reason || "—"}${f.applied === false ? " · not applied" : ""}`);
      lines.push(`Context before: ${formatInt(f.preTokens)} tokens`);
      const predicted = f.predictedColdTokens === null ? "not priced" : `${formatInt(f.predictedColdTokens)} predicted`;
      lines.push(`Cold tokens: ${predicted}` + (f.actualColdTokens !== null ? `, ${formatInt(f.actualColdTokens)} actual` : ""));
      if (f.costUSD) lines.push(`Cost: ${formatUSD(f.costUSD)}`);
      return lines;
    }
    const i = indexAtOrBefore(pts, seq, (p) => p.seq);
    const p = i >= 0 && pts[i]?.seq === seq ? pts[i] : undefined;
    lines.push(el("strong", {}, `Request ${formatInt(seq)}`));
    lines.push(`Context: ${formatInt(data.context[idx] ?? 0)} tokens`);
    if (p) {
      lines.push(formatDateTime(p.at));
      if (!Number.isNaN(p.input)) {
        lines.push(`Cache read ${formatInt(p.cacheRead)} · input ${formatInt(p.input)}`);
        const writes = p.cacheWrite + (p.cacheWrite1h ?? 0);
        if (writes) lines.push(`Cache write ${formatInt(writes)}`);
        lines.push(`Output ${formatInt(p.output)} · ${formatUSD(p.costUSD)}`);
      } else lines.push(formatUSD(p.costUSD));
    }
    if (data.thresholdTokens > 0) lines.push(`Threshold: ${formatInt(data.thresholdTokens)}`);
    return lines;
  });
  const opts: uPlot.Options = {
    width: Math.max(200, box.clientWidth),
    height,
    legend: { show: false },
    cursor: { y: false, points: { size: 6 } },
    scales: {
      // A lone point still gets an axis around it.
      x: { time: false, range: (_u, min, max) => (min === max ? [min - 1, max + 1] : [min, max]) },
      y: { range: (_u, _min, max) => [0, Math.max(max, data.contextWindow || 0) * 1.04] },
    },
    axes: [
      // Requests are whole: whole-number steps only, so no tick reads "0, 0, 1, 1".
      { label: "request", incrs: WHOLE_STEPS, values: (_u, splits) => splits.map((v) => formatInt(v)), grid: { stroke: "#eceff4" } },
      tokenAxis("context tokens"),
    ],
    series: [
      {},
      { label: "Context", stroke: COLORS.context, width: 1.5, fill: "rgba(36,88,214,0.08)", points: { show: false } },
      { label: "Rewrite threshold", stroke: COLORS.threshold, width: 1.5, dash: [6, 4], points: { show: false } },
      { label: "Context window", stroke: COLORS.window, width: 1, dash: [2, 4], points: { show: false } },
    ],
    plugins: [drawMarkers, tip],
  };
  const toAligned = (d: ContextChartData): uPlot.AlignedData => [d.seq, d.context, d.threshold, d.window];
  const wrap = el("div", { class: "chart" });
  // The legend names only what this chart draws.
  const kinds = new Set(data.markers.map((m) => (m.status === "declined" ? "declined" : m.kind)));
  const items: { label: string; color: string; dashed?: boolean; show: boolean }[] = [
    { label: "Context per request", color: COLORS.context, show: true },
    { label: "Rewrite threshold", color: COLORS.threshold, dashed: true, show: data.thresholdTokens > 0 },
    { label: "Context window", color: COLORS.window, dashed: true, show: data.contextWindow > 0 },
    { label: "Fold (summary)", color: COLORS.summary, show: kinds.has("summary") },
    { label: "Prune", color: COLORS.prune, show: kinds.has("prune") },
    { label: "Declined", color: COLORS.declined, dashed: true, show: kinds.has("declined") },
    ...CAUSES.map((c) => ({ label: "Break: " + c.label.toLowerCase(), color: c.color, show: breaks().some((b) => b.cause === c.cause) })),
  ];
  const legendEl = legend(items.filter((i) => i.show));
  box.append(legendEl, wrap);
  const u = new uPlot(opts, toAligned(data), wrap);
  const stop = autoSize(u, box, height);
  return {
    setData(d) {
      data = d;
      u.setData(toAligned(d));
    },
    destroy() {
      stop();
      u.destroy();
    },
  };
}

// ---- chart 2 ------------------------------------------------------------------

export function coldChart(box: HTMLElement, d: ColdChartData): ChartHandle {
  const height = 220;
  const bars = (align: -1 | 1) => uPlot.paths.bars!({ size: [0.35, 48], align });
  const tip = tooltipPlugin((_u, idx) => {
    const f = d.folds[idx];
    if (!f) return null;
    return [
      el("strong", {}, `${f.kind === "summary" ? "Fold" : "Prune"} at request ${formatInt(f.seq)}`),
      `Predicted cold: ${predictedColdText(f)}`,
      `Actual cold: ${f.actualColdTokens === null ? "not measured yet" : formatInt(f.actualColdTokens) + " tokens"}`,
      `${f.decision === "decline" ? "Declined" : "Allowed"} (${f.reason || "—"})`,
    ];
  });
  const opts: uPlot.Options = {
    width: Math.max(200, box.clientWidth),
    height,
    legend: { show: false },
    cursor: { y: false, points: { show: false } },
    scales: { x: { time: false, range: (_u, min, max) => [min - 0.6, max + 0.6] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [
      {
        label: "fold at request",
        // One tick per fold, labelled with the request it came at.
        splits: () => d.x,
        values: (_u, splits) => splits.map((v) => d.labels[v - 1] ?? ""),
        grid: { show: false },
      },
      tokenAxis("cold tokens"),
    ],
    series: [
      {},
      { label: "Predicted", fill: COLORS.predicted, stroke: COLORS.predicted, paths: bars(-1), points: { show: false } },
      { label: "Actual", fill: COLORS.actual, stroke: COLORS.actual, paths: bars(1), points: { show: false } },
    ],
    plugins: [tip],
  };
  const wrap = el("div", { class: "chart" });
  box.append(legend([{ label: "Predicted cold tokens", color: COLORS.predicted }, { label: "Actual cold tokens", color: COLORS.actual }]), wrap);
  const u = new uPlot(opts, [d.x, d.predicted, d.actual], wrap);
  const stop = autoSize(u, box, height);
  return {
    destroy() {
      stop();
      u.destroy();
    },
  };
}

// ---- overview: spend per day ------------------------------------------------------

export function spendChart(box: HTMLElement, d: SpendChartData): ChartHandle {
  const height = 260;
  // uPlot has no stacking: each series draws its running sum from zero, the
  // tallest (the top stack) first, so each later one covers its lower part.
  const order = [...SPEND_STACKS.keys()].reverse();
  const bars = uPlot.paths.bars!({ size: [0.7, 40] });
  const tip = tooltipPlugin((_u, idx) => {
    const day = d.days[idx];
    if (!day) return null;
    return [
      el("strong", {}, `${formatDayKey(day)} · ${formatUSD(d.totals[idx] ?? 0)}`),
      ...[...SPEND_STACKS].reverse().map((s) => `${s.label}: ${formatUSD(d.raw[s.key][idx] ?? 0)}`),
    ];
  });
  const opts: uPlot.Options = {
    width: Math.max(200, box.clientWidth),
    height,
    legend: { show: false },
    cursor: { y: false, points: { show: false } },
    scales: { x: { time: false, range: (_u, min, max) => [min - 0.6, max + 0.6] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      {
        values: (_u, splits) => splits.map((v) => (Number.isInteger(v) && d.days[v] ? formatDayKey(d.days[v]!) : "")),
        grid: { show: false },
      },
      { label: "USD", size: 70, values: (_u, splits, _axis, _space, step) => splits.map((v) => formatUSDTick(v, step)), grid: { stroke: "#eceff4" } },
    ],
    series: [
      {},
      ...order.map((i) => ({
        label: SPEND_STACKS[i]!.label,
        fill: COLORS.stacks[i],
        stroke: COLORS.stacks[i],
        paths: bars,
        points: { show: false },
      })),
    ],
    plugins: [tip],
  };
  const wrap = el("div", { class: "chart" });
  box.append(legend(SPEND_STACKS.map((s, i) => ({ label: s.label, color: COLORS.stacks[i]! }))), wrap);
  const u = new uPlot(opts, [d.x, ...order.map((i) => d.stacked[i]!)], wrap);
  const stop = autoSize(u, box, height);
  return {
    destroy() {
      stop();
      u.destroy();
    },
  };
}
