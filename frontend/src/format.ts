// Figures the user reads: thousands separators and k/M abbreviations, the
// same everywhere. Under LANG=C WebKitGTK reports navigator.language "C" and
// Intl.NumberFormat throws on it, which once blanked a chart: every Intl use
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

function trim(x: number, digits: number): string {
  return x.toFixed(digits).replace(/\.0+$/, "").replace(/(\.\d*?)0+$/, "$1");
}

/**
 * Token counts the way the dialog writes them: 470, 12k, 839k, 1.05M.
 * Below 1,000 exact; below 1M whole thousands (rounded); from 1M three
 * significant digits.
 */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n)) return "—";
  const sign = n < 0 ? "-" : "";
  const a = Math.abs(n);
  if (a < 1000) return sign + String(Math.round(a));
  if (a < 999_500) return sign + String(Math.round(a / 1000)) + "k";
  const m = a / 1_000_000;
  return sign + (m < 10 ? trim(m, 2) : m < 100 ? trim(m, 1) : trim(m, 0)) + "M";
}

/** USD with sensible precision: $0.0012, $0.08, $12.34, $1,234. */
export function formatUSD(x: number): string {
  if (!Number.isFinite(x)) return "—";
  const a = Math.abs(x);
  const digits = a === 0 ? 2 : a < 0.01 ? 4 : a < 1000 ? 2 : 0;
  return (x < 0 ? "-$" : "$") + new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(a);
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
