import { describe, expect, it } from "vitest";
import { mergeRefetched, reconnectGate } from "./reconnect";

describe("reconnectGate", () => {
  it("refetches only after the stream was down", () => {
    const gate = reconnectGate();
    expect(gate(true)).toBe(false); // the first connection
    expect(gate(false)).toBe(false);
    expect(gate(false)).toBe(false); // EventSource retries, still down
    expect(gate(true)).toBe(true); // back: fetch what was missed
    expect(gate(true)).toBe(false); // once
  });
});

describe("mergeRefetched", () => {
  it("takes the fresh rows and keeps older pages", () => {
    const cur = [{ id: "a", n: 1 }, { id: "b", n: 1 }, { id: "old", n: 1 }];
    const fresh = [{ id: "new", n: 2 }, { id: "a", n: 2 }, { id: "b", n: 2 }];
    expect(mergeRefetched(cur, fresh)).toEqual([{ id: "new", n: 2 }, { id: "a", n: 2 }, { id: "b", n: 2 }, { id: "old", n: 1 }]);
  });
});
