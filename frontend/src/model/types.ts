// The JSON shapes of the v1 API (README "API (v1)"). Only what the UI reads is
// typed; the guard may send more. Optional fields are ones the contract marks
// optional or that older servers may not send yet.

export type Mode = "ask" | "auto" | "off";
export const MODES: readonly Mode[] = ["ask", "auto", "off"];

export type Scope = "global" | "profile" | "session";

export interface Health {
  status: string;
  version: string;
  armed: boolean;
  engines: number;
  mode: Mode;
}

/** GET/PUT /v1/mode. */
export interface ModeState {
  mode: Mode;
  label: string;
  scope: Scope;
  armed: boolean;
  global: Mode;
  profileMode?: Mode | "";
  sessionMode?: Mode | "";
}

export interface TokenTotals {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
  output: number;
}

export interface Session {
  id: string;
  harness: string;
  profile: string;
  provider: string;
  model: string;
  title: string;
  startedAt: string;
  lastAt: string;
  requests: number;
  tokens: TokenTotals;
  costUSD: number;
  hitRate: number;
  folds: number;
  rewrites: number;
  declined?: number;
  mode: Mode | "";
  sessionMode?: Mode | "";
  pricedByDefault?: boolean;
  contextWindow?: number;
  thresholdTokens?: number;
  lastContextTokens?: number;
  /** When the main conversation's cached prefix expires (its last request's time plus the TTL its entries live by); null when unknown. */
  cacheWarmUntil?: string | null;
}

export interface SessionPage {
  sessions: Session[];
  next: string | null;
}

export interface SeriesPoint {
  seq: number;
  at: string;
  purpose: string;
  contextTokens: number;
  input: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
  output: number;
  costUSD: number;
}

export interface CallUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  costUSD: number;
}

export type Decision = "allow" | "decline";

export interface Fold {
  rewrite: string;
  seq: number;
  at: string;
  kind: "summary" | "prune";
  trigger: string;
  preTokens: number;
  /** null when the rewrite was not priced (off mode, a failed quote, an import without figures). */
  predictedColdTokens: number | null;
  /** Where the prediction may fall (a Claude Code fold's band); null when none was predicted. */
  predictedColdBand?: ColdBand | null;
  actualColdTokens: number | null;
  summaryCall: CallUsage | null;
  decision: Decision | "";
  reason: string;
  /** Who answered, when a user did. Absent from an older tollgate. */
  answeredBy?: AnsweredBy;
  mode: Mode | "";
  order: string;
  applied: boolean | null;
  costUSD: number;
  source?: "api" | "import";
}

/** storage.ColdBand. */
export interface ColdBand {
  low: number;
  high: number;
}

export interface Series {
  session: Session;
  contextWindow: number;
  thresholdTokens: number;
  points: SeriesPoint[];
  folds: Fold[];
}

// pricing.Quote (ARCHITECTURE.md, "Pricing a request"): the recommended ordering's figures at the top
// level, every applicable ordering in alternatives.
export interface QuoteOrdering {
  order: string;
  contextTokens: number;
  contextWindow: number;
  thresholdTokens: number;
  prune: { count: number; freedTokens: number };
  summary: { spanTokens: number; checkpointTokens: number; estimated: boolean } | null;
  breakAt: { position: number; unitId: string; cachedTokens: number };
  coldTokens: number;
  coldShare: number;
  nextRequestTokens: number;
  summaryCall: { promptTokens: number; cachedTokens: number; coldTokens: number; outputTokens: number } | null;
  costUSD: { nextRequest: number; summaryCall: number; baselineNextRequest: number; breakPremium: number };
  perRequestSavingUSD: number;
  breakEvenRequests: number | null;
  cacheExpired: boolean;
  underThreshold?: boolean;
}

export interface Quote extends QuoteOrdering {
  recommended: string;
  alternatives: QuoteOrdering[];
  offPeak?: boolean;
}

export type Trigger = "pressure" | "context-overflow" | "manual" | string;

/** The rewrite.pending event. */
export interface PendingRewrite {
  rewrite: string;
  session: string;
  harness: string;
  profile: string;
  trigger: Trigger;
  turn: string;
  mode: Mode;
  quote: Quote | null;
  /** The harness's own account of the cold tokens (api.ColdPrediction), when it sent one. */
  prediction?: ColdPrediction | null;
  askedAt: string;
  deadlineAt: string;
  deadlineSeconds: number;
}

/** One part of a predicted cold figure: "summary", "files" (count files), "plan+skills", "base", "manual". */
export interface ColdPart {
  name: string;
  tokens: number;
  count?: number;
}

/** api.ColdPrediction: the band of the cold tokens, its parts, and how long ago the cache expired (0: warm). */
export interface ColdPrediction {
  low: number;
  high: number;
  parts?: ColdPart[];
  cacheExpiredSeconds?: number;
}

/** The rewrite.decided event. */
export interface DecidedRewrite {
  rewrite: string;
  session: string;
  decision: Decision;
  reason: string;
  mode: Mode | "";
  order: string;
  answeredBy: AnsweredBy;
}

/** The owner's door a question was answered through ("" when nobody answered: auto, off, a timeout, a limit). */
export type AnsweredBy = "window" | "browser" | "tray" | "owner-token" | "";

/** The answer of POST /v1/rewrites/{id}/answer (and of the gate). */
export interface RewriteDecision {
  rewrite: string;
  status: string;
  session: string;
  decision: Decision;
  reason: string;
  mode: Mode | "";
  order: string;
  message?: string;
}

export type AnswerChoice = "allow-once" | "not-now" | "always-session";

export interface RequestRecorded {
  session: string;
  requestId: string;
  seq: number;
  at: string;
  purpose: string;
  contextTokens: number;
  costUSD: number;
}

export interface ModeChanged {
  scope: Scope;
  profile: string;
  session: string;
  mode: Mode | "";
}

export interface EnginesChanged {
  armed: boolean;
  engines: number;
}

export interface Engine {
  engine: string;
  harness: string;
  version?: string;
  profile?: string;
  pid?: number;
  registeredAt: string;
  lastContact: string;
  expiresAt: string;
}

export interface Integration {
  name: string;
  /** How the UI names the harness ("Claude Code"); absent from an older tollgate (then: the name). */
  label?: string;
  /** The Integrations page's heading, the harness's full name ("DeepSeek-Reasonix"); absent: the label. */
  title?: string;
  /** The Integrations page's paragraph on the harness, and its copy-ready setup snippet. */
  about?: string;
  setup?: string;
  installed: boolean;
  verified: boolean;
  /** The integration's state in a line. */
  detail: string;
  /** What always holds of the harness (what a decline does, why it cannot be gated); the page's guide says it in its own words. */
  note?: string;
  lastDecision: string | null;
  /** "observed": tollgate imports this harness's sessions but cannot gate it. Never arms the guard. */
  state?: "observed";
}

/** One harness tollgate knows (GET /v1/harnesses): a registered integration, a log format, or both. */
export interface Harness {
  name: string;
  label: string;
  /** Other harness names its engines register under. */
  aliases?: string[];
  /** Whether tollgate can hold its rewrites: false for a harness it only imports or observes. */
  gated: boolean;
  /** How tollgate reads its logs: "lines" are log files (what the Data page uploads), "database" one database file; absent when it reads none. */
  logs?: "lines" | "database";
  /** What "Not now" does beyond skipping the rewrite, where the harness cannot skip only that. */
  decline?: string;
}

/** GET /v1/harnesses. */
export interface HarnessList {
  harnesses: Harness[];
}

export interface EnginesList {
  armed: boolean;
  engines: Engine[];
  integrations: Integration[];
}

export interface SpendFigures {
  requests: number;
  cacheReadUSD: number;
  coldInputUSD: number;
  outputUSD: number;
  breakPremiumUSD: number;
  totalUSD: number;
  tokens?: Partial<TokenTotals>;
}

export interface SpendRow extends SpendFigures {
  key: string;
}

export interface Spend {
  by: string;
  tz: string;
  rows: SpendRow[];
  totals: SpendFigures;
  hitRate: number;
  folds: number;
  declined: number;
  avoidedColdTokens: number;
}

/** A profile as GET /v1/profiles lists it: the keys config.yaml sets and the cache model they resolve to. */
export type ProfileValue = string | number | boolean | null | Record<string, unknown> | unknown[];
export interface Profile {
  name: string;
  /** The keys the file sets, canonical spelling. */
  keys: Record<string, ProfileValue>;
  /** The resolved cache model: built-in entry plus the profile's own keys. */
  model?: Record<string, ProfileValue>;
  builtin?: boolean;
  source?: string;
  mode?: string;
  error?: string;
  default?: boolean;
}

export interface ProfilesResponse {
  profiles: Profile[];
  defaultProfile: string;
  mode: Mode;
  askTimeoutSeconds: number;
  builtins?: unknown[];
}

/** import.progress: a running import (POST /v1/import). */
export interface ImportProgress {
  file: string;
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  requests: number;
  folds: number;
}

export interface ImportFileResult {
  path: string;
  harness: string;
  session: string;
  bytes: number;
  requests: number;
  updated: number;
  folds: number;
  unchanged?: boolean;
  restarted?: boolean;
  error?: string;
}

export interface ImportResult {
  files: ImportFileResult[];
  sessions: string[];
  requests: number;
  updated: number;
  folds: number;
  bytes: number;
  failed: number;
}

/** POST /v1/import: the result, and an error when some file failed. */
export interface ImportResponse {
  result: ImportResult;
  error?: { code: string; message: string };
}

// ---- the cache-break ledger (GET /v1/sessions/{id}/breaks, GET /v1/breaks) ----

export type BreakCause = "rewrite" | "idle" | "family" | "prefix";

/** One cache break: a request that read less from the prefix cache than the previous request of its thread and model had sent. */
export interface CacheBreak {
  /** Set on the break.detected event only. */
  session?: string;
  seq: number;
  at: string;
  /** "" is the main conversation. */
  thread: string;
  model: string;
  cause: BreakCause;
  startedBy: string;
  gapSeconds: number;
  ttlSeconds: number;
  expectedCachedTokens: number;
  cacheReadTokens: number;
  rebilledTokens: number;
  premiumUSD: number;
  rewrite: string | null;
}

export interface SessionBreaks {
  breaks: CacheBreak[];
}

export interface CauseTotal {
  cause: BreakCause;
  breaks: number;
  rebilledTokens: number;
  premiumUSD: number;
}

export interface BreakCauseStarted extends CauseTotal {
  startedBy: string;
}

export interface BreakSession {
  session: string;
  title: string;
  harness: string;
  breaks: number;
  rebilledTokens: number;
  premiumUSD: number;
  topCause: BreakCause;
}

export interface BreakSummary {
  days: number;
  since: string;
  byCause: CauseTotal[];
  byStart: BreakCauseStarted[];
  sessions: BreakSession[];
  breaks: number;
  rebilledTokens: number;
  premiumUSD: number;
}

/** The guard's events, by name. */
export interface GuardEvents {
  "rewrite.pending": PendingRewrite;
  "rewrite.decided": DecidedRewrite;
  "request.recorded": RequestRecorded;
  "break.detected": CacheBreak;
  "mode.changed": ModeChanged;
  "engines.changed": EnginesChanged;
  "import.progress": ImportProgress;
  "history.progress": HistoryProgress;
  "logs.imported": LogsImported;
}

/** What the first-start scan found of one harness (app/follow). */
export interface FoundLogs {
  harness: string;
  sessions: number;
  files: number;
  bytes: number;
}

/** history.progress and GET /v1/follow's history: the first-start import of the logs found. */
export interface HistoryProgress {
  state: "scanning" | "importing" | "done";
  found: FoundLogs[];
  progress: ImportProgress;
  startedAt?: string;
  finishedAt?: string;
  /** Time left at the rate so far; -1 while not known. */
  etaSeconds: number;
  failed: number;
}

/** logs.imported: the followed logs brought rows to these sessions. */
export interface LogsImported {
  sessions: string[];
  requests: number;
  updated: number;
  folds: number;
}

/** A followed folder's last read that brought something. */
export interface LastRead {
  file: string;
  /** The last line read; 0 for a compressed log. */
  line: number;
  session: string;
  at: string;
  bytes: number;
  requests: number;
  folds: number;
}

export interface FollowedFolder {
  harness: string;
  dir: string;
  exists: boolean;
  watched: number;
  /** Folders the kernel would not watch (its inotify limit): rescanned instead. */
  refused: number;
  /** Folders past tollgate's own bound per root, the least recently modified: rescanned each minute. */
  capped: number;
  files: number;
  last?: LastRead;
  error?: string;
}

/** GET /v1/follow. */
export interface FollowStatus {
  enabled: boolean;
  folders: FollowedFolder[];
  history: HistoryProgress;
}
