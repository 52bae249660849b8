import "./style.css";
import { ApiError, defaultTransport } from "./transport";

interface Health {
  status: string;
  version: string;
  armed: boolean;
  engines: number;
  mode: string;
}

/** The pill's label (DESIGN §2): it never promises protection nobody backs. */
export function pillLabel(h: Pick<Health, "armed" | "mode">): string {
  return h.armed ? `Cache: ${h.mode}` : "Cache: not armed";
}

const transport = defaultTransport();
const app = document.getElementById("app")!;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

function render(h: Health): void {
  const pill = el("button", { class: "pill", id: "mode-pill", title: h.armed ? `Rewrites are guarded in ${h.mode} mode` : "No harness is connected: nothing is guarded yet" }, pillLabel(h));
  app.replaceChildren(
    el("header", { class: "top" }, el("span", { class: "brand" }, "tollgate"), pill),
    el(
      "main",
      { class: "empty" },
      el("h1", {}, "No sessions yet"),
      el("p", {}, "Connect a harness and tollgate prices every context rewrite before it breaks the cache."),
      el("p", {}, "Harnesses find tollgate through ", el("code", {}, "api.json"), " in its home; the Integrations page has copy-ready setup for each one."),
    ),
  );
}

function renderLogin(): void {
  app.replaceChildren(
    el("header", { class: "top" }, el("span", { class: "brand" }, "tollgate")),
    el(
      "main",
      { class: "empty" },
      el("h1", {}, "Log in to tollgate"),
      el("p", {}, "This browser has no tollgate session. In a terminal, run"),
      el("pre", {}, "tollgate login"),
      el("p", {}, "and open the URL it prints. Login links work once, for five minutes."),
    ),
  );
}

async function boot(): Promise<void> {
  try {
    render(await transport.get<Health>("/v1/health"));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) renderLogin();
    else app.textContent = "tollgate is not reachable: " + String(e);
  }
}

void boot();
