// A scripted harness for the end-to-end tests: it speaks the real v1 API
// with the bearer token from api.json, as dsh or any harness would.

export const WINDOW = 1_048_576;
export const THRESHOLD = 838_861;
export const ENVELOPE = 12_800; // a multiple of DeepSeek's 64-token granularity

export class Harness {
  constructor(server, { harness = "e2e-harness", profile = "deepseek-flash", session = "e2e-s1" } = {}) {
    this.server = server;
    this.harness = harness;
    this.profile = profile;
    this.session = session;
    this.engine = null;
  }

  async call(method, path, body) {
    const res = await this.server.call(method, path, body);
    return res;
  }

  async register() {
    const res = await this.call("POST", "/v1/engines", { harness: this.harness, version: "1.0", profile: this.profile, pid: process.pid });
    if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
    this.engine = res.body.engine;
    return res.body;
  }

  /** Records n main-conversation requests whose context grows toward the threshold. */
  async record(n, { from = 1, start = Date.now() - n * 20_000 } = {}) {
    const out = [];
    for (let i = from; i < from + n; i++) {
      const context = Math.round(20_000 + ((THRESHOLD - 30_000) * (i - 1)) / Math.max(1, n - 1));
      const res = await this.call("POST", `/v1/sessions/${encodeURIComponent(this.session)}/requests`, {
        requestId: `${this.session}-r${i}`,
        engine: this.engine ?? undefined,
        harness: this.harness,
        profile: this.profile,
        provider: "deepseek",
        model: "deepseek-flash",
        purpose: "conversation",
        turn: String(i),
        at: new Date(start + i * 20_000).toISOString(),
        contextWindow: WINDOW,
        thresholdTokens: THRESHOLD,
        usage: { inputTokens: 1200, cacheReadTokens: context - 1200, cacheWriteTokens: 0, cacheWrite1hTokens: 0, outputTokens: 900 },
      });
      if (res.status !== 201) throw new Error(`record ${i}: ${res.status} ${JSON.stringify(res.body)}`);
      out.push(res.body);
    }
    return out;
  }

  /** Records n requests, `concurrency` at a time (for the 10,000-point chart). */
  async recordMany(n, concurrency = 32) {
    const start = Date.now() - n * 5_000;
    let next = 1;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i > n) return;
        // A saw-tooth between 20k and the threshold: a busy line to draw.
        const context = Math.round(20_000 + ((THRESHOLD - 30_000) * ((i * 37) % 1000)) / 1000);
        const res = await this.call("POST", `/v1/sessions/${encodeURIComponent(this.session)}/requests`, {
          requestId: `${this.session}-r${i}`,
          harness: this.harness,
          profile: this.profile,
          provider: "deepseek",
          model: "deepseek-flash",
          turn: String(i),
          at: new Date(start + i * 5_000).toISOString(),
          contextWindow: WINDOW,
          thresholdTokens: THRESHOLD,
          usage: { inputTokens: 1200, cacheReadTokens: context - 1200, cacheWriteTokens: 0, cacheWrite1hTokens: 0, outputTokens: 900 },
        });
        if (res.status !== 201) throw new Error(`record ${i}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  }

  /**
   * The surface of the last request: 100 units of 8,500 tokens after the
   * envelope, 863k in all — over the threshold by more than the plan's two
   * prunes free, so the recommended ordering has to summarize.
   */
  static surface() {
    return Array.from({ length: 100 }, (_, i) => ({ id: `seq-${i}`, tokens: 8_500, kind: i % 2 ? "tool-result" : "message" }));
  }

  /** Asks before a rewrite without waiting ("wait": 0): the answer is 202 pending, or a decision at once. */
  async ask(turn, extra = {}) {
    const body = {
      engine: this.engine ?? undefined,
      harness: this.harness,
      profile: this.profile,
      turn,
      trigger: "pressure",
      deadlineSeconds: 90,
      idleSeconds: 4,
      contextWindow: WINDOW,
      thresholdTokens: THRESHOLD,
      envelopeTokens: ENVELOPE,
      surface: Harness.surface(),
      plan: {
        prune: [
          { id: "seq-71", tokensAfter: 200 },
          { id: "seq-73", tokensAfter: 200 },
        ],
        summarize: { start: "seq-0", end: "seq-59", estimatedTokens: 4_000, instructionTokens: 470, sameFamily: true },
      },
      wait: 0,
      ...extra,
    };
    return this.call("POST", `/v1/sessions/${encodeURIComponent(this.session)}/rewrites`, body);
  }

  /** Long-polls a rewrite's decision. */
  async decision(id, wait = 30) {
    return this.call("GET", `/v1/rewrites/${encodeURIComponent(id)}?wait=${wait}`);
  }

  /** Keeps the lease alive (30 s) while a test runs. */
  startHeartbeat(ms = 10_000) {
    this.stopHeartbeat();
    this.beat = setInterval(() => {
      if (this.engine) this.call("POST", `/v1/engines/${this.engine}/heartbeat`).catch(() => {});
    }, ms);
    this.beat.unref?.();
  }

  stopHeartbeat() {
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
  }

  async unregister() {
    this.stopHeartbeat();
    if (this.engine) await this.call("DELETE", `/v1/engines/${this.engine}`);
    this.engine = null;
  }
}
