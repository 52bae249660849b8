// The Integrations page as data: each harness, how to set it up, and
// whether tollgate has seen it (a live engine of that harness, or an
// installed hook).

import type { EnginesList } from "./types";

export interface IntegrationGuide {
  id: string;
  title: string;
  /** Engine harness names that count as this integration. */
  harnesses: readonly string[];
  /** GET /v1/engines integration name, for hook-style integrations. */
  integration?: string;
  what: string;
  snippet: string;
}

// The generic snippet reads the live URL and token from api.json, so it is
// right in the window (which has no TCP URL of its own) and in any home.
const API_JSON = "${TOLLGATE_HOME:-$HOME/.config/tollgate}/api.json";

export const GUIDES: readonly IntegrationGuide[] = [
  {
    id: "claude-code",
    title: "Claude Code",
    harnesses: ["claude-code"],
    integration: "claude-code",
    what: "A PreCompact hook prices every compaction from the transcript and asks before it runs. Installed once, it guards every Claude Code session.",
    snippet: "tollgate hook claude-code --install",
  },
  {
    id: "reasonix",
    title: "DeepSeek-Reasonix",
    harnesses: ["reasonix", "deepseek-reasonix"],
    integration: "reasonix",
    what: "An extension sidecar answers Reasonix's compaction.prepare intercept within its timeout.",
    snippet: "tollgate ext reasonix --install",
  },
  {
    id: "codex",
    title: "Codex CLI",
    harnesses: ["codex"],
    integration: "codex",
    what: "A PreCompact hook prices every compaction from the rollout and asks before it runs; --install also trusts it in Codex's config.toml, which Codex requires. Codex's hook cannot skip only the compaction: declining ends that Codex turn (the conversation keeps its full history), and Codex proposes the compaction again on the next turn.",
    snippet: "tollgate hook codex --install",
  },
  {
    id: "dsh",
    title: "dsh",
    harnesses: ["dsh"],
    integration: "dsh",
    what: "The tollgate plugin (integrations/dsh in the tollgate repository) gates dsh's compactIfNeeded: it asks before each rewrite and runs the order tollgate returns. It arms the guard while dsh runs and finds tollgate through api.json. Add it to dsh's configuration:",
    snippet: ["plugins:", "  tollgate:                  # @tollgate/dsh-plugin", "    profile: deepseek-flash  # optional pricing profile", "    deadlineSeconds: 120     # how long a question may wait"].join("\n"),
  },
  {
    id: "gemini",
    title: "Gemini CLI",
    harnesses: [],
    integration: "gemini",
    what:
      "Gemini CLI cannot be gated: its PreCompress hook is advisory (chatCompressionService.ts discards its result, and it fires every turn) and toolOutputMaskingService.ts masks old tool outputs every turn with no hook. Gating needs a PreCompress decision Gemini CLI honours and a hook before masking (google-gemini/gemini-cli, packages/core/src/context/). tollgate follows its sessions in ~/.gemini/tmp while it runs (see Followed logs below) and shows every cache break in the ledger; to bring in sessions from another folder:",
    snippet: "tollgate import --harness gemini DIR",
  },
  {
    id: "opencode",
    title: "OpenCode",
    harnesses: ["opencode"],
    integration: "opencode",
    what: "The tollgate plugin turns OpenCode's automatic compaction over to tollgate while tollgate runs: once the context crosses OpenCode's own threshold it asks (when the session goes idle, or before the next model request, which OpenCode holds), and on Allow OpenCode compacts by its own path; on Not now the session goes on and is asked again after the next answer above the threshold. When tollgate is not running OpenCode compacts on its own. The plugin ships inside tollgate: --install writes it into OpenCode's plugins folder (~/.config/opencode/plugins), which OpenCode loads at its next start. From a tollgate checkout you can instead list integrations/opencode/index.js in opencode.json's \"plugin\" array (not both: OpenCode would run it twice).",
    snippet: "tollgate hook opencode --install",
  },
  {
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
  },
];

/** Integrations the guard reports that have no guide here (e.g. import-only ones). */
export function otherIntegrations(list: EnginesList): EnginesList["integrations"] {
  return list.integrations.filter((i) => !GUIDES.some((g) => g.integration === i.name));
}

export type IntegrationStatus =
  | { state: "armed"; detail: string }
  | { state: "installed"; detail: string }
  | { state: "observed"; detail: string }
  | { state: "not-seen"; detail: string };

export function integrationStatus(g: IntegrationGuide, list: EnginesList): IntegrationStatus {
  const live = list.engines.filter((e) => g.harnesses.includes(e.harness.toLowerCase()));
  const hook = g.integration ? list.integrations.find((i) => i.name === g.integration) : undefined;
  if (hook?.installed && hook.verified) return { state: "armed", detail: hook.detail || "hook installed and verified" };
  // Seen but never gated: its sessions are imported, its rewrites cannot be held.
  if (hook?.state === "observed") return { state: "observed", detail: hook.detail || "sessions seen; imported, not gated" };
  if (live.length > 0) return { state: "armed", detail: live.length === 1 ? "1 live engine" : `${live.length} live engines` };
  if (g.id === "api") {
    const others = list.engines.filter((e) => !GUIDES.some((x) => x.harnesses.includes(e.harness.toLowerCase())));
    if (others.length > 0) return { state: "armed", detail: others.map((e) => e.harness).join(", ") };
  }
  if (hook?.installed) return { state: "installed", detail: hook.detail || "installed, not verified" };
  return { state: "not-seen", detail: hook?.detail || "not seen yet" };
}
