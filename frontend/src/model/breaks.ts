// The cache-break ledger for the views: colours and words per cause, the
// markers on the context chart, the Overview's split and its plain-words
// line. Pure, and tested in breaks.test.ts.

import type { BreakCause, BreakSummary, CacheBreak } from "./types";

export interface CauseInfo {
  cause: BreakCause;
  label: string;
  color: string;
  /** What the cause means, for a title attribute. */
  explain: string;
}

/** Every cause, in the ledger's order (the order they are tried). */
export const CAUSES: readonly CauseInfo[] = [
  { cause: "rewrite", label: "Rewrite", color: "#7b3fc4", explain: "a fold or prune rewrote the history the cache held" },
  { cause: "idle", label: "Idle", color: "#c77700", explain: "the session sat idle longer than the cache entries live" },
  { cause: "family", label: "Model switch", color: "#0f8a7a", explain: "another model held the conversation: each model has its own cache" },
  { cause: "prefix", label: "Prefix changed", color: "#d6336c", explain: "something before the new content changed, so the cache fell back" },
];

const byCause = new Map(CAUSES.map((c) => [c.cause, c]));

export function causeInfo(cause: string): CauseInfo {
  return byCause.get(cause as BreakCause) ?? { cause: cause as BreakCause, label: cause, color: "#8a93a5", explain: "" };
}

const startedLabels: Record<string, [short: string, words: string]> = {
  "task-notification": ["task notification", "background-task notifications"],
  "user-prompt": ["prompt", "your prompts"],
  "user-answer": ["answer", "your answers to the model's questions"],
  "tool-result": ["tool result", "tool results"],
  "after-compaction": ["after compaction", "compactions"],
  interrupt: ["interrupt", "interruptions"],
  "hook-output": ["hook output", "hook output"],
  meta: ["harness note", "harness notes"],
  "thread-start": ["subagent start", "subagent starts"],
};

/** What started a request, short, for a table cell. */
export function startedByLabel(s: string): string {
  return startedLabels[s]?.[0] ?? (s || "—");
}

/** What started a request, as words after "breaks after …". */
export function startedByWords(s: string): string {
  return startedLabels[s]?.[1] ?? "requests";
}

/** A gap as the dashboard writes it: 5 s, 19 min 13 s, 4 h 11 min, 3 d 2 h. */
export function formatGap(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export interface BreakMarker {
  seq: number;
  cause: BreakCause;
  color: string;
  brk: CacheBreak;
}

/** Markers for the context chart: it plots the main conversation, so only its breaks. */
export function breakMarkers(breaks: readonly CacheBreak[]): BreakMarker[] {
  return breaks.filter((b) => b.thread === "").map((b) => ({ seq: b.seq, cause: b.cause, color: causeInfo(b.cause).color, brk: b }));
}

/** The break nearest to x within `tolerance` requests, for the tooltip. */
export function breakNear(markers: readonly BreakMarker[], x: number, tolerance: number): BreakMarker | null {
  let best: BreakMarker | null = null;
  let bestDist = Infinity;
  for (const m of markers) {
    const d = Math.abs(m.seq - x);
    if (d <= tolerance && d < bestDist) {
      best = m;
      bestDist = d;
    }
  }
  return best;
}

export interface CauseShare extends CauseInfo {
  breaks: number;
  rebilledTokens: number;
  premiumUSD: number;
  /** Of the period's premium, 0…1. */
  share: number;
}

/** The period's premium split by cause, every cause that broke, in the ledger's order. */
export function causeSplit(sum: Pick<BreakSummary, "byCause" | "premiumUSD">): CauseShare[] {
  const out: CauseShare[] = [];
  for (const c of CAUSES) {
    const t = sum.byCause.find((x) => x.cause === c.cause);
    if (!t || t.breaks === 0) continue;
    out.push({ ...c, breaks: t.breaks, rebilledTokens: t.rebilledTokens, premiumUSD: t.premiumUSD, share: sum.premiumUSD > 0 ? t.premiumUSD / sum.premiumUSD : 0 });
  }
  return out;
}

/** "this week", "today", "in the last 30 days". */
export function periodWords(days: number): string {
  if (days === 1) return "today";
  if (days === 7) return "this week";
  return `in the last ${days} days`;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/**
 * The plain-words line for a dominant cause: "4 breaks after
 * background-task notifications cost $1.70 this week". A prefix break is
 * named by what started it, the other causes by themselves. Dominant: at
 * least half of the period's premium. null when nothing dominates.
 */
export function dominantLine(sum: Pick<BreakSummary, "byStart" | "premiumUSD" | "days">, usd: (x: number) => string): string | null {
  if (!(sum.premiumUSD > 0)) return null;
  const groups = new Map<string, { words: string; breaks: number; premiumUSD: number }>();
  for (const s of sum.byStart) {
    const key = s.cause === "prefix" ? "prefix:" + s.startedBy : s.cause;
    const words =
      s.cause === "prefix"
        ? `after ${startedByWords(s.startedBy)}`
        : s.cause === "idle"
          ? "after idle gaps longer than the cache lives"
          : s.cause === "family"
            ? "after model switches"
            : "from compactions and prunes";
    const g = groups.get(key) ?? { words, breaks: 0, premiumUSD: 0 };
    g.breaks += s.breaks;
    g.premiumUSD += s.premiumUSD;
    groups.set(key, g);
  }
  let top: { words: string; breaks: number; premiumUSD: number } | null = null;
  for (const g of groups.values()) if (!top || g.premiumUSD > top.premiumUSD) top = g;
  if (!top || top.premiumUSD < sum.premiumUSD / 2) return null;
  return `${plural(top.breaks, "break")} ${top.words} cost ${usd(top.premiumUSD)} ${periodWords(sum.days)}`;
}
