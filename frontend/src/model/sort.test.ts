import { describe, expect, it } from "vitest";
import { nextSort, sortSessions, totalTokens, upsertSession } from "./sort";
import type { Session } from "./types";

const s = (id: string, over: Partial<Session> = {}): Session => ({
  id, harness: "dsh", profile: "p", provider: "deepseek", model: "m", title: "", startedAt: "2026-11-01T00:00:00Z", lastAt: "2026-11-01T00:00:00Z",
  requests: 1, tokens: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }, costUSD: 0, hitRate: 0, folds: 0, rewrites: 0, mode: "ask", ...over,
});

describe("sorting sessions", () => {
  const list = [
    s("a", { costUSD: 2, harness: "Claude-code", lastAt: "2026-11-03T00:00:00Z", tokens: { input: 10, cacheRead: 100, cacheWrite: 5, cacheWrite1h: 5, output: 1 } }),
    s("b", { costUSD: 10, harness: "dsh", lastAt: "2026-11-01T00:00:00Z" }),
    s("c", { costUSD: 2, harness: "aider", lastAt: "2026-11-02T00:00:00Z" }),
  ];
  it("by number, ties by id", () => {
    expect(sortSessions(list, { key: "costUSD", dir: "desc" }).map((x) => x.id)).toEqual(["b", "a", "c"]);
    expect(sortSessions(list, { key: "costUSD", dir: "asc" }).map((x) => x.id)).toEqual(["a", "c", "b"]);
  });
  it("by text, case-insensitively", () => {
    expect(sortSessions(list, { key: "harness", dir: "asc" }).map((x) => x.id)).toEqual(["c", "a", "b"]);
  });
  it("by time and by total tokens", () => {
    expect(sortSessions(list, { key: "lastAt", dir: "desc" }).map((x) => x.id)).toEqual(["a", "c", "b"]);
    expect(totalTokens(list[0]!)).toBe(121);
    expect(sortSessions(list, { key: "tokens", dir: "desc" })[0]!.id).toBe("a");
  });
  it("does not mutate its input", () => {
    sortSessions(list, { key: "costUSD", dir: "asc" });
    expect(list.map((x) => x.id)).toEqual(["a", "b", "c"]);
  });
  it("header clicks: flip the same column, natural direction for another", () => {
    expect(nextSort({ key: "costUSD", dir: "desc" }, "costUSD")).toEqual({ key: "costUSD", dir: "asc" });
    expect(nextSort({ key: "costUSD", dir: "asc" }, "harness")).toEqual({ key: "harness", dir: "asc" });
    expect(nextSort({ key: "harness", dir: "asc" }, "requests")).toEqual({ key: "requests", dir: "desc" });
  });
  it("upserts a live update", () => {
    expect(upsertSession(list, s("b", { costUSD: 11 })).find((x) => x.id === "b")?.costUSD).toBe(11);
    expect(upsertSession(list, s("d")).map((x) => x.id)).toEqual(["d", "a", "b", "c"]);
  });
});
