// The harnesses tollgate knows, as GET /v1/harnesses lists them: their
// names, labels and what the views say of them. Pure: every view takes
// harness names and labels from here, so a harness the Go side registers
// needs no edit of the UI.

import type { Harness } from "./types";

/** The harness registered under name, or whose engines register under it (an alias). */
export function findHarness(list: readonly Harness[], name: string): Harness | undefined {
  const n = name.toLowerCase();
  return list.find((h) => h.name === n) ?? list.find((h) => h.aliases?.includes(n));
}

/** How the UI names a harness ("claude-code" → "Claude Code"); an unknown name is itself. */
export function harnessLabel(list: readonly Harness[], name: string): string {
  return findHarness(list, name)?.label ?? name;
}

/** The harnesses whose log files the Data page's upload takes, in the API's order. */
export function uploadHarnesses(list: readonly Harness[]): Harness[] {
  return list.filter((h) => h.logs === "lines");
}

/** What a "Not now" does to this harness beyond skipping the rewrite; "" when it skips only the rewrite. */
export function declineEffect(list: readonly Harness[], name: string): string {
  return (name && findHarness(list, name)?.decline) || "";
}

/** "Claude Code, dsh and Codex". */
export function joinLabels(labels: readonly string[]): string {
  if (labels.length <= 1) return labels[0] ?? "";
  return labels.slice(0, -1).join(", ") + " and " + labels[labels.length - 1];
}
