// Overview: 30 days of spend per day (in the user's time zone), stacked by
// what it paid for, the totals that say whether the cache is working, and
// what was lost to cache breaks — by cause, in plain words, and by session.

import { loadCharts } from "../components/chartLoader";
import type { ChartHandle } from "../components/charts";
import { append, el, errorText, throttle } from "../components/dom";
import { emptyState } from "../components/emptyState";
import type { View } from "../context";
import { formatPercent, formatTokens, formatUSD, formatInt, todayKey, userTimeZone } from "../format";
import { causeSplit, dominantLine } from "../model/breaks";
import { historyBanner } from "../model/follow";
import { spendChartData } from "../model/chartData";
import type { BreakSummary, Harness, HistoryProgress, Spend } from "../model/types";

const DAYS = 30;

function card(label: string, value: string, title?: string, id?: string): HTMLElement {
  return el("div", { class: "card stat", title, id }, el("div", { class: "stat-value" }, value), el("div", { class: "stat-label" }, label));
}

/** "Lost to cache breaks": the period's premium split by cause, the plain-words line, the costliest sessions. */
function breaksCard(sum: BreakSummary | null): HTMLElement {
  const box = el("section", { class: "card", id: "breaks-overview" }, el("h2", {}, "Lost to cache breaks"));
  if (!sum) {
    box.append(el("p", { class: "muted" }, "The cache-break ledger could not be read."));
    return box;
  }
  if (sum.breaks === 0) {
    box.append(el("p", { class: "muted" }, `No cache breaks in the last ${sum.days} days.`));
    return box;
  }
  const split = causeSplit(sum);
  const line = dominantLine(sum, formatUSD);
  append(
    box,
    el(
      "p",
      { id: "breaks-headline" },
      el("strong", {}, formatUSD(sum.premiumUSD)),
      ` beyond cache hits: ${formatInt(sum.breaks)} ${sum.breaks === 1 ? "break" : "breaks"} re-billed ${formatTokens(sum.rebilledTokens)} tokens in the last ${sum.days} days`,
    ),
    line ? el("p", { class: "dominant", id: "breaks-dominant" }, line) : null,
    el(
      "div",
      { class: "split-bar", id: "breaks-split", role: "img", "aria-label": split.map((c) => `${c.label} ${formatPercent(c.share)}`).join(", ") },
      ...split.map((c) => el("span", { style: `--c:${c.color};width:${(c.share * 100).toFixed(2)}%`, title: `${c.label}: ${formatUSD(c.premiumUSD)}`, "data-cause": c.cause })),
    ),
    el(
      "div",
      { class: "split-legend" },
      ...split.map((c) =>
        el(
          "span",
          { class: "legend-item", title: c.explain, "data-cause": c.cause },
          el("span", { class: "swatch", style: `--c:${c.color}` }),
          `${c.label}: ${formatUSD(c.premiumUSD)} · ${formatInt(c.breaks)} ${c.breaks === 1 ? "break" : "breaks"} · ${formatTokens(c.rebilledTokens)} tokens`,
        ),
      ),
    ),
    el("h3", {}, "Costliest sessions"),
    el(
      "table",
      { class: "data", id: "breaks-sessions" },
      el("thead", {}, el("tr", {}, el("th", {}, "Session"), el("th", { class: "num" }, "Breaks"), el("th", { class: "num" }, "Re-billed"), el("th", { class: "num" }, "Premium"), el("th", {}, "Mostly"))),
      el(
        "tbody",
        {},
        ...sum.sessions.map((s) =>
          el(
            "tr",
            { "data-row": s.session },
            el("td", {}, el("a", { href: "#/sessions/" + encodeURIComponent(s.session), title: s.session }, s.title || s.session)),
            el("td", { class: "num" }, formatInt(s.breaks)),
            el("td", { class: "num" }, formatTokens(s.rebilledTokens)),
            el("td", { class: "num" }, formatUSD(s.premiumUSD)),
            el("td", {}, split.find((c) => c.cause === s.topCause)?.label ?? s.topCause),
          ),
        ),
      ),
    ),
  );
  return box;
}

/**
 * The first-start import of the logs tollgate found (app/follow): what was
 * found, a progress bar and the time left; then what it brought. An empty
 * placeholder when there is nothing to say, so events can fill it in place.
 */
function historyBox(h: HistoryProgress | null, harnesses: readonly Harness[]): HTMLElement {
  const b = historyBanner(h, harnesses);
  if (!b) return el("section", { id: "history-import", hidden: true });
  const bar = el("progress", { max: 1000, "aria-label": "history import" });
  bar.value = Math.round(b.fraction * 1000);
  return el(
    "section",
    { class: "card history", id: "history-import", role: "status", "aria-live": "polite", "data-state": b.importing ? "importing" : "done" },
    el("p", { class: "history-headline" }, b.headline),
    b.importing ? el("div", { class: "progress" }, bar) : null,
    // Imported history can all be older than the charts' 30 days: the
    // sessions list has every session, whatever its age.
    el("p", { class: "muted history-detail" }, b.detail, b.importing ? null : " · ", b.importing ? null : el("a", { href: "#/sessions" }, "see the sessions")),
  );
}

export const overviewView: View = async (root, ctx, scope) => {
  const tz = userTimeZone();
  let chart: ChartHandle | null = null;
  scope.add(() => chart?.destroy());
  let history: HistoryProgress | null = null;
  const showHistory = () => root.querySelector("#history-import")?.replaceWith(historyBox(history, ctx.harnesses));

  const draw = async () => {
    let spend: Spend;
    let hasSessions: boolean;
    let breaks: BreakSummary | null;
    try {
      const [s, page, b] = await Promise.all([
        ctx.api.spend("day", tz, DAYS),
        ctx.api.sessions(1),
        ctx.api.breakSummary(tz, DAYS, 5).catch(() => null),
        ctx.api.follow().then(
          (f) => (history = f.history),
          () => undefined, // an older tollgate: no banner
        ),
      ]);
      spend = s;
      hasSessions = page.sessions.length > 0;
      breaks = b;
    } catch (e) {
      root.replaceChildren(el("p", { class: "error" }, "Could not load spend: " + errorText(e)));
      return;
    }
    if (!scope.alive) return;
    chart?.destroy();
    chart = null;
    if (!hasSessions && spend.totals.requests === 0) {
      root.replaceChildren(historyBox(history, ctx.harnesses), emptyState(ctx, "No sessions yet", "tollgate has not recorded a request yet."));
      return;
    }
    const t = spend.totals;
    const chartBox = el("div", { class: "chart-box", id: "spend-chart" });
    root.replaceChildren(
      el("h1", {}, "Overview"),
      el("p", { class: "muted" }, `Last ${DAYS} days, days in ${spend.tz || tz}`),
      historyBox(history, ctx.harnesses),
      el(
        "div",
        { class: "stats" },
        card("spent", formatUSD(t.totalUSD), `${formatInt(t.requests)} requests`, "stat-total"),
        // No request, no rate: "0%" would say the cache missed everything.
        card("cache hit rate", t.requests > 0 ? formatPercent(spend.hitRate) : "—", "cache reads / all prompt tokens"),
        card("requests", formatInt(t.requests)),
        card("folds", formatInt(spend.folds), "context rewrites that ran"),
        card("declined rewrites", formatInt(spend.declined)),
        card("cold tokens avoided", formatTokens(spend.avoidedColdTokens), `${formatInt(spend.avoidedColdTokens)} tokens the declined rewrites would have re-read in full`),
        card("break premium", formatUSD(t.breakPremiumUSD), "what folds cost beyond a warm cache"),
      ),
      el("section", { class: "card" }, el("h2", {}, "Spend per day"), chartBox),
      breaksCard(breaks),
    );
    try {
      const charts = await loadCharts();
      if (!scope.alive) return;
      chart = charts.spendChart(chartBox, spendChartData(spend, todayKey(new Date(), tz), DAYS));
    } catch (e) {
      chartBox.append(el("p", { class: "error" }, "The chart could not be drawn: " + errorText(e)));
    }
  };

  await draw();
  const redraw = throttle(() => void draw(), 5000);
  scope.add(redraw.cancel);
  scope.add(ctx.bus.on("request.recorded", redraw));
  scope.add(ctx.bus.on("break.detected", redraw));
  // The followed logs: new rows redraw; the history's progress moves the
  // bar in place, and its end redraws at once with everything it brought.
  scope.add(ctx.bus.on("logs.imported", redraw));
  // Events sent while the stream was down (a restart) never arrive: a
  // history that ended meanwhile would stay "importing". Read again.
  scope.add(ctx.bus.onConnection((up) => up && void draw()));
  scope.add(
    ctx.bus.on("history.progress", (h) => {
      const was = history?.state;
      history = h;
      if (h.state === "done" && was !== "done") {
        redraw.cancel();
        void draw();
      } else showHistory();
    }),
  );
};
