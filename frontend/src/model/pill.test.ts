import { describe, expect, it } from "vitest";
import { armedLine, cacheLine, contextLine, countdown, lastRewriteLine, pillView } from "./pill";
import type { EnginesList, Fold, ModeState } from "./types";

const mode = (over: Partial<ModeState> = {}): ModeState => ({ mode: "ask", label: "Cache: ask", scope: "global", armed: true, global: "ask", ...over });
const engines = (n: number, hook = false): EnginesList => ({
  armed: n > 0 || hook,
  engines: Array.from({ length: n }, (_, i) => ({ engine: `e_${i}`, harness: "dsh", registeredAt: "", lastContact: "", expiresAt: "" })),
  integrations: [{ name: "claude-code", label: "Claude Code", installed: hook, verified: hook, detail: "", lastDecision: null }],
});
const fold = (over: Partial<Fold> = {}): Fold => ({
  rewrite: "r_1", seq: 120, at: "", kind: "prune", trigger: "pressure", preTokens: 838_000, predictedColdTokens: 724_000,
  actualColdTokens: null, summaryCall: null, decision: "decline", reason: "user", mode: "ask", order: "prune-only", applied: null, costUSD: 0, ...over,
});

describe("pill label", () => {
  it("shows the mode only when something is armed", () => {
    const ask = pillView({ mode: mode(), engines: null, session: null, lastFold: null });
    expect([ask.glyph, ask.label, ask.state]).toEqual(["?", "Cache: ask", "ask"]);
    const auto = pillView({ mode: mode({ mode: "auto" }), engines: null, session: null, lastFold: null });
    expect([auto.glyph, auto.label]).toEqual(["✓", "Cache: auto"]);
    const off = pillView({ mode: mode({ mode: "off" }), engines: null, session: null, lastFold: null });
    expect([off.glyph, off.label]).toEqual(["✓", "Cache: off"]);
    const none = pillView({ mode: mode({ armed: false, mode: "auto" }), engines: null, session: null, lastFold: null });
    expect([none.label, none.state]).toEqual(["Cache: not armed", "not-armed"]);
    expect(none.tooltip).toMatch(/nothing|no rewrite is guarded/i);
  });

  it("the tooltip is the long sentence of the mode", () => {
    expect(pillView({ mode: mode(), engines: null, session: null, lastFold: null }).tooltip).toMatch(/^Ask: tollgate holds every context rewrite/);
  });

  it("checks the effective mode among three items", () => {
    const v = pillView({ mode: mode({ mode: "auto" }), engines: null, session: null, lastFold: null });
    expect(v.items.map((i) => [i.mode, i.checked])).toEqual([["ask", false], ["auto", true], ["off", false]]);
    expect(v.items.every((i) => i.hint.length > 0)).toBe(true);
  });
});

describe("pill menu lines", () => {
  it("context line", () => {
    expect(contextLine({ lastContextTokens: 837_000, contextWindow: 1_048_576, thresholdTokens: 838_861 })).toBe("Context 837k of 1.05M · rewrite at 839k");
    expect(contextLine({ lastContextTokens: 837_000, contextWindow: 1_048_576, thresholdTokens: 0 })).toBe("Context 837k of 1.05M");
    expect(contextLine(null)).toBeNull();
  });

  it("last rewrite line", () => {
    expect(lastRewriteLine({ ...fold(), pruneCount: 28 })).toBe("28 tool results pruned · 724k re-read in full (declined, nothing changed)");
    expect(lastRewriteLine(fold({ kind: "summary", decision: "allow", actualColdTokens: 255_000, applied: true }))).toBe("Summarized at 838k · 255k re-read in full");
    expect(lastRewriteLine(fold({ decision: "allow", applied: false }))).toBe("Pruned at 838k · 724k re-read in full (allowed, not applied)");
    expect(lastRewriteLine(fold({ decision: "allow", applied: true }))).toBe("Pruned at 838k · 724k re-read in full (predicted)");
    expect(lastRewriteLine(fold({ decision: "allow", predictedColdTokens: null, reason: "off" }))).toBe("Pruned at 838k · not priced");
    expect(lastRewriteLine(null)).toBeNull();
  });

  it("armed line", () => {
    expect(armedLine(engines(2, true))).toBe("2 engines · Claude Code hook installed");
    expect(armedLine(engines(1))).toBe("1 engine");
    // The label is the API's; an older tollgate's entry without one reads as its name.
    expect(armedLine({ armed: true, engines: [], integrations: [{ name: "codex", installed: true, verified: false, detail: "", lastDecision: null }] })).toBe("codex hook installed (not verified)");
    expect(armedLine(engines(0))).toMatch(/^Nothing armed/);
    expect(armedLine(null)).toMatch(/Checking/);
  });
});

describe("the cache countdown", () => {
  const now = Date.parse("2026-11-30T10:00:00Z");
  it("says how long the cache stays warm, as M:SS or H:MM:SS", () => {
    expect(cacheLine({ cacheWarmUntil: "2026-11-30T10:03:12Z" }, now)).toBe("Cache warm for 3:12 more");
    expect(cacheLine({ cacheWarmUntil: "2026-11-30T11:02:05.900Z" }, now)).toBe("Cache warm for 1:02:05 more");
    expect(countdown(59.9)).toBe("0:59");
  });
  it("says the cache expired once the TTL has passed", () => {
    expect(cacheLine({ cacheWarmUntil: "2026-11-30T09:59:00Z" }, now)).toBe("Cache already expired: the next request re-reads the context in full");
    expect(cacheLine({ cacheWarmUntil: "2026-11-30T10:00:00.500Z" }, now)).toMatch(/expired/);
  });
  it("says nothing without a known expiry or a clock", () => {
    expect(cacheLine({ cacheWarmUntil: null }, now)).toBeNull();
    expect(cacheLine(null, now)).toBeNull();
    expect(cacheLine({ cacheWarmUntil: "soon" }, now)).toBeNull();
    const s = { cacheWarmUntil: "2026-11-30T10:03:12Z" } as unknown as Parameters<typeof pillView>[0]["session"];
    expect(pillView({ mode: mode(), engines: null, session: s, lastFold: null }).cacheLine).toBeNull();
    expect(pillView({ mode: mode(), engines: null, session: s, lastFold: null, now }).cacheLine).toBe("Cache warm for 3:12 more");
  });
});
