// The Sessions list after the event stream comes back: what was recorded
// while the page was not listening (here: imported by another process while
// tollgate was down) shows up without a reload.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, OUT, useDashboard } from "./lib.mjs";

let server;
let page;
useDashboard((d) => ({ server, page } = d));

function transcript(dir, uuid) {
  const line = (id, at, read, write) =>
    JSON.stringify({
      type: "assistant", timestamp: at, requestId: "req_" + id, sessionId: uuid, cwd: "/work/reconnect-demo",
      message: { id: "msg_" + id, model: "claude-sonnet-4-5", role: "assistant", content: [{ type: "text", text: "ok" }],
        usage: { input_tokens: 5, cache_read_input_tokens: read, cache_creation_input_tokens: write, output_tokens: 40 } },
    });
  const path = join(dir, uuid + ".jsonl");
  writeFileSync(path, [line("a", "2026-11-30T10:00:00Z", 0, 12000), line("b", "2026-11-30T10:01:00Z", 12000, 900)].join("\n") + "\n");
  return path;
}

test("the Sessions list refetches after the event stream reconnects", async () => {
  const rec = await server.call("POST", "/v1/sessions/live-1/requests", {
    requestId: "r1", profile: "deepseek-flash", usage: { inputTokens: 100, cacheReadTokens: 5000, outputTokens: 50 },
  });
  assert.equal(rec.status, 201);
  await page.goto(new URL("/#/sessions", server.api.url).href);
  await page.locator("#sessions-table a", { hasText: "live-1" }).waitFor();

  const dir = mkdtempSync(join(tmpdir(), "tollgate-reconnect-"));
  const uuid = "11111111-2222-3333-4444-555555555555";
  try {
    await server.restart(() => {
      // tollgate is down: the page's event stream is broken, and an import
      // by another process adds a session nobody announces.
      execFileSync(BIN, ["import", "--home", server.home, transcript(dir, uuid)], { env: { ...process.env, LANG: "C" } });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // EventSource reconnects by itself; the list then shows the imported session.
  await page.locator("#sessions-table a", { hasText: "reconnect-demo" }).waitFor({ timeout: 20_000 });
  assert.equal(await page.locator("#sessions-table a", { hasText: "live-1" }).count(), 1);
  await page.screenshot({ path: join(OUT, "e2e-sessions-after-reconnect.png") });
});
