// What a view shows before there is anything to show: what to do next.

import type { AppContext } from "../context";
import { uploadHarnesses } from "../model/harnesses";
import { button, el, errorText } from "./dom";

/** The "Try a simulated session" button: a scripted session through the real API. */
export function simulateButton(ctx: AppContext): HTMLButtonElement {
  const b = button(
    "Try a simulated session",
    async () => {
      b.disabled = true;
      b.textContent = "Simulating…";
      try {
        const res = await ctx.api.simulate();
        const id = res?.session ?? res?.sessions?.[0];
        ctx.toast("A simulated session is ready", "good");
        ctx.dataChanged();
        ctx.navigate(id ? { view: "session", id } : { view: "sessions" });
      } catch (e) {
        ctx.toast("The simulation failed: " + errorText(e), "warn");
      } finally {
        b.disabled = false;
        b.textContent = "Try a simulated session";
      }
    },
    { class: "primary", id: "simulate" },
  );
  return b;
}

export function emptyState(ctx: AppContext, title: string, text: string): HTMLElement {
  const logs = uploadHarnesses(ctx.harnesses).map((h) => h.label);
  return el(
    "section",
    { class: "empty" },
    el("h1", {}, title),
    el("p", {}, text),
    el(
      "ol",
      { class: "next-steps" },
      el("li", {}, "Connect a harness and tollgate prices every context rewrite before it breaks the cache. ", el("a", { href: "#/integrations" }, "Set up a harness"), "."),
      el("li", {}, `Or import the logs of past sessions${logs.length ? ` (${logs.join(", ")})` : ""}: `, el("a", { href: "#/data" }, "Import"), "."),
      el("li", {}, "Or see what it looks like with a scripted session: ", simulateButton(ctx)),
    ),
  );
}
