// The Settings form as data: which profile keys it edits, how typed text
// becomes a config value, and which field a 400 from the guard names.

import { formatPricePerM } from "../format";
import type { Profile, ProfileValue } from "./types";

export type FieldKind = "text" | "price" | "tokens" | "positive" | "select" | "bool";

export interface FieldSpec {
  key: string;
  label: string;
  kind: FieldKind;
  help?: string;
  options?: readonly string[];
  group: "prices" | "cache" | "behaviour" | "identity";
}

/** Every key of a profile the page edits, in the order it shows them (config.yaml spelling). */
export const PROFILE_FIELDS: readonly FieldSpec[] = [
  { key: "provider", label: "Provider", kind: "text", group: "identity" },
  { key: "model", label: "Model", kind: "text", group: "identity" },
  { key: "pricePerMTokens", label: "Input, cache miss", kind: "price", group: "prices", help: "USD per million tokens: full-price input" },
  { key: "cacheHitPricePerMTokens", label: "Cache hit", kind: "price", group: "prices", help: "USD per million tokens read from the cache" },
  { key: "cacheWritePricePerMTokens", label: "Cache write, 5 min", kind: "price", group: "prices", help: "0: the provider does not bill writes" },
  { key: "cacheWrite1hPricePerMTokens", label: "Cache write, 1 h", kind: "price", group: "prices", help: "0: no one-hour writes" },
  { key: "outputPricePerMTokens", label: "Output", kind: "price", group: "prices", help: "USD per million output tokens" },
  { key: "cacheKind", label: "Cache kind", kind: "select", options: ["positional", "breakpoint"], group: "cache", help: "positional: any prefix is reused; breakpoint: only prefixes ending at a cache breakpoint" },
  { key: "granularity", label: "Granularity", kind: "positive", group: "cache", help: "tokens per cache unit" },
  { key: "minimumPrefix", label: "Minimum prefix", kind: "tokens", group: "cache", help: "shortest prefix the provider caches" },
  { key: "ttlSeconds", label: "Cache TTL", kind: "tokens", group: "cache", help: "seconds an unused entry survives" },
  { key: "estimatedSummaryTokens", label: "Estimated summary", kind: "tokens", group: "behaviour", help: "checkpoint size assumed before a summary runs" },
  { key: "mode", label: "Default mode", kind: "select", options: ["", "ask", "auto", "off"], group: "behaviour", help: "empty: the global mode" },
  { key: "guardManual", label: "Ask about manual compactions", kind: "bool", group: "behaviour" },
];

export type Parsed = { ok: true; value: ProfileValue } | { ok: false, message: string };

/** Text typed into a field → the value sent (null removes the key from the profile). */
export function parseField(spec: FieldSpec, raw: string | boolean): Parsed {
  if (spec.kind === "bool") return { ok: true, value: raw === true || raw === "true" };
  const text = String(raw).trim();
  if (text === "") return { ok: true, value: null };
  switch (spec.kind) {
    case "text":
      return { ok: true, value: text };
    case "select":
      return spec.options?.includes(text) ? { ok: true, value: text } : { ok: false, message: `want one of ${spec.options?.filter((o) => o).join(", ")}` };
    case "price": {
      const f = Number(text.replace(/^\$/, ""));
      if (!Number.isFinite(f) || f < 0) return { ok: false, message: "want a price ≥ 0 in USD per million tokens" };
      return { ok: true, value: f };
    }
    case "tokens":
    case "positive": {
      const f = Number(text.replace(/[,_\s]/g, ""));
      if (!Number.isInteger(f) || f < 0) return { ok: false, message: "want a whole number ≥ 0" };
      if (spec.kind === "positive" && f === 0) return { ok: false, message: "want a whole number > 0" };
      return { ok: true, value: f };
    }
  }
  return { ok: false, message: "unknown field" };
}

/** The value of a key as the form shows it. */
export function displayValue(spec: FieldSpec, v: ProfileValue | undefined): string {
  if (v === undefined || v === null) return "";
  if (spec.kind === "price" && typeof v === "number") return formatPricePerM(v);
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** The keys a profile sets in config.yaml. */
export function profileKeys(p: Pick<Profile, "keys">): Record<string, ProfileValue> {
  return p.keys && typeof p.keys === "object" ? { ...p.keys } : {};
}

/**
 * What the profile resolves to (built-in entry + its own keys), shown as
 * the placeholder of a key the file leaves unset. The cache model spells
 * its keys like config.yaml.
 */
export function profileEffective(p: Pick<Profile, "model">): Record<string, ProfileValue> {
  return p.model && typeof p.model === "object" ? p.model : {};
}

/** Only the keys that changed: the body of PUT /v1/profiles/{name}. */
export function changedKeys(before: Record<string, ProfileValue>, after: Record<string, ProfileValue>): Record<string, ProfileValue> {
  const body: Record<string, ProfileValue> = {};
  for (const [k, v] of Object.entries(after)) {
    const was = before[k] ?? null;
    if (JSON.stringify(was) !== JSON.stringify(v)) body[k] = v;
  }
  return body;
}

/**
 * A 400 names the field as "profiles.<name>.<key>" (or "askTimeout", "mode");
 * returns the key the form shows it next to.
 */
export function fieldKeyOf(field: string | undefined, profile?: string): string | null {
  if (!field) return null;
  if (profile) {
    const prefix = `profiles.${profile}.`;
    if (field.toLowerCase().startsWith(prefix.toLowerCase())) return field.slice(prefix.length);
  }
  const dot = field.lastIndexOf(".");
  return dot >= 0 ? field.slice(dot + 1) : field;
}

/** "120s", "2m", "90" (seconds) → seconds; null when unreadable. */
export function parseDurationSeconds(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2] ?? "s";
  const factor = unit === "ms" ? 0.001 : unit === "s" ? 1 : unit === "m" ? 60 : 3600;
  return n * factor;
}
