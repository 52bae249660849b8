// A confirmation in the page (window.confirm is not dependable in every
// webview): resolves true only on the explicit button.

import type { ConfirmOptions } from "../context";
import { button, el } from "./dom";

export function confirmDialog(parent: HTMLElement, opts: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const close = (ok: boolean) => {
      document.removeEventListener("keydown", onKey, true);
      overlay.remove();
      resolve(ok);
    };
    const onKey = (ev: KeyboardEvent) => {
      if (ev.key === "Escape") {
        ev.preventDefault();
        ev.stopPropagation();
        close(false);
      }
    };
    const ok = button(opts.confirmLabel, () => close(true), { class: opts.danger ? "danger" : "primary", "data-confirm": "yes" });
    const overlay = el(
      "div",
      { class: "overlay confirm-overlay" },
      el(
        "div",
        { class: "modal", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "confirm-title" },
        el("h2", { id: "confirm-title" }, opts.title),
        el("p", {}, opts.body),
        el("div", { class: "actions" }, ok, button("Cancel", () => close(false), { "data-confirm": "no" })),
      ),
    );
    document.addEventListener("keydown", onKey, true);
    parent.append(overlay);
    ok.focus();
  });
}
