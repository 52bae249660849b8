// Short notes in the corner: a question decided elsewhere, a saved profile.

import { el } from "./dom";

export class Toasts {
  private box: HTMLElement;

  constructor(parent: HTMLElement) {
    this.box = el("div", { class: "toasts", role: "status", "aria-live": "polite" });
    parent.append(this.box);
  }

  show(text: string, tone: "info" | "good" | "warn" = "info", ms = 4000): void {
    const t = el("div", { class: `toast ${tone}` }, text);
    this.box.append(t);
    // Three at most: older notes make way rather than cover the page.
    while (this.box.childElementCount > 3) this.box.firstElementChild?.remove();
    setTimeout(() => t.remove(), ms);
  }
}
