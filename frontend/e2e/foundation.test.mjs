// The first screen in a real browser: log in through the printed URL, see the
// pill say "Cache: not armed" and the empty state.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe, launchBrowser, OUT } from "./lib.mjs";

let server;
let browser;
before(async () => {
  server = await startServe();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test("a browser without a cookie is told how to log in", async () => {
  const page = await browser.context.newPage();
  await page.goto(server.api.url + "/");
  await page.getByText("tollgate login").first().waitFor();
  await page.close();
});

test("login URL → dashboard with the pill reading Cache: not armed", async () => {
  const page = await browser.context.newPage();
  await page.goto(server.loginURL);
  assert.equal(new URL(page.url()).pathname, "/");
  const pill = page.locator("#mode-pill");
  await pill.waitFor();
  assert.match(await pill.innerText(), /Cache: not armed/);
  await page.getByText(/connect a harness/i).first().waitFor();
  await page.screenshot({ path: join(OUT, "e2e-first-screen.png") });

  // The login URL is single-use.
  const again = await browser.context.newPage();
  const res = await again.goto(server.loginURL);
  assert.equal(res.status(), 401);
  await again.close();
  await page.close();
});

test("api.json is private and names the live process", async () => {
  const { statSync } = await import("node:fs");
  const mode = statSync(join(server.home, "api.json")).mode & 0o777;
  assert.equal(mode, 0o600);
  assert.equal(server.api.pid, server.proc.pid);
  assert.match(server.api.token, /^[0-9a-f]{64}$/);
  const health = await server.call("GET", "/v1/health");
  assert.equal(health.status, 200);
  assert.equal(health.body.armed, false);
});
