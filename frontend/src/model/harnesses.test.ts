import { describe, expect, it } from "vitest";
import { declineEffect, findHarness, harnessLabel, joinLabels, uploadHarnesses } from "./harnesses";
import { HARNESSES } from "./testdata/harnesses";

describe("harnesses", () => {
  it("finds a harness by its name or an alias its engines register under", () => {
    expect(findHarness(HARNESSES, "reasonix")?.name).toBe("reasonix");
    expect(findHarness(HARNESSES, "deepseek-reasonix")?.name).toBe("reasonix");
    expect(findHarness(HARNESSES, "Claude-Code")?.name).toBe("claude-code");
    expect(findHarness(HARNESSES, "my-harness")).toBeUndefined();
  });
  it("labels a harness from the list; an unknown name, or no list, is the name", () => {
    expect(harnessLabel(HARNESSES, "claude-code")).toBe("Claude Code");
    expect(harnessLabel(HARNESSES, "gemini")).toBe("Gemini CLI");
    expect(harnessLabel(HARNESSES, "my-harness")).toBe("my-harness");
    expect(harnessLabel([], "claude-code")).toBe("claude-code");
  });
  it("the upload takes the harnesses of log files, in the list's order", () => {
    expect(uploadHarnesses(HARNESSES).map((h) => h.name)).toEqual(["claude-code", "dsh", "codex", "gemini"]);
  });
  it("says what a decline does only for a harness that has a text for it", () => {
    expect(declineEffect(HARNESSES, "codex")).toMatch(/^Not now ends this Codex turn/);
    expect(declineEffect(HARNESSES, "dsh")).toBe("");
    expect(declineEffect(HARNESSES, "")).toBe("");
    expect(declineEffect([], "codex")).toBe("");
  });
  it("joins labels as a sentence does", () => {
    expect(joinLabels([])).toBe("");
    expect(joinLabels(["dsh"])).toBe("dsh");
    expect(joinLabels(["Claude Code", "dsh", "Codex"])).toBe("Claude Code, dsh and Codex");
  });
});
