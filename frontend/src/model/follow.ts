// The followed logs in words: what the first-start scan found ("412 Claude
// Code sessions, 1.3 GB"), how far its import is and the time left, and a
// followed folder's last read. Pure: the Overview and Integrations views
// render what these return; harness labels come from GET /v1/harnesses.

import { formatCount } from "../format";
import { harnessLabel, joinLabels } from "./harnesses";
import type { FollowedFolder, FoundLogs, Harness, HistoryProgress } from "./types";

/** 1.3 GB, 412 MB, 12 KB: sizes of log folders, in binary units as `du -h` prints them. */
export function formatSize(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let n = Math.max(0, bytes);
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  const digits = u === 0 || n >= 100 ? 0 : 1;
  return `${n.toFixed(digits).replace(/\.0$/, "")} ${units[u]}`;
}


/** "412 Claude Code sessions, 1.3 GB" — one harness's find, named by its label in harnesses. */
export function foundLine(f: FoundLogs, harnesses: readonly Harness[]): string {
  const title = harnessLabel(harnesses, f.harness);
  const what = f.sessions > 0 ? formatCount(f.sessions, `${title} session`, `${title} sessions`) : formatCount(f.files, `${title} log`, `${title} logs`);
  return `${what}, ${formatSize(f.bytes)}`;
}

/** Every harness's find, the largest first: "412 Claude Code sessions, 1.3 GB and 20 Codex sessions, 48 MB". */
export function foundSummary(found: FoundLogs[], harnesses: readonly Harness[]): string {
  return joinLabels(found.map((f) => foundLine(f, harnesses))) || "nothing";
}

/** "about 2 min left"; "" while the rate is not known. */
export function etaText(seconds: number): string {
  if (!(seconds >= 0) || !Number.isFinite(seconds)) return "";
  if (seconds < 5) return "a few seconds left";
  if (seconds < 60) return `about ${Math.round(seconds / 5) * 5} s left`;
  // Round to whole minutes first, then split: 59.6 min is "1 h 0 min", never "60 min".
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min left`;
  return `about ${Math.floor(minutes / 60)} h ${minutes % 60} min left`;
}

/** The Overview's banner for the history import, or null when there is none to show. */
export interface HistoryBanner {
  importing: boolean;
  /** "Found 412 Claude Code sessions, 1.3 GB: importing them in the background." */
  headline: string;
  /** 0..1 of the bytes. */
  fraction: number;
  /** "37% · 480 MB of 1.3 GB · 4,120 requests · about 2 min left" */
  detail: string;
}

/** How long after it ends the Overview still says what the history import brought. */
export const HISTORY_DONE_SHOWN_MS = 10 * 60 * 1000;

export function historyBanner(h: HistoryProgress | null, harnesses: readonly Harness[], now: number = Date.now()): HistoryBanner | null {
  if (!h || h.found.length === 0) return null;
  const p = h.progress;
  const fraction = p.bytesTotal > 0 ? Math.min(1, p.bytesDone / p.bytesTotal) : p.filesTotal > 0 ? p.filesDone / p.filesTotal : 0;
  const found = foundSummary(h.found, harnesses);
  if (h.state !== "done") {
    const eta = etaText(h.etaSeconds);
    const detail = [
      `${Math.floor(fraction * 100)}%`,
      `${formatSize(p.bytesDone)} of ${formatSize(p.bytesTotal)}`,
      formatCount(p.requests, "request", "requests"),
      ...(eta ? [eta] : []),
    ].join(" · ");
    return { importing: true, headline: `Found ${found}: importing them in the background.`, fraction, detail };
  }
  const finished = h.finishedAt ? Date.parse(h.finishedAt) : NaN;
  if (!(now - finished <= HISTORY_DONE_SHOWN_MS)) return null;
  const failed = h.failed > 0 ? ` · ${formatCount(h.failed, "file", "files")} could not be read` : "";
  return {
    importing: false,
    headline: `Imported ${found}.`,
    fraction: 1,
    detail: `${formatCount(p.requests, "request", "requests")}, ${formatCount(p.folds, "fold", "folds")}${failed}`,
  };
}

/** A followed folder's state in a few words. */
export function folderState(f: FollowedFolder): string {
  if (!f.exists) return "not on this machine (yet)";
  let watched = formatCount(f.watched, "folder", "folders") + " watched";
  if (f.capped > 0) watched += `, ${f.capped} quiet ${f.capped === 1 ? "one" : "ones"} rescanned each minute`;
  if (f.refused > 0) watched += `, ${f.refused} rescanned (inotify limit)`;
  return `${formatCount(f.files, "log", "logs")} · ${watched}`;
}

/** The last file a followed folder brought, without the folder's own path, and the line it was read to: "-p/s.jsonl, line 147". */
export function lastReadFile(f: FollowedFolder): string {
  if (!f.last) return "";
  const file = f.last.file;
  const name = file.startsWith(f.dir + "/") ? file.slice(f.dir.length + 1) : file;
  return f.last.line > 0 ? `${name}, line ${f.last.line.toLocaleString("en-US")}` : name;
}
