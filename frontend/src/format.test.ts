import { describe, expect, it } from "vitest";
import { formatCountdown, formatInt, formatPercent, formatTokens, formatUSD, safeLocale } from "./format";

describe("formatTokens", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [470, "470"],
    [999, "999"],
    [1000, "1k"],
    [12_345, "12k"],
    [838_861, "839k"],
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
