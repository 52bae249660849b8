// The mode pill and its menu (ARCHITECTURE.md, "Modes and decisions"), as data. The pill never
// promises protection nobody backs: without a live engine or an installed
// hook it reads "Cache: not armed" whatever the mode says.

import { formatInt, formatTokens } from "../format";
import type { EnginesList, Fold, Mode, ModeState, Scope, Session } from "./types";
import { MODES } from "./types";

export type PillState = Mode | "not-armed";

export interface PillModeItem {
  mode: Mode;
  title: string;
  hint: string;
  checked: boolean;
}

export interface PillView {
  state: PillState;
  /** "?" for ask, "✓" for auto and off, "!" when nothing is armed. */
  glyph: string;
  label: string;
  /** The long sentence: the tooltip, and what the collapsed pill stands for. */
  tooltip: string;
  scope: Scope;
  /** "Context 837k of 1.05M · rewrite at 839k", null without a session. */
  contextLine: string | null;
  /** "Cache warm for 3:12 more", or that it expired; null when unknown. */
  cacheLine: string | null;
  /** "28 tool results pruned · 724k re-read in full (declined, nothing changed)". */
  lastRewriteLine: string | null;
  /** "2 engines · Claude Code hook installed", or how to arm. */
  armedLine: string;
  items: PillModeItem[];
}

export const MODE_HINTS: Record<Mode, { title: string; hint: string; sentence: string }> = {
  ask: {
    title: "Ask",
    hint: "Hold each rewrite until you answer, price in view",
    sentence: "Ask: tollgate holds every context rewrite until you answer, with its price in front of you.",
  },
  auto: {
    title: "Auto",
    hint: "Allow rewrites at once; see their cost afterwards",
    sentence: "Auto: rewrites go ahead at once; tollgate prices each one and shows the cost on the dashboard.",
  },
  off: {
    title: "Off",
    hint: "Harnesses compact as shipped; only record requests",
    sentence: "Off: harnesses compact as shipped; tollgate records requests but prices and asks nothing.",
  },
};

const NOT_ARMED_SENTENCE =
  "Not armed: no harness engine is connected and no hook is installed, so no rewrite is guarded yet. The Integrations page says how to connect one.";

export function pillState(m: Pick<ModeState, "armed" | "mode">): PillState {
  return m.armed ? m.mode : "not-armed";
}

export function pillLabel(state: PillState): string {
  return state === "not-armed" ? "Cache: not armed" : `Cache: ${state}`;
}

export function pillGlyph(state: PillState): string {
  switch (state) {
    case "ask":
      return "?";
    case "not-armed":
      return "!";
    default:
      return "✓";
  }
}

export function armedLine(engines: EnginesList | null): string {
  if (!engines) return "Checking what is armed…";
  const parts: string[] = [];
  const n = engines.engines.length;
  if (n > 0) parts.push(n === 1 ? "1 engine" : `${formatInt(n)} engines`);
  for (const i of engines.integrations) {
    if (i.installed) parts.push(`${i.label || i.name} hook installed${i.verified ? "" : " (not verified)"}`);
  }
  return parts.length > 0 ? parts.join(" · ") : "Nothing armed: connect a harness (see Integrations)";
}

export function contextLine(s: Pick<Session, "lastContextTokens" | "contextWindow" | "thresholdTokens"> | null): string | null {
  if (!s || !s.lastContextTokens || !s.contextWindow) return null;
  let line = `Context ${formatTokens(s.lastContextTokens)} of ${formatTokens(s.contextWindow)}`;
  if (s.thresholdTokens) line += ` · rewrite at ${formatTokens(s.thresholdTokens)}`;
  return line;
}

/** Seconds as a countdown: 3:12, 1:02:05. */
export function countdown(sec: number): string {
  const s = Math.max(0, Math.floor(sec));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/**
 * How long the session's cached prefix stays warm, at now (ms): "Cache warm
 * for 3:12 more"; once past, that it expired (the next request re-reads the
 * context in full, and a rewrite then costs nothing extra).
 */
export function cacheLine(s: Pick<Session, "cacheWarmUntil"> | null, now: number): string | null {
  if (!s?.cacheWarmUntil) return null;
  const until = Date.parse(s.cacheWarmUntil);
  if (Number.isNaN(until)) return null;
  const left = (until - now) / 1000;
  if (left >= 1) return `Cache warm for ${countdown(left)} more`;
  return "Cache already expired: the next request re-reads the context in full";
}

/** A fold as one line. Prune counts come with the fold when the guard knows them. */
export function lastRewriteLine(f: (Fold & { pruneCount?: number }) | null): string | null {
  if (!f) return null;
  let what: string;
  if (f.kind === "prune") {
    what = f.pruneCount ? `${formatInt(f.pruneCount)} tool result${f.pruneCount === 1 ? "" : "s"} pruned` : `Pruned at ${formatTokens(f.preTokens)}`;
  } else {
    what = `Summarized at ${formatTokens(f.preTokens)}`;
  }
  const declined = f.decision === "decline";
  // A declined rewrite never ran: what it would have re-read is the prediction.
  const cold = declined ? f.predictedColdTokens : (f.actualColdTokens ?? f.predictedColdTokens);
  const reread = cold === null ? "not priced" : `${formatTokens(cold)} re-read in full`;
  let status = "";
  if (declined) status = " (declined, nothing changed)";
  else if (f.applied === false) status = " (allowed, not applied)";
  else if (f.actualColdTokens === null && f.predictedColdTokens !== null && f.decision === "allow") status = " (predicted)";
  return `${what} · ${reread}${status}`;
}

export interface PillInput {
  mode: ModeState;
  engines: EnginesList | null;
  /** The session the context line describes: the open one, else the latest. */
  session: Session | null;
  lastFold: Fold | null;
  /** Now, in milliseconds: the cache countdown's clock (no countdown without it). */
  now?: number;
}

export function pillView(input: PillInput): PillView {
  const state = pillState(input.mode);
  const effective = input.mode.mode;
  return {
    state,
    glyph: pillGlyph(state),
    label: pillLabel(state),
    tooltip: state === "not-armed" ? NOT_ARMED_SENTENCE : MODE_HINTS[state].sentence,
    scope: input.mode.scope,
    contextLine: contextLine(input.session),
    cacheLine: input.now === undefined ? null : cacheLine(input.session, input.now),
    lastRewriteLine: lastRewriteLine(input.lastFold),
    armedLine: armedLine(input.engines),
    items: MODES.map((m) => ({ mode: m, title: MODE_HINTS[m].title, hint: MODE_HINTS[m].hint, checked: m === effective })),
  };
}
