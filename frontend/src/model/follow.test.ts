import { describe, expect, test } from "vitest";
import { etaText, folderState, foundLine, foundSummary, formatSize, historyBanner, lastReadFile } from "./follow";
import { HARNESSES } from "./testdata/harnesses";
import type { HistoryProgress } from "./types";

const progress = (done: number, total: number) => ({ file: "", filesDone: 0, filesTotal: 10, bytesDone: done, bytesTotal: total, requests: 4120, folds: 3 });

describe("follow", () => {
  test("sizes read like du -h", () => {
    expect(formatSize(0)).toBe("0 B");
    expect(formatSize(12 * 1024)).toBe("12 KB");
    expect(formatSize(1.3 * 1024 ** 3)).toBe("1.3 GB");
    expect(formatSize(412 * 1024 ** 2)).toBe("412 MB");
    expect(formatSize(1.04 * 1024 ** 2)).toBe("1 MB");
  });

  test("what was found, per harness, in words", () => {
    expect(foundLine({ harness: "claude-code", sessions: 412, files: 530, bytes: 1.3 * 1024 ** 3 }, HARNESSES)).toBe("412 Claude Code sessions, 1.3 GB");
    expect(foundLine({ harness: "codex", sessions: 1, files: 1, bytes: 2048 }, HARNESSES)).toBe("1 Codex session, 2 KB");
    expect(foundLine({ harness: "other", sessions: 0, files: 3, bytes: 2048 }, HARNESSES)).toBe("3 other logs, 2 KB");
    expect(
      foundSummary([
        { harness: "claude-code", sessions: 412, files: 530, bytes: 1.3 * 1024 ** 3 },
        { harness: "codex", sessions: 20, files: 20, bytes: 48 * 1024 ** 2 },
        { harness: "dsh", sessions: 2, files: 2, bytes: 4096 },
      ], HARNESSES),
    ).toBe("412 Claude Code sessions, 1.3 GB, 20 Codex sessions, 48 MB and 2 dsh sessions, 4 KB");
    expect(
      foundSummary([
        { harness: "opencode", sessions: 31, files: 1, bytes: 9 * 1024 ** 2 },
        { harness: "gemini", sessions: 1, files: 3, bytes: 2048 },
      ], HARNESSES),
    ).toBe("31 OpenCode sessions, 9 MB and 1 Gemini CLI session, 2 KB");
    // Labels are the API's: a harness the UI has never heard of reads as its list says, and without a list as its name.
    const found = [{ harness: "newh", sessions: 2, files: 2, bytes: 2048 }];
    expect(foundSummary(found, [...HARNESSES, { name: "newh", label: "New Harness", gated: false, logs: "lines" }])).toBe("2 New Harness sessions, 2 KB");
    expect(foundSummary([{ harness: "claude-code", sessions: 1, files: 1, bytes: 2048 }], [])).toBe("1 claude-code session, 2 KB");
    expect(foundSummary([], HARNESSES)).toBe("nothing");
  });

  test("time left", () => {
    expect(etaText(-1)).toBe("");
    expect(etaText(NaN)).toBe("");
    expect(etaText(3)).toBe("a few seconds left");
    expect(etaText(42)).toBe("about 40 s left");
    expect(etaText(130)).toBe("about 2 min left");
    expect(etaText(3 * 3600 + 600)).toBe("about 3 h 10 min left");
    // Rounded before it is split: never "60 min" or "1 h 60 min".
    expect(etaText(3590)).toBe("about 1 h 0 min left");
    expect(etaText(2 * 3600 - 10)).toBe("about 2 h 0 min left");
  });

  test("the Overview's banner: importing, just done, long done, nothing found", () => {
    const found = [{ harness: "claude-code", sessions: 412, files: 530, bytes: 1000 }];
    const importing: HistoryProgress = { state: "importing", found, progress: progress(370, 1000), etaSeconds: 130, failed: 0 };
    const b = historyBanner(importing, HARNESSES);
    expect(b?.importing).toBe(true);
    expect(b?.headline).toBe("Found 412 Claude Code sessions, 1000 B: importing them in the background.");
    expect(b?.fraction).toBeCloseTo(0.37);
    expect(b?.detail).toBe("37% · 370 B of 1000 B · 4,120 requests · about 2 min left");
    expect(historyBanner({ ...importing, etaSeconds: -1 }, HARNESSES)?.detail).toBe("37% · 370 B of 1000 B · 4,120 requests");

    const now = Date.parse("2026-12-01T10:00:00Z");
    const done: HistoryProgress = { ...importing, state: "done", finishedAt: "2026-12-01T09:58:00Z", failed: 2 };
    expect(historyBanner(done, HARNESSES, now)).toEqual({ importing: false, headline: "Imported 412 Claude Code sessions, 1000 B.", fraction: 1, detail: "4,120 requests, 3 folds · 2 files could not be read" });
    expect(historyBanner({ ...done, finishedAt: "2026-12-01T09:00:00Z" }, HARNESSES, now)).toBeNull();
    expect(historyBanner({ ...importing, found: [] }, HARNESSES)).toBeNull();
    expect(historyBanner(null, HARNESSES)).toBeNull();
  });

  test("a followed folder", () => {
    const f = { harness: "claude-code", dir: "/home/u/.claude/projects", exists: true, watched: 12, refused: 0, capped: 0, files: 40 };
    expect(folderState(f)).toBe("40 logs · 12 folders watched");
    expect(folderState({ ...f, refused: 3 })).toBe("40 logs · 12 folders watched, 3 rescanned (inotify limit)");
    expect(folderState({ ...f, capped: 1 })).toBe("40 logs · 12 folders watched, 1 quiet one rescanned each minute");
    expect(folderState({ ...f, capped: 300, refused: 2 })).toBe("40 logs · 12 folders watched, 300 quiet ones rescanned each minute, 2 rescanned (inotify limit)");
    expect(folderState({ ...f, exists: false })).toBe("not on this machine (yet)");
    const last = { file: "/home/u/.claude/projects/-p/s.jsonl", line: 1470, session: "s", at: "2026-12-01T10:00:00Z", bytes: 10, requests: 1, folds: 0 };
    expect(lastReadFile({ ...f, last })).toBe("-p/s.jsonl, line 1,470");
    expect(lastReadFile({ ...f, last: { ...last, file: "/elsewhere/s.jsonl.zst", line: 0 } })).toBe("/elsewhere/s.jsonl.zst");
    expect(lastReadFile(f)).toBe("");
  });
});
