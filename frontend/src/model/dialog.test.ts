import { describe, expect, it } from "vitest";
import { formatTokenRange } from "../format";
import { answeredByLabel, countdownText, decidedElsewhereNote, dialogModel, QuestionQueue, secondsLeft } from "./dialog";
import { HARNESSES } from "./testdata/harnesses";
import { pending, quote } from "./testdata/quote";

const texts = (p = pending()) => dialogModel(p).lines.map((l) => l.text);

describe("a Claude Code fold's predicted parts", () => {
  const prediction = {
    low: 11_300,
    high: 16_800,
    parts: [
      { name: "summary", tokens: 4_300 },
      { name: "files", tokens: 7_000, count: 5 },
      { name: "base", tokens: 2_800 },
    ],
  };

  it("names the parts, the sum and the band after the plan", () => {
    const lines = dialogModel(pending({ harness: "claude-code", prediction })).lines;
    const i = lines.findIndex((l) => l.kind === "predicted");
    expect(lines[i]).toEqual({ kind: "predicted", text: "Summary ~4.3k, 5 restored files 7k, base 2.8k → 14k re-read in full (11–17k)" });
    expect(lines[i - 1]?.kind).toBe("summary");
    expect(lines[i + 1]?.kind).toBe("prune");
  });

  it("one restored file is singular; plan, skills and a manual compaction's output are named", () => {
    const p = { low: 5_000, high: 5_000, parts: [{ name: "summary", tokens: 4_000 }, { name: "files", tokens: 900, count: 1 }, { name: "plan+skills", tokens: 700 }, { name: "manual", tokens: 0 }] };
    const line = dialogModel(pending({ prediction: p })).lines.find((l) => l.kind === "predicted");
    expect(line?.text).toBe("Summary ~4k, 1 restored file 900, plan and skills 700 → 5.6k re-read in full");
  });

  it("leads with how long ago the cache expired", () => {
    const lines = dialogModel(pending({ prediction: { ...prediction, cacheExpiredSeconds: 540 } })).lines;
    expect(lines[0]).toEqual({ kind: "expired", text: "The cache expired 9 min ago: this rewrite costs little extra now", tone: "good" });
    expect(lines.filter((l) => l.kind === "expired")).toHaveLength(1);
    const hours = dialogModel(pending({ prediction: { ...prediction, cacheExpiredSeconds: 2 * 3600 } })).lines[0];
    expect(hours?.text).toBe("The cache expired 2 h ago: this rewrite costs little extra now");
  });

  it("without a prediction nothing changes", () => {
    expect(dialogModel(pending({ prediction: null })).lines.map((l) => l.kind)).not.toContain("predicted");
    expect(dialogModel(pending({ prediction: { low: 0, high: 0, parts: [] } })).lines.map((l) => l.kind)).not.toContain("predicted");
  });

  it("formats a token range with the unit once", () => {
    expect(formatTokenRange(11_300, 16_800)).toBe("11–17k");
    expect(formatTokenRange(800, 1_200)).toBe("800–1.2k");
    expect(formatTokenRange(4_000, 4_000)).toBe("4k");
    expect(formatTokenRange(1_200_000, 3_000_000)).toBe("1.2–3M");
  });
});

describe("dialog lines (ARCHITECTURE.md, The UI)", () => {
  it("describes summarize-then-prune-tail like the design's example", () => {
    const m = dialogModel(pending());
    expect(m.title).toBe("Context rewrite");
    expect(m.intro).toBe("An automatic context rewrite is ready. Allow it?");
    expect(m.source).toBe("dsh · session s1 · turn 17");
    expect(texts()).toEqual([
      "Context: 839k of 1.05M (rewrite at 839k)",
      "Summarizes: ~4k checkpoint (estimated) instead of 544k",
      "Then prunes 12 old tool results after it: 31k freed",
      "Breaks the cache at position 0: 255k re-read in full (95% of the request) · $0.08",
      "Pays for itself after ~24 requests",
    ]);
  });

  it("prune-then-summarize prunes first", () => {
    expect(texts(pending({ quote: quote({ order: "prune-then-summarize" }) }))).toEqual([
      "Context: 839k of 1.05M (rewrite at 839k)",
      "First prunes 12 old tool results: 31k freed",
      "Then summarizes: ~4k checkpoint (estimated) instead of 544k",
      "Breaks the cache at position 0: 255k re-read in full (95% of the request) · $0.08",
      "Pays for itself after ~24 requests",
    ]);
  });

  it("prune-only has no summary line, and one result is singular", () => {
    const q = quote({ order: "prune-only", summary: null, summaryCall: null, prune: { count: 1, freedTokens: 4_470 }, breakAt: { position: 312, unitId: "seq-312", cachedTokens: 700_000 }, coldTokens: 134_391, coldShare: 0.161 });
    expect(texts(pending({ quote: q }))).toEqual([
      "Context: 839k of 1.05M (rewrite at 839k)",
      "Prunes 1 old tool result: 4.5k freed",
      "Breaks the cache at position 312: 134k re-read in full (16% of the request) · $0.08",
      "Pays for itself after ~24 requests",
    ]);
  });

  it("the description follows the recommended ordering, not an alternative", () => {
    const q = quote({ order: "summarize-then-prune-tail", recommended: "summarize-then-prune-tail" });
    q.alternatives = [{ ...q, order: "prune-then-summarize", coldTokens: 800_000 }, q];
    expect(texts(pending({ quote: q }))[3]).toContain("255k re-read in full");
  });

  it("leads with an expired cache and drops the break-even line", () => {
    const q = quote({ cacheExpired: true, costUSD: { nextRequest: 0.08, summaryCall: 0.0048, baselineNextRequest: 0.08, breakPremium: 0.0048 } });
    const lines = dialogModel(pending({ quote: q })).lines;
    expect(lines[0]).toEqual({ kind: "expired", text: "Cache already expired — this rewrite costs nothing extra", tone: "good" });
    expect(lines.map((l) => l.kind)).not.toContain("breakEven");
    expect(lines.find((l) => l.kind === "break")?.text).toBe("Re-reads 255k in full, as any request would now · $0.0048 extra");
  });

  it("says when nothing is saved, when nothing breaks, and when the break is in the envelope", () => {
    expect(texts(pending({ quote: quote({ breakEvenRequests: null }) }))).toContain("Saves nothing on later requests");
    expect(texts(pending({ quote: quote({ breakEvenRequests: 0 }) }))).toContain("Costs nothing extra");
    expect(texts(pending({ quote: quote({ breakEvenRequests: 1 }) }))).toContain("Pays for itself after ~1 request");
    expect(texts(pending({ quote: quote({ coldTokens: 0, coldShare: 0 }) }))[3]).toMatch(/^Keeps the cache/);
    expect(texts(pending({ quote: quote({ breakAt: { position: -1, unitId: "", cachedTokens: 0 }, coldShare: 1 }) }))[3]).toBe(
      "Breaks the cache from the first token (tools and system prompt included): 255k re-read in full (100% of the request) · $0.08",
    );
    expect(texts(pending({ quote: quote({ breakAt: { position: -1, unitId: "", cachedTokens: 12_992 } }) }))[3]).toBe(
      "Breaks the cache at the start of the history: 255k re-read in full (95% of the request) · $0.08",
    );
  });

  it("warns when the rewrite still leaves the context over the threshold", () => {
    const lines = texts(pending({ quote: quote({ underThreshold: false, nextRequestTokens: 850_000 }) }));
    expect(lines).toContain("Still over the rewrite threshold afterwards: 850k");
  });

  it("names the trigger in the intro", () => {
    expect(dialogModel(pending({ trigger: "context-overflow" })).intro).toMatch(/no longer fits/);
    expect(dialogModel(pending({ trigger: "manual" })).intro).toMatch(/you asked for/);
  });

  it("a quote-less question still renders", () => {
    expect(dialogModel(pending({ quote: null })).lines).toEqual([{ kind: "unpriced", text: "This rewrite could not be priced.", tone: "warn" }]);
  });

  it("without a threshold the context line has no rewrite point", () => {
    expect(texts(pending({ quote: quote({ thresholdTokens: 0 }) }))[0]).toBe("Context: 839k of 1.05M");
  });
});

describe("countdown", () => {
  const asked = Date.parse("2026-11-30T10:00:00Z");
  it("counts to deadlineAt", () => {
    expect(secondsLeft(pending(), asked + 4_000)).toBe(24);
    expect(countdownText(secondsLeft(pending(), asked + 4_000))).toBe("declines in 0:24");
    expect(secondsLeft(pending(), asked + 60_000)).toBe(0);
  });
  it("falls back to askedAt + deadlineSeconds", () => {
    expect(secondsLeft(pending({ deadlineAt: "" }), asked + 8_000)).toBe(20);
  });
});

describe("decided elsewhere", () => {
  const base = { rewrite: "r_1", session: "s1", mode: "ask" as const, order: "" };
  it("says who decided", () => {
    expect(decidedElsewhereNote({ ...base, decision: "allow", reason: "user", answeredBy: "browser" })).toBe("Answered in a browser: allowed");
    expect(decidedElsewhereNote({ ...base, decision: "decline", reason: "user", answeredBy: "window" })).toBe("Answered in the tollgate window: declined");
    expect(decidedElsewhereNote({ ...base, decision: "decline", reason: "timeout", answeredBy: "" })).toBe("Declined: no answer before the deadline");
    expect(decidedElsewhereNote({ ...base, decision: "allow", reason: "auto", answeredBy: "" })).toMatch(/automatically/);
    expect(decidedElsewhereNote({ ...base, decision: "allow", reason: "user", answeredBy: "owner-token" })).toBe("Answered with the owner token: allowed");
    expect(decidedElsewhereNote({ ...base, decision: "allow", reason: "question-limit", answeredBy: "" })).toBe("Allowed unasked: too many questions were waiting");
  });
  it("labels the Rewrites table's answeredBy cell", () => {
    expect(answeredByLabel("owner-token")).toBe("owner token");
    expect(answeredByLabel("browser")).toBe("browser");
    expect(answeredByLabel("")).toBe("—");
    expect(answeredByLabel(undefined)).toBe("—");
  });
});

describe("question queue", () => {
  it("queues in order, once each, and expires past the deadline", () => {
    const q = new QuestionQueue();
    expect(q.add(pending({ rewrite: "a" }))).toBe(true);
    expect(q.add(pending({ rewrite: "b", deadlineAt: "2026-11-30T10:05:00Z" }))).toBe(true);
    expect(q.add(pending({ rewrite: "a" }))).toBe(false);
    expect(q.size).toBe(2);
    expect(q.current?.rewrite).toBe("a");
    expect(q.expire(Date.parse("2026-11-30T10:01:00Z")).map((p) => p.rewrite)).toEqual(["a"]);
    expect(q.current?.rewrite).toBe("b");
    expect(q.remove("b")?.rewrite).toBe("b");
    expect(q.size).toBe(0);
    expect(q.remove("b")).toBeUndefined();
  });
});

describe("what Not now does to a Codex turn", () => {
  it("says plainly that declining ends the Codex turn and that Codex asks again next turn", () => {
    const lines = dialogModel(pending({ harness: "codex" }), HARNESSES).lines;
    expect(lines[lines.length - 1]).toEqual({
      kind: "declineEffect",
      text: "Not now ends this Codex turn (the conversation keeps its full history); Codex proposes the compaction again on the next turn",
      tone: "warn",
    });
    const unpriced = dialogModel(pending({ harness: "codex", quote: null }), HARNESSES).lines;
    expect(unpriced.map((l) => l.kind)).toEqual(["unpriced", "declineEffect"]);
  });
  it("other harnesses skip only the rewrite: no such line", () => {
    for (const harness of ["claude-code", "reasonix", "dsh", ""]) {
      expect(dialogModel(pending({ harness }), HARNESSES).lines.some((l) => l.kind === "declineEffect")).toBe(false);
    }
  });
  it("the text is the harness list's: without the list, no line", () => {
    expect(dialogModel(pending({ harness: "codex" }), []).lines.some((l) => l.kind === "declineEffect")).toBe(false);
  });
});
