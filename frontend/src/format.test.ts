import { describe, expect, it } from "vitest";
import { formatAgo, formatCount, formatCountdown, formatDayKey, formatInt, formatPercent, formatPricePerM, formatTokens, formatUSD, formatUSDTick, installLocaleGuard, safeLocale, todayKey } from "./format";

describe("formatTokens", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [470, "470"],
    [999, "999"],
    [1000, "1k"],
    [12_345, "12k"],
    [838_861, "839k"],
    [4_470, "4.5k"],
    [4_000, "4k"],
    [9_949, "9.9k"],
    [9_950, "10k"],
    [255_000, "255k"],
    [999_499, "999k"],
    [999_500, "1M"],
    [1_048_576, "1.05M"],
    [12_500_000, "12.5M"],
    [-31_000, "-31k"],
  ];
  for (const [n, want] of cases) it(`${n} → ${want}`, () => expect(formatTokens(n)).toBe(want));
  it("non-finite", () => expect(formatTokens(NaN)).toBe("—"));
});

describe("LANG=C", () => {
  it("falls back to en-US for the C locale instead of throwing", () => {
    expect(safeLocale("C")).toBe("en-US");
    expect(safeLocale("C.UTF-8")).toBe("en-US");
    expect(safeLocale(undefined)).toBe("en-US");
    expect(safeLocale("de_DE.UTF-8")).toBe("de-DE");
  });
});

describe("money and others", () => {
  it("formats", () => {
    expect(formatInt(1234567)).toBe("1,234,567");
    expect(formatUSD(0.08)).toBe("$0.08");
    expect(formatUSD(0.0012)).toBe("$0.0012");
    expect(formatUSD(1234.5)).toBe("$1,235");
    expect(formatPercent(0.953)).toBe("95%");
    expect(formatCountdown(24)).toBe("0:24");
    expect(formatCountdown(120)).toBe("2:00");
    expect(formatCountdown(-3)).toBe("0:00");
  });
});

describe("dates", () => {
  it("day keys and ages", () => {
    expect(formatDayKey("2026-11-30")).toBe("Nov 30");
    expect(formatDayKey("garbage")).toBe("garbage");
    const now = Date.parse("2026-11-30T12:00:00Z");
    expect(formatAgo("2026-11-30T11:59:50Z", now)).toBe("just now");
    expect(formatAgo("2026-11-30T11:55:00Z", now)).toBe("5 min ago");
    expect(formatAgo("2026-11-30T09:00:00Z", now)).toBe("3 h ago");
    expect(formatAgo("2026-11-29T12:00:00Z", now)).toBe("1 day ago");
    expect(formatAgo("2025-11-30T12:00:00Z", now)).toBe("365 days ago");
    expect(formatAgo("nope", now)).toBe("—");
  });
  it("today in a time zone", () => {
    const at = new Date("2026-11-30T23:30:00Z");
    expect(todayKey(at, "UTC")).toBe("2026-11-30");
    expect(todayKey(at, "Asia/Tokyo")).toBe("2026-12-01");
    expect(todayKey(at, "Not/A_Zone")).toBe("2026-11-30");
  });
  it("prices per million as typed", () => {
    expect(formatPricePerM(0.3)).toBe("0.3");
    expect(formatPricePerM(1.25)).toBe("1.25");
    expect(formatPricePerM(15)).toBe("15");
    expect(formatPricePerM(0.0000001)).toBe("0");
  });
});

describe("installLocaleGuard", () => {
  it("replaces a language Intl rejects (WebKitGTK under LANG=C) and leaves a good one", () => {
    const nav = { language: "C", languages: ["C"] };
    const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
    Object.defineProperty(globalThis, "navigator", { value: nav, configurable: true });
    try {
      expect(() => new Intl.NumberFormat(nav.language)).toThrow();
      installLocaleGuard();
      expect(nav.language).toBe("en-US");
      expect(() => new Intl.NumberFormat(nav.language)).not.toThrow();
      const good = { language: "de-DE" };
      Object.defineProperty(globalThis, "navigator", { value: good, configurable: true });
      installLocaleGuard();
      expect(good.language).toBe("de-DE");
    } finally {
      if (saved) Object.defineProperty(globalThis, "navigator", saved);
      else delete (globalThis as { navigator?: unknown }).navigator;
    }
  });
});

describe("USD axis ticks", () => {
  it("keep neighbouring ticks distinct", () => {
    expect([0, 0.005, 0.01, 0.015, 0.02].map((v) => formatUSDTick(v, 0.005))).toEqual(["$0.000", "$0.005", "$0.010", "$0.015", "$0.020"]);
    expect([0, 0.2, 0.4].map((v) => formatUSDTick(v, 0.2))).toEqual(["$0.00", "$0.20", "$0.40"]);
    expect([0, 500, 1000].map((v) => formatUSDTick(v, 500))).toEqual(["$0", "$500", "$1,000"]);
    expect(formatUSDTick(0.0001, 0.00005)).toBe("$0.00010");
  });
});

describe("formatCount", () => {
  it("says one and many, with separators", () => {
    expect(formatCount(1, "session", "sessions")).toBe("1 session");
    expect(formatCount(0, "session", "sessions")).toBe("0 sessions");
    expect(formatCount(1234, "request", "requests")).toBe("1,234 requests");
  });
});
