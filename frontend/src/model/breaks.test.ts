import { describe, expect, it } from "vitest";
import { breakMarkers, breakNear, causeSplit, dominantLine, formatGap, startedByLabel, startedByWords } from "./breaks";
import type { BreakCauseStarted, BreakSummary, CacheBreak } from "./types";

const usd = (x: number) => "$" + x.toFixed(2);

const brk = (over: Partial<CacheBreak> = {}): CacheBreak => ({
  seq: 10, at: "2026-11-30T10:00:00Z", thread: "", model: "claude-opus-4-6", cause: "prefix", startedBy: "task-notification", gapSeconds: 5,
  ttlSeconds: 300, expectedCachedTokens: 98_232, cacheReadTokens: 21_478, rebilledTokens: 76_754, premiumUSD: 0.4413, rewrite: null, ...over,
});

const start = (cause: BreakCauseStarted["cause"], startedBy: string, breaks: number, premiumUSD: number): BreakCauseStarted => ({ cause, startedBy, breaks, rebilledTokens: breaks * 1000, premiumUSD });

function summary(byStart: BreakCauseStarted[], days = 7): BreakSummary {
  const premiumUSD = byStart.reduce((a, s) => a + s.premiumUSD, 0);
  const causes = new Map<string, { breaks: number; premiumUSD: number; rebilledTokens: number }>();
  for (const s of byStart) {
    const c = causes.get(s.cause) ?? { breaks: 0, premiumUSD: 0, rebilledTokens: 0 };
    c.breaks += s.breaks;
    c.premiumUSD += s.premiumUSD;
    c.rebilledTokens += s.rebilledTokens;
    causes.set(s.cause, c);
  }
  return {
    days, since: "", byStart, sessions: [], premiumUSD, breaks: byStart.reduce((a, s) => a + s.breaks, 0), rebilledTokens: 0,
    byCause: [...causes].map(([cause, c]) => ({ cause: cause as BreakCauseStarted["cause"], ...c })),
  };
}

describe("the plain-words line", () => {
  it("names a dominant prefix cause by what started it", () => {
    const s = summary([start("prefix", "task-notification", 4, 1.7), start("idle", "user-prompt", 2, 0.95), start("rewrite", "after-compaction", 2, 0.2)]);
    expect(dominantLine(s, usd)).toBe("4 breaks after background-task notifications cost $1.70 this week");
  });
  it("groups idle gaps whatever started them, and counts one break in the singular", () => {
    expect(dominantLine(summary([start("idle", "user-prompt", 1, 0.47), start("idle", "user-answer", 1, 0.48), start("prefix", "tool-result", 1, 0.1)], 30), usd)).toBe(
      "2 breaks after idle gaps longer than the cache lives cost $0.95 in the last 30 days",
    );
    expect(dominantLine(summary([start("family", "conversation", 1, 2)], 1), usd)).toBe("1 break after model switches cost $2.00 today");
  });
  it("says nothing when no cause holds half the premium, or nothing was lost", () => {
    expect(dominantLine(summary([start("prefix", "task-notification", 1, 1), start("idle", "user-prompt", 1, 1), start("family", "", 1, 1)]), usd)).toBeNull();
    expect(dominantLine(summary([]), usd)).toBeNull();
  });
});

describe("the split by cause", () => {
  it("keeps the ledger's order and gives each cause its share of the premium", () => {
    const split = causeSplit(summary([start("prefix", "task-notification", 3, 1.5), start("rewrite", "after-compaction", 1, 0.5)]));
    expect(split.map((c) => [c.cause, c.share, c.breaks])).toEqual([
      ["rewrite", 0.25, 1],
      ["prefix", 0.75, 3],
    ]);
    expect(new Set(split.map((c) => c.color)).size).toBe(2);
  });
  it("gives zero shares when nothing was lost", () => {
    expect(causeSplit({ byCause: [{ cause: "idle", breaks: 1, rebilledTokens: 5, premiumUSD: 0 }], premiumUSD: 0 })[0]!.share).toBe(0);
  });
});

describe("markers and words", () => {
  it("marks only the main conversation's breaks, coloured by cause", () => {
    const m = breakMarkers([brk({ seq: 3, cause: "idle" }), brk({ seq: 4, thread: "agent-a1" }), brk({ seq: 9 })]);
    expect(m.map((x) => [x.seq, x.cause])).toEqual([
      [3, "idle"],
      [9, "prefix"],
    ]);
    expect(m[0]!.color).not.toBe(m[1]!.color);
    expect(breakNear(m, 8.4, 1)?.seq).toBe(9);
    expect(breakNear(m, 6, 1)).toBeNull();
  });
  it("writes gaps and starts in words", () => {
    expect([formatGap(5), formatGap(1153), formatGap(15_070), formatGap(90_000), formatGap(-1)]).toEqual(["5 s", "19 min 13 s", "4 h 11 min", "1 d 1 h", "—"]);
    expect([startedByLabel("task-notification"), startedByLabel(""), startedByLabel("conversation")]).toEqual(["task notification", "—", "conversation"]);
    expect(startedByWords("weird")).toBe("requests");
  });
});
