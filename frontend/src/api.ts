// The v1 endpoints the UI calls, typed (README "API (v1)"). Every call goes
// through the one transport; a 401 is reported to onUnauthorized so any view
// can fall back to the log-in instructions.

import { ApiError, type Transport } from "./transport";
import type {
  AnswerChoice,
  BreakSummary,
  EnginesList,
  FollowStatus,
  HarnessList,
  Health,
  ImportResponse,
  Mode,
  ModeState,
  Profile,
  ProfileValue,
  ProfilesResponse,
  RewriteDecision,
  Scope,
  Series,
  Session,
  SessionBreaks,
  SessionPage,
  Spend,
} from "./model/types";

const q = encodeURIComponent;

export class Api {
  constructor(
    readonly transport: Transport,
    private readonly onUnauthorized: () => void,
  ) {}

  private async guard<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) this.onUnauthorized();
      throw e;
    }
  }

  health(): Promise<Health> {
    return this.guard(this.transport.get<Health>("/v1/health"));
  }

  mode(session?: string, profile?: string): Promise<ModeState> {
    const params = new URLSearchParams();
    if (session) params.set("session", session);
    if (profile) params.set("profile", profile);
    const qs = params.toString();
    return this.guard(this.transport.get<ModeState>("/v1/mode" + (qs ? "?" + qs : "")));
  }

  setMode(scope: Scope, mode: Mode | "", target: { session?: string; profile?: string } = {}): Promise<ModeState> {
    return this.guard(this.transport.put<ModeState>("/v1/mode", { scope, mode, ...target }));
  }

  /** What tollgate follows of the harnesses' logs, and the first-start import (app/follow). */
  follow(): Promise<FollowStatus> {
    return this.guard(this.transport.get<FollowStatus>("/v1/follow"));
  }

  /** Every harness tollgate knows: names, labels, and what the views say of each. */
  harnesses(): Promise<HarnessList> {
    return this.guard(this.transport.get<HarnessList>("/v1/harnesses"));
  }

  engines(): Promise<EnginesList> {
    return this.guard(this.transport.get<EnginesList>("/v1/engines"));
  }

  sessions(limit = 50, before?: string): Promise<SessionPage> {
    const qs = `limit=${limit}` + (before ? `&before=${q(before)}` : "");
    return this.guard(this.transport.get<SessionPage>(`/v1/sessions?${qs}`));
  }

  session(id: string): Promise<Session> {
    return this.guard(this.transport.get<Session>(`/v1/sessions/${q(id)}`));
  }

  series(id: string): Promise<Series> {
    return this.guard(this.transport.get<Series>(`/v1/sessions/${q(id)}/series`));
  }

  spend(by: "day" | "profile" | "model", tz: string, days = 30): Promise<Spend> {
    return this.guard(this.transport.get<Spend>(`/v1/spend?by=${by}&tz=${q(tz)}&days=${days}`));
  }

  breaks(id: string): Promise<SessionBreaks> {
    return this.guard(this.transport.get<SessionBreaks>(`/v1/sessions/${q(id)}/breaks`));
  }

  breakSummary(tz: string, days = 30, limit = 5): Promise<BreakSummary> {
    return this.guard(this.transport.get<BreakSummary>(`/v1/breaks?days=${days}&tz=${q(tz)}&limit=${limit}`));
  }

  answer(rewrite: string, choice: AnswerChoice): Promise<RewriteDecision> {
    return this.guard(this.transport.post<RewriteDecision>(`/v1/rewrites/${q(rewrite)}/answer`, { choice }));
  }

  profiles(): Promise<ProfilesResponse> {
    return this.guard(this.transport.get<ProfilesResponse>("/v1/profiles"));
  }

  saveProfile(name: string, keys: Record<string, ProfileValue>): Promise<Profile> {
    return this.guard(this.transport.put<Profile>(`/v1/profiles/${q(name)}`, keys));
  }

  saveSettings(body: { askTimeout?: string }): Promise<ProfilesResponse> {
    return this.guard(this.transport.put<ProfilesResponse>("/v1/settings", body));
  }

  reprice(session?: string): Promise<{ requests: number; sessions: number }> {
    return this.guard(this.transport.post<{ requests: number; sessions: number }>("/v1/reprice", session ? { session } : {}));
  }

  simulate(): Promise<{ session?: string; sessions?: string[] } | null> {
    return this.guard(this.transport.post<{ session?: string; sessions?: string[] } | null>("/v1/simulate", {}));
  }

  /** Uploads session logs (multipart, field "file" per file); harness "" lets tollgate tell from the content. */
  importFiles(files: readonly File[], harness = ""): Promise<ImportResponse> {
    const form = new FormData();
    if (harness) form.append("harness", harness);
    for (const f of files) form.append("file", f, f.name);
    return this.guard(this.transport.uploadForm<ImportResponse>("/v1/import", form));
  }

  deleteSession(id: string): Promise<void> {
    return this.guard(this.transport.del<void>(`/v1/sessions/${q(id)}`));
  }

  deleteAll(): Promise<{ deleted: number }> {
    return this.guard(this.transport.del<{ deleted: number }>("/v1/sessions?confirm=all"));
  }

  exportURL(format: "json" | "csv", session?: string): string {
    return session ? `/v1/sessions/${q(session)}/export?format=${format}` : `/v1/export?format=${format}`;
  }
}
