// The cache-break ledger in the browser: a generated Claude Code transcript
// (recent times, so it falls in the Overview's 30 days) with breaks of every
// kind a log shows, imported into a real `tollgate serve`; the Overview's
// "Lost to cache breaks" split and plain-words line, the session's markers
// and table, and a break arriving live over the API. Screenshots land in
// test-output/.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OUT, useDashboard, sleep } from "./lib.mjs";

let server;
let page;
useDashboard((d) => ({ server, page } = d));

const dir = mkdtempSync(join(tmpdir(), "tollgate-e2e-breaks-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A Claude Code transcript: steps of [seconds after t0, kind, usage?]. */
function transcript(id, cwd, t0, steps) {
  let n = 0;
  const lines = [];
  const base = { isSidechain: false, userType: "external", cwd, sessionId: id, version: "2.1.39" };
  const at = (s) => new Date(t0 + s * 1000).toISOString();
  const user = (s, content, extra = {}) =>
    lines.push(JSON.stringify({ parentUuid: null, ...base, type: "user", message: { role: "user", content }, ...extra, uuid: `u${++n}`, timestamp: at(s) }));
  for (const [s, kind, u] of steps) {
    switch (kind) {
      case "prompt":
        user(s, "please continue");
        break;
      case "tool":
        user(s, [{ tool_use_id: `toolu_${n}`, type: "tool_result", content: "ok" }]);
        break;
      case "notification":
        user(s, "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>");
        break;
      case "compact":
        lines.push(JSON.stringify({ parentUuid: null, ...base, type: "system", subtype: "compact_boundary", compactMetadata: { trigger: "auto", preTokens: 150000 }, uuid: `b${++n}`, timestamp: at(s) }));
        user(s, "This session is being continued from a previous conversation.", { isCompactSummary: true });
        break;
      case "assistant":
        n++;
        lines.push(
          JSON.stringify({
            parentUuid: null,
            ...base,
            message: {
              id: `msg_${id.slice(0, 4)}_${n}`, model: "claude-opus-4-6", role: "assistant", content: [{ type: "text", text: "done" }],
              usage: { input_tokens: 3, cache_creation_input_tokens: u.write ?? 0, cache_read_input_tokens: u.read ?? 0, output_tokens: 40 },
            },
            requestId: `req_${id.slice(0, 4)}_${n}`, type: "assistant", uuid: `a${n}`, timestamp: at(s),
          }),
        );
        break;
    }
  }
  const path = join(dir, id + ".jsonl");
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

const A = "aaaaaaaa-1111-4111-8111-000000000001";
const B = "bbbbbbbb-2222-4222-8222-000000000002";

test("Overview: Lost to cache breaks, split by cause, with a plain-words line and the costliest sessions", async () => {
  const t0 = Date.now() - 3 * 3600 * 1000;
  const a = transcript(A, "/home/u/checkout-service", t0, [
    [0, "prompt"], [2, "assistant", { write: 20000 }],
    [8, "tool"], [10, "assistant", { read: 20003, write: 500 }],
    [18, "tool"], [20, "assistant", { read: 20506, write: 400 }],
    [30, "notification"], [31, "assistant", { read: 13000, write: 8000 }], // prefix, at a task notification
    [700, "prompt"], [701, "assistant", { write: 21500 }], // idle past the 5-minute cache
    [760, "compact"], [790, "assistant", { read: 13000, write: 3000 }], // the compaction's cold part
  ]);
  const b = transcript(B, "/home/u/search-index", t0 + 600_000, [
    [0, "prompt"], [2, "assistant", { write: 100000 }],
    [20, "notification"], [21, "assistant", { read: 13000, write: 90000 }],
    [60, "tool"], [61, "assistant", { read: 103003, write: 300 }],
    [90, "notification"], [92, "assistant", { read: 13000, write: 92000 }],
  ]);
  const res = await server.callAsOwner("POST", "/v1/import", { paths: [a, b], harness: "claude-code" });
  assert.equal(res.status, 200, JSON.stringify(res.body));

  await page.goto(server.api.url + "/#/overview");
  const card = page.locator("#breaks-overview");
  await card.locator("#breaks-split").waitFor({ timeout: 15_000 });
  assert.match(await page.locator("#breaks-dominant").innerText(), /^3 breaks after background-task notifications cost \$\d+\.\d\d in the last 30 days$/);
  assert.match(await page.locator("#breaks-headline").innerText(), /5 breaks re-billed/);
  const causes = await page.locator("#breaks-split > span").evaluateAll((els) => els.map((e) => e.getAttribute("data-cause")));
  assert.deepEqual(causes, ["rewrite", "idle", "prefix"]);
  const rows = page.locator("#breaks-sessions tbody tr");
  assert.equal(await rows.count(), 2);
  assert.match(await rows.first().innerText(), /search-index/);
  await card.evaluate((e) => e.scrollIntoView({ block: "end" }));
  await page.screenshot({ path: join(OUT, "e2e-breaks-overview.png") });
});

test("Session: break markers on the context chart and the Cache breaks table", async () => {
  await page.goto(server.api.url + "/#/sessions/" + encodeURIComponent("claude-code:" + A));
  await page.locator("#context-chart canvas").waitFor();
  const rows = page.locator("#breaks-table tbody tr");
  await rows.first().waitFor();
  assert.equal(await rows.count(), 3);
  const cells = await rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector("[data-cause]")?.getAttribute("data-cause")));
  assert.deepEqual(cells, ["prefix", "idle", "rewrite"]);
  assert.match(await rows.nth(0).innerText(), /task notification/);
  assert.match(await rows.nth(1).innerText(), /11 min/);
  // The triangles: pixels of the prefix colour (#d6336c) on the chart.
  const pink = await page.evaluate(() => {
    const c = document.querySelector("#context-chart canvas");
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let near = 0;
    for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0xd6) < 25 && Math.abs(d[i + 1] - 0x33) < 25 && Math.abs(d[i + 2] - 0x6c) < 25) near++;
    return near;
  });
  assert.ok(pink > 10, `no prefix-break marker on the chart (${pink} pixels)`);
  await page.locator("#breaks-section").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(OUT, "e2e-breaks-session.png"), fullPage: true });
});

test("Live: a request over the API after the cache expired shows as a break without a reload", async () => {
  const rec = (id, at, usage) =>
    server.call("POST", "/v1/sessions/e2e-live/requests", { requestId: id, at, provider: "anthropic", model: "claude-opus-4-6", usage });
  const t = Date.now() - 3600 * 1000;
  assert.equal((await rec("r1", new Date(t).toISOString(), { inputTokens: 3, cacheWriteTokens: 40000 })).status, 201);
  await page.goto(server.api.url + "/#/sessions/e2e-live");
  await page.locator("#breaks-section").waitFor();
  assert.equal(await page.locator("#breaks-table tbody tr").count(), 0);
  // Twenty minutes later: the 5-minute cache is gone.
  assert.equal((await rec("r2", new Date(t + 20 * 60 * 1000).toISOString(), { inputTokens: 3, cacheWriteTokens: 40100 })).status, 201);
  await page.locator("#breaks-table tbody tr").first().waitFor({ timeout: 10_000 });
  assert.match(await page.locator("#breaks-table tbody tr").first().innerText(), /Idle[\s\S]*20 min 0 s/);
  // A request now: the pill's menu counts down the 5-minute cache.
  assert.equal((await rec("r3", new Date().toISOString(), { inputTokens: 3, cacheReadTokens: 40103, cacheWriteTokens: 100 })).status, 201);
  // The pill learns of r3 over the event stream; on a loaded machine that can
  // take longer than a fixed pause, so reopen the menu until it has (10 s).
  const line = page.locator('#mode-menu [data-line="cache"]');
  let text = "";
  for (const until = Date.now() + 10_000; Date.now() < until; ) {
    await page.locator("#mode-pill").click();
    await line.waitFor();
    text = await line.innerText();
    if (/^Cache warm/.test(text)) break;
    await page.keyboard.press("Escape");
    await sleep(250);
  }
  assert.match(text, /^Cache warm for [0-5]:\d\d more$/);
  const first = await line.innerText();
  await sleep(1500);
  assert.notEqual(await line.innerText(), first, "the countdown does not tick");
  await page.screenshot({ path: join(OUT, "e2e-breaks-pill.png") });
  await page.keyboard.press("Escape");
});
