import { describe, expect, it, vi } from "vitest";
import { ApiError, createTransport, EVENT_NAMES, EXPORT_SAVE_EVENT, EXPORT_SAVED_EVENT, WINDOW_FOCUS_EVENT, type EventSourceLike } from "./transport";

interface Call {
  url: string;
  init: RequestInit;
}

function fakeFetch(respond: (url: string, init: RequestInit) => Response) {
  const calls: Call[] = [];
  const fn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(input), init: init ?? {} });
    return respond(String(input), init ?? {});
  }) as typeof fetch;
  return { fn, calls };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

class FakeEventSource implements EventSourceLike {
  listeners = new Map<string, ((ev: MessageEvent) => void)[]>();
  onerror: ((ev: Event) => void) | null = null;
  onopen: ((ev: Event) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {}
  addEventListener(type: string, listener: (ev: MessageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close(): void {
    this.closed = true;
  }
  emit(type: string, data: string): void {
    for (const l of this.listeners.get(type) ?? []) l(new MessageEvent(type, { data }));
  }
}

class FakeRuntime {
  handlers = new Map<string, (...data: unknown[]) => void>();
  emitted: [string, unknown[]][] = [];
  offs = 0;
  EventsOn(name: string, cb: (...data: unknown[]) => void): () => void {
    this.handlers.set(name, cb);
    return () => {
      this.offs++;
      this.handlers.delete(name);
    };
  }
  EventsEmit(name: string, ...data: unknown[]): void {
    this.emitted.push([name, data]);
  }
}

describe("calls", () => {
  it("sends JSON with the method and decodes the answer", async () => {
    const f = fakeFetch(() => json(200, { mode: "auto" }));
    const t = createTransport({ fetch: f.fn });
    expect(await t.put("/v1/mode", { scope: "global", mode: "auto" })).toEqual({ mode: "auto" });
    expect(f.calls[0]!.url).toBe("/v1/mode");
    expect(f.calls[0]!.init.method).toBe("PUT");
    expect(f.calls[0]!.init.body).toBe('{"scope":"global","mode":"auto"}');
    expect(f.calls[0]!.init.headers).toEqual({ "Content-Type": "application/json" });
    expect(f.calls[0]!.init.credentials).toBe("same-origin");
  });

  it("GET and DELETE carry no body; 204 decodes to undefined", async () => {
    const f = fakeFetch(() => new Response(null, { status: 204 }));
    const t = createTransport({ fetch: f.fn });
    expect(await t.del("/v1/sessions/s1")).toBeUndefined();
    await t.get("/v1/health");
    expect(f.calls.map((c) => [c.init.method, c.init.body])).toEqual([
      ["DELETE", undefined],
      ["GET", undefined],
    ]);
  });

  it("an error body decodes to ApiError with status, code, message and field", async () => {
    const f = fakeFetch(() =>
      json(400, { error: { code: "bad_request", message: "profiles.p.pricePerMTokens: want a price ≥ 0", field: "profiles.p.pricePerMTokens" } }),
    );
    const t = createTransport({ fetch: f.fn });
    const err = await t.put("/v1/profiles/p", { pricePerMTokens: -1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: "bad_request", field: "profiles.p.pricePerMTokens", message: "profiles.p.pricePerMTokens: want a price ≥ 0" });
  });

  it("401, 409 and a non-JSON error still decode", async () => {
    const t401 = createTransport({ fetch: fakeFetch(() => json(401, { error: { code: "unauthorized", message: "log in" } })).fn });
    await expect(t401.get("/v1/health")).rejects.toMatchObject({ status: 401, code: "unauthorized", field: undefined });
    const t409 = createTransport({ fetch: fakeFetch(() => json(409, { error: { code: "conflict", message: "already decided" } })).fn });
    await expect(t409.post("/v1/rewrites/r/answer", { choice: "allow-once" })).rejects.toMatchObject({ status: 409, message: "already decided" });
    const tText = createTransport({ fetch: fakeFetch(() => new Response("bad gateway", { status: 502, statusText: "Bad Gateway" })).fn });
    await expect(tText.get("/v1/health")).rejects.toMatchObject({ status: 502, code: "bad_response", message: "bad gateway" });
    const tEmpty = createTransport({ fetch: fakeFetch(() => new Response("", { status: 500, statusText: "Internal" })).fn });
    await expect(tEmpty.get("/v1/health")).rejects.toMatchObject({ status: 500, code: "http_500" });
  });

  it("uploads a file with its content type", async () => {
    const f = fakeFetch(() => json(200, { sessions: 1 }));
    const t = createTransport({ fetch: f.fn });
    const blob = new Blob(["{}\n"]);
    expect(await t.upload("/v1/import?filename=a.jsonl", blob, "application/x-ndjson")).toEqual({ sessions: 1 });
    expect(f.calls[0]!.init.body).toBe(blob);
    expect(f.calls[0]!.init.headers).toEqual({ "Content-Type": "application/x-ndjson" });
  });
});

describe("multipart uploads", () => {
  it("sends the form as is, leaving Content-Type (and its boundary) to fetch", async () => {
    const f = fakeFetch(() => json(200, { result: { requests: 3 } }));
    const t = createTransport({ fetch: f.fn });
    const form = new FormData();
    form.append("file", new Blob(["{}\n"]), "a.jsonl");
    expect(await t.uploadForm("/v1/import", form)).toEqual({ result: { requests: 3 } });
    expect(f.calls[0]!.init.body).toBe(form);
    expect(f.calls[0]!.init.headers).toBeUndefined();
    expect(f.calls[0]!.init.method).toBe("POST");
  });
});

describe("push in the browser: SSE", () => {
  it("subscribes with answers=1 and delivers parsed events", () => {
    let es: FakeEventSource | undefined;
    const t = createTransport({ fetch: fakeFetch(() => json(200, {})).fn, eventSource: (url) => (es = new FakeEventSource(url)) });
    expect(t.host).toBe("browser");
    const got: [string, unknown][] = [];
    const conn: boolean[] = [];
    const off = t.subscribe((n, d) => got.push([n, d]), (up) => conn.push(up));
    expect(es!.url).toBe("/v1/events?answers=1");
    expect([...es!.listeners.keys()].sort()).toEqual([...EVENT_NAMES].sort());
    es!.onopen?.(new Event("open"));
    es!.emit("rewrite.pending", '{"rewrite":"r_1"}');
    es!.emit("request.recorded", "not json"); // dropped, not fatal
    es!.emit("mode.changed", '{"scope":"global","mode":"auto"}');
    es!.onerror?.(new Event("error"));
    expect(got).toEqual([
      ["rewrite.pending", { rewrite: "r_1" }],
      ["mode.changed", { scope: "global", mode: "auto" }],
    ]);
    expect(conn).toEqual([true, false]);
    off();
    expect(es!.closed).toBe(true);
  });

  it("reportFocus does nothing in the browser", () => {
    const t = createTransport({ fetch: fakeFetch(() => json(200, {})).fn });
    expect(() => t.reportFocus(true)).not.toThrow();
  });
});

describe("push in the window: Wails runtime events", () => {
  it("listens with runtime.EventsOn for every event and never opens SSE", () => {
    const rt = new FakeRuntime();
    const eventSource = vi.fn();
    const t = createTransport({ fetch: fakeFetch(() => json(200, {})).fn, runtime: rt, eventSource });
    expect(t.host).toBe("window");
    const got: [string, unknown][] = [];
    const conn: boolean[] = [];
    const off = t.subscribe((n, d) => got.push([n, d]), (up) => conn.push(up));
    expect(eventSource).not.toHaveBeenCalled();
    expect([...rt.handlers.keys()].sort()).toEqual([...EVENT_NAMES].sort());
    rt.handlers.get("rewrite.decided")!({ rewrite: "r_1", decision: "allow" });
    expect(got).toEqual([["rewrite.decided", { rewrite: "r_1", decision: "allow" }]]);
    expect(conn).toEqual([true]);
    off();
    expect(rt.offs).toBe(EVENT_NAMES.length);
  });

  it("reports focus to the Go side as a Wails event", () => {
    const rt = new FakeRuntime();
    const t = createTransport({ fetch: fakeFetch(() => json(200, {})).fn, runtime: rt });
    t.reportFocus(false);
    t.reportFocus(true);
    expect(rt.emitted).toEqual([
      [WINDOW_FOCUS_EVENT, [false]],
      [WINDOW_FOCUS_EVENT, [true]],
    ]);
  });

  it("saves an export through a dialog on the Go side, matching answers by id", async () => {
    const rt = new FakeRuntime();
    const t = createTransport({ fetch: fakeFetch(() => json(200, {})).fn, runtime: rt });
    const first = t.saveFile!("/v1/export?format=csv", "tollgate.csv");
    const second = t.saveFile!("/v1/export?format=json", "tollgate.json");
    expect(rt.emitted).toEqual([
      [EXPORT_SAVE_EVENT, [{ id: "1", path: "/v1/export?format=csv", filename: "tollgate.csv" }]],
      [EXPORT_SAVE_EVENT, [{ id: "2", path: "/v1/export?format=json", filename: "tollgate.json" }]],
    ]);
    rt.handlers.get(EXPORT_SAVED_EVENT)!({ id: "2", error: "disk full" });
    rt.handlers.get(EXPORT_SAVED_EVENT)!({ id: "1", file: "/home/u/tollgate.csv" });
    await expect(first).resolves.toBe("/home/u/tollgate.csv");
    await expect(second).rejects.toThrow("disk full");
  });

  it("has no saveFile in the browser: links download there", () => {
    expect(createTransport({ fetch: fakeFetch(() => json(200, {})).fn }).saveFile).toBeUndefined();
  });
});
