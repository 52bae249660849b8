// The mode pill in the header and its menu. It shows the effective mode of
// the session open in the Session view (else the global mode) and switches
// the same scope through PUT /v1/mode.

import type { Api } from "../api";
import type { EventBus } from "../events";
import { pillView, type PillView } from "../model/pill";
import type { EnginesList, Fold, Health, Mode, ModeState, Session } from "../model/types";
import { el, errorText, throttle } from "./dom";

export class ModePill {
  readonly element: HTMLElement;
  private button: HTMLButtonElement;
  private menu: HTMLElement;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private mode: ModeState | null = null;
  private engines: EnginesList | null = null;
  /** The session the Session view shows; null = global scope. */
  private focused: Session | null = null;
  private focusedFold: Fold | null = null;
  /** The latest session, for the context line when no session is open. */
  private latest: Session | null = null;
  private latestFold: Fold | null = null;
  private open = false;

  constructor(
    private readonly api: Api,
    bus: EventBus,
    private readonly toast: (text: string, tone?: "info" | "good" | "warn") => void,
  ) {
    this.button = el("button", { type: "button", class: "pill", id: "mode-pill", "aria-haspopup": "menu", "aria-expanded": "false" });
    this.button.addEventListener("click", () => (this.open ? this.close() : void this.openMenu()));
    this.menu = el("div", { class: "pill-menu", role: "menu", id: "mode-menu" });
    this.menu.hidden = true;
    this.element = el("div", { class: "pill-wrap" }, this.button, this.menu);
    const refresh = throttle(() => void this.refresh(), 300);
    bus.on("mode.changed", refresh);
    bus.on("engines.changed", (e) => {
      if (this.mode) this.mode = { ...this.mode, armed: e.armed };
      this.render();
      refresh();
    });
    bus.onConnection((up) => up && refresh());
    document.addEventListener("click", (ev) => {
      if (this.open && !this.element.contains(ev.target as Node)) this.close();
    });
    document.addEventListener("keydown", (ev) => {
      if (this.open && ev.key === "Escape") {
        ev.preventDefault();
        this.close();
        this.button.focus();
      }
    });
    // Leases expire without anyone calling: look again now and then.
    setInterval(() => void this.refresh(), 30_000);
  }

  /** Draws the pill from /v1/health at once, before the first /v1/mode answer. */
  seed(h: Health): void {
    if (this.mode) return;
    this.mode = { mode: h.mode, label: h.armed ? `Cache: ${h.mode}` : "Cache: not armed", scope: "global", armed: h.armed, global: h.mode };
    this.render();
  }

  /** The session open in the Session view, or null when none is. */
  focus(session: Session | null, lastFold: Fold | null = null): void {
    const changed = this.focused?.id !== session?.id;
    this.focused = session;
    this.focusedFold = lastFold;
    if (changed) void this.refresh();
    else this.render();
  }

  async refresh(): Promise<void> {
    try {
      this.mode = this.focused ? await this.api.mode(this.focused.id, this.focused.profile) : await this.api.mode();
      this.render();
    } catch (e) {
      this.button.title = "Mode unknown: " + errorText(e);
    }
  }

  private view(): PillView | null {
    if (!this.mode) return null;
    return pillView({
      mode: this.mode,
      engines: this.engines,
      session: this.focused ?? this.latest,
      lastFold: this.focused ? this.focusedFold : this.latestFold,
      now: Date.now(),
    });
  }

  private render(): void {
    const v = this.view();
    if (!v) return;
    this.button.dataset["state"] = v.state;
    this.button.title = v.tooltip;
    this.button.setAttribute("aria-label", `${v.label}. ${v.tooltip}`);
    this.button.replaceChildren(
      el("span", { class: "glyph", "aria-hidden": "true" }, v.glyph),
      el("span", { class: "label" }, v.label),
      el("span", { class: "chev", "aria-hidden": "true" }, "⌄"),
    );
    if (this.open) this.renderMenu(v);
  }

  private renderMenu(v: PillView): void {
    const scopeText = this.focused ? `Mode for this session (${this.focused.title || this.focused.id})` : "Mode for all sessions";
    const items = v.items.map((item) => {
      const b = el(
        "button",
        { type: "button", role: "menuitemradio", "aria-checked": String(item.checked), "data-mode": item.mode, class: "pm-mode" },
        el("span", { class: "check", "aria-hidden": "true" }, item.checked ? "✓" : ""),
        el("span", { class: "pm-title" }, item.title),
        el("span", { class: "pm-hint" }, item.hint),
      );
      b.addEventListener("click", () => void this.switchTo(item.mode));
      return b;
    });
    const children: (HTMLElement | null)[] = [
      v.contextLine ? el("div", { class: "pm-line", "data-line": "context" }, v.contextLine) : null,
      v.cacheLine ? el("div", { class: "pm-line", "data-line": "cache" }, v.cacheLine) : null,
      v.lastRewriteLine ? el("div", { class: "pm-line", "data-line": "last-rewrite" }, v.lastRewriteLine) : null,
      el("div", { class: "pm-line armed", "data-line": "armed" }, v.armedLine),
      el("div", { class: "pm-scope" }, scopeText),
      ...items,
    ];
    if (this.focused && this.mode?.sessionMode) {
      const clear = el("button", { type: "button", role: "menuitem", class: "pm-clear" }, `Use the default (${this.mode.profileMode || this.mode.global})`);
      clear.addEventListener("click", () => void this.switchTo(""));
      children.push(clear);
    }
    this.menu.replaceChildren(...children.filter((c): c is HTMLElement => c !== null));
  }

  private async openMenu(): Promise<void> {
    this.open = true;
    this.menu.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    const v = this.view();
    if (v) this.renderMenu(v);
    // What the menu says comes from three reads; none of them blocks opening.
    const jobs: Promise<unknown>[] = [
      this.api.engines().then((e) => (this.engines = e)).catch(() => undefined),
      this.refresh(),
    ];
    if (!this.focused) jobs.push(this.loadLatest());
    else {
      // The open session's figures move with every request: read them again.
      const id = this.focused.id;
      jobs.push(
        this.api
          .session(id)
          .then((s) => {
            if (this.focused?.id === id) this.focused = s;
          })
          .catch(() => undefined),
      );
    }
    await Promise.all(jobs);
    this.render();
    // The cache countdown ticks while the menu is open.
    clearInterval(this.ticker);
    this.ticker = setInterval(() => {
      if (!this.open) clearInterval(this.ticker);
      else this.render();
    }, 1000);
  }

  private async loadLatest(): Promise<void> {
    try {
      const page = await this.api.sessions(1);
      this.latest = page.sessions[0] ?? null;
      this.latestFold = null;
      if (this.latest && this.latest.folds + this.latest.rewrites > 0) {
        const series = await this.api.series(this.latest.id);
        this.latestFold = series.folds[series.folds.length - 1] ?? null;
      }
    } catch {
      // the lines are optional
    }
  }

  private close(): void {
    clearInterval(this.ticker);
    this.open = false;
    this.menu.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
  }

  private async switchTo(mode: Mode | ""): Promise<void> {
    try {
      this.mode = this.focused
        ? await this.api.setMode("session", mode, { session: this.focused.id })
        : await this.api.setMode("global", mode);
      this.render();
      this.close();
      this.toast(mode ? `Mode: ${mode}` : "Session mode cleared", "good");
    } catch (e) {
      this.toast("Could not switch the mode: " + errorText(e), "warn");
    }
  }
}

/** Today's spend beside the pill. */
export class TodaySpend {
  readonly element: HTMLElement;

  constructor(
    private readonly load: () => Promise<number | null>,
    bus: EventBus,
    private readonly format: (usd: number) => string,
  ) {
    this.element = el("span", { class: "today", id: "today-spend", title: "Spend today, in your time zone" });
    // Every way a request reaches tollgate moves it: recorded over the API
    // or its telemetry (request.recorded), or read from a followed log
    // (logs.imported, and the history import's progress).
    const refresh = throttle(() => void this.refresh(), 2000);
    bus.on("request.recorded", refresh);
    bus.on("logs.imported", refresh);
    bus.on("history.progress", refresh);
    bus.onConnection((up) => up && refresh());
  }

  async refresh(): Promise<void> {
    try {
      const usd = await this.load();
      this.element.replaceChildren(el("span", { class: "muted" }, "Today "), el("strong", {}, usd === null ? "—" : this.format(usd)));
    } catch {
      this.element.textContent = "";
    }
  }
}
