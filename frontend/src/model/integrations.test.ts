import { describe, expect, it } from "vitest";
import { GUIDES, integrationStatus } from "./integrations";
import type { EnginesList } from "./types";

const guide = (id: string) => GUIDES.find((g) => g.id === id)!;
const list = (over: Partial<EnginesList> = {}): EnginesList => ({ armed: false, engines: [], integrations: [], ...over });
const engine = (harness: string) => ({ engine: "e_1", harness, registeredAt: "", lastContact: "", expiresAt: "" });

describe("integrations", () => {
  it("has copy-ready setup for Claude Code, Reasonix, Codex, dsh and the API", () => {
    expect(guide("claude-code").snippet).toBe("tollgate hook claude-code --install");
    expect(guide("codex").snippet).toBe("tollgate hook codex --install");
    expect(guide("codex").what).toContain("declining ends that Codex turn");
    expect(guide("codex").what).toContain("again on the next turn");
    expect(guide("reasonix").snippet).toBe("tollgate ext reasonix --install");
    expect(guide("dsh")).toBeDefined();
    expect(guide("api").snippet).toContain("/v1/engines");
    expect(guide("api").snippet).toContain("Authorization: Bearer");
  });
  it("armed by a live engine of the harness, or a verified hook", () => {
    expect(integrationStatus(guide("dsh"), list({ engines: [engine("dsh")] })).state).toBe("armed");
    expect(integrationStatus(guide("dsh"), list()).state).toBe("not-seen");
    const hook = (verified: boolean) => list({ integrations: [{ name: "claude-code", installed: true, verified, detail: "~/.claude/settings.json", lastDecision: null }] });
    expect(integrationStatus(guide("claude-code"), hook(true))).toEqual({ state: "armed", detail: "~/.claude/settings.json" });
    expect(integrationStatus(guide("claude-code"), hook(false)).state).toBe("installed");
    expect(integrationStatus(guide("api"), list({ engines: [engine("my-harness")] }))).toEqual({ state: "armed", detail: "my-harness" });
  });
  it("Codex: armed by its installed, trusted hook; installed but untrusted is not armed", () => {
    const codex = (verified: boolean) => list({ integrations: [{ name: "codex", installed: true, verified, detail: "PreCompact hook installed", lastDecision: null }] });
    expect(integrationStatus(guide("codex"), codex(true)).state).toBe("armed");
    expect(integrationStatus(guide("codex"), codex(false)).state).toBe("installed");
    expect(integrationStatus(guide("codex"), list()).state).toBe("not-seen");
  });
  it("lists Gemini CLI as observed, never armed: it cannot be gated", () => {
    const g = guide("gemini");
    expect(g.snippet).toBe("tollgate import --harness gemini DIR");
    expect(g.what).toContain("cannot be gated");
    expect(g.what).toContain("chatCompressionService.ts");
    const detail = "not seen: no Gemini CLI session under ~/.gemini/tmp yet. observed, cannot be gated: …";
    expect(integrationStatus(g, list({ integrations: [{ name: "gemini", installed: false, verified: false, detail, lastDecision: null }] }))).toEqual({ state: "not-seen", detail });
    const seen = { name: "gemini", installed: false, verified: false, detail: "sessions in ~/.gemini: …", lastDecision: null, state: "observed" as const };
    expect(integrationStatus(g, list({ integrations: [seen] }))).toEqual({ state: "observed", detail: "sessions in ~/.gemini: …" });
    // An engine registering as "gemini" does not make it armed: the guide names no engine harness.
    expect(integrationStatus(g, list({ integrations: [seen], engines: [engine("gemini")] })).state).toBe("observed");
  });
});

describe("OpenCode", () => {
  it("is not seen, then installed when configured, then armed by its engine", () => {
    const g = guide("opencode");
    const entry = (installed: boolean, detail: string) => ({ name: "opencode", installed, verified: false, detail, lastDecision: null });
    expect(g.snippet).toBe("tollgate hook opencode --install");
    expect(g.what).toContain("integrations/opencode/index.js"); // a checkout can still list it in opencode.json
    expect(integrationStatus(g, list({ integrations: [entry(false, "not installed")] })).state).toBe("not-seen");
    expect(integrationStatus(g, list({ integrations: [entry(true, "plugin configured in x")] }))).toEqual({ state: "installed", detail: "plugin configured in x" });
    expect(integrationStatus(g, list({ engines: [engine("opencode")], integrations: [entry(true, "plugin seen")] })).state).toBe("armed");
  });
});
