/**
 * The gate around the compaction engine's `compactIfNeeded(agent, trigger,
 * signal)` — the seam every automatic rewrite passes (the step-pressure path
 * and the provider-overflow path call it with `this` bound to the engine).
 *
 * Per call: record the usage of new `assistant/message` events, build the
 * ask (./plan.js), ask tollgate, then
 *   - decline → return null: the engine's "nothing compacted", the surface
 *     and the provider cache stay as they are;
 *   - tollgate unreachable (reason unguarded) or mode off → the original
 *     method runs: the harness compacts as shipped;
 *   - allow → execute the order tollgate returns with the engine's own
 *     primitives: `compactRegion(startSeq, endSeq, agent, signal)` for the
 *     summary and the tool-result pruner for prunes. For the recommended
 *     `summarize-then-prune-tail` the summary over the untouched region runs
 *     first, then only the retained tail's prunes (tollgate's `apply` lists
 *     only those); `prune-then-summarize` prunes first; `prune-only` prunes.
 *     The outcome is reported to tollgate.
 * A fault of the gate itself never blocks the engine: it falls back to the
 * original method.
 *
 * @module @tollgate/dsh-plugin/gate
 */
import { writeFileSync, mkdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { buildAsk, routedTarget, seqOf } from './plan.js'

export const GATE_MARK = Symbol.for('tollgate.dsh.gate')

/** The tollgate session id of a dsh session (the importer's naming). */
export const sessionKey = session => `dsh:${session.id ?? 'unknown'}`

/** Record the usage of assistant/message events not recorded yet. */
export async function recordUsage(client, session, recorded) {
  const events = session.events ?? []
  const key = sessionKey(session)
  const from = recorded.get(key) ?? 0
  const target = routedTarget(session)
  const pending = []
  for (let seq = from; seq < events.length; seq += 1) {
    const event = events[seq]
    const u = event?.type === 'assistant/message' ? event.data?.usage : undefined
    if (u === undefined) continue
    pending.push(client.recordRequest(key, {
      requestId: String(event.id ?? event.data?.message?.id ?? `seq-${seq}`),
      harness: 'dsh',
      profile: event.data?.profile ?? target.profile,
      provider: event.data?.provider ?? target.provider,
      model: event.data?.model ?? target.model,
      purpose: event.data?.purpose ?? 'conversation',
      turn: String(event.data?.turn ?? ''),
      ...(event.at ? { at: new Date(event.at).toISOString() } : {}),
      contextWindow: target.contextWindow ?? 0,
      usage: {
        inputTokens: u.inputTokens ?? 0, cacheReadTokens: u.cacheReadTokens ?? 0, cacheWriteTokens: u.cacheWriteTokens ?? 0,
        cacheWrite1hTokens: u.cacheWrite1hTokens ?? 0, outputTokens: u.outputTokens ?? 0,
      },
    }).catch(() => null))
  }
  recorded.set(key, events.length)
  await Promise.all(pending)
}

/** Tell the Integrations page the plugin ran (best effort). */
export function markSeen(home, lastDecision, version) {
  if (!home) return
  try {
    const dir = join(home, 'integrations')
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const tmp = join(dir, `dsh.json.${process.pid}.tmp`)
    writeFileSync(tmp, JSON.stringify({ at: new Date().toISOString(), lastDecision, ...(version ? { version } : {}) }), { mode: 0o600 })
    renameSync(tmp, join(dir, 'dsh.json'))
  } catch {
    // a read-only home only loses the Integrations page's line
  }
}

/** Prune tool results through the pruner (or the engine) of this dsh build. */
async function applyPrunes(ctx, engine, agent, seqs, signal, logger) {
  if (seqs.length === 0) return
  const pruner = typeof ctx.get === 'function' ? ctx.get('toolResultPruner') : ctx.toolResultPruner
  if (pruner && typeof pruner.pruneNodes === 'function') return pruner.pruneNodes(agent, seqs, signal)
  if (typeof engine.pruneNodes === 'function') return engine.pruneNodes(agent, seqs, signal)
  logger.warn(`tollgate: this dsh build exposes no per-node prune; ${seqs.length} tool results stay unpruned`)
}

/**
 * Execute tollgate's order with the engine's primitives.
 * @returns the engine's result of the summary (or of the prunes)
 */
export async function executeOrder({ ctx, engine, agent, decision, signal, logger }) {
  const apply = decision.apply ?? { summarize: null, prune: [] }
  const prunes = (apply.prune ?? []).map(seqOf).filter(Number.isFinite)
  const summary = apply.summarize
  if (decision.order === 'prune-then-summarize') {
    const pruned = await applyPrunes(ctx, engine, agent, prunes, signal, logger)
    const result = summary ? await engine.compactRegion(seqOf(summary.start), seqOf(summary.end), agent, signal) : null
    return result ?? pruned ?? (prunes.length > 0 ? { order: decision.order, pruned: prunes } : null)
  }
  let result = null
  if (summary) result = await engine.compactRegion(seqOf(summary.start), seqOf(summary.end), agent, signal)
  const pruned = await applyPrunes(ctx, engine, agent, prunes, signal, logger)
  // compactIfNeeded's null means "nothing compacted": a prune-only order
  // that ran must not look like one.
  return result ?? pruned ?? (prunes.length > 0 ? { order: decision.order, pruned: prunes } : null)
}

/**
 * Wrap one engine instance.
 * @param {{ctx: any, engine: any, client: import('./client.js').TollgateClient, config?: object, logger?: any}} input
 * @returns a disposer restoring the original method
 */
export function installGate({ ctx, engine, client, config = {}, logger = console }) {
  if (engine[GATE_MARK]) return engine[GATE_MARK]
  const original = engine.compactIfNeeded
  const recorded = new Map()
  engine.compactIfNeeded = async function gated(agent, trigger, signal) {
    const session = agent?.session
    if (session === undefined) return original.call(this, agent, trigger, signal)
    let ask
    try {
      await recordUsage(client, session, recorded)
      ask = buildAsk({ ctx, engine: this, session, trigger, estimatedSummaryTokens: config.estimatedSummaryTokens,
        deadlineSeconds: config.deadlineSeconds, profile: config.profile })
    } catch (error) {
      logger.warn(`tollgate: pricing the rewrite failed (${error?.message ?? error}); the engine runs as shipped`)
      return original.call(this, agent, trigger, signal)
    }
    if (ask === null) return original.call(this, agent, trigger, signal)
    const decision = await client.askRewrite(sessionKey(session), ask.request, { signal })
    markSeen(client.ep()?.home, `${decision.decision} (${decision.reason})`, config.harnessVersion)
    if (decision.reason === 'question-limit') {
      // tollgate could not take the question (too many wait): it allows the
      // rewrite unasked rather than block the engine; say why.
      logger.warn(`tollgate: ${decision.message ?? 'too many questions wait'}`)
    }
    if (decision.decision === 'decline') {
      logger.info?.(`tollgate: rewrite declined (${decision.reason}); the surface and its cache stay as they are`)
      return null
    }
    if (decision.reason === 'unguarded' || decision.reason === 'off' || decision.rewrite === '') {
      return original.call(this, agent, trigger, signal)
    }
    try {
      const result = await executeOrder({ ctx, engine: this, agent, decision, signal, logger })
      await client.outcome(decision.rewrite, true)
      return result
    } catch (error) {
      await client.outcome(decision.rewrite, false, error?.message ?? String(error))
      throw error
    }
  }
  const dispose = () => {
    engine.compactIfNeeded = original
    delete engine[GATE_MARK]
  }
  engine[GATE_MARK] = dispose
  return dispose
}
