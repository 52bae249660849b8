// One session: context fill per request against the threshold and window
// (with every fold and prune marked, and every cache break by its cause),
// cold tokens per fold (predicted beside actual), the table of rewrites and
// the table of cache breaks.

import { loadCharts } from "../components/chartLoader";
import type { ChartHandle, ContextChart } from "../components/charts";
import { button, el, errorText, throttle } from "../components/dom";
import { exportLink } from "../components/exportLink";
import { dataTable, type Column } from "../components/table";
import type { View } from "../context";
import { formatCount, formatDateTime, formatInt, formatPercent, formatTokens, formatUSD } from "../format";
import { breakMarkers, causeInfo, formatGap, startedByLabel, type BreakMarker } from "../model/breaks";
import { appendRecorded, coldChartData, contextChartData, type ContextChartData } from "../model/chartData";
import { answeredByLabel } from "../model/dialog";
import type { CacheBreak, Fold, Series, SeriesPoint, Session } from "../model/types";
import { ApiError } from "../transport";

function stat(label: string, value: string, title?: string): HTMLElement {
  return el("div", { class: "card stat", title }, el("div", { class: "stat-value" }, value), el("div", { class: "stat-label" }, label));
}

function stats(s: Session, declined: number): HTMLElement[] {
  return [
    stat("requests", formatInt(s.requests)),
    stat("spent", formatUSD(s.costUSD)),
    stat("cache hit rate", s.requests > 0 ? formatPercent(s.hitRate) : "—"),
    stat("context now", s.lastContextTokens ? formatTokens(s.lastContextTokens) : "—", s.lastContextTokens ? formatInt(s.lastContextTokens) + " tokens" : undefined),
    stat("folds", formatInt(s.folds)),
    stat("declined", formatInt(declined)),
  ];
}

const foldColumns: Column<Fold, string>[] = [
  { key: "seq", label: "Request", numeric: true, cell: (f) => formatInt(f.seq) },
  { key: "at", label: "When", cell: (f) => formatDateTime(f.at) },
  { key: "kind", label: "Kind", cell: (f) => (f.kind === "summary" ? "summary" : "prune") },
  { key: "trigger", label: "Trigger", cell: (f) => f.trigger || "—" },
  { key: "order", label: "Order", cell: (f) => f.order || "—" },
  { key: "mode", label: "Mode", cell: (f) => f.mode || "—" },
  {
    key: "decision",
    label: "Decision",
    cell: (f) => el("span", { class: "badge " + (f.decision === "decline" ? "warn" : "good") }, f.decision || "—"),
  },
  { key: "reason", label: "Reason", cell: (f) => f.reason || "—" },
  { key: "answeredBy", label: "Answered by", cell: (f) => answeredByLabel(f.answeredBy) },
  { key: "applied", label: "Applied", cell: (f) => (f.applied === null ? "—" : f.applied ? "yes" : "no") },
  { key: "pre", label: "Context before", numeric: true, cell: (f) => el("span", { title: formatInt(f.preTokens) }, formatTokens(f.preTokens)) },
  {
    key: "predicted",
    label: "Cold, predicted",
    numeric: true,
    cell: (f) => (f.predictedColdTokens === null ? "—" : el("span", { title: formatInt(f.predictedColdTokens) }, formatTokens(f.predictedColdTokens))),
  },
  {
    key: "actual",
    label: "Cold, actual",
    numeric: true,
    cell: (f) => (f.actualColdTokens === null ? "—" : el("span", { title: formatInt(f.actualColdTokens) }, formatTokens(f.actualColdTokens))),
  },
  { key: "cost", label: "Cost", numeric: true, cell: (f) => formatUSD(f.costUSD) },
];

const breakColumns: Column<CacheBreak, string>[] = [
  { key: "seq", label: "Request", numeric: true, cell: (b) => formatInt(b.seq) },
  { key: "at", label: "When", cell: (b) => formatDateTime(b.at) },
  { key: "thread", label: "Thread", cell: (b) => b.thread || "main" },
  {
    key: "cause",
    label: "Cause",
    cell: (b) => {
      const c = causeInfo(b.cause);
      return el("span", { class: "badge cause", style: `--c:${c.color}`, title: c.explain, "data-cause": b.cause }, c.label);
    },
  },
  { key: "started", label: "Started by", cell: (b) => startedByLabel(b.startedBy) },
  { key: "gap", label: "Gap", numeric: true, cell: (b) => el("span", { title: `cache entries lived ${formatGap(b.ttlSeconds)}` }, formatGap(b.gapSeconds)) },
  {
    key: "read",
    label: "Read of cached",
    numeric: true,
    cell: (b) => el("span", { title: `${formatInt(b.cacheReadTokens)} of ${formatInt(b.expectedCachedTokens)}` }, `${formatTokens(b.cacheReadTokens)} / ${formatTokens(b.expectedCachedTokens)}`),
  },
  { key: "rebilled", label: "Re-billed", numeric: true, cell: (b) => el("span", { title: formatInt(b.rebilledTokens) }, formatTokens(b.rebilledTokens)) },
  { key: "premium", label: "Premium", numeric: true, cell: (b) => formatUSD(b.premiumUSD) },
];

function breaksSection(breaks: readonly CacheBreak[]): HTMLElement {
  if (breaks.length === 0) return el("p", { class: "muted" }, "None: every request read what the one before it had cached.");
  const rebilled = breaks.reduce((a, b) => a + b.rebilledTokens, 0);
  const premium = breaks.reduce((a, b) => a + b.premiumUSD, 0);
  return el(
    "div",
    {},
    el("p", { class: "muted", id: "breaks-total" }, `${formatInt(breaks.length)} ${breaks.length === 1 ? "break" : "breaks"} re-billed ${formatTokens(rebilled)} tokens: ${formatUSD(premium)} beyond cache hits`),
    el("div", { class: "table-box", id: "breaks-table" }, dataTable(breakColumns, breaks, { rowKey: (b) => String(b.seq) })),
  );
}

export const sessionView = (id: string): View => async (root, ctx, scope) => {
  let series: Series;
  let breaks: CacheBreak[] = [];
  let markers: BreakMarker[] = [];
  let chart1: ContextChart | null = null;
  let chart2: ChartHandle | null = null;
  let data: ContextChartData;
  let points: SeriesPoint[] = [];
  let statsBox: HTMLElement | null = null;
  scope.add(() => {
    chart1?.destroy();
    chart2?.destroy();
    ctx.focusSession(null);
  });

  const load = async (): Promise<boolean> => {
    try {
      // The ledger is extra: the session shows without it.
      [series, breaks] = await Promise.all([ctx.api.series(id), ctx.api.breaks(id).then((b) => b.breaks, () => [] as CacheBreak[])]);
      markers = breakMarkers(breaks);
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        root.replaceChildren(
          el("h1", {}, "No such session"),
          el("p", {}, `Session ${id} has no stored requests (yet, or any more). It opens here as soon as one is recorded. `, el("a", { href: "#/sessions" }, "All sessions")),
        );
      } else root.replaceChildren(el("p", { class: "error" }, "Could not load the session: " + errorText(e)));
      return false;
    }
  };

  const render = async () => {
    const s = series.session;
    points = series.points;
    data = contextChartData(series);
    ctx.focusSession(s, series.folds[series.folds.length - 1] ?? null);
    chart1?.destroy();
    chart2?.destroy();
    chart1 = chart2 = null;

    const box1 = el("div", { class: "chart-box", id: "context-chart", "data-points": String(series.points.length), "data-threshold": String(series.thresholdTokens) });
    const box2 = el("div", { class: "chart-box", id: "cold-chart" });
    const declined = series.folds.filter((f) => f.decision === "decline").length;
    const del = button(
      "Delete this session",
      async () => {
        const ok = await ctx.confirm({
          title: "Delete this session?",
          body: `Session ${s.title || s.id}: ${formatInt(s.requests)} requests and ${formatInt(series.folds.length)} rewrites are removed from tollgate.db. This cannot be undone.`,
          confirmLabel: "Delete",
          danger: true,
        });
        if (!ok) return;
        try {
          await ctx.api.deleteSession(s.id);
          ctx.toast("Session deleted", "good");
          ctx.dataChanged();
          ctx.navigate({ view: "sessions" });
        } catch (e) {
          ctx.toast("Could not delete: " + errorText(e), "warn");
        }
      },
      { class: "danger" },
    );
    statsBox = el("div", { class: "stats", id: "session-stats" }, ...stats(s, declined));
    root.replaceChildren(
      el("p", { class: "crumbs" }, el("a", { href: "#/sessions" }, "Sessions"), " / "),
      el("h1", { title: s.id }, s.title || s.id),
      el("p", { class: "muted" }, [s.harness, s.profile, s.model].filter(Boolean).join(" · "), s.pricedByDefault ? el("span", { class: "badge warn" }, "priced by default") : null),
      statsBox,
      el(
        "section",
        { class: "card" },
        el("h2", {}, "Context per request"),
        el(
          "p",
          { class: "muted" },
          series.thresholdTokens > 0 ? `Rewrite at ${formatTokens(series.thresholdTokens)}` : "No rewrite threshold reported",
          series.contextWindow > 0 ? ` · window ${formatTokens(series.contextWindow)}` : "",
        ),
        points.length > 0 ? box1 : el("p", { class: "muted" }, "No main-conversation requests recorded yet."),
      ),
      el(
        "section",
        { class: "card" },
        el("h2", {}, "Cold tokens per fold"),
        series.folds.length > 0 ? box2 : el("p", { class: "muted" }, "No rewrites yet: each fold's predicted and actual cold tokens show here."),
      ),
      el(
        "section",
        { class: "card" },
        el("h2", {}, "Rewrites"),
        series.folds.length > 0
          ? el("div", { class: "table-box", id: "rewrites-table" }, dataTable(foldColumns, [...series.folds].reverse(), { rowKey: (f) => f.rewrite }))
          : el("p", { class: "muted" }, "None asked or imported."),
      ),
      el("section", { class: "card", id: "breaks-section" }, el("h2", {}, "Cache breaks"), breaksSection(breaks)),
      el(
        "section",
        { class: "card actions-row" },
        exportLink(ctx, "Export JSON", ctx.api.exportURL("json", s.id), `${s.id}.json`),
        exportLink(ctx, "Export CSV", ctx.api.exportURL("csv", s.id), `${s.id}.csv`),
        button("Re-price with today's prices", async () => {
          try {
            const r = await ctx.api.reprice(s.id);
            ctx.toast(`Re-priced ${formatCount(r.requests, "request", "requests")}`, "good");
            if (await load()) await render();
          } catch (e) {
            ctx.toast("Could not re-price: " + errorText(e), "warn");
          }
        }),
        del,
      ),
    );
    try {
      const charts = await loadCharts();
      if (!scope.alive) return;
      if (points.length > 0) chart1 = charts.contextChart(box1, data, () => points, () => markers);
      if (series.folds.length > 0) chart2 = charts.coldChart(box2, coldChartData(series.folds));
    } catch (e) {
      box1.append(el("p", { class: "error" }, "The chart could not be drawn: " + errorText(e)));
    }
  };

  if (!(await load())) {
    // A session announced before its first request (e.g. a simulation just
    // started) appears as soon as a request lands.
    if (!scope.alive) return;
    const stop = () => {
      waitFor();
      waitImport();
    };
    const waitFor = ctx.bus.on("request.recorded", (ev) => {
      if (ev.session !== id) return;
      stop();
      void sessionView(id)(root, ctx, scope);
    });
    const waitImport = ctx.bus.on("logs.imported", (ev) => {
      if (!ev.sessions.includes(id)) return;
      stop();
      void sessionView(id)(root, ctx, scope);
    });
    scope.add(stop);
    return;
  }
  if (!scope.alive) return;
  await render();

  // Live: new requests extend chart 1 at once; anything structural (a new
  // fold, a decision) reloads the series, at most every 2 s.
  const reload = throttle(async () => {
    if ((await load()) && scope.alive) await render();
  }, 2000);
  scope.add(reload.cancel);
  // The figures above the charts follow along from the light session read.
  const refreshStats = throttle(async () => {
    try {
      const s = await ctx.api.session(id);
      if (scope.alive && statsBox) statsBox.replaceChildren(...stats(s, series.folds.filter((f) => f.decision === "decline").length));
    } catch {
      // the next reload says what happened
    }
  }, 2000);
  scope.add(refreshStats.cancel);
  scope.add(
    ctx.bus.on("request.recorded", (ev) => {
      if (ev.session !== id) return;
      refreshStats();
      const next = chart1 ? appendRecorded(data, ev) : null;
      if (next && chart1) {
        data = next;
        // The event has no token breakdown: NaN says "not known" to the tooltip.
        points = [...points, { seq: ev.seq, at: ev.at, purpose: ev.purpose, contextTokens: ev.contextTokens, input: NaN, cacheRead: NaN, cacheWrite: NaN, output: NaN, costUSD: ev.costUSD }];
        chart1.setData(data);
        root.querySelector("#context-chart")?.setAttribute("data-points", String(data.seq.length));
      } else if (!chart1) reload();
    }),
  );
  scope.add(ctx.bus.on("rewrite.decided", (ev) => ev.session === id && reload()));
  scope.add(ctx.bus.on("break.detected", (ev) => ev.session === id && reload()));
  // Lines the followed logs brought: the whole series, since an import
  // carries no per-request event.
  scope.add(
    ctx.bus.on("logs.imported", (ev) => {
      if (!ev.sessions.includes(id)) return;
      refreshStats();
      reload();
    }),
  );
};
