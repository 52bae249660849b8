// Sorting the sessions table. Strings compare case-insensitively without
// Intl collation (LANG=C hosts; see format.ts), numbers numerically, ties by
// id so the order is stable across live updates.

import type { Session } from "./types";

export type SessionSortKey =
  | "title"
  | "harness"
  | "profile"
  | "model"
  | "requests"
  | "tokens"
  | "hitRate"
  | "costUSD"
  | "folds"
  | "lastAt";

export type SortDirection = "asc" | "desc";

export interface SortSpec {
  key: SessionSortKey;
  dir: SortDirection;
}

/** Every token the session billed: prompt (all parts) and output. */
export function totalTokens(s: Pick<Session, "tokens">): number {
  const t = s.tokens;
  return t.input + t.cacheRead + t.cacheWrite + (t.cacheWrite1h ?? 0) + t.output;
}

function sortValue(s: Session, key: SessionSortKey): string | number {
  switch (key) {
    case "title":
      return (s.title || s.id).toLowerCase();
    case "harness":
    case "profile":
    case "model":
      return (s[key] ?? "").toLowerCase();
    case "tokens":
      return totalTokens(s);
    case "lastAt": {
      const t = Date.parse(s.lastAt);
      return Number.isNaN(t) ? 0 : t;
    }
    default:
      return s[key] ?? 0;
  }
}

/** The natural first direction of a column: newest, biggest first for figures. */
export function defaultDirection(key: SessionSortKey): SortDirection {
  return key === "title" || key === "harness" || key === "profile" || key === "model" ? "asc" : "desc";
}

/** Clicking a header: the same column flips, another starts at its natural direction. */
export function nextSort(current: SortSpec, clicked: SessionSortKey): SortSpec {
  if (current.key === clicked) return { key: clicked, dir: current.dir === "asc" ? "desc" : "asc" };
  return { key: clicked, dir: defaultDirection(clicked) };
}

export function sortSessions(list: readonly Session[], spec: SortSpec): Session[] {
  const sign = spec.dir === "asc" ? 1 : -1;
  return [...list].sort((a, b) => {
    const va = sortValue(a, spec.key);
    const vb = sortValue(b, spec.key);
    if (va < vb) return -sign;
    if (va > vb) return sign;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** Merges a fresh copy of one session into the list (a live update). */
export function upsertSession(list: readonly Session[], s: Session): Session[] {
  const i = list.findIndex((x) => x.id === s.id);
  if (i < 0) return [s, ...list];
  const out = [...list];
  out[i] = s;
  return out;
}
