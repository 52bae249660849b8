// What every view gets: the API, the event bus, and the shell's services.

import type { Api } from "./api";
import type { Scope } from "./components/dom";
import type { EventBus } from "./events";
import type { Route } from "./model/route";
import type { Fold, Harness, Session } from "./model/types";
import type { Host } from "./transport";

export interface ConfirmOptions {
  title: string;
  body: string;
  confirmLabel: string;
  danger?: boolean;
}

export interface AppContext {
  api: Api;
  bus: EventBus;
  host: Host;
  /** The harnesses tollgate knows (GET /v1/harnesses, read once at start: the binary registers them); empty when it could not be read. */
  harnesses: readonly Harness[];
  navigate(route: Route): void;
  toast(text: string, tone?: "info" | "good" | "warn"): void;
  confirm(opts: ConfirmOptions): Promise<boolean>;
  /**
   * The session the header's pill describes (mode scope, context line, last
   * rewrite); null returns it to the global mode and the latest session.
   */
  focusSession(session: Session | null, lastFold?: Fold | null): void;
  /** Tells the header that spend or sessions changed (e.g. after a delete). */
  dataChanged(): void;
}

export type View = (root: HTMLElement, ctx: AppContext, scope: Scope) => void | Promise<void>;
