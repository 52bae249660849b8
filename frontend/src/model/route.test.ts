import { describe, expect, it } from "vitest";
import { parseRoute, routeHash, tabOf } from "./route";

describe("hash routes", () => {
  it("parses every view", () => {
    expect(parseRoute("")).toEqual({ view: "overview" });
    expect(parseRoute("#/")).toEqual({ view: "overview" });
    expect(parseRoute("#/overview")).toEqual({ view: "overview" });
    expect(parseRoute("#/sessions")).toEqual({ view: "sessions" });
    expect(parseRoute("#/sessions/")).toEqual({ view: "sessions" });
    expect(parseRoute("#/settings")).toEqual({ view: "settings" });
    expect(parseRoute("#/integrations")).toEqual({ view: "integrations" });
    expect(parseRoute("#/data")).toEqual({ view: "data" });
    expect(parseRoute("#/nonsense")).toEqual({ view: "overview" });
  });
  it("round-trips session ids with colons, slashes and spaces", () => {
    for (const id of ["s1", "claude-code:258c7280-ae70", "a/b c", "%"]) {
      const r = { view: "session" as const, id };
      expect(parseRoute(routeHash(r))).toEqual(r);
    }
  });
  it("a session lives under the Sessions tab", () => {
    expect(tabOf({ view: "session", id: "x" })).toBe("sessions");
    expect(tabOf({ view: "data" })).toBe("data");
  });
});
