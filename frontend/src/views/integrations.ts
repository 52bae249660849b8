// Integrations: each harness with its status (armed / observed / not seen) and a
// copy-ready setup snippet; the live engines and the followed log folders below.

import { button, el, errorText, throttle } from "../components/dom";
import { dataTable } from "../components/table";
import type { View } from "../context";
import { formatAgo, formatDateTime } from "../format";
import { folderState, lastReadFile } from "../model/follow";
import { harnessLabel } from "../model/harnesses";
import { integrationGuides, integrationHeading, integrationStatus, otherIntegrations } from "../model/integrations";
import type { Engine, EnginesList, FollowedFolder, FollowStatus, Harness } from "../model/types";

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Webviews without the async clipboard: select a hidden textarea and copy.
    const ta = el("textarea", { class: "offscreen", readonly: true });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}

/** The harness log folders tollgate follows (app/follow), and the last line each brought. */
function followedSection(f: FollowStatus | null, harnesses: readonly Harness[]): HTMLElement {
  const box = el("section", { class: "card", id: "followed-logs" }, el("h2", {}, "Followed logs"));
  if (!f) {
    box.append(el("p", { class: "muted" }, "Could not read what is followed."));
    return box;
  }
  if (!f.enabled) {
    box.append(el("p", { class: "muted" }, "Following is off (watch: false in config.yaml): run tollgate import to bring logs in."));
    return box;
  }
  box.append(
    el("p", { class: "muted" }, "tollgate imports what the harnesses append to these folders as they write it."),
    dataTable<FollowedFolder, string>(
      [
        { key: "harness", label: "Harness", cell: (x) => (x.harness ? harnessLabel(harnesses, x.harness) : "any") },
        { key: "dir", label: "Folder", cell: (x) => x.dir },
        { key: "state", label: "Following", cell: (x) => (x.error ? x.error : folderState(x)) },
        {
          key: "last",
          label: "Last read",
          cell: (x) =>
            x.last
              ? el(
                  "span",
                  { title: x.last.file },
                  `${lastReadFile(x)}: +${x.last.requests} ${x.last.requests === 1 ? "request" : "requests"}, ${formatAgo(x.last.at)}`,
                )
              : "—",
        },
      ],
      f.folders,
      { rowKey: (x) => x.dir },
    ),
  );
  return box;
}

const STATE_LABEL = { armed: "armed", installed: "installed", observed: "observed · not gated", "not-seen": "not seen" } as const;

export const integrationsView: View = async (root, ctx, scope) => {
  const draw = async () => {
    let list: EnginesList;
    let followed: FollowStatus | null = null;
    try {
      [list, followed] = await Promise.all([ctx.api.engines(), ctx.api.follow().catch(() => null)]);
    } catch (e) {
      root.replaceChildren(el("p", { class: "error" }, "Could not load integrations: " + errorText(e)));
      return;
    }
    if (!scope.alive) return;
    const guides = integrationGuides(list, ctx.harnesses);
    const cards = guides.map((g) => {
      const st = integrationStatus(g, list, guides);
      const copy = button("Copy", async () => {
        const ok = await copyText(g.snippet);
        ctx.toast(ok ? "Copied" : "Select the text and copy it by hand", ok ? "good" : "warn");
      }, { class: "copy" });
      return el(
        "section",
        { class: "card integration", "data-integration": g.id },
        el("div", { class: "integration-head" }, el("h2", {}, g.title), el("span", { class: `badge ${st.state === "armed" ? "good" : st.state === "installed" || st.state === "observed" ? "info" : "muted"}`, "data-status": st.state }, STATE_LABEL[st.state])),
        el("p", { class: "muted" }, st.detail),
        el("p", {}, g.what),
        el("div", { class: "snippet" }, el("div", { class: "snippet-head" }, el("span", { class: "muted" }, "Setup"), copy), el("pre", {}, el("code", {}, g.snippet))),
      );
    });
    for (const i of otherIntegrations(list)) {
      cards.push(
        el(
          "section",
          { class: "card integration", "data-integration": i.name },
          el("div", { class: "integration-head" }, el("h2", {}, integrationHeading(i)), el("span", { class: `badge ${i.installed ? "info" : "muted"}` }, i.installed ? "installed" : "not installed")),
          el("p", {}, i.detail),
        ),
      );
    }
    const engines = list.engines.length
      ? dataTable<Engine, string>(
          [
            { key: "harness", label: "Harness", cell: (e) => e.harness },
            { key: "version", label: "Version", cell: (e) => e.version || "—" },
            { key: "profile", label: "Profile", cell: (e) => e.profile || "—" },
            { key: "pid", label: "PID", numeric: true, cell: (e) => (e.pid ? String(e.pid) : "—") },
            { key: "since", label: "Registered", cell: (e) => formatDateTime(e.registeredAt) },
            { key: "last", label: "Last contact", cell: (e) => formatAgo(e.lastContact) },
          ],
          list.engines,
          { rowKey: (e) => e.engine },
        )
      : el("p", { class: "muted" }, "No engine holds a lease right now.");
    root.replaceChildren(
      el("h1", {}, "Integrations"),
      el("p", { class: "muted", id: "armed-summary" }, list.armed ? "The guard is armed." : "Nothing is armed yet: set up one of these and it shows as armed here."),
      el("div", { class: "integrations" }, ...cards),
      el("section", { class: "card" }, el("h2", {}, "Live engines"), engines),
      followedSection(followed, ctx.harnesses),
    );
  };
  await draw();
  const redraw = throttle(() => void draw(), 500);
  scope.add(redraw.cancel);
  scope.add(ctx.bus.on("engines.changed", redraw));
  scope.add(ctx.bus.on("logs.imported", redraw));
};
