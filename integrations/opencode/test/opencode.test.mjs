// Unit tests of the OpenCode plugin's guard: OpenCode's threshold, the
// config switch, the ask at the end of a turn and what follows each answer.
// The real OpenCode runs against a real tollgate in test/harness/opencode_test.go.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TollgateClient } from '../lib/client.js'
import { buildAsk, contextTokens, createGuard, usable, usageOf } from '../lib/guard.js'
import * as plugin from '../index.js'

test('the module exports only the plugin (OpenCode calls every export)', () => {
  assert.deepEqual(Object.keys(plugin), ['TollgatePlugin'])
})

test('usable is OpenCode 1.18.33 overflow.ts', () => {
  assert.equal(usable({ context: 8000, output: 1000 }), 7000)
  assert.equal(usable({ context: 200_000, output: 64_000 }), 168_000) // output capped at 32,000
  assert.equal(usable({ context: 200_000, output: 0 }), 168_000)
  assert.equal(usable({ context: 400_000, input: 272_000, output: 128_000 }), 252_000) // input limit minus the 20,000 buffer
  assert.equal(usable({ context: 400_000, input: 272_000, output: 128_000 }, { reserved: 10_000 }), 262_000)
  assert.equal(usable({ context: 0, output: 10 }), 0)
  assert.equal(usable(undefined), 0)
})

test('tokens: the threshold count and the disjoint recording body', () => {
  const t = { input: 10, output: 5, reasoning: 3, cache: { read: 100, write: 7 } }
  assert.equal(contextTokens(t), 122)
  assert.equal(contextTokens({ ...t, total: 500 }), 500)
  assert.deepEqual(usageOf(t), { inputTokens: 10, cacheReadTokens: 100, cacheWriteTokens: 7, cacheWrite1hTokens: 0, outputTokens: 8 })
})

const msg = (id, role, parts, extra = {}) => ({ info: { id, role, ...extra }, parts })

test('buildAsk spans the history before the tail OpenCode keeps', () => {
  const big = 'x'.repeat(4000)
  const messages = [
    msg('m1', 'user', [{ type: 'text', text: big }]),
    msg('m2', 'assistant', [{ type: 'tool', state: { output: big } }]),
    msg('m3', 'user', [{ type: 'text', text: big }]),
    msg('m4', 'assistant', [{ type: 'text', text: 'ok' }]),
    msg('m5', 'user', [{ type: 'text', text: 'short' }]),
    msg('m6', 'assistant', [{ type: 'text', text: 'ok' }]),
  ]
  const ask = buildAsk({ tokens: { input: 500, output: 20, cache: { read: 11_000, write: 0 } }, limit: { context: 12_000, output: 1000 },
    threshold: 11_000, messages, envelope: 7000 })
  assert.equal(ask.envelopeTokens, 7000)
  assert.equal(ask.surface.length, 6)
  assert.equal(ask.surface.reduce((a, u) => a + u.tokens, 0) >= 4515, true)
  assert.equal(ask.surface[1].kind, 'tool-result')
  // The tail budget is 2,750 tokens (a quarter of the threshold): the last
  // two turns (about 1,500 tokens once scaled) fit, the first (about 3,000)
  // does not.
  assert.deepEqual(ask.plan.summarize.start, 'm1')
  assert.deepEqual(ask.plan.summarize.end, 'm2')
  assert.equal(ask.contextWindow, 12_000)
  assert.equal(ask.thresholdTokens, 11_000)
  // After an earlier compaction the surface starts at its summary.
  const after = buildAsk({ tokens: { input: 100, output: 1, cache: { read: 0, write: 0 } }, limit: { context: 12_000 }, threshold: 11_000,
    messages: [...messages, msg('c1', 'user', [{ type: 'compaction', auto: true }]), msg('s1', 'assistant', [{ type: 'text', text: 'sum' }], { summary: true }),
      msg('m7', 'user', [{ type: 'text', text: 'next' }]), msg('m8', 'assistant', [{ type: 'text', text: 'ok' }])] })
  assert.deepEqual(after.surface.map(u => u.id), ['s1', 'm7', 'm8'])
  // Without messages: one unit of the measured history.
  assert.deepEqual(buildAsk({ tokens: { total: 9000 }, limit: {}, threshold: 8000, messages: null, envelope: 1000 }).surface, [{ id: 'history', tokens: 8000, kind: 'message' }])
})

/** A fake tollgate behind the client's fetch: engines, requests, answers. */
function fakeTollgate(answer) {
  const seen = { requests: [], asks: [], outcomes: [], up: true, askStatus: 200 }
  const fetch = async (url, init) => {
    if (!seen.up) throw new Error('connect ECONNREFUSED')
    const path = new URL(url).pathname
    const body = init.body ? JSON.parse(init.body) : undefined
    const reply = (status, b) => ({ status, text: async () => JSON.stringify(b) })
    if (path === '/v1/engines') return reply(201, { engine: 'e_1' })
    if (path.endsWith('/heartbeat')) return reply(200, {})
    if (path.endsWith('/requests')) { seen.requests.push({ path, body }); return reply(201, {}) }
    if (path.endsWith('/rewrites')) {
      seen.asks.push({ path, body })
      if (seen.askStatus !== 200) return reply(seen.askStatus, { error: { code: 'too_large', message: 'body too large' } })
      return reply(200, { rewrite: 'r_1', status: 'decided', ...answer() })
    }
    if (path.endsWith('/outcome')) { seen.outcomes.push(body); return reply(200, {}) }
    return reply(404, { error: { code: 'not_found', message: path } })
  }
  return { seen, fetch }
}

function fakeOpenCode() {
  const calls = { summarize: [], messages: 0 }
  return {
    calls,
    session: {
      messages: async () => { calls.messages += 1; return { data: [msg('m1', 'user', [{ type: 'text', text: 'hi' }]), msg('m2', 'assistant', [{ type: 'text', text: 'ok' }])] } },
      summarize: async opts => { calls.summarize.push(opts); return { data: true } },
    },
  }
}

function setup(answer, extra = {}) {
  const home = mkdtempSync(join(tmpdir(), 'tollgate-oc-'))
  const tg = fakeTollgate(answer)
  const client = new TollgateClient({ env: { TOLLGATE_URL: 'http://127.0.0.1:1', TOLLGATE_TOKEN: 't', TOLLGATE_HOME: home }, fetch: tg.fetch, logger: { warn() {} }, heartbeatMs: 60_000 })
  const oc = fakeOpenCode()
  if (extra.messages) oc.session.messages = async () => ({ data: extra.messages })
  const guard = createGuard({ client, opencode: oc, logger: { warn() {}, info() {} }, exitsAtIdle: extra.exitsAtIdle ?? false })
  return { home, tg, client, oc, guard }
}

const assistantDone = (id, tokens, extra = {}) => ({ event: { type: 'message.updated', properties: { info: {
  id, sessionID: 'ses_1', role: 'assistant', providerID: 'fake', modelID: 'fake-model', time: { created: 1, completed: 2 }, tokens, ...extra } } } })
const idle = { event: { type: 'session.idle', properties: { sessionID: 'ses_1' } } }
const settle = async guard => { for (const s of guard.state.sessions.values()) await s.asking }

test('reachable tollgate: auto compaction off, ask at idle, Allow once runs session.summarize', async () => {
  const { home, tg, client, oc, guard } = setup(() => ({ decision: 'allow', reason: 'user' }))
  const cfg = { provider: {} }
  await guard.hooks.config(cfg)
  assert.equal(cfg.compaction.auto, false)
  await guard.hooks['chat.params']({ sessionID: 'ses_1', model: { id: 'fake-model', providerID: 'fake', limit: { context: 8000, output: 1000 } } })
  await guard.hooks.event({ event: { type: 'session.updated', properties: { info: { id: 'ses_1', title: 'Fix the parser', version: '1.18.33' } } } })
  // Below the threshold: recorded, not asked.
  await guard.hooks.event(assistantDone('a1', { input: 100, output: 10, reasoning: 0, cache: { read: 6000, write: 0 } }))
  await guard.hooks.event(idle)
  await settle(guard)
  assert.equal(tg.seen.asks.length, 0)
  // Across it: asked once the session is idle, then compacted by OpenCode's API.
  await guard.hooks.event(assistantDone('a2', { input: 900, output: 10, reasoning: 2, cache: { read: 6500, write: 0 } }))
  await guard.hooks.event(assistantDone('a2', { input: 900, output: 10, reasoning: 2, cache: { read: 6500, write: 0 } })) // repeated update
  await guard.hooks.event(idle)
  await settle(guard)
  assert.equal(tg.seen.asks.length, 1)
  assert.equal(tg.seen.asks[0].path, '/v1/sessions/opencode%3Ases_1/rewrites')
  assert.equal(tg.seen.asks[0].body.thresholdTokens, 7000)
  assert.equal(tg.seen.asks[0].body.envelopeTokens, 6000)
  assert.deepEqual(oc.calls.summarize, [{ path: { id: 'ses_1' }, body: { providerID: 'fake', modelID: 'fake-model', auto: false } }])
  assert.deepEqual(tg.seen.outcomes, [{ applied: true }])
  assert.equal(tg.seen.requests.length, 2)
  assert.deepEqual(tg.seen.requests[1].body.usage, { inputTokens: 900, cacheReadTokens: 6500, cacheWriteTokens: 0, cacheWrite1hTokens: 0, outputTokens: 12 })
  assert.equal(tg.seen.requests[1].body.harness, 'opencode')
  assert.equal(tg.seen.requests[1].body.title, 'Fix the parser')
  const marker = JSON.parse(readFileSync(join(home, 'integrations', 'opencode.json'), 'utf8'))
  assert.equal(marker.lastDecision, 'allow (user)')
  assert.equal(marker.from, fileURLToPath(new URL('../index.js', import.meta.url)))
  await client.close()
})

test('Not now: no compaction, and the next turn above the threshold asks again', async () => {
  const { tg, client, oc, guard } = setup(() => ({ decision: 'decline', reason: 'user' }))
  await guard.hooks.config({ provider: { fake: { models: { 'fake-model': { limit: { context: 8000, output: 1000 } } } } } })
  await guard.hooks.event(assistantDone('a1', { input: 7500, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }))
  await guard.hooks.event(idle)
  await settle(guard)
  await guard.hooks.event(idle) // idle again without a new turn: not asked twice
  await settle(guard)
  assert.equal(tg.seen.asks.length, 1)
  assert.equal(oc.calls.summarize.length, 0)
  await guard.hooks.event(assistantDone('a2', { input: 7600, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }))
  await guard.hooks.event(idle)
  await settle(guard)
  assert.equal(tg.seen.asks.length, 2)
  await client.close()
})

test('tollgate away: OpenCode keeps (or gets back) its own compaction', async () => {
  const { tg, client, guard } = setup(() => ({ decision: 'allow', reason: 'user' }))
  tg.seen.up = false
  const cfg = {}
  await guard.hooks.config(cfg)
  assert.equal(cfg.compaction?.auto, undefined) // untouched: OpenCode's default (on)
  tg.seen.up = true
  await client.heartbeat()
  assert.equal(cfg.compaction.auto, false)
  tg.seen.up = false
  await client.heartbeat()
  assert.equal(cfg.compaction.auto, undefined)
  // A user who set auto: true gets true back; one who turned it off is never touched.
  const set = setup(() => ({ decision: 'allow' }))
  const on = { compaction: { auto: true, prune: true } }
  await set.guard.hooks.config(on)
  assert.equal(on.compaction.auto, false)
  set.tg.seen.up = false
  await set.client.heartbeat()
  assert.deepEqual(on.compaction, { auto: true, prune: true })
  const off = setup(() => ({ decision: 'allow' }))
  const userOff = { compaction: { auto: false } }
  await off.guard.hooks.config(userOff)
  await off.guard.hooks.event(assistantDone('a1', { input: 1e6, output: 1, cache: { read: 0, write: 0 } }))
  await off.guard.hooks.event(idle)
  await settle(off.guard)
  assert.equal(off.tg.seen.asks.length, 0)
  assert.deepEqual(userOff.compaction, { auto: false })
  for (const c of [client, set.client, off.client]) await c.close()
})

test('an ask that cannot reach tollgate compacts as OpenCode would (unguarded)', async () => {
  const { tg, client, oc, guard } = setup(() => ({ decision: 'allow' }))
  const cfg = {}
  await guard.hooks.config(cfg)
  await guard.hooks['chat.params']({ sessionID: 'ses_1', model: { id: 'fake-model', providerID: 'fake', limit: { context: 8000, output: 1000 } } })
  await guard.hooks.event(assistantDone('a1', { input: 7500, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }))
  tg.seen.up = false
  await guard.hooks.event(idle)
  await settle(guard)
  assert.equal(oc.calls.summarize.length, 1)
  assert.equal(cfg.compaction.auto, undefined) // handed back to OpenCode
  await client.close()
})

const params = agent => ({ sessionID: 'ses_1', agent, model: { id: 'fake-model', providerID: 'fake', limit: { context: 8000, output: 1000 } } })

test('in a turn: the next request waits for the answer; Allow once lets OpenCode compact after it, then auto is off again', async () => {
  const { tg, client, oc, guard } = setup(() => ({ decision: 'allow', reason: 'user' }))
  const cfg = {}
  await guard.hooks.config(cfg)
  await guard.hooks['chat.params'](params('build'))
  await guard.hooks.event(assistantDone('a1', { input: 7500, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }, { finish: 'tool-calls' }))
  await guard.hooks['chat.params'](params('title')) // OpenCode's own small calls are never held
  assert.equal(tg.seen.asks.length, 0)
  await guard.hooks['chat.params'](params('build'))
  assert.equal(tg.seen.asks.length, 1)
  assert.equal(cfg.compaction.auto, true) // armed: OpenCode compacts after this request
  assert.equal(oc.calls.summarize.length, 0)
  await guard.hooks.event(assistantDone('s1', { input: 100, output: 50, reasoning: 0, cache: { read: 0, write: 0 } }, { summary: true }))
  assert.equal(cfg.compaction.auto, false)
  await new Promise(resolve => setImmediate(resolve))
  assert.deepEqual(tg.seen.outcomes, [{ applied: true }])
  // Armed again, but the next request shows no compaction came: disarmed, reported.
  await guard.hooks.event(assistantDone('a2', { input: 7600, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }, { finish: 'tool-calls' }))
  await guard.hooks['chat.params'](params('build'))
  assert.equal(cfg.compaction.auto, true)
  await guard.hooks['chat.params'](params('build'))
  assert.equal(cfg.compaction.auto, false)
  await new Promise(resolve => setImmediate(resolve))
  assert.equal(tg.seen.outcomes[1].applied, false)
  await client.close()
})

test('opencode run: not asked at idle (the process exits); the next run asks before its first request', async () => {
  const over = msg('a1', 'assistant', [{ type: 'text', text: 'ok' }], { sessionID: 'ses_1', providerID: 'fake', modelID: 'fake-model', time: { created: 1, completed: 2 },
    tokens: { input: 7500, output: 10, reasoning: 0, cache: { read: 0, write: 0 } } })
  const first = setup(() => ({ decision: 'decline', reason: 'user' }), { exitsAtIdle: true, messages: [] })
  await first.guard.hooks.config({})
  await first.guard.hooks['chat.params'](params('build'))
  await first.guard.hooks.event(assistantDone('a1', over.info.tokens))
  await first.guard.hooks.event(idle)
  await settle(first.guard)
  assert.equal(first.tg.seen.asks.length, 0)
  await first.client.close()
  // The next process reads the session's last answer and asks.
  const next = setup(() => ({ decision: 'decline', reason: 'user' }), { exitsAtIdle: true, messages: [msg('u1', 'user', []), over] })
  const cfg = {}
  await next.guard.hooks.config(cfg)
  await next.guard.hooks['chat.params'](params('build'))
  assert.equal(next.tg.seen.asks.length, 1)
  assert.equal(cfg.compaction.auto, false) // declined: the request goes out as it is
  await next.guard.hooks['chat.params'](params('build'))
  assert.equal(next.tg.seen.asks.length, 1) // asked once for that answer
  await next.client.close()
})

test('a decline is for the whole user turn: every step of it asks with the same turn (its user message)', async () => {
  const { tg, client, guard } = setup(() => ({ decision: 'decline', reason: 'user' }))
  const cfg = {}
  await guard.hooks.config(cfg)
  await guard.hooks['chat.params'](params('build'))
  for (const id of ['a1', 'a2', 'a3']) {
    await guard.hooks.event(assistantDone(id, { input: 7500, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }, { finish: 'tool-calls', parentID: 'u1' }))
    await guard.hooks['chat.params'](params('build'))
  }
  await guard.hooks.event(assistantDone('a4', { input: 7600, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }, { parentID: 'u2' }))
  await guard.hooks['chat.params'](params('build'))
  assert.deepEqual(tg.seen.asks.map(a => a.body.turn), ['u1', 'u1', 'u1', 'u2'])
  await client.close()
})

test('tollgate refuses the question (4xx): OpenCode still compacts after the request, as it would unguarded', async () => {
  const { tg, client, guard } = setup(() => ({ decision: 'allow', reason: 'user' }))
  const cfg = {}
  await guard.hooks.config(cfg)
  assert.equal(cfg.compaction.auto, false)
  tg.seen.askStatus = 413
  await guard.hooks['chat.params'](params('build'))
  await guard.hooks.event(assistantDone('a1', { input: 7500, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }, { finish: 'tool-calls' }))
  await guard.hooks['chat.params'](params('build'))
  assert.equal(tg.seen.asks.length, 1)
  assert.equal(cfg.compaction.auto, true) // armed for this request: OpenCode compacts after it
  await guard.hooks.event(assistantDone('s1', { input: 100, output: 50, reasoning: 0, cache: { read: 0, write: 0 } }, { summary: true }))
  assert.equal(cfg.compaction.auto, false) // and the guard holds it again
  await client.close()
})
