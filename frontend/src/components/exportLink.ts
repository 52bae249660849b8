// An export link: a download in the browser; in the window (WebKitGTK does
// not download links) a click opens a save dialog through the transport.

import type { AppContext } from "../context";
import { el, errorText } from "./dom";

export function exportLink(ctx: AppContext, label: string, href: string, filename: string, id?: string): HTMLAnchorElement {
  const a = el("a", { class: "button", href, download: filename, ...(id ? { id } : {}) }, label);
  const save = ctx.api.transport.saveFile;
  if (save) {
    a.addEventListener("click", (ev) => {
      ev.preventDefault();
      save(href, filename).then(
        (file) => file && ctx.toast("Saved " + file, "good"),
        (e: unknown) => ctx.toast("Could not save the export: " + errorText(e), "warn"),
      );
    });
  }
  return a;
}
