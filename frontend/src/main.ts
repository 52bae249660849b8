// The shell: header (name, tabs, today's spend, the mode pill), the view of
// the current hash route, the question dialog over everything, and the
// wiring of guard events from the one transport to the views.

import "./style.css";
import { Api } from "./api";
import { confirmDialog } from "./components/confirm";
import { el, Scope } from "./components/dom";
import { ModePill, TodaySpend } from "./components/pill";
import { RewriteDialogs } from "./components/rewriteDialog";
import { Toasts } from "./components/toast";
import type { AppContext, View } from "./context";
import { EventBus } from "./events";
import { formatUSD, todayKey, userTimeZone } from "./format";
import { parseRoute, routeHash, tabOf, type Route } from "./model/route";
import type { Harness, Health } from "./model/types";
import { ApiError, defaultTransport } from "./transport";
import { dataView } from "./views/data";
import { integrationsView } from "./views/integrations";
import { loginPage } from "./views/login";
import { overviewView } from "./views/overview";
import { sessionView } from "./views/session";
import { sessionsView } from "./views/sessions";
import { settingsView } from "./views/settings";

const TABS: { view: Exclude<Route["view"], "session">; label: string }[] = [
  { view: "overview", label: "Overview" },
  { view: "sessions", label: "Sessions" },
  { view: "settings", label: "Settings" },
  { view: "integrations", label: "Integrations" },
  { view: "data", label: "Data" },
];

function viewFor(r: Route): View {
  switch (r.view) {
    case "overview":
      return overviewView;
    case "sessions":
      return sessionsView;
    case "session":
      return sessionView(r.id);
    case "settings":
      return settingsView;
    case "integrations":
      return integrationsView;
    case "data":
      return dataView;
  }
}

const app = document.getElementById("app")!;
const transport = defaultTransport();
let loggedOut = false;

/** Any 401 replaces the whole page by the log-in instructions. */
function showLogin(): void {
  if (loggedOut) return;
  loggedOut = true;
  app.replaceChildren(el("header", { class: "top" }, el("span", { class: "brand" }, "tollgate")), loginPage());
}

const api = new Api(transport, showLogin);
const bus = new EventBus();

function startShell(health: Health, harnesses: readonly Harness[]): void {
  const toasts = new Toasts(document.body);
  const toast = (text: string, tone?: "info" | "good" | "warn") => toasts.show(text, tone);
  const pill = new ModePill(api, bus, toast);
  pill.seed(health);
  const tz = userTimeZone();
  const today = new TodaySpend(
    async () => {
      const spend = await api.spend("day", tz, 1);
      return spend.rows.find((r) => r.key === todayKey(new Date(), tz))?.totalUSD ?? 0;
    },
    bus,
    formatUSD,
  );
  const tabs = TABS.map((t) => el("a", { href: routeHash({ view: t.view } as Route), "data-tab": t.view }, t.label));
  const banner = el("div", { class: "banner", role: "status" }, "Live updates paused: reconnecting to tollgate…");
  banner.hidden = true;
  const main = el("main", { id: "view" });
  app.replaceChildren(
    el("header", { class: "top" }, el("a", { class: "brand", href: "#/overview" }, "tollgate"), el("nav", { class: "tabs" }, ...tabs), el("span", { class: "spacer" }), today.element, pill.element),
    banner,
    main,
  );

  let current: Scope | null = null;
  const ctx: AppContext = {
    api,
    bus,
    host: transport.host,
    harnesses,
    navigate: (r) => {
      const h = routeHash(r);
      if (location.hash === h) void show();
      else location.hash = h;
    },
    toast,
    confirm: (opts) => confirmDialog(document.body, opts),
    focusSession: (s, fold) => pill.focus(s, fold ?? null),
    dataChanged: () => void today.refresh(),
  };

  const show = async () => {
    if (loggedOut) return;
    current?.dispose();
    const scope = new Scope();
    current = scope;
    const route = parseRoute(location.hash);
    for (const a of tabs) a.classList.toggle("active", a.dataset["tab"] === tabOf(route));
    const root = el("div", { class: "view", "data-view": route.view });
    main.replaceChildren(root);
    root.append(el("p", { class: "muted loading" }, "Loading…"));
    try {
      await viewFor(route)(root, ctx, scope);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return; // showLogin took over
      root.replaceChildren(el("p", { class: "error" }, "Something went wrong: " + String(e)));
    }
  };
  window.addEventListener("hashchange", () => void show());

  // The dialog sits above every view; in the window the Go side also raises
  // the window and notifies when it is not focused.
  new RewriteDialogs(document.body, api, bus, toast, harnesses, (n) => {
    document.title = n > 0 ? `(${n}) tollgate` : "tollgate";
  });
  transport.subscribe(
    (name, data) => bus.dispatch(name, data),
    (up) => {
      banner.hidden = up;
      bus.connection(up);
    },
  );

  const reportFocus = () => transport.reportFocus(document.hasFocus() && document.visibilityState === "visible");
  window.addEventListener("focus", reportFocus);
  window.addEventListener("blur", reportFocus);
  document.addEventListener("visibilitychange", reportFocus);
  reportFocus();

  void pill.refresh();
  void today.refresh();
  void show();
}

async function boot(): Promise<void> {
  let health: Health;
  let harnesses: readonly Harness[];
  try {
    // The harness list only names things: without it the views show bare names.
    [health, harnesses] = await Promise.all([api.health(), api.harnesses().then((l) => l.harnesses, () => [])]);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return; // the login page is up
    app.replaceChildren(
      el("main", { class: "empty" }, el("h1", {}, "tollgate is not reachable"), el("p", {}, String(e)), el("p", {}, "Start it with `tollgate` or `tollgate serve`, then reload.")),
    );
    return;
  }
  startShell(health, harnesses);
}

void boot();
