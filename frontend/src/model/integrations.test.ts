import { describe, expect, it } from "vitest";
import { API_GUIDE, integrationGuides, integrationStatus, otherIntegrations, type IntegrationGuide } from "./integrations";
import { HARNESSES, INTEGRATIONS, integration } from "./testdata/harnesses";
import type { EnginesList, Integration } from "./types";

const list = (over: Partial<EnginesList> = {}): EnginesList => ({ armed: false, engines: [], integrations: INTEGRATIONS, ...over });
const engine = (harness: string) => ({ engine: "e_1", harness, registeredAt: "", lastContact: "", expiresAt: "" });
/** The list with one integration's entry replaced. */
const withEntry = (entry: Integration, over: Partial<EnginesList> = {}) => list({ integrations: INTEGRATIONS.map((i) => (i.name === entry.name ? entry : i)), ...over });
/** A guide's status on the page the list draws. */
const status = (id: string, l: EnginesList) => {
  const guides = integrationGuides(l, HARNESSES);
  return integrationStatus(guides.find((g) => g.id === id)!, l, guides);
};

describe("integrations", () => {
  it("a guide per integration the API reports, in its order, with its title, text and snippet; the HTTP API last", () => {
    const guides = integrationGuides(list(), HARNESSES);
    expect(guides.map((g) => g.id)).toEqual(["claude-code", "reasonix", "dsh", "codex", "opencode", "gemini", "api"]);
    const byId = (id: string) => guides.find((g) => g.id === id)!;
    expect(byId("reasonix")).toEqual<IntegrationGuide>({
      id: "reasonix",
      title: "DeepSeek-Reasonix",
      harnesses: ["reasonix", "deepseek-reasonix"],
      integration: "reasonix",
      what: "An extension sidecar answers Reasonix's compaction.prepare intercept.",
      snippet: "tollgate ext reasonix --install",
    });
    expect(byId("codex").title).toBe("Codex CLI");
    expect(byId("dsh").snippet).toBe("plugins:\n  tollgate:");
    // The title falls back to the label, then the name.
    const bare = integrationGuides(list({ integrations: [integration("dsh", { title: undefined }), integration("x", { about: "x's text" })] }), HARNESSES);
    expect(bare.map((g) => g.title)).toEqual(["dsh", "x", API_GUIDE.title]);
    expect(API_GUIDE.snippet).toContain("/v1/engines");
    expect(API_GUIDE.snippet).toContain("Authorization: Bearer");
  });
  it("an integration without a text is no guide: it is listed apart", () => {
    const plain = { name: "x", installed: true, verified: false, detail: "d", lastDecision: null };
    const l = list({ integrations: [...INTEGRATIONS, plain] });
    expect(integrationGuides(l, HARNESSES).some((g) => g.id === "x")).toBe(false);
    expect(otherIntegrations(l)).toEqual([plain]);
    expect(otherIntegrations(list())).toEqual([]);
  });
  it("an engine counts under its harness's name or alias; without the harness list, under the integration's name", () => {
    expect(status("reasonix", list({ engines: [engine("deepseek-reasonix")] })).state).toBe("armed");
    expect(status("api", list({ engines: [engine("deepseek-reasonix")] })).state).toBe("not-seen");
    const guides = integrationGuides(list(), []);
    expect(guides.find((g) => g.id === "dsh")?.harnesses).toEqual(["dsh"]);
  });
  it("armed by a live engine of the harness, or a verified hook", () => {
    expect(status("dsh", list({ engines: [engine("dsh")] })).state).toBe("armed");
    expect(status("dsh", list()).state).toBe("not-seen");
    const hook = (verified: boolean) => withEntry(integration("claude-code", { installed: true, verified, detail: "~/.claude/settings.json" }));
    expect(status("claude-code", hook(true))).toEqual({ state: "armed", detail: "~/.claude/settings.json" });
    expect(status("claude-code", hook(false)).state).toBe("installed");
    expect(status("api", list({ engines: [engine("my-harness")] }))).toEqual({ state: "armed", detail: "my-harness" });
  });
  it("Codex: armed by its installed, trusted hook; installed but untrusted is not armed", () => {
    const codex = (verified: boolean) => withEntry(integration("codex", { installed: true, verified, detail: "PreCompact hook installed" }));
    expect(status("codex", codex(true)).state).toBe("armed");
    expect(status("codex", codex(false)).state).toBe("installed");
    expect(status("codex", list()).state).toBe("not-seen");
  });
  it("lists Gemini CLI as observed, never armed: it cannot be gated", () => {
    const detail = "not seen: no Gemini CLI session under ~/.gemini/tmp yet. observed, cannot be gated: …";
    expect(status("gemini", withEntry(integration("gemini", { detail })))).toEqual({ state: "not-seen", detail });
    const seen = integration("gemini", { detail: "sessions in ~/.gemini: …", state: "observed" });
    expect(status("gemini", withEntry(seen))).toEqual({ state: "observed", detail: "sessions in ~/.gemini: …" });
    // An engine registering as "gemini" does not make it armed: a harness that cannot be gated counts no engine.
    expect(status("gemini", withEntry(seen, { engines: [engine("gemini")] })).state).toBe("observed");
    expect(status("gemini", withEntry(integration("gemini", { detail }), { engines: [engine("gemini")] })).state).toBe("not-seen");
    expect(integrationGuides(list({ integrations: [seen] }), []).find((g) => g.id === "gemini")?.harnesses).toEqual([]);
  });
});

describe("OpenCode", () => {
  it("is not seen, then installed when configured, then armed by its engine", () => {
    const entry = (installed: boolean, detail: string) => integration("opencode", { installed, detail });
    expect(status("opencode", withEntry(entry(false, "not installed"))).state).toBe("not-seen");
    expect(status("opencode", withEntry(entry(true, "plugin configured in x")))).toEqual({ state: "installed", detail: "plugin configured in x" });
    expect(status("opencode", withEntry(entry(true, "plugin seen"), { engines: [engine("opencode")] })).state).toBe("armed");
  });
});
