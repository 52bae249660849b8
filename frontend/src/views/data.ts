// Data: import logs (a file upload; the window's webview opens its own file
// dialog for the same input), export everything, delete with a confirmation.

import { button, el, errorText, type Scope } from "../components/dom";
import { exportLink } from "../components/exportLink";
import type { AppContext, View } from "../context";
import { formatInt } from "../format";
import { joinLabels, uploadHarnesses } from "../model/harnesses";
import { routeHash } from "../model/route";
import type { ImportResult, Session } from "../model/types";

function formatBytes(n: number): string {
  return n < 1024 * 1024 ? `${formatInt(Math.max(1, n / 1024))} KB` : `${formatInt(n / 1024 / 1024)} MB`;
}

/** What an import brought, one line per file. */
function importSummary(res: ImportResult): HTMLElement {
  const total = `${formatInt(res.requests)} new requests, ${formatInt(res.folds)} folds in ${formatInt(res.sessions.length)} sessions` + (res.failed ? ` · ${formatInt(res.failed)} failed` : "");
  return el(
    "div",
    { id: "import-result" },
    el("p", {}, el("strong", {}, "Imported: "), total),
    el(
      "ul",
      {},
      ...res.files.map((f) =>
        el(
          "li",
          { class: f.error ? "error" : "" },
          `${f.path}: `,
          f.error
            ? f.error
            : f.unchanged
              ? "nothing new since the last import"
              : `${formatInt(f.requests)} requests, ${formatInt(f.folds)} folds (${f.harness || "?"})${f.restarted ? ", re-read from the start" : ""}`,
          f.session ? el("span", {}, " · ", el("a", { href: routeHash({ view: "session", id: f.session }) }, "open")) : null,
        ),
      ),
    ),
  );
}

function importSection(ctx: AppContext, scope: Scope): HTMLElement {
  const input = el("input", { type: "file", id: "import-file", multiple: true, accept: ".jsonl,.json,.zst,.zstd,.gz,application/json" });
  const uploads = uploadHarnesses(ctx.harnesses);
  const harness = el(
    "select",
    { id: "import-harness", title: "Which harness wrote the files" },
    el("option", { value: "" }, "Tell from the content"),
    ...uploads.map((h) => el("option", { value: h.name }, h.label)),
  );
  const progress = el("div", { class: "progress", id: "import-progress", role: "status", "aria-live": "polite" });
  const bar = el("progress", {});
  const barText = el("span", {});
  let running = false;
  // The guard reports progress as import.progress events while the upload's
  // answer is pending: bytes read, files done, requests and folds so far.
  scope.add(
    ctx.bus.on("import.progress", (p) => {
      if (!running) return;
      bar.max = Math.max(1, p.bytesTotal);
      bar.value = p.bytesDone;
      barText.textContent = ` ${p.file ? p.file + ": " : ""}${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)} · file ${formatInt(Math.min(p.filesDone + 1, p.filesTotal))} of ${formatInt(p.filesTotal)} · ${formatInt(p.requests)} requests, ${formatInt(p.folds)} folds`;
    }),
  );
  const go = button(
    "Import",
    async () => {
      const files = [...(input.files ?? [])];
      if (files.length === 0) {
        progress.textContent = "Choose one or more log files first.";
        return;
      }
      go.disabled = true;
      running = true;
      bar.removeAttribute("value"); // indeterminate until the first progress event
      const size = files.reduce((n, f) => n + f.size, 0);
      barText.textContent = ` Uploading ${formatInt(files.length)} file${files.length === 1 ? "" : "s"} (${formatBytes(size)})…`;
      progress.replaceChildren(bar, barText);
      try {
        const res = await ctx.api.importFiles(files, harness.value);
        progress.replaceChildren(importSummary(res.result));
        if (res.error) progress.append(el("p", { class: "error" }, res.error.message));
        ctx.toast("Import finished", res.result.failed ? "warn" : "good");
        ctx.dataChanged();
      } catch (e) {
        progress.replaceChildren(el("p", { class: "error" }, "Import failed: " + errorText(e)));
      } finally {
        running = false;
        go.disabled = false;
      }
    },
    { class: "primary", id: "import-go" },
  );
  return el(
    "section",
    { class: "card" },
    el("h2", {}, "Import"),
    el(
      "p",
      {},
      uploads.length ? `Session logs of ${joinLabels(uploads.map((h) => h.label))} (` : "Session logs (",
      el("code", {}, ".jsonl"),
      ", or zstd-framed ",
      el("code", {}, ".jsonl.zst"),
      " and ",
      el("code", {}, ".jsonl.zstd"),
      "): tollgate tells from each file's content which harness wrote it, or pick the harness. Importing a file again only adds what is new.",
    ),
    el("div", { class: "row" }, input, harness, go),
    progress,
  );
}

function exportSection(ctx: AppContext): HTMLElement {
  return el(
    "section",
    { class: "card" },
    el("h2", {}, "Export"),
    el("p", {}, "Every session's requests and rewrites: token counts, costs and decisions (never prompt text)."),
    el(
      "div",
      { class: "row" },
      exportLink(ctx, "Export JSON", ctx.api.exportURL("json"), "tollgate.json", "export-json"),
      exportLink(ctx, "Export CSV", ctx.api.exportURL("csv"), "tollgate.csv", "export-csv"),
    ),
  );
}

function deleteSection(ctx: AppContext, sessions: Session[], redraw: () => void): HTMLElement {
  const pick = el("select", { id: "delete-session" }, el("option", { value: "" }, "Choose a session…"), ...sessions.map((s) => el("option", { value: s.id }, `${s.title || s.id} (${formatInt(s.requests)} requests)`)));
  const one = button(
    "Delete session",
    async () => {
      const id = pick.value;
      if (!id) return;
      const ok = await ctx.confirm({ title: "Delete this session?", body: `Session ${id} and its rewrites are removed from tollgate.db. This cannot be undone.`, confirmLabel: "Delete", danger: true });
      if (!ok) return;
      try {
        await ctx.api.deleteSession(id);
        ctx.toast("Session deleted", "good");
        ctx.dataChanged();
        redraw();
      } catch (e) {
        ctx.toast("Could not delete: " + errorText(e), "warn");
      }
    },
    { class: "danger" },
  );
  const all = button(
    "Delete everything",
    async () => {
      const ok = await ctx.confirm({
        title: "Delete every session?",
        body: "All sessions, requests and rewrites are removed from tollgate.db. Settings and prices stay. This cannot be undone.",
        confirmLabel: "Delete everything",
        danger: true,
      });
      if (!ok) return;
      try {
        const r = await ctx.api.deleteAll();
        ctx.toast(`Deleted ${formatInt(r.deleted)} sessions`, "good");
        ctx.dataChanged();
        redraw();
      } catch (e) {
        ctx.toast("Could not delete: " + errorText(e), "warn");
      }
    },
    { class: "danger", id: "delete-all" },
  );
  return el("section", { class: "card" }, el("h2", {}, "Delete"), el("div", { class: "row" }, pick, one), el("div", { class: "row" }, all));
}

export const dataView: View = async (root, ctx, scope) => {
  const draw = async () => {
    let sessions: Session[] = [];
    try {
      sessions = (await ctx.api.sessions(200)).sessions;
    } catch {
      // the delete list is the only part that needs it
    }
    if (!scope.alive) return;
    root.replaceChildren(el("h1", {}, "Data"), importSection(ctx, scope), exportSection(ctx), deleteSection(ctx, sessions, () => void draw()));
  };
  await draw();
};
