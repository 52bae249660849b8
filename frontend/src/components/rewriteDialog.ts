// The question dialog (ARCHITECTURE.md, "The UI"): one at a time over whatever view is
// open, the rest queued. A question decided elsewhere (another UI, the
// timeout, a mode switch) closes with a note. Enter = Allow once, Esc = Not now;
// Enter counts only once a question has been up for ENTER_GUARD_MS, so a
// key typed elsewhere as the window rises never allows a rewrite.

import type { Api } from "../api";
import type { EventBus } from "../events";
import { countdownText, decidedElsewhereNote, dialogModel, QuestionQueue, secondsLeft } from "../model/dialog";
import type { AnswerChoice, DecidedRewrite, Harness, PendingRewrite } from "../model/types";
import { ApiError } from "../transport";
import { el, errorText } from "./dom";

const CHOICES: { choice: AnswerChoice; label: string; primary?: boolean }[] = [
  { choice: "allow-once", label: "Allow once", primary: true },
  { choice: "not-now", label: "Not now" },
  { choice: "always-session", label: "Always allow (this session)" },
];

const ANSWERED_NOTE: Record<AnswerChoice, string> = {
  "allow-once": "Allowed once",
  "not-now": "Declined: not now (asks again next turn)",
  "always-session": "Allowed; this session now runs in auto mode",
};

/** How long a question decided elsewhere stays up with its note. */
const NOTE_MS = 1800;
/** A question is dropped locally this long after its deadline if no decision arrived. */
const GRACE_MS = 5000;
/** Enter allows only after the question has been shown this long. */
const ENTER_GUARD_MS = 1000;

export class RewriteDialogs {
  private queue = new QuestionQueue();
  private overlay: HTMLElement | null = null;
  private countdownEl: HTMLElement | null = null;
  private noteEl: HTMLElement | null = null;
  private buttons: HTMLButtonElement[] = [];
  private busy = false;
  /** The rewrite this UI is answering right now: its decided event is ours. */
  private answering: string | null = null;
  private closing: string | null = null;
  private ticker: ReturnType<typeof setInterval> | undefined;
  /** The question on screen, and since when (Date.now()). */
  private shown: { rewrite: string; at: number } | null = null;

  constructor(
    private readonly parent: HTMLElement,
    private readonly api: Api,
    bus: EventBus,
    private readonly toast: (text: string, tone?: "info" | "good" | "warn") => void,
    private readonly harnesses: readonly Harness[],
    private readonly onQueueChange: (size: number) => void = () => {},
  ) {
    bus.on("rewrite.pending", (p) => this.add(p));
    bus.on("rewrite.decided", (d) => this.decided(d));
    // Questions asked before this page connected need no fetch: the guard
    // replays every pending question to a new SSE subscriber and to the
    // window when it attaches.
    document.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  get size(): number {
    return this.queue.size;
  }

  add(p: PendingRewrite): void {
    if (!p || typeof p.rewrite !== "string") return;
    if (!this.queue.add(p)) return;
    this.onQueueChange(this.queue.size);
    if (this.queue.size === 1 || !this.overlay) this.render();
    else this.renderQueueCount();
  }

  private decided(d: DecidedRewrite): void {
    if (!this.queue.has(d.rewrite) || d.rewrite === this.answering) return;
    const note = decidedElsewhereNote(d);
    if (this.queue.current?.rewrite === d.rewrite && this.overlay) {
      this.closeWithNote(d.rewrite, note);
    } else {
      this.queue.remove(d.rewrite);
      this.onQueueChange(this.queue.size);
      this.renderQueueCount();
      this.toast(note);
    }
  }

  private closeWithNote(id: string, note: string, tone: "info" | "warn" = "info"): void {
    this.closing = id;
    this.setNote(note, tone);
    this.setButtonsEnabled(false);
    setTimeout(() => {
      this.closing = null;
      this.queue.remove(id);
      this.onQueueChange(this.queue.size);
      this.render();
    }, NOTE_MS);
  }

  private onKey(ev: KeyboardEvent): void {
    if (!this.overlay || this.busy || this.closing || ev.defaultPrevented) return;
    if (ev.key === "Enter") {
      // A button the user moved to answers for itself (its own click).
      if (ev.target instanceof HTMLButtonElement && this.buttons.includes(ev.target)) return;
      ev.preventDefault();
      if (!this.shown || Date.now() - this.shown.at < ENTER_GUARD_MS) return; // typed before the question was seen
      void this.answer("allow-once");
    } else if (ev.key === "Escape") {
      ev.preventDefault();
      void this.answer("not-now");
    }
  }

  private async answer(choice: AnswerChoice): Promise<void> {
    const p = this.queue.current;
    if (!p || this.busy || this.closing) return;
    this.busy = true;
    this.answering = p.rewrite;
    this.setButtonsEnabled(false);
    try {
      await this.api.answer(p.rewrite, choice);
      this.queue.remove(p.rewrite);
      this.onQueueChange(this.queue.size);
      this.toast(ANSWERED_NOTE[choice], choice === "not-now" ? "info" : "good");
      this.busy = false;
      this.answering = null;
      this.render();
    } catch (e) {
      this.busy = false;
      this.answering = null;
      if (e instanceof ApiError && e.status === 409) {
        this.closeWithNote(p.rewrite, "Already decided elsewhere: " + e.message, "warn");
      } else if (e instanceof ApiError && e.status === 404) {
        this.closeWithNote(p.rewrite, "This question is gone (tollgate restarted?)", "warn");
      } else {
        this.setNote("Could not send the answer: " + errorText(e), "warn");
        this.setButtonsEnabled(true);
      }
    }
  }

  private setNote(text: string, tone: "info" | "warn"): void {
    if (!this.noteEl) return;
    this.noteEl.textContent = text;
    this.noteEl.className = `q-note ${tone}`;
  }

  private setButtonsEnabled(on: boolean): void {
    for (const b of this.buttons) b.disabled = !on;
  }

  private renderQueueCount(): void {
    const q = this.overlay?.querySelector(".q-queue");
    if (q) q.textContent = this.queue.size > 1 ? `1 of ${this.queue.size}` : "";
  }

  private tick(): void {
    const p = this.queue.current;
    if (!p) return;
    const now = Date.now();
    // Expired questions the guard has not reported: drop them after a grace.
    for (const gone of this.queue.expire(now - GRACE_MS)) {
      if (gone.rewrite === p.rewrite) {
        this.onQueueChange(this.queue.size);
        this.render();
        return;
      }
    }
    const left = secondsLeft(p, now);
    if (this.countdownEl) this.countdownEl.textContent = left > 0 ? countdownText(left) : "declining…";
  }

  private render(): void {
    const p = this.queue.current;
    if (!p) {
      this.overlay?.remove();
      this.overlay = null;
      if (this.ticker !== undefined) clearInterval(this.ticker);
      this.ticker = undefined;
      return;
    }
    if (this.shown?.rewrite !== p.rewrite) this.shown = { rewrite: p.rewrite, at: Date.now() };
    const m = dialogModel(p, this.harnesses);
    this.buttons = CHOICES.map((c) => {
      const b = el("button", { type: "button", class: c.primary ? "primary" : "", "data-choice": c.choice }, c.label);
      b.addEventListener("click", () => void this.answer(c.choice));
      return b;
    });
    this.countdownEl = el("span", { class: "q-countdown" }, countdownText(secondsLeft(p, Date.now())));
    this.noteEl = el("div", { class: "q-note" });
    const modal = el(
      "div",
      { class: "modal question", role: "dialog", "aria-modal": "true", "aria-labelledby": "q-title", "data-rewrite": p.rewrite, tabindex: "-1" },
      el("div", { class: "q-head" }, el("h2", { id: "q-title" }, m.title), el("span", { class: "q-queue" })),
      el("p", { class: "q-intro" }, m.intro),
      el("p", { class: "q-source" }, m.source),
      el("ul", { class: "q-lines" }, ...m.lines.map((l) => el("li", { "data-line": l.kind, class: l.tone ?? "" }, l.text))),
      this.noteEl,
      el("div", { class: "actions" }, ...this.buttons, this.countdownEl),
      el("p", { class: "q-keys" }, "Enter: allow once · Esc: not now"),
    );
    const overlay = el("div", { class: "overlay question-overlay" }, modal);
    if (this.overlay) this.overlay.replaceWith(overlay);
    else this.parent.append(overlay);
    this.overlay = overlay;
    this.renderQueueCount();
    // The dialog itself takes the focus, not a button: a key meant for
    // another window must not press Allow once.
    modal.focus();
    if (this.ticker === undefined) this.ticker = setInterval(() => this.tick(), 250);
  }
}
