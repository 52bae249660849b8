// Shared helpers for the end-to-end tests: a real `tollgate serve` on a
// fresh home and a free port, and headless Debian chromium via playwright-core.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before } from "node:test";
import { chromium } from "playwright-core";

export const BIN = process.env.TOLLGATE_BIN ?? resolve(import.meta.dirname, "../../build/bin/tollgate");
export const OUT = resolve(import.meta.dirname, "../../test-output");
mkdirSync(OUT, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs `tollgate serve` on home and listen, and waits for api.json. */
async function spawnServe(home, listen, extraArgs, env) {
  const proc = spawn(BIN, ["serve", "--home", home, "--listen", listen, ...extraArgs], {
    env: { ...process.env, LANG: "C", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  proc.stdout.on("data", (d) => (out.stdout += d));
  proc.stderr.on("data", (d) => (out.stderr += d));
  const apiPath = join(home, "api.json");
  for (let i = 0; i < 200; i++) {
    if (existsSync(apiPath) && /login\?nonce=/.test(out.stdout)) break;
    if (proc.exitCode !== null) throw new Error(`tollgate serve exited ${proc.exitCode}: ${out.stderr}`);
    await sleep(50);
  }
  const api = JSON.parse(readFileSync(apiPath, "utf8"));
  const loginURL = out.stdout.match(/(http:\/\/\S+\/login\?nonce=[0-9a-f]+)/)?.[1];
  if (!loginURL) throw new Error("no login URL printed: " + out.stdout);
  return { proc, out, api, loginURL };
}

async function stopProc(proc) {
  if (proc.exitCode === null) {
    proc.kill("SIGTERM");
    for (let i = 0; i < 100 && proc.exitCode === null; i++) await sleep(50);
  }
}

/** Starts `tollgate serve` on a fresh home and waits for api.json. */
export async function startServe(extraArgs = [], env = {}) {
  const home = mkdtempSync(join(tmpdir(), "tollgate-e2e-"));
  // A user of its own: serve follows the harnesses' log folders under $HOME
  // (app/follow), and a test sees only the logs it puts there.
  const user = mkdtempSync(join(tmpdir(), "tollgate-e2e-user-"));
  env = { HOME: user, CLAUDE_CONFIG_DIR: "", CODEX_HOME: "", DSH_HOME: "", ...env };
  let { proc, out, api, loginURL } = await spawnServe(home, "127.0.0.1:0", extraArgs, env);
  const server = {
    home,
    user,
    api,
    loginURL,
    proc,
    output: () => out,
    /** Stops tollgate, runs whileDown, and starts it again on the same home and port. */
    async restart(whileDown) {
      await stopProc(proc);
      await whileDown?.();
      ({ proc, out, api, loginURL } = await spawnServe(home, new URL(server.api.url).host, extraArgs, env));
      Object.assign(server, { proc, api, loginURL });
    },
    /** Calls the API with api.json's harness token. */
    async call(method, path, body) {
      return server.callWith(server.api.token, method, path, body);
    },
    /** Calls the API with <home>/owner.token: what answers, modes and settings need. */
    async callAsOwner(method, path, body) {
      return server.callWith(readFileSync(join(home, "owner.token"), "utf8").trim(), method, path, body);
    },
    async callWith(token, method, path, body) {
      const res = await fetch(server.api.url + path, {
        method,
        headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async stop() {
      await stopProc(proc);
      rmSync(home, { recursive: true, force: true });
      rmSync(user, { recursive: true, force: true });
    },
  };
  return server;
}

/** Headless Debian chromium with a fresh profile. */
export async function launchBrowser() {
  const userDataDir = mkdtempSync(join(tmpdir(), "tollgate-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
    viewport: { width: 1280, height: 800 },
    locale: "en-US",
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export { sleep };

/**
 * Registers the file's before and after hooks around a logged-in dashboard
 * (openDashboard, with options' args and env): ready gets it once it is
 * open (one hook, so nothing runs before the dashboard is there); the
 * object returned holds it too.
 */
export function useDashboard(ready, options = {}) {
  const dash = {};
  before(async () => {
    Object.assign(dash, await openDashboard(options));
    await ready?.(dash);
  });
  after(async () => dash.stop?.());
  return dash;
}

/**
 * A logged-in dashboard: a fresh `tollgate serve`, a browser, and a page on
 * it once the header's pill shows. stop() closes both.
 */
export async function openDashboard({ args = [], env = {} } = {}) {
  const server = await startServe(args, env);
  const browser = await launchBrowser();
  const page = await browser.context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(server.loginURL);
  await page.locator("#mode-pill").waitFor();
  return {
    server,
    browser,
    page,
    async stop() {
      await browser.close();
      await server.stop();
    },
  };
}
