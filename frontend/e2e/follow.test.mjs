// Live from the first minute (issue 17): `tollgate serve` follows the
// harnesses' log folders by itself. Real Claude Code transcripts
// (../shared/data/claude-code) arrive in ~/.claude/projects while the page
// is open: the Overview says what was found and shows the import's progress,
// then what it brought; a transcript appended to while tollgate runs shows
// its new requests in the Sessions list within seconds; Integrations says
// what is followed and what it read last.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { OUT, useDashboard, sleep } from "./lib.mjs";

const DATA = resolve(import.meta.dirname, "../../../shared/data/claude-code");
const HISTORY = "258c7280-ae70-4798-800f-63464d01a85d"; // with its subagents and its compaction's summary call
const LIVE = "4d5611e5-241a-462a-8d15-5122611a9569";
const skip = existsSync(join(DATA, LIVE + ".jsonl")) ? false : "the real transcripts of ../shared/data are not here";

// The user's HOME: ~/.claude exists (Claude Code is installed), its
// projects folder not yet.
const user = mkdtempSync(join(tmpdir(), "tollgate-e2e-follow-"));
mkdirSync(join(user, ".claude"));
const projects = join(user, ".claude", "projects");
const project = join(projects, "-home-user-work-demo");

let server;
let page;
useDashboard((d) => ({ server, page } = d), { env: { HOME: user } });

test("a Claude Code history that appears is found, imported with its progress, and shown", { skip }, async () => {
  await page.goto(new URL("/#/overview", server.api.url).href);
  await page.getByText("No sessions yet").waitFor();
  // Every state the history banner shows, as the page renders it.
  await page.evaluate(() => {
    const seen = (window.__history = []);
    const look = () => {
      const b = document.querySelector("#history-import:not([hidden])");
      const text = b?.textContent ?? "";
      if (b && seen.at(-1)?.text !== text) seen.push({ state: b.getAttribute("data-state"), text, bar: !!b.querySelector("progress") });
    };
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });

  // The folder arrives whole (a restore, a synced folder): one rename.
  const staging = mkdtempSync(join(tmpdir(), "tollgate-e2e-staging-"));
  const staged = join(staging, "projects", "-home-user-work-demo");
  mkdirSync(staged, { recursive: true });
  cpSync(join(DATA, HISTORY + ".jsonl"), join(staged, HISTORY + ".jsonl"));
  cpSync(join(DATA, HISTORY), join(staged, HISTORY), { recursive: true });
  cpSync(join(DATA, "small-manual-compact.jsonl"), join(staged, "small-manual-compact.jsonl"));
  renameSync(join(staging, "projects"), projects);
  rmSync(staging, { recursive: true, force: true });

  const done = page.locator('#history-import[data-state="done"]');
  await done.waitFor({ timeout: 30_000 });
  const seen = await page.evaluate(() => window.__history);
  const importing = seen.filter((s) => s.state === "importing");
  assert.ok(importing.length > 0, "the banner never showed the import under way: " + JSON.stringify(seen));
  assert.match(importing[0].text, /Found 2 Claude Code sessions, 2\.\d MB: importing them in the background\./);
  assert.ok(importing[0].bar, "no progress bar while importing");
  assert.match(await done.innerText(), /Imported 2 Claude Code sessions, 2\.\d MB\.\s+\d[\d,]* requests, 2 folds/);
  // The Overview redrew with what the import brought.
  await page.locator("#stat-total").waitFor();
  const follow = await server.call("GET", "/v1/follow");
  assert.equal(follow.status, 200);
  assert.equal(follow.body.history.state, "done");
  assert.equal(follow.body.history.found[0].sessions, 2);
  await page.screenshot({ path: join(OUT, "e2e-follow-history.png"), fullPage: true });
  // The shared sessions are months old, outside the Overview's 30 days:
  // the banner leads to the list that has them.
  await done.getByRole("link", { name: "see the sessions" }).click();
  await page.locator("#sessions-table tr[data-row]").first().waitFor();
  assert.equal(await page.locator("#sessions-table tr[data-row]").count(), 2);
  await page.goto(server.api.url + "/#/");
});

test("a transcript appended to while tollgate runs shows its new requests within seconds", { skip }, async () => {
  const lines = readFileSync(join(DATA, LIVE + ".jsonl"), "utf8").split(/(?<=\n)/);
  const live = join(project, LIVE + ".jsonl");
  let at = Math.floor(lines.length * 0.4);
  writeFileSync(live, lines.slice(0, at).join(""));

  await page.goto(new URL("/#/sessions", server.api.url).href);
  const row = page.locator(`#sessions-table tr[data-row$="${LIVE}"]`);
  await row.waitFor({ timeout: 10_000 });
  const requestsShown = async () => Number((await row.locator("td:nth-child(5)").innerText()).replace(/,/g, ""));
  let shown = await requestsShown();
  assert.ok(shown > 0);

  // Claude Code appends a turn at a time; each new request reaches the page.
  let steps = 0;
  while (at < lines.length) {
    const next = Math.min(lines.length, at + Math.ceil(lines.length / 6));
    const added = lines.slice(at, next).join("");
    at = next;
    appendFileSync(live, added);
    if (!/"type":"assistant"/.test(added)) continue;
    const started = Date.now();
    let now = shown;
    while (Date.now() - started < 10_000 && now <= shown) {
      await sleep(100);
      now = await requestsShown();
    }
    if (now > shown) {
      steps++;
      console.log(`appended ${added.length} bytes: ${now - shown} new requests in the browser after ${Date.now() - started} ms`);
    }
    shown = now;
  }
  assert.ok(steps >= 3, `only ${steps} appends showed new requests`);
  const api = await server.call("GET", "/v1/sessions?limit=100");
  const session = api.body.sessions.find((s) => s.id.endsWith(LIVE));
  assert.equal(shown, session.requests, "the page shows what tollgate stored");
  await page.screenshot({ path: join(OUT, "e2e-follow-live.png"), fullPage: true });

  // Integrations: the followed folder and the last file it read.
  await page.goto(new URL("/#/integrations", server.api.url).href);
  const folder = page.locator(`#followed-logs tr[data-row="${projects}"]`);
  await folder.waitFor();
  const text = await folder.innerText();
  assert.match(text, /Claude Code/);
  assert.match(text, /5 logs · \d+ folders watched/);
  const lineCount = readFileSync(live, "utf8").split("\n").length - 1;
  assert.match(text, new RegExp(`-home-user-work-demo/${LIVE}\\.jsonl, line ${lineCount.toLocaleString("en-US")}: \\+\\d+ request`));
  await page.screenshot({ path: join(OUT, "e2e-follow-integrations.png"), fullPage: true });
});

test("a start with history it has not read imports it in the background and says what it found", { skip }, async () => {
  // While tollgate is down, another session lands in a new project.
  const other = join(projects, "-home-user-work-other");
  await server.restart(() => {
    mkdirSync(other);
    // The same turns under another session id: another session to Claude Code.
    const id = LIVE.replace(/^4d/, "5e");
    writeFileSync(join(other, id + ".jsonl"), readFileSync(join(DATA, LIVE + ".jsonl"), "utf8").replaceAll(LIVE, id));
  });
  await page.goto(new URL("/#/overview", server.api.url).href);
  const banner = page.locator("#history-import:not([hidden])");
  await banner.waitFor({ timeout: 20_000 });
  // Imported already or still under way, the banner names what was found.
  assert.match(await banner.innerText(), /(Found|Imported) 1 Claude Code session, 3 MB/);
  await page.locator('#history-import[data-state="done"]').waitFor({ timeout: 30_000 });
  const follow = await server.call("GET", "/v1/follow");
  assert.deepEqual(
    follow.body.history.found.map((f) => [f.harness, f.sessions, f.files]),
    [["claude-code", 1, 1]],
    "only what was written while tollgate was down is the history",
  );
  assert.ok(follow.body.history.progress.requests > 0);
});

// The header's Today counts every recording path: a request of today read
// from a followed transcript moves it, without a reload.
test("a request of today in a followed transcript moves the header's Today", async () => {
  // A page that does not itself reload on an import: only the header's
  // own listening can move it.
  await page.goto(new URL("/#/integrations", server.api.url).href);
  const today = page.locator("#today-spend strong");
  await today.waitFor();
  await sleep(3000); // the load's own refreshes (start, connection) are over
  const before = await today.innerText();
  mkdirSync(project, { recursive: true });
  const id = "7f8e9d0c-1b2a-4c3d-8e4f-5a6b7c8d9e0f";
  const now = new Date().toISOString();
  const line = (o) => JSON.stringify(o) + "\n";
  writeFileSync(
    join(project, id + ".jsonl"),
    line({ type: "user", sessionId: id, uuid: "u1", timestamp: now, cwd: "/home/user/work/demo", message: { role: "user", content: "hello" } }) +
      line({
        type: "assistant", sessionId: id, uuid: "a1", requestId: "req_today", timestamp: now,
        message: { id: "msg_today", model: "claude-sonnet-4-5", role: "assistant", content: [{ type: "text", text: "hi" }],
          usage: { input_tokens: 200000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 1000 } },
      }),
  );
  const started = Date.now();
  while (Date.now() - started < 15_000 && (await today.innerText()) === before) await sleep(200);
  assert.notEqual(await today.innerText(), before, `Today still says ${before}`);
});

test("cleanup", async () => {
  rmSync(user, { recursive: true, force: true });
});
