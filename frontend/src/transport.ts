// The one module that knows where the UI runs. In both hosts calls go over
// fetch('/v1/…'): in the browser to the TCP listener (the login cookie rides
// along), in the Wails window to the same Go handler through
// AssetServer.Handler. Push differs: the browser subscribes to Server-Sent
// Events; the window listens to Wails runtime events, because SSE through the
// AssetServer is not known to stream.

export type Host = "window" | "browser";

/** Event names the guard pushes (ARCHITECTURE.md, "The API"), the app's import progress, and the followed logs' (app/follow). */
export const EVENT_NAMES = [
  "rewrite.pending",
  "rewrite.decided",
  "request.recorded",
  "mode.changed",
  "engines.changed",
  "break.detected",
  "import.progress",
  "history.progress",
  "logs.imported",
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export type EventHandler = (name: EventName, data: unknown) => void;

/** An API error: the status and the guard's {"error":{code,message}} body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

interface WailsRuntime {
  EventsOn(name: string, cb: (...data: unknown[]) => void): () => void;
  EventsEmit(name: string, ...data: unknown[]): void;
}

/** The Wails event the window sends when it gains or loses focus (app/desktop listens). */
export const WINDOW_FOCUS_EVENT = "window.focus";

/**
 * The window asks the desktop side to save an export (WebKitGTK does not
 * download links): export.save {id, path, filename} → export.saved {id, file
 * | error} (app/desktop/export.go).
 */
export const EXPORT_SAVE_EVENT = "export.save";
export const EXPORT_SAVED_EVENT = "export.saved";

/** Minimal EventSource shape, so tests can pass a fake. */
export interface EventSourceLike {
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void;
  close(): void;
  onerror: ((ev: Event) => void) | null;
  onopen: ((ev: Event) => void) | null;
}

export interface TransportDeps {
  fetch: typeof fetch;
  runtime?: WailsRuntime | undefined;
  eventSource?: ((url: string) => EventSourceLike) | undefined;
}

export interface Transport {
  readonly host: Host;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body?: unknown): Promise<T>;
  del<T>(path: string): Promise<T>;
  upload<T>(path: string, body: Blob, contentType: string): Promise<T>;
  /** A multipart form (file uploads); the browser writes its Content-Type with the boundary. */
  uploadForm<T>(path: string, form: FormData): Promise<T>;
  /** Subscribe to guard events; returns the unsubscribe function. */
  subscribe(handler: EventHandler, onConnection?: (up: boolean) => void): () => void;
  /**
   * Tells the desktop side whether the user is looking at the window, so a
   * question raises a desktop notification only when they are not. A no-op
   * in the browser (the page cannot notify outside itself there).
   */
  reportFocus(focused: boolean): void;
  /**
   * In the window only: saves what path answers into a file the user picks
   * in a save dialog. Resolves with the file ("" when cancelled). Absent in
   * the browser, where a download link does the same.
   */
  saveFile?: (path: string, filename: string) => Promise<string>;
}

function detectRuntime(): WailsRuntime | undefined {
  const w = globalThis as unknown as { runtime?: Partial<WailsRuntime> };
  return typeof w.runtime?.EventsOn === "function" && typeof w.runtime?.EventsEmit === "function" ? (w.runtime as WailsRuntime) : undefined;
}

async function decode<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown = undefined;
  if (text !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      if (!res.ok) throw new ApiError(res.status, "bad_response", text.slice(0, 200));
      throw new ApiError(res.status, "bad_response", "the server sent something that is not JSON");
    }
  }
  if (!res.ok) {
    const err = (body as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
    throw new ApiError(res.status, err?.code ?? "http_" + res.status, err?.message ?? res.statusText, err?.field);
  }
  return body as T;
}

export function createTransport(deps: TransportDeps): Transport {
  const host: Host = deps.runtime ? "window" : "browser";
  // Saves waiting for their export.saved, by id; one listener serves them all.
  const saving = new Map<string, { resolve: (file: string) => void; reject: (e: Error) => void }>();
  let saves = 0;
  const saveFile = (runtime: WailsRuntime) => (path: string, filename: string) =>
    new Promise<string>((resolve, reject) => {
      if (saves === 0) {
        runtime.EventsOn(EXPORT_SAVED_EVENT, (data: unknown) => {
          const d = data as { id?: unknown; file?: unknown; error?: unknown } | null;
          const waiting = typeof d?.id === "string" ? saving.get(d.id) : undefined;
          if (!d || !waiting) return;
          saving.delete(d.id as string);
          if (typeof d.error === "string" && d.error !== "") waiting.reject(new Error(d.error));
          else waiting.resolve(typeof d.file === "string" ? d.file : "");
        });
      }
      const id = String(++saves);
      saving.set(id, { resolve, reject });
      runtime.EventsEmit(EXPORT_SAVE_EVENT, { id, path, filename });
    });
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const init: RequestInit = { method, credentials: "same-origin", headers: {} };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { "Content-Type": "application/json" };
    }
    return decode<T>(await deps.fetch(path, init));
  };
  return {
    host,
    ...(deps.runtime ? { saveFile: saveFile(deps.runtime) } : {}),
    get: (p) => call("GET", p),
    post: (p, b) => call("POST", p, b ?? {}),
    put: (p, b) => call("PUT", p, b ?? {}),
    del: (p) => call("DELETE", p),
    upload: async (p, blob, contentType) =>
      decode(await deps.fetch(p, { method: "POST", body: blob, credentials: "same-origin", headers: { "Content-Type": contentType } })),
    uploadForm: async (p, form) => decode(await deps.fetch(p, { method: "POST", body: form, credentials: "same-origin" })),
    reportFocus(focused) {
      deps.runtime?.EventsEmit(WINDOW_FOCUS_EVENT, focused);
    },
    subscribe(handler, onConnection) {
      if (deps.runtime) {
        const offs = EVENT_NAMES.map((name) =>
          deps.runtime!.EventsOn(name, (data: unknown) => handler(name, data)),
        );
        onConnection?.(true);
        return () => offs.forEach((off) => off());
      }
      const open = deps.eventSource ?? ((url: string) => new EventSource(url) as unknown as EventSourceLike);
      // answers=1: this UI answers questions, so it counts as a question provider.
      const es = open("/v1/events?answers=1");
      for (const name of EVENT_NAMES) {
        es.addEventListener(name, (ev: MessageEvent) => {
          let data: unknown = null;
          try {
            data = JSON.parse(String(ev.data));
          } catch {
            return; // a malformed event is dropped, never fatal
          }
          handler(name, data);
        });
      }
      es.onopen = () => onConnection?.(true);
      es.onerror = () => onConnection?.(false); // EventSource reconnects by itself
      return () => es.close();
    },
  };
}

/** The transport for the page this code runs in. */
export function defaultTransport(): Transport {
  return createTransport({ fetch: globalThis.fetch.bind(globalThis), runtime: detectRuntime() });
}
