// A first run: an empty tollgate, the empty state's "Try a simulated
// session" button, the simulation's questions answered in the dialog, and
// the session's charts filling in live. Then deleting everything.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { OUT, useDashboard, sleep } from "./lib.mjs";

let server;
let page;
useDashboard((d) => ({ server, page } = d));

test("Try a simulated session: the empty state leads to a live session with its folds", async () => {
  await page.getByText("No sessions yet").waitFor();
  await page.locator("#simulate").click();
  await page.waitForFunction(() => location.hash.startsWith("#/sessions/sim-"), null, { timeout: 15_000 });
  // The simulation asks before each fold; this page is the question provider.
  let answered = 0;
  const end = Date.now() + 90_000;
  while (Date.now() < end) {
    if (await page.locator(".question .actions button:not([disabled])").first().isVisible().catch(() => false)) {
      if (answered === 0) await page.screenshot({ path: join(OUT, "e2e-sim-question.png") });
      await page.keyboard.press("Enter");
      answered++;
      await sleep(300);
      continue;
    }
    if (answered > 0 && (await page.locator("#cold-chart canvas").count()) > 0 && (await page.locator(".question").count()) === 0) break;
    await sleep(200);
  }
  assert.ok(answered > 0, "the simulation asked nothing");
  await page.locator("#context-chart canvas").waitFor();
  await page.locator("#cold-chart canvas").waitFor();
  assert.ok((await page.locator("#rewrites-table tbody tr").count()) >= 1);
  await page.screenshot({ path: join(OUT, "e2e-sim-session.png"), fullPage: true });
});

test("Sessions sort by a clicked column", async () => {
  await page.goto(server.api.url + "/#/sessions");
  const table = page.locator("#sessions-table");
  await table.locator("tbody tr").first().waitFor();
  const spend = table.locator('th[data-key="costUSD"] button');
  await spend.click();
  assert.equal(await table.locator('th[data-key="costUSD"]').getAttribute("aria-sort"), "descending");
  const values = async () =>
    (await table.locator("tbody tr td:nth-child(8)").allInnerTexts()).map((t) => Number(t.replace(/[$,]/g, "")));
  const desc = await values();
  assert.deepEqual(desc, [...desc].sort((a, b) => b - a));
  await spend.click();
  assert.equal(await table.locator('th[data-key="costUSD"]').getAttribute("aria-sort"), "ascending");
  const asc = await values();
  assert.deepEqual(asc, [...asc].sort((a, b) => a - b));
});

test("Data: deleting everything asks first, then empties the dashboard", async () => {
  await page.goto(server.api.url + "/#/data");
  await page.locator("#delete-all").click();
  const confirm = page.locator('[role="alertdialog"]');
  await confirm.waitFor();
  await page.screenshot({ path: join(OUT, "e2e-delete-confirm.png") });
  await confirm.locator('[data-confirm="no"]').click();
  let list = await server.call("GET", "/v1/sessions");
  assert.ok(list.body.sessions.length > 0, "cancel must delete nothing");

  await page.locator("#delete-all").click();
  await confirm.locator('[data-confirm="yes"]').click();
  await page.getByText(/Deleted \d+ sessions/).waitFor();
  list = await server.call("GET", "/v1/sessions");
  assert.equal(list.body.sessions.length, 0);
  await page.goto(server.api.url + "/#/overview");
  await page.getByText("No sessions yet").waitFor();
});
