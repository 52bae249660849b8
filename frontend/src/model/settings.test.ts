import { describe, expect, it } from "vitest";
import { changedKeys, displayValue, fieldKeyOf, parseDurationSeconds, parseField, PROFILE_FIELDS, profileEffective, profileKeys } from "./settings";

const spec = (key: string) => PROFILE_FIELDS.find((f) => f.key === key)!;

describe("settings form", () => {
  it("edits every price and cache key of a profile", () => {
    const keys = PROFILE_FIELDS.map((f) => f.key);
    for (const k of ["pricePerMTokens", "cacheHitPricePerMTokens", "cacheWritePricePerMTokens", "cacheWrite1hPricePerMTokens", "outputPricePerMTokens", "cacheKind", "granularity", "minimumPrefix", "ttlSeconds", "mode", "estimatedSummaryTokens"]) {
      expect(keys).toContain(k);
    }
  });
  it("parses prices, counts and choices", () => {
    expect(parseField(spec("pricePerMTokens"), "0.30")).toEqual({ ok: true, value: 0.3 });
    expect(parseField(spec("pricePerMTokens"), "$1.2")).toEqual({ ok: true, value: 1.2 });
    expect(parseField(spec("pricePerMTokens"), "-1").ok).toBe(false);
    expect(parseField(spec("pricePerMTokens"), "abc").ok).toBe(false);
    expect(parseField(spec("pricePerMTokens"), "")).toEqual({ ok: true, value: null });
    expect(parseField(spec("ttlSeconds"), "3,600")).toEqual({ ok: true, value: 3600 });
    expect(parseField(spec("ttlSeconds"), "1.5").ok).toBe(false);
    expect(parseField(spec("granularity"), "0")).toEqual({ ok: false, message: "want a whole number > 0" });
    expect(parseField(spec("cacheKind"), "breakpoint")).toEqual({ ok: true, value: "breakpoint" });
    expect(parseField(spec("cacheKind"), "lru").ok).toBe(false);
    expect(parseField(spec("mode"), "")).toEqual({ ok: true, value: null });
    expect(parseField(spec("guardManual"), true)).toEqual({ ok: true, value: true });
  });
  it("shows prices as typed in config.yaml", () => {
    expect(displayValue(spec("pricePerMTokens"), 0.3)).toBe("0.3");
    expect(displayValue(spec("cacheHitPricePerMTokens"), 0.006)).toBe("0.006");
    expect(displayValue(spec("pricePerMTokens"), 3)).toBe("3");
    expect(displayValue(spec("pricePerMTokens"), null)).toBe("");
  });
  it("sends only what changed; a cleared field removes its key", () => {
    expect(changedKeys({ pricePerMTokens: 0.3, model: "m" }, { pricePerMTokens: 0.35, model: "m", cacheKind: null })).toEqual({ pricePerMTokens: 0.35 });
    expect(changedKeys({ pricePerMTokens: 0.3 }, { pricePerMTokens: null })).toEqual({ pricePerMTokens: null });
  });
  it("maps a 400's field to the form's key", () => {
    expect(fieldKeyOf("profiles.deepseek-flash.pricePerMTokens", "deepseek-flash")).toBe("pricePerMTokens");
    expect(fieldKeyOf("profiles.Deep.Seek.ttlSeconds", "deep.seek")).toBe("ttlSeconds");
    expect(fieldKeyOf("askTimeout")).toBe("askTimeout");
    expect(fieldKeyOf(undefined)).toBeNull();
  });
  it("reads profiles as GET /v1/profiles sends them", () => {
    const p = { name: "x", keys: { pricePerMTokens: 0.3 }, model: { pricePerMTokens: 0.3, ttlSeconds: 3600 } };
    expect(profileKeys(p)).toEqual({ pricePerMTokens: 0.3 });
    expect(profileEffective(p)["ttlSeconds"]).toBe(3600);
  });
  it("durations", () => {
    expect(parseDurationSeconds("120s")).toBe(120);
    expect(parseDurationSeconds("2m")).toBe(120);
    expect(parseDurationSeconds("90")).toBe(90);
    expect(parseDurationSeconds("soon")).toBeNull();
  });
});
