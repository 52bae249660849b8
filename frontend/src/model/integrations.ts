// The Integrations page as data: each harness, how to set it up, and
// whether tollgate has seen it (a live engine of that harness, or an
// installed hook). The harnesses and their texts are the API's (GET
// /v1/engines' integrations, GET /v1/harnesses); only the guide for any
// other harness, over the HTTP API, is the page's own.

import { findHarness } from "./harnesses";
import type { EnginesList, Harness, Integration } from "./types";

export interface IntegrationGuide {
  id: string;
  title: string;
  /** Engine harness names that count as this integration. */
  harnesses: readonly string[];
  /** GET /v1/engines integration name; absent for the guide to any other harness. */
  integration?: string;
  what: string;
  snippet: string;
}

// The generic snippet reads the live URL and token from api.json, so it is
// right in the window (which has no TCP URL of its own) and in any home.
const API_JSON = "${TOLLGATE_HOME:-$HOME/.config/tollgate}/api.json";

/** The guide for a harness tollgate has no integration of: the HTTP API. */
export const API_GUIDE: IntegrationGuide = {
  id: "api",
  title: "Any harness (HTTP API)",
  harnesses: [],
  what: "Register an engine, record each request, and ask before every rewrite. Go harnesses can use guard/client, which fails open when tollgate is not running.",
  snippet: [
    `TG=${API_JSON}`,
    `curl -s -H "Authorization: Bearer $(jq -r .token "$TG")" \\`,
    `  -d '{"harness":"my-harness","version":"1.0","profile":"deepseek-flash"}' \\`,
    `  "$(jq -r .url "$TG")/v1/engines"`,
  ].join("\n"),
};

/** What an integration's card is headed with: its title, else its label, else its name. */
export function integrationHeading(i: Pick<Integration, "name" | "label" | "title">): string {
  return i.title || i.label || i.name;
}

/**
 * The engine harness names that count as an integration: its name and the
 * aliases GET /v1/harnesses lists, none for a harness tollgate cannot gate
 * (an engine of it guards nothing). A harness the list lacks (it could not
 * be read) counts its own name, unless the guard reports it observed.
 */
function engineHarnesses(i: Integration, harnesses: readonly Harness[]): readonly string[] {
  const h = findHarness(harnesses, i.name);
  if (!h) return i.state === "observed" ? [] : [i.name];
  return h.gated ? [h.name, ...(h.aliases ?? [])] : [];
}

/** The page's guides: every integration the guard reports with a text, in the API's order, then the HTTP API's. */
export function integrationGuides(list: EnginesList, harnesses: readonly Harness[]): IntegrationGuide[] {
  const guides: IntegrationGuide[] = list.integrations
    .filter((i) => i.about || i.setup)
    .map((i) => ({ id: i.name, title: integrationHeading(i), harnesses: engineHarnesses(i, harnesses), integration: i.name, what: i.about ?? "", snippet: i.setup ?? "" }));
  return [...guides, API_GUIDE];
}

/** Integrations the guard reports that have no guide: no text to show. */
export function otherIntegrations(list: EnginesList): EnginesList["integrations"] {
  return list.integrations.filter((i) => !(i.about || i.setup));
}

export type IntegrationStatus =
  | { state: "armed"; detail: string }
  | { state: "installed"; detail: string }
  | { state: "observed"; detail: string }
  | { state: "not-seen"; detail: string };

/** A guide's status among the page's guides: the HTTP API's guide counts the engines no other guide does. */
export function integrationStatus(g: IntegrationGuide, list: EnginesList, guides: readonly IntegrationGuide[]): IntegrationStatus {
  const live = list.engines.filter((e) => g.harnesses.includes(e.harness.toLowerCase()));
  const hook = g.integration ? list.integrations.find((i) => i.name === g.integration) : undefined;
  if (hook?.installed && hook.verified) return { state: "armed", detail: hook.detail || "hook installed and verified" };
  // Seen but never gated: its sessions are imported, its rewrites cannot be held.
  if (hook?.state === "observed") return { state: "observed", detail: hook.detail || "sessions seen; imported, not gated" };
  if (live.length > 0) return { state: "armed", detail: live.length === 1 ? "1 live engine" : `${live.length} live engines` };
  if (!g.integration) {
    const others = list.engines.filter((e) => !guides.some((x) => x.harnesses.includes(e.harness.toLowerCase())));
    if (others.length > 0) return { state: "armed", detail: others.map((e) => e.harness).join(", ") };
  }
  if (hook?.installed) return { state: "installed", detail: hook.detail || "installed, not verified" };
  return { state: "not-seen", detail: hook?.detail || "not seen yet" };
}
