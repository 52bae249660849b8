// The dsh plugin against a real `tollgate serve` (TOLLGATE_BIN) and a
// faithful in-test stand-in of the dsh engine interface: the published dsh
// packages need Node ≥ 22 and could not be booted headless here, so the
// stand-in implements the seams the plugin uses — the `compaction` service's
// compactIfNeeded(agent, trigger, signal) and compactRegion(start, end,
// agent, signal), the token meter's measure(session) / estimateMessage,
// and the tool-result pruner's pruneContent(blocks) / pruneNodes — over a
// session of dsh events (request/context, turn/start, assistant/message
// with usage and tool-call blocks, tool/result) and surface nodes.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { apply, TollgateClient, installGate, buildAsk } from '../index.js'

const BIN = process.env.TOLLGATE_BIN
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
const quiet = { warn() {}, info() {} }

async function startServe(mode) {
  const home = mkdtempSync(join(tmpdir(), 'tollgate-dsh-'))
  const proc = spawn(BIN, ['serve', '--home', home, '--listen', '127.0.0.1:0', '--mode', mode], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: home } })
  let out = ''
  proc.stdout.on('data', d => { out += d })
  proc.stderr.on('data', d => { out += d })
  for (let i = 0; i < 200; i += 1) {
    try {
      const info = JSON.parse(readFileSync(join(home, 'api.json'), 'utf8'))
      // Changing a mode is the owner's: <home>/owner.token, never in api.json.
      const owner = readFileSync(join(home, 'owner.token'), 'utf8').trim()
      return { ...info, owner, home, out: () => out, stop: () => new Promise(resolve => { proc.on('exit', resolve); proc.kill('SIGINT') }) }
    } catch { await sleep(50) }
  }
  proc.kill()
  throw new Error('tollgate serve did not start:\n' + out)
}

async function api(server, method, path, body) {
  const token = method === 'GET' ? server.token : server.owner
  const res = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`)
  return text === '' ? null : JSON.parse(text)
}

// ---- the stand-in engine ----

const text = n => 'x'.repeat(n)
const tokensOf = event => Math.ceil(JSON.stringify(event.data.message).length / 4)

/** A session: 8 model-visible nodes, tool results old and new, a 20k window. */
function makeSession(id, { userChars = 2000 } = {}) {
  const t0 = Date.now() - 60_000
  const events = [
    { type: 'request/context', data: { provider: 'deepseek', model: 'deepseek-flash', contextWindow: 20000 } },
    { type: 'turn/start', data: { turn: 7 } },
  ]
  const add = (type, message, extra = {}) => { events.push({ type, data: { message, ...extra }, ...extra.top }); return events.length - 1 }
  const nodes = []
  nodes.push(add('user/message', { role: 'user', content: [{ type: 'text', text: text(userChars) }] }))
  nodes.push(add('assistant/message', { role: 'assistant', content: [{ type: 'tool-call', id: 'c1' }] },
    { usage: { inputTokens: 900, cacheReadTokens: 1500, outputTokens: 40 }, top: { id: 'm1', at: new Date(t0).toISOString() } }))
  nodes.push(add('tool/result', { role: 'tool', content: [{ type: 'tool-result', content: [{ type: 'text', text: text(24000) }] }] }))
  nodes.push(add('assistant/message', { role: 'assistant', content: [{ type: 'tool-call', id: 'c2' }] },
    { usage: { inputTokens: 6100, cacheReadTokens: 2400, outputTokens: 40 }, top: { id: 'm2', at: new Date(t0 + 1000).toISOString() } }))
  nodes.push(add('tool/result', { role: 'tool', content: [{ type: 'tool-result', content: [{ type: 'text', text: text(20000) }] }] }))
  nodes.push(add('assistant/message', { role: 'assistant', content: [{ type: 'text', text: 'reading more' }, { type: 'tool-call', id: 'c3' }] },
    { usage: { inputTokens: 5000, cacheReadTokens: 8500, outputTokens: 40 }, top: { id: 'm3', at: new Date(t0 + 2000).toISOString() } }))
  nodes.push(add('tool/result', { role: 'tool', content: [{ type: 'tool-result', content: [{ type: 'text', text: text(9000) }] }] }))
  nodes.push(add('assistant/message', { role: 'assistant', content: [{ type: 'text', text: text(400) }] },
    { usage: { inputTokens: 2300, cacheReadTokens: 13500, outputTokens: 100 }, top: { id: 'm4', at: new Date(t0 + 3000).toISOString() } }))
  return { id, events, surface: { nodes }, requestHeader: () => ({ config: { provider: 'deepseek', model: 'deepseek-flash' } }) }
}

function standIn() {
  const calls = []
  const tokenMeter = {
    measure(session) {
      const nodes = session.surface.nodes.map(seq => ({ seq, tokens: tokensOf(session.events[seq]) }))
      return { totalTokens: 1500 + nodes.reduce((t, n) => t + n.tokens, 0), nodes }
    },
    estimateMessage: message => Math.ceil(JSON.stringify(message).length / 4),
  }
  const toolResultPruner = {
    // Over 4,000 characters: head + marker + tail, as the shipped pruner does.
    pruneContent(blocks) {
      const t = blocks[0]?.text ?? ''
      return t.length > 4000 ? [{ type: 'text', text: t.slice(0, 1000) + '[… pruned …]' + t.slice(-200) }] : null
    },
    async pruneNodes(agent, seqs) {
      calls.push(['prune', [...seqs]])
      for (const seq of seqs) {
        const result = agent.session.events[seq].data.message.content[0]
        result.content = this.pruneContent(result.content) ?? result.content
      }
    },
  }
  const engine = {
    config: { thresholdRatio: 0.5, retainTokens: 4000, estimatedSummaryTokens: 600 },
    // As shipped: prune every over-budget result, then summarize if still over.
    async compactIfNeeded(agent, trigger) {
      calls.push(['shipped', trigger])
      return { shipped: true }
    },
    async compactRegion(start, end, agent) {
      calls.push(['summarize', start, end])
      const nodes = agent.session.surface.nodes
      const from = nodes.indexOf(start)
      const to = nodes.indexOf(end)
      agent.session.events.push({ type: 'compaction/summary', data: { message: { role: 'user', content: [{ type: 'text', text: 'summary' }] } } })
      nodes.splice(from, to - from + 1, agent.session.events.length - 1)
      return { start, end }
    },
  }
  const services = { compaction: engine, toolResultPruner, tokenMeter }
  const ctx = { tokenMeter, get: name => services[name] }
  return { ctx, engine, calls }
}

// ---- tests ----

let server
before(async () => {
  assert.ok(BIN, 'TOLLGATE_BIN must name the tollgate binary (make test-harness sets it)')
  server = await startServe('auto')
})
after(async () => { await server?.stop() })

test('builds the surface, the pruner\'s candidates and a balanced summary span', () => {
  const { ctx, engine } = standIn()
  const session = makeSession('plan')
  const ask = buildAsk({ ctx, engine, session, trigger: 'pressure' })
  assert.ok(ask)
  const { request } = ask
  assert.equal(request.surface.length, 8)
  assert.equal(request.envelopeTokens, 1500) // the smallest cache read
  assert.equal(request.contextWindow, 20000)
  assert.equal(request.thresholdTokens, 10000)
  assert.equal(request.turn, '7')
  assert.deepEqual(request.plan.prune.map(p => p.id), ['seq-4', 'seq-6', 'seq-8'])
  // Retaining 4,000 tokens keeps the last call's result (seq-8, ~2,300
  // tokens) and the answer; the cut before seq-8 would split call c3 from
  // its result, so the span ends at seq-6 — the cut moves older.
  assert.equal(request.plan.summarize.start, 'seq-2')
  assert.equal(request.plan.summarize.end, 'seq-6')
})

test('allowed: summary over the untouched region first, then only the tail\'s prunes; usage and outcome recorded', async () => {
  const { ctx, engine, calls } = standIn()
  const client = new TollgateClient({ home: server.home, logger: quiet })
  apply(ctx, { client, harnessVersion: '0.9.0' })
  // A long opening message: pruning alone cannot get under the threshold.
  const session = makeSession('s-allow', { userChars: 40000 })
  const result = await engine.compactIfNeeded({ session }, 'pressure', undefined)
  assert.ok(result, 'the rewrite ran')
  assert.deepEqual(calls[0], ['summarize', 2, 6])
  assert.deepEqual(calls.slice(1), [['prune', [8]]])
  const series = await api(server, 'GET', '/v1/sessions/dsh:s-allow/series')
  assert.equal(series.session.harness, 'dsh')
  assert.equal(series.session.requests, 4)
  assert.equal(series.session.provider, 'deepseek')
  assert.equal(series.folds.length, 1)
  const fold = series.folds[0]
  assert.equal(fold.decision, 'allow')
  assert.equal(fold.order, 'summarize-then-prune-tail')
  assert.equal(fold.applied, true)
  assert.equal(fold.turn, '7')
  // The Integrations page has seen the plugin.
  assert.ok(existsSync(join(server.home, 'integrations', 'dsh.json')))
  const engines = await api(server, 'GET', '/v1/engines')
  const dsh = engines.integrations.find(i => i.name === 'dsh')
  assert.equal(dsh.installed, true)
  assert.match(dsh.detail, /dsh 0\.9\.0/)
  assert.ok(engines.engines.some(e => e.harness === 'dsh'), 'the plugin holds an engine lease')
  await client.close()
})

test('allowed, prune-only: when pruning alone gets under the threshold only the prunes run', async () => {
  const { ctx, engine, calls } = standIn()
  const client = new TollgateClient({ home: server.home, logger: quiet })
  installGate({ ctx, engine, client, logger: quiet })
  const result = await engine.compactIfNeeded({ session: makeSession('s-prune') }, 'pressure', undefined)
  assert.ok(result)
  assert.deepEqual(calls, [['prune', [4, 6, 8]]])
  const series = await api(server, 'GET', '/v1/sessions/dsh:s-prune/series')
  assert.equal(series.folds[0].order, 'prune-only')
})

test('declined: the engine is not called and nothing changes', async () => {
  await api(server, 'PUT', '/v1/mode', { scope: 'session', session: 'dsh:s-decline', mode: 'ask' })
  const { ctx, engine, calls } = standIn()
  const client = new TollgateClient({ home: server.home, logger: quiet })
  installGate({ ctx, engine, client, logger: quiet })
  const session = makeSession('s-decline')
  const before = JSON.stringify(session.surface.nodes)
  const result = await engine.compactIfNeeded({ session }, 'pressure', undefined)
  assert.equal(result, null)
  assert.deepEqual(calls, [])
  assert.equal(JSON.stringify(session.surface.nodes), before)
  const series = await api(server, 'GET', '/v1/sessions/dsh:s-decline/series')
  assert.equal(series.folds[0].decision, 'decline')
  assert.equal(series.folds[0].reason, 'no-question-provider')
})

test('tollgate unreachable: the engine runs as shipped', async () => {
  const { ctx, engine, calls } = standIn()
  const client = new TollgateClient({ endpoint: { url: 'http://127.0.0.1:1', token: 'x' }, logger: quiet })
  installGate({ ctx, engine, client, logger: quiet })
  const result = await engine.compactIfNeeded({ session: makeSession('s-away') }, 'pressure', undefined)
  assert.deepEqual(result, { shipped: true })
  assert.deepEqual(calls, [['shipped', 'pressure']])
})

test('below the threshold: nothing is asked, the engine decides as shipped', async () => {
  const { ctx, engine, calls } = standIn()
  engine.config.thresholdRatio = 0.99
  const client = new TollgateClient({ home: server.home, logger: quiet })
  installGate({ ctx, engine, client, logger: quiet })
  await engine.compactIfNeeded({ session: makeSession('s-below') }, 'pressure', undefined)
  assert.deepEqual(calls, [['shipped', 'pressure']])
  const list = await api(server, 'GET', '/v1/sessions')
  const s = list.sessions.find(x => x.id === 'dsh:s-below')
  assert.equal(s.rewrites, 0)
})
