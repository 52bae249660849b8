// Figures the user reads: thousands separators and k/M abbreviations, the
// same everywhere. Under LANG=C WebKitGTK reports navigator.language "C" and
// Intl.NumberFormat throws on it (a chart would stay blank): every Intl use
// goes through safeLocale.

export function safeLocale(candidate: string | undefined): string {
  if (!candidate) return "en-US";
  try {
    const [canonical] = Intl.getCanonicalLocales(candidate.replace("_", "-").split(".")[0]!);
    new Intl.NumberFormat(canonical);
    return canonical ?? "en-US";
  } catch {
    return "en-US";
  }
}

const nav = (globalThis as { navigator?: { language?: string } }).navigator;
export const LOCALE = safeLocale(nav?.language);

const intFmt = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });

/** 1234567 → "1,234,567" (locale separators). */
export function formatInt(n: number): string {
  return Number.isFinite(n) ? intFmt.format(Math.round(n)) : "—";
}

/** A count and its noun: "1 session", "28 requests" (formatInt). */
export function formatCount(n: number, one: string, many: string): string {
  return `${formatInt(n)} ${n === 1 ? one : many}`;
}

function trim(x: number, digits: number): string {
  const fixed = x.toFixed(digits);
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

/**
 * Token counts the way the dialog writes them: 470, 4.5k, 839k, 1.05M —
 * the same rules as pricing.FormatTokens in Go, so the CLI's quote and the
 * dialog read alike. Below 1,000 exact; below 10k one decimal; below 1M whole
 * thousands (rounded); from 1M three significant digits; trailing zeros dropped.
 */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n)) return "—";
  const sign = n < 0 ? "-" : "";
  const a = Math.abs(Math.round(n));
  if (a < 1000) return sign + String(a);
  if (a < 9_950) return sign + trim(a / 1000, 1) + "k";
  if (a < 999_500) return sign + String(Math.floor((a + 500) / 1000)) + "k";
  const m = a / 1_000_000;
  return sign + (m >= 99.95 ? trim(m, 0) : m >= 9.995 ? trim(m, 1) : trim(m, 2)) + "M";
}


/** "12–19k", "800–1.2k", "1.2–3M": a token range with the shared unit once. */
export function formatTokenRange(low: number, high: number): string {
  const lo = formatTokens(low);
  const hi = formatTokens(high);
  if (lo === hi) return lo;
  const unit = hi.slice(-1);
  if ((unit === "k" || unit === "M") && lo.endsWith(unit)) return `${lo.slice(0, -1)}–${hi}`;
  return `${lo}–${hi}`;
}

/** USD with sensible precision: $0.0012, $0.08, $12.34, $1,234. */
export function formatUSD(x: number): string {
  if (!Number.isFinite(x)) return "—";
  const a = Math.abs(x);
  const digits = a === 0 ? 2 : a < 0.01 ? 4 : a < 1000 ? 2 : 0;
  return (x < 0 ? "-$" : "$") + new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(a);
}

/**
 * A USD axis tick: as many decimals as the tick step needs, so neighbouring
 * ticks never read the same ($0.005 steps → $0.015, $0.020, $0.025).
 */
export function formatUSDTick(x: number, step: number): string {
  if (!Number.isFinite(x)) return "—";
  const digits = !(step > 0) || !Number.isFinite(step) ? 2 : step >= 1 ? 0 : Math.min(6, Math.max(2, Math.ceil(-Math.log10(step) - 1e-9)));
  return (x < 0 ? "-$" : "$") + new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(Math.abs(x));
}

/** 0.953 → "95%". */
export function formatPercent(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 100)) + "%" : "—";
}

/** Seconds → "0:24", "2:00". */
export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** "1,234 (1.2k)"-style exact count for tooltips: the full figure. */
export function formatTokensExact(n: number): string {
  return Number.isFinite(n) ? formatInt(n) + " tokens" : "—";
}

/** A price per million tokens as typed in config.yaml: up to 6 decimals, no grouping. */
export function formatPricePerM(x: number): string {
  if (!Number.isFinite(x)) return "";
  return trim(x, 6);
}

// ---- dates and time zones -------------------------------------------------
// Everything below also goes through LOCALE; any Intl failure falls back to
// ISO-ish text rather than blanking a view.

function dateFormat(opts: Intl.DateTimeFormatOptions): (d: Date) => string {
  try {
    const f = new Intl.DateTimeFormat(LOCALE, opts);
    return (d) => f.format(d);
  } catch {
    return (d) => d.toISOString().replace("T", " ").slice(0, 16);
  }
}

const dayMonth = dateFormat({ month: "short", day: "numeric", timeZone: "UTC" });
const dateTime = dateFormat({ month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
const timeOnly = dateFormat({ hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });

/** The user's IANA time zone for /v1/spend?tz=, "UTC" when Intl cannot say. */
export function userTimeZone(): string {
  try {
    const tz = new Intl.DateTimeFormat(LOCALE).resolvedOptions().timeZone;
    return tz && tz.length > 0 ? tz : "UTC";
  } catch {
    return "UTC";
  }
}

/** A spend row key "2026-11-30" (a calendar day, no zone) → "Nov 30". */
export function formatDayKey(key: string): string {
  const d = new Date(key + "T00:00:00Z");
  return Number.isNaN(d.getTime()) ? key : dayMonth(d);
}

/** RFC 3339 → "Nov 30, 10:00" in the user's zone. */
export function formatDateTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "—" : dateTime(d);
}

/** RFC 3339 → "10:00:12". */
export function formatTime(iso: string | number): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "—" : timeOnly(d);
}

/** How long ago, coarse: "just now", "5 min ago", "3 h ago", "2 days ago". */
export function formatAgo(iso: string, now: number = Date.now()): string {
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "—";
  const s = Math.max(0, (now - t) / 1000);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  const days = Math.round(s / 86_400);
  return days === 1 ? "1 day ago" : `${formatInt(days)} days ago`;
}

/** Today's calendar day in the user's zone, as /v1/spend keys it ("2026-11-30"). */
export function todayKey(now: Date = new Date(), timeZone: string = userTimeZone()): string {
  try {
    const parts = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(now);
    const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
    return `${get("year")}-${get("month")}-${get("day")}`;
  } catch {
    return now.toISOString().slice(0, 10);
  }
}

/**
 * WebKitGTK under LANG=C reports navigator.language "C"; libraries that pass
 * it to Intl at load time (uPlot does) then throw and take the page down.
 * Call this before loading such a library: it makes navigator.language a
 * locale Intl accepts. A valid language is left alone.
 */
export function installLocaleGuard(): void {
  const n = (globalThis as { navigator?: Navigator }).navigator;
  if (!n) return;
  try {
    new Intl.NumberFormat(n.language);
    return; // Intl takes it: nothing to guard
  } catch {
    // fall through: replace it by the locale safeLocale chose
  }
  try {
    Object.defineProperty(n, "language", { value: LOCALE, configurable: true });
    Object.defineProperty(n, "languages", { value: [LOCALE], configurable: true });
  } catch {
    // A host that forbids it: charts load inside a try and say so instead.
  }
}
