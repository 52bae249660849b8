// Overview: 30 days of spend per day (in the user's time zone), stacked by
// what it paid for, and the totals that say whether the cache is working.

import { loadCharts } from "../components/chartLoader";
import type { ChartHandle } from "../components/charts";
import { el, errorText, throttle } from "../components/dom";
import { emptyState } from "../components/emptyState";
import type { View } from "../context";
import { formatPercent, formatTokens, formatUSD, formatInt, todayKey, userTimeZone } from "../format";
import { spendChartData } from "../model/chartData";
import type { Spend } from "../model/types";

const DAYS = 30;

function card(label: string, value: string, title?: string, id?: string): HTMLElement {
  return el("div", { class: "card stat", title, id }, el("div", { class: "stat-value" }, value), el("div", { class: "stat-label" }, label));
}

export const overviewView: View = async (root, ctx, scope) => {
  const tz = userTimeZone();
  let chart: ChartHandle | null = null;
  scope.add(() => chart?.destroy());

  const draw = async () => {
    let spend: Spend;
    let hasSessions: boolean;
    try {
      const [s, page] = await Promise.all([ctx.api.spend("day", tz, DAYS), ctx.api.sessions(1)]);
      spend = s;
      hasSessions = page.sessions.length > 0;
    } catch (e) {
      root.replaceChildren(el("p", { class: "error" }, "Could not load spend: " + errorText(e)));
      return;
    }
    if (!scope.alive) return;
    chart?.destroy();
    chart = null;
    if (!hasSessions && spend.totals.requests === 0) {
      root.replaceChildren(emptyState(ctx, "No sessions yet", "tollgate has not recorded a request yet."));
      return;
    }
    const t = spend.totals;
    const chartBox = el("div", { class: "chart-box", id: "spend-chart" });
    root.replaceChildren(
      el("h1", {}, "Overview"),
      el("p", { class: "muted" }, `Last ${DAYS} days, days in ${spend.tz || tz}`),
      el(
        "div",
        { class: "stats" },
        card("spent", formatUSD(t.totalUSD), `${formatInt(t.requests)} requests`, "stat-total"),
        card("cache hit rate", formatPercent(spend.hitRate), "cache reads / all prompt tokens"),
        card("requests", formatInt(t.requests)),
        card("folds", formatInt(spend.folds), "context rewrites that ran"),
        card("declined rewrites", formatInt(spend.declined)),
        card("cold tokens avoided", formatTokens(spend.avoidedColdTokens), `${formatInt(spend.avoidedColdTokens)} tokens the declined rewrites would have re-read in full`),
        card("break premium", formatUSD(t.breakPremiumUSD), "what folds cost beyond a warm cache"),
      ),
      el("section", { class: "card" }, el("h2", {}, "Spend per day"), chartBox),
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
};
