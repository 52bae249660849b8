// Sessions: every priced session, sortable, updated live as requests land.

import { el, errorText, throttle } from "../components/dom";
import { emptyState } from "../components/emptyState";
import { dataTable, type Column } from "../components/table";
import type { View } from "../context";
import { formatAgo, formatDateTime, formatInt, formatPercent, formatTokens, formatUSD } from "../format";
import { mergeRefetched, reconnectGate } from "../model/reconnect";
import { routeHash } from "../model/route";
import { nextSort, sortSessions, totalTokens, upsertSession, type SessionSortKey, type SortSpec } from "../model/sort";
import type { Session } from "../model/types";

export function sessionColumns(): Column<Session, SessionSortKey>[] {
  return [
    {
      key: "title",
      label: "Session",
      sortable: true,
      cell: (s) => el("a", { href: routeHash({ view: "session", id: s.id }), title: s.id }, s.title || s.id),
    },
    { key: "harness", label: "Harness", sortable: true, cell: (s) => s.harness || "—" },
    {
      key: "profile",
      label: "Profile",
      sortable: true,
      cell: (s) =>
        el("span", {}, s.profile || "—", s.pricedByDefault ? el("span", { class: "badge warn", title: "No profile or built-in price matched: priced with the default profile" }, "priced by default") : null),
    },
    { key: "model", label: "Model", sortable: true, cell: (s) => s.model || "—" },
    { key: "requests", label: "Requests", numeric: true, sortable: true, cell: (s) => formatInt(s.requests) },
    { key: "tokens", label: "Tokens", numeric: true, sortable: true, cell: (s) => el("span", { title: formatInt(totalTokens(s)) + " tokens" }, formatTokens(totalTokens(s))) },
    { key: "hitRate", label: "Hit rate", numeric: true, sortable: true, cell: (s) => formatPercent(s.hitRate) },
    { key: "costUSD", label: "Spend", numeric: true, sortable: true, cell: (s) => formatUSD(s.costUSD) },
    { key: "folds", label: "Folds", numeric: true, sortable: true, cell: (s) => formatInt(s.folds) },
    { key: "lastAt", label: "Last activity", sortable: true, cell: (s) => el("span", { title: formatDateTime(s.lastAt) }, formatAgo(s.lastAt)) },
  ];
}

export const sessionsView: View = async (root, ctx, scope) => {
  let sessions: Session[] = [];
  let next: string | null = null;
  let sort: SortSpec = { key: "lastAt", dir: "desc" };
  const tableBox = el("div", { class: "table-box", id: "sessions-table" });
  const more = el("button", { type: "button", class: "more" }, "Load more");
  more.addEventListener("click", async () => {
    if (!next) return;
    try {
      const page = await ctx.api.sessions(50, next);
      sessions = [...sessions, ...page.sessions.filter((s) => !sessions.some((x) => x.id === s.id))];
      next = page.next;
      render();
    } catch (e) {
      ctx.toast("Could not load more: " + errorText(e), "warn");
    }
  });

  const render = () => {
    if (sessions.length === 0) {
      root.replaceChildren(emptyState(ctx, "No sessions yet", "Sessions appear here as soon as a harness records its first request."));
      return;
    }
    if (!root.contains(tableBox)) root.replaceChildren(el("h1", {}, "Sessions"), tableBox, more);
    tableBox.replaceChildren(
      dataTable(sessionColumns(), sortSessions(sessions, sort), {
        sort,
        onSort: (key) => {
          sort = nextSort(sort, key);
          render();
        },
        rowKey: (s) => s.id,
        className: "sessions",
      }),
    );
    more.hidden = next === null;
  };

  try {
    const page = await ctx.api.sessions(50);
    sessions = page.sessions;
    next = page.next;
  } catch (e) {
    root.replaceChildren(el("p", { class: "error" }, "Could not load sessions: " + errorText(e)));
    return;
  }
  if (!scope.alive) return;
  render();

  // Live: refetch each session that recorded something, at most every 1.5 s.
  const dirty = new Set<string>();
  const flush = throttle(async () => {
    const ids = [...dirty];
    dirty.clear();
    for (const id of ids) {
      try {
        const s = await ctx.api.session(id);
        sessions = upsertSession(sessions, s);
      } catch {
        // a session deleted meanwhile: drop it
        sessions = sessions.filter((x) => x.id !== id);
      }
    }
    if (scope.alive) render();
  }, 1500);
  scope.add(flush.cancel);
  scope.add(
    ctx.bus.on("request.recorded", (ev) => {
      dirty.add(ev.session);
      flush();
    }),
  );
  // Rows the followed logs brought (app/follow) name their sessions too; a
  // history chunk names many, and one list read serves them all.
  const refetchList = throttle(() => {
    ctx.api.sessions(Math.max(50, sessions.length)).then(
      (page) => {
        sessions = mergeRefetched(sessions, page.sessions);
        next = page.next;
        if (scope.alive) render();
      },
      () => undefined, // the next event tries again
    );
  }, 1500);
  scope.add(refetchList.cancel);
  scope.add(
    ctx.bus.on("logs.imported", (ev) => {
      if (ev.sessions.length > 20) return refetchList();
      for (const id of ev.sessions) dirty.add(id);
      flush();
    }),
  );
  // After the event stream reconnects, what was recorded meanwhile (or
  // imported by another process) was never announced: fetch the list again.
  const gate = reconnectGate();
  scope.add(
    ctx.bus.onConnection((up) => {
      if (!gate(up)) return;
      ctx.api.sessions(Math.max(50, sessions.length)).then(
        (page) => {
          sessions = mergeRefetched(sessions, page.sessions);
          next = page.next;
          if (scope.alive) render();
        },
        (e: unknown) => ctx.toast("Could not refresh the sessions: " + errorText(e), "warn"),
      );
    }),
  );
};
