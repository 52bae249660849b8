// The rewrite dialog's words (ARCHITECTURE.md, "The UI"), computed from a pending question.
// Pure: the component only renders what this returns, so every sentence the
// user reads is unit-tested.

import { formatCount, formatCountdown, formatInt, formatPercent, formatTokenRange, formatTokens, formatUSD } from "../format";
import { declineEffect } from "./harnesses";
import type { AnsweredBy, ColdPart, ColdPrediction, DecidedRewrite, Harness, PendingRewrite, Quote } from "./types";

export interface DialogLine {
  /** Stable name of the line, for tests and styling. */
  kind: "expired" | "context" | "summary" | "predicted" | "prune" | "break" | "breakEven" | "overThreshold" | "offPeak" | "unpriced" | "declineEffect";
  text: string;
  tone?: "good" | "warn";
}

export interface DialogModel {
  title: string;
  intro: string;
  /** Who asks: "dsh · session s1 · turn 17". */
  source: string;
  lines: DialogLine[];
}


function introFor(trigger: string): string {
  switch (trigger) {
    case "context-overflow":
      return "The context no longer fits the model's window. Allow a rewrite?";
    case "manual":
      return "A compaction you asked for is ready. Allow it?";
    default:
      return "An automatic context rewrite is ready. Allow it?";
  }
}

function contextLine(q: Quote): string {
  const base = `Context: ${formatTokens(q.contextTokens)} of ${formatTokens(q.contextWindow)}`;
  return q.thresholdTokens > 0 ? `${base} (rewrite at ${formatTokens(q.thresholdTokens)})` : base;
}

function summaryLine(q: Quote, lead: string): DialogLine | null {
  if (!q.summary) return null;
  const est = q.summary.estimated ? " (estimated)" : "";
  return {
    kind: "summary",
    text: `${lead}: ~${formatTokens(q.summary.checkpointTokens)} checkpoint${est} instead of ${formatTokens(q.summary.spanTokens)}`,
  };
}

function pruneLine(q: Quote, phrase: (results: string) => string): DialogLine | null {
  if (q.prune.count <= 0) return null;
  const results = formatCount(q.prune.count, "old tool result", "old tool results");
  return { kind: "prune", text: `${phrase(results)}: ${formatTokens(q.prune.freedTokens)} freed` };
}

/** What the recommended ordering does, in the order it does it. */
function planLines(q: Quote): DialogLine[] {
  const order = q.order || q.recommended;
  const out: (DialogLine | null)[] = [];
  switch (order) {
    case "prune-then-summarize":
      out.push(pruneLine(q, (r) => `First prunes ${r}`));
      out.push(summaryLine(q, "Then summarizes"));
      break;
    case "prune-only":
      out.push(pruneLine(q, (r) => `Prunes ${r}`));
      break;
    default: // summarize-then-prune-tail, and a plan with only a summary
      out.push(summaryLine(q, "Summarizes"));
      out.push(pruneLine(q, (r) => `Then prunes ${r} after it`));
  }
  return out.filter((l): l is DialogLine => l !== null);
}

function breakLine(q: Quote): DialogLine {
  const cold = formatTokens(q.coldTokens);
  const share = formatPercent(q.coldShare);
  const cost = formatUSD(q.costUSD.breakPremium);
  if (q.cacheExpired) {
    return { kind: "break", text: `Re-reads ${cold} in full, as any request would now · ${cost} extra` };
  }
  if (q.coldTokens <= 0) {
    return { kind: "break", text: `Keeps the cache: nothing is re-read in full · ${cost}`, tone: "good" };
  }
  // Position -1: the break lies inside the envelope. With some of it still
  // cached that is only the cache's granularity rounding the envelope down,
  // i.e. the start of the history; with none cached, everything is cold.
  let where = `at position ${formatInt(q.breakAt.position)}`;
  if (q.breakAt.position < 0) where = q.breakAt.cachedTokens > 0 ? "at the start of the history" : "from the first token (tools and system prompt included)";
  return { kind: "break", text: `Breaks the cache ${where}: ${cold} re-read in full (${share} of the request) · ${cost}` };
}

function breakEvenLine(q: Quote): DialogLine | null {
  const n = q.breakEvenRequests;
  if (q.cacheExpired) return null; // the lead line already says it costs nothing extra
  if (n === null || n === undefined) return { kind: "breakEven", text: "Saves nothing on later requests", tone: "warn" };
  if (n <= 0) return { kind: "breakEven", text: "Costs nothing extra", tone: "good" };
  return { kind: "breakEven", text: `Pays for itself after ~${formatCount(n, "request", "requests")}` };
}

function partText(p: ColdPart): string {
  const t = formatTokens(p.tokens);
  switch (p.name) {
    case "summary":
      return `summary ~${t}`;
    case "files": {
      const n = p.count ?? 0;
      return `${formatCount(n, "restored file", "restored files")} ${t}`;
    }
    case "plan+skills":
      return `plan and skills ${t}`;
    case "manual":
      return `/compact output ${t}`;
    default:
      return `${p.name} ${t}`;
  }
}

/** "Summary ~4.3k, 5 restored files 7k, base 2.8k → 14k re-read in full (11–17k)". */
function predictedLine(p: ColdPrediction): DialogLine | null {
  const parts = (p.parts ?? []).filter((x) => x.tokens > 0 || x.name === "summary");
  if (parts.length === 0) return null;
  const total = parts.reduce((n, x) => n + x.tokens, 0);
  let text = parts.map(partText).join(", ");
  text = text.charAt(0).toUpperCase() + text.slice(1);
  text += ` → ${formatTokens(total)} re-read in full`;
  if (p.high > p.low) text += ` (${formatTokenRange(p.low, p.high)})`;
  return { kind: "predicted", text };
}

/** "9 min ago", "2 h ago", "just now". */
function agoText(seconds: number): string {
  if (seconds < 60) return "just now";
  const min = Math.round(seconds / 60);
  if (min < 90) return `${min} min ago`;
  return `${Math.round(min / 60)} h ago`;
}

/**
 * What Not now does beyond skipping the rewrite, where the harness cannot
 * skip only that (a Codex hook stops the compaction by ending the turn): the
 * harness's decline text in GET /v1/harnesses.
 */
function declineEffectLine(harness: string, harnesses: readonly Harness[]): DialogLine | null {
  const text = declineEffect(harnesses, harness);
  return text ? { kind: "declineEffect", text, tone: "warn" } : null;
}

/** The dialog for one pending rewrite; harnesses are GET /v1/harnesses'. */
export function dialogModel(p: PendingRewrite, harnesses: readonly Harness[] = []): DialogModel {
  const sourceParts = [p.harness || "a harness", `session ${p.session}`];
  if (p.turn) sourceParts.push(`turn ${p.turn}`);
  const model: DialogModel = {
    title: "Context rewrite",
    intro: introFor(p.trigger),
    source: sourceParts.join(" · "),
    lines: [],
  };
  const q = p.quote;
  const effect = declineEffectLine(p.harness, harnesses);
  if (!q) {
    model.lines.push({ kind: "unpriced", text: "This rewrite could not be priced.", tone: "warn" });
    if (effect) model.lines.push(effect);
    return model;
  }
  const lines = model.lines;
  const pred = p.prediction ?? null;
  const expiredAgo = pred?.cacheExpiredSeconds ?? 0;
  // ARCHITECTURE.md, "Modes and decisions": when the cache is already cold the dialog leads with it.
  if (expiredAgo > 0) {
    lines.push({ kind: "expired", text: `The cache expired ${agoText(expiredAgo)}: this rewrite costs little extra now`, tone: "good" });
  } else if (q.cacheExpired) {
    lines.push({ kind: "expired", text: "Cache already expired — this rewrite costs nothing extra", tone: "good" });
  }
  lines.push({ kind: "context", text: contextLine(q) });
  lines.push(...planLines(q));
  // The predicted parts follow the summary they start with.
  const pl = pred ? predictedLine(pred) : null;
  if (pl) {
    const at = lines.findIndex((l) => l.kind === "summary");
    lines.splice(at < 0 ? lines.length : at + 1, 0, pl);
  }
  lines.push(breakLine(q));
  const be = breakEvenLine(q);
  if (be) lines.push(be);
  if (q.underThreshold === false && q.thresholdTokens > 0) {
    lines.push({ kind: "overThreshold", text: `Still over the rewrite threshold afterwards: ${formatTokens(q.nextRequestTokens)}`, tone: "warn" });
  }
  if (q.offPeak) lines.push({ kind: "offPeak", text: "Priced at off-peak rates" });
  if (effect) lines.push(effect);
  return model;
}

/** Seconds until the question is declined, from deadlineAt (else askedAt + deadlineSeconds). */
export function secondsLeft(p: Pick<PendingRewrite, "deadlineAt" | "askedAt" | "deadlineSeconds">, nowMs: number): number {
  let deadline = Date.parse(p.deadlineAt);
  if (Number.isNaN(deadline)) deadline = Date.parse(p.askedAt) + p.deadlineSeconds * 1000;
  if (Number.isNaN(deadline)) return 0;
  return Math.max(0, (deadline - nowMs) / 1000);
}

/** "declines in 0:24". */
export function countdownText(seconds: number): string {
  return `declines in ${formatCountdown(seconds)}`;
}

/** The note a question shows when it was decided somewhere else. */
export function decidedElsewhereNote(d: DecidedRewrite): string {
  const verdict = d.decision === "allow" ? "allowed" : "declined";
  switch (d.reason) {
    case "timeout":
      return "Declined: no answer before the deadline";
    case "muted":
      return "Declined: you said not now earlier in this turn";
    case "auto":
      return "Allowed automatically (mode changed to auto)";
    case "off":
      return "Allowed: the guard was switched off";
    case "question-limit":
      return "Allowed unasked: too many questions were waiting";
  }
  switch (d.answeredBy) {
    case "window":
      return `Answered in the tollgate window: ${verdict}`;
    case "browser":
      return `Answered in a browser: ${verdict}`;
    case "tray":
      return `Answered from the tray: ${verdict}`;
    case "owner-token":
      return `Answered with the owner token: ${verdict}`;
  }
  return `Decided elsewhere: ${verdict}`;
}

/** The Rewrites table's "Answered by" cell. */
export function answeredByLabel(a: AnsweredBy | undefined): string {
  switch (a) {
    case "window":
      return "window";
    case "browser":
      return "browser";
    case "tray":
      return "tray";
    case "owner-token":
      return "owner token";
  }
  return "—";
}

/** The question queue: oldest first, each rewrite once. */
export class QuestionQueue {
  private items: PendingRewrite[] = [];

  /** Adds a question; false when it is already queued. */
  add(p: PendingRewrite): boolean {
    if (this.items.some((i) => i.rewrite === p.rewrite)) return false;
    this.items.push(p);
    return true;
  }

  /** Removes a question; returns it when it was queued. */
  remove(id: string): PendingRewrite | undefined {
    const i = this.items.findIndex((x) => x.rewrite === id);
    if (i < 0) return undefined;
    return this.items.splice(i, 1)[0];
  }

  /** Drops questions whose deadline has passed (the guard declines them anyway). */
  expire(nowMs: number): PendingRewrite[] {
    const gone = this.items.filter((p) => secondsLeft(p, nowMs) <= 0);
    this.items = this.items.filter((p) => secondsLeft(p, nowMs) > 0);
    return gone;
  }

  get current(): PendingRewrite | undefined {
    return this.items[0];
  }

  get size(): number {
    return this.items.length;
  }

  has(id: string): boolean {
    return this.items.some((p) => p.rewrite === id);
  }
}
