// Harnesses shaped like GET /v1/harnesses and GET /v1/engines' integrations
// answer them (the texts are shortened: the Go registry holds and tests the
// real ones).
import type { Harness, Integration } from "../types";

export const HARNESSES: Harness[] = [
  { name: "claude-code", label: "Claude Code", aliases: ["claude"], gated: true, logs: "lines" },
  { name: "reasonix", label: "Reasonix", aliases: ["deepseek-reasonix"], gated: true },
  { name: "dsh", label: "dsh", gated: true, logs: "lines" },
  {
    name: "codex",
    label: "Codex",
    gated: true,
    logs: "lines",
    decline: "Not now ends this Codex turn (the conversation keeps its full history); Codex proposes the compaction again on the next turn",
  },
  { name: "opencode", label: "OpenCode", gated: true, logs: "database" },
  { name: "gemini", label: "Gemini CLI", gated: false, logs: "lines" },
];

/** One integration as GET /v1/engines lists it, with its texts. */
export function integration(name: string, over: Partial<Integration> = {}): Integration {
  const texts: Record<string, Pick<Integration, "label" | "title" | "about" | "setup">> = {
    "claude-code": { label: "Claude Code", title: "Claude Code", about: "A PreCompact hook prices every compaction.", setup: "tollgate hook claude-code --install" },
    reasonix: { label: "Reasonix", title: "DeepSeek-Reasonix", about: "An extension sidecar answers Reasonix's compaction.prepare intercept.", setup: "tollgate ext reasonix --install" },
    dsh: { label: "dsh", title: "dsh", about: "The tollgate plugin gates dsh's compactIfNeeded.", setup: "plugins:\n  tollgate:" },
    codex: { label: "Codex", title: "Codex CLI", about: "A PreCompact hook; declining ends that Codex turn.", setup: "tollgate hook codex --install" },
    opencode: { label: "OpenCode", title: "OpenCode", about: "The tollgate plugin turns OpenCode's automatic compaction over to tollgate.", setup: "tollgate hook opencode --install" },
    gemini: { label: "Gemini CLI", title: "Gemini CLI", about: "Gemini CLI cannot be gated.", setup: "tollgate import --harness gemini DIR" },
  };
  return { name, installed: false, verified: false, detail: "", lastDecision: null, ...texts[name], ...over };
}

/** Every integration, in the order GET /v1/engines lists them. */
export const INTEGRATIONS: Integration[] = HARNESSES.map((h) => integration(h.name));
