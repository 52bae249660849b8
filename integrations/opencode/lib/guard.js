/**
 * The guard inside OpenCode (sst/opencode 1.x; read in 1.18.33). OpenCode's
 * plugin hooks cannot veto a compaction — `experimental.session.compacting`
 * only changes its prompt — so the guard owns the operation instead:
 *
 *   - its `config` hook turns OpenCode's automatic compaction off
 *     (`compaction.auto = false`, which isOverflow in
 *     packages/opencode/src/session/overflow.ts reads on every step) while
 *     tollgate is reachable, and back to the user's setting when it is not:
 *     a guard failure never strands a session;
 *   - it watches each finished assistant message's tokens (`message.updated`
 *     events), records them to tollgate, and marks the session due when the
 *     context crosses OpenCode's own threshold (`usable` below);
 *   - when the session goes idle (in a process that outlives the turn) it
 *     asks tollgate; on allow it runs the
 *     compaction through OpenCode's own API (`session.summarize`, the
 *     route /compact uses), on decline the session goes on as it is and is
 *     asked again when a later turn ends above the threshold;
 *   - before the next model request of a due session (`chat.params`, which
 *     OpenCode awaits: a step after tool calls, or the first request of a
 *     process that starts on the session, such as `opencode run -c`) it asks
 *     and holds the request until the answer; on allow it turns OpenCode's
 *     automatic compaction on for that one request, so OpenCode compacts
 *     right after it (its own path, then "Continue"), and off again.
 *
 * What it cannot do: ask between a step's usage and the next step's
 * request — OpenCode has no awaited hook there — so an allowed compaction
 * in the middle of a turn lands one request later than OpenCode's own
 * would; and a process that exits when its turn ends (`opencode run`) is
 * asked at its next start instead.
 *
 * @module tollgate-opencode/guard
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const HARNESS = 'opencode'

/** The tollgate session of an OpenCode session (the importer's naming). */
export const sessionKey = id => `opencode:${id}`

// OpenCode 1.18.33's constants: ProviderTransform.OUTPUT_TOKEN_MAX
// (OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX overrides it) and the buffer of
// packages/opencode/src/session/overflow.ts.
export const OUTPUT_TOKEN_MAX = 32_000
export const COMPACTION_BUFFER = 20_000

/**
 * OpenCode's threshold: the tokens a context may reach before it compacts
 * (overflow.ts `usable`, as 1.18.33 ships it). 0 means never (no window).
 */
export function usable(limit, compaction = {}, outputTokenMax = OUTPUT_TOKEN_MAX) {
  const context = Number(limit?.context ?? 0)
  if (!(context > 0)) return 0
  const maxOut = Math.min(Number(limit.output ?? 0), outputTokenMax) || outputTokenMax
  const reserved = compaction?.reserved ?? Math.min(COMPACTION_BUFFER, maxOut)
  return limit.input ? Math.max(0, limit.input - reserved) : Math.max(0, context - maxOut)
}

/** The count OpenCode compares with the threshold (overflow.ts isOverflow). */
export function contextTokens(t) {
  if (!t) return 0
  return t.total || (t.input ?? 0) + (t.output ?? 0) + (t.cache?.read ?? 0) + (t.cache?.write ?? 0)
}

/** OpenCode's tokens in tollgate's recording body: input is already net of the cache; reasoning is output. */
export function usageOf(t) {
  return {
    inputTokens: t?.input ?? 0, cacheReadTokens: t?.cache?.read ?? 0, cacheWriteTokens: t?.cache?.write ?? 0,
    cacheWrite1hTokens: 0, outputTokens: (t?.output ?? 0) + (t?.reasoning ?? 0),
  }
}

const isCompactionUser = m => m?.info?.role === 'user' && (m.parts ?? []).some(p => p?.type === 'compaction')

/**
 * The rewrite question for a session whose context crossed the threshold.
 * The surface is the messages the model sees (from the last summary on),
 * their sizes estimated from their parts and scaled to the measured context;
 * the summary spans everything before the tail OpenCode keeps
 * (compaction.ts `select`: whole turns from the end within
 * preserve_recent_tokens, default a quarter of the threshold between 2,000
 * and 15,000 tokens).
 */
export function buildAsk({ tokens, limit, threshold, messages, compaction = {}, envelope = 0, idleSeconds = 0, deadlineSeconds = 120, turn = '' }) {
  const measured = Math.max(0, contextTokens(tokens) - envelope)
  let list = Array.isArray(messages) ? messages.filter(m => m?.info?.id) : []
  for (let i = list.length - 1; i >= 0; i -= 1) {
    if (list[i].info.role === 'assistant' && list[i].info.summary === true) { list = list.slice(i); break }
  }
  list = list.filter(m => !isCompactionUser(m))
  const estimates = list.map(m => Math.max(1, Math.ceil(JSON.stringify(m.parts ?? []).length / 4)))
  const sum = estimates.reduce((a, b) => a + b, 0)
  let surface
  if (list.length === 0 || sum === 0) {
    surface = [{ id: 'history', tokens: Math.max(1, measured), kind: 'message' }]
  } else {
    surface = list.map((m, i) => ({
      id: m.info.id,
      tokens: Math.max(1, Math.round(estimates[i] * measured / sum)),
      kind: (m.parts ?? []).some(p => p?.type === 'tool') ? 'tool-result' : 'message',
    }))
  }
  // The tail OpenCode keeps: whole turns from the end within the budget.
  const budget = compaction.preserve_recent_tokens ?? Math.min(15_000, Math.max(2_000, Math.floor(threshold * 0.25)))
  let keepFrom = surface.length
  if (!(compaction.tail_turns !== undefined && compaction.tail_turns <= 0) && surface.length > 1) {
    let kept = 0
    let end = surface.length
    let turns = 0
    for (let i = surface.length - 1; i >= 0; i -= 1) {
      if (list[i]?.info?.role !== 'user') continue
      const size = surface.slice(i, end).reduce((a, u) => a + u.tokens, 0)
      if (kept + size > budget || (compaction.tail_turns !== undefined && turns >= compaction.tail_turns)) break
      kept += size
      keepFrom = i
      end = i
      turns += 1
    }
  }
  if (keepFrom === 0) keepFrom = surface.length // OpenCode summarizes it all when the tail would be everything
  return {
    turn,
    trigger: 'pressure',
    deadlineSeconds,
    idleSeconds,
    contextWindow: Number(limit?.context ?? 0),
    thresholdTokens: threshold,
    envelopeTokens: envelope,
    surface,
    plan: { summarize: { start: surface[0].id, end: surface[keepFrom - 1].id, estimatedTokens: 0, instructionTokens: 600, sameFamily: true } },
  }
}

/**
 * The plugin's index.js as loaded: the marker says where it ran from, so
 * tollgate can tell a plugin that ran from a file since removed (after
 * `tollgate hook opencode --uninstall`) from one still in place.
 */
const PLUGIN_FILE = (() => {
  try {
    return fileURLToPath(new URL('../index.js', import.meta.url))
  } catch {
    return ''
  }
})()

/** Tell the Integrations page the plugin ran (best effort). */
export function markSeen(home, lastDecision, version) {
  if (!home) return
  try {
    const dir = join(home, 'integrations')
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const tmp = join(dir, `${HARNESS}.json.${process.pid}.tmp`)
    writeFileSync(tmp, JSON.stringify({ at: new Date().toISOString(), ...(lastDecision ? { lastDecision } : {}), ...(version ? { version } : {}), ...(PLUGIN_FILE ? { from: PLUGIN_FILE } : {}) }), { mode: 0o600 })
    renameSync(tmp, join(dir, `${HARNESS}.json`))
  } catch {
    // a read-only home only loses the Integrations page's line
  }
}

/** How many recorded message ids a session remembers (see onAssistant). */
const RECORDED_KEEP = 512

/**
 * The harness turn an answer belongs to: the user message it answers
 * (OpenCode's parentID), shared by every step of that turn, so that a decline
 * mutes the rest of the turn in tollgate (one question per turn, not one per
 * tool-call step). Without it, a count of answers.
 */
export function turnOf(info, s) {
  return typeof info?.parentID === 'string' && info.parentID !== '' ? info.parentID : String(s.turns)
}

/**
 * The hooks the plugin returns to OpenCode.
 * @param {{client: import('./client.js').TollgateClient, opencode: any, logger?: {warn: Function, info?: Function}, deadlineSeconds?: number, outputTokenMax?: number}} deps
 */
export function createGuard({ client, opencode, logger = console, deadlineSeconds = 120, outputTokenMax = OUTPUT_TOKEN_MAX, exitsAtIdle = false }) {
  const state = { cfg: null, userAuto: true, hadAuto: false, guarding: false, version: '', sessions: new Map() }
  const session = id => {
    let s = state.sessions.get(id)
    if (!s) {
      state.sessions.set(id, (s = { model: null, recorded: new Set(), due: null, asking: null, minCacheRead: 0, turns: 0, loaded: false, armed: null }))
    }
    return s
  }

  // Automatic compaction is OpenCode's while tollgate is away, the guard's
  // while it is reachable; a user who turned it off keeps it off.
  const applyAuto = () => {
    const cfg = state.cfg
    if (!cfg || !state.userAuto) return
    const armed = [...state.sessions.values()].some(s => s.armed)
    if (state.guarding && !armed) {
      cfg.compaction ??= {}
      cfg.compaction.auto = false
    } else if (cfg.compaction) {
      if (state.hadAuto) cfg.compaction.auto = true
      else delete cfg.compaction.auto
    }
  }
  client.onReachable = up => {
    state.guarding = up
    applyAuto()
  }

  const limitOf = (s, providerID, modelID) =>
    s.model?.limit ?? state.cfg?.provider?.[providerID]?.models?.[modelID]?.limit

  const onAssistant = info => {
    const s = session(info.sessionID)
    if (s.recorded.has(info.id)) return
    s.recorded.add(info.id)
    // OpenCode re-sends a finished message's update only shortly after it
    // finishes: the newest ids are enough, and a long-running `opencode
    // serve` must not keep every id it ever saw.
    if (s.recorded.size > RECORDED_KEEP) s.recorded.delete(s.recorded.values().next().value)
    const t = info.tokens
    const limit = limitOf(s, info.providerID, info.modelID)
    const threshold = usable(limit, state.cfg?.compaction, outputTokenMax)
    if ((t?.cache?.read ?? 0) > 0 && (s.minCacheRead === 0 || t.cache.read < s.minCacheRead)) s.minCacheRead = t.cache.read
    if (!info.summary) s.turns += 1
    client.recordRequest(sessionKey(info.sessionID), {
      requestId: info.id,
      harness: HARNESS,
      ...(s.title ? { title: s.title } : {}),
      provider: info.providerID,
      model: info.modelID,
      purpose: info.summary ? 'compaction' : 'conversation',
      ...(Number.isFinite(info.time?.created) ? { at: new Date(info.time.created).toISOString() } : {}),
      contextWindow: Number(limit?.context ?? 0),
      thresholdTokens: threshold,
      usage: usageOf(t),
    }).catch(() => {})
    if (info.summary) {
      s.due = null
      disarm(s, true)
      return
    }
    s.due = threshold > 0 && contextTokens(t) >= threshold ? { info, threshold, limit } : null
  }

  const readMessages = async id => {
    try {
      const res = await opencode.session.messages({ path: { id } })
      const list = res?.data ?? res
      return Array.isArray(list) ? list : null
    } catch (error) {
      logger.warn?.(`tollgate: reading the session's messages: ${error?.message ?? error}`)
      return null
    }
  }

  // An allowed compaction in the turn: OpenCode's own automatic compaction
  // is on until its summary arrives, or until the next request shows it did
  // not happen.
  const arm = (s, rewrite) => {
    s.armed = { rewrite }
    if (state.cfg && state.userAuto) {
      state.cfg.compaction ??= {}
      state.cfg.compaction.auto = true
    }
  }
  const disarm = (s, landed) => {
    if (!s.armed) return
    const { rewrite } = s.armed
    s.armed = null
    applyAuto()
    client.outcome(rewrite, landed, landed ? undefined : 'OpenCode did not compact after the allowed request').catch(() => {})
  }

  // A process that starts on an existing session learns its last answer.
  const load = async (id, s) => {
    s.loaded = true
    const list = await readMessages(id)
    if (!list) return
    let last
    for (const m of list) {
      const info = m?.info
      if (info?.role !== 'assistant' || !info.time?.completed || !info.tokens) continue
      s.recorded.add(info.id)
      if ((info.tokens.cache?.read ?? 0) > 0 && (s.minCacheRead === 0 || info.tokens.cache.read < s.minCacheRead)) s.minCacheRead = info.tokens.cache.read
      if (!info.summary) s.turns += 1
      last = info
    }
    if (!last || last.summary || last.error) return
    const limit = limitOf(s, last.providerID, last.modelID)
    const threshold = usable(limit, state.cfg?.compaction, outputTokenMax)
    if (threshold > 0 && contextTokens(last.tokens) >= threshold) s.due = { info: last, threshold, limit }
  }

  const ask = async (id, s, due) => {
    const messages = await readMessages(id)
    const envelope = Math.min(s.minCacheRead, contextTokens(due.info.tokens))
    const idleSeconds = Number.isFinite(due.info.time?.completed) ? Math.max(0, (Date.now() - due.info.time.completed) / 1000) : 0
    const question = buildAsk({ tokens: due.info.tokens, limit: due.limit, threshold: due.threshold, messages, compaction: state.cfg?.compaction ?? {},
      envelope, idleSeconds, deadlineSeconds, turn: turnOf(due.info, s) })
    const decision = await client.askRewrite(sessionKey(id), question)
    markSeen(client.ep()?.home, `${decision.decision}${decision.reason ? ' (' + decision.reason + ')' : ''}`, state.version)
    if (decision.decision !== 'allow') logger.info?.(`tollgate: compaction of ${id} declined (${decision.reason}); the session goes on uncompacted`)
    return decision
  }

  // At the end of a turn, in a process that outlives it: compact now
  // through OpenCode's API.
  const gate = async (id, s) => {
    const due = s.due
    s.due = null
    const decision = await ask(id, s, due)
    if (decision.decision !== 'allow') return decision
    try {
      const res = await opencode.session.summarize({ path: { id }, body: { providerID: due.info.providerID, modelID: due.info.modelID, auto: false } })
      if (res?.error) throw new Error(JSON.stringify(res.error))
      await client.outcome(decision.rewrite, true)
    } catch (error) {
      logger.warn?.(`tollgate: OpenCode's compaction failed: ${error?.message ?? error}`)
      await client.outcome(decision.rewrite, false, error?.message ?? error)
    }
    return decision
  }

  const hooks = {
    async config(cfg) {
      state.cfg = cfg
      state.hadAuto = cfg.compaction?.auto !== undefined
      state.userAuto = cfg.compaction?.auto !== false
      await client.register({ harness: HARNESS, version: state.version || undefined })
      applyAuto()
      markSeen(client.ep()?.home, '', state.version)
    },
    async 'chat.params'(input) {
      if (!input?.sessionID || !input.model) return
      const id = input.sessionID
      const s = session(id)
      s.model = { limit: input.model.limit, providerID: input.model.providerID, modelID: input.model.id }
      const agent = typeof input.agent === 'string' ? input.agent : input.agent?.name
      if (agent === 'title' || agent === 'compaction' || agent === 'summary') return
      if (s.armed) disarm(s, false) // the allowed request went by without a compaction
      if (!s.loaded) await load(id, s)
      if (!s.due || s.asking || !state.userAuto || !state.guarding) return
      // Hold this request until tollgate answers (OpenCode awaits the hook).
      const due = s.due
      s.due = null
      const asking = ask(id, s, due)
      s.asking = asking
      try {
        const decision = await asking
        // Every allow arms OpenCode's own compaction for this one request,
        // an unguarded one too: when tollgate went away the client already
        // gave OpenCode its setting back (arming changes nothing), and when
        // tollgate refused the question (a 4xx) the guard still holds
        // compaction.auto off, so without arming the session could never
        // compact and would run into OpenCode's overflow error.
        if (decision.decision === 'allow') arm(s, decision.rewrite)
      } catch (error) {
        logger.warn?.(`tollgate: ${error?.message ?? error}`)
      } finally {
        s.asking = null
      }
    },
    async event({ event }) {
      const p = event?.properties ?? {}
      switch (event?.type) {
        case 'session.created':
        case 'session.updated':
          if (!state.version && typeof p.info?.version === 'string') state.version = p.info.version
          if (p.info?.id && typeof p.info.title === 'string' && !p.info.title.startsWith('New session - ')) session(p.info.id).title = p.info.title.slice(0, 200)
          break
        case 'message.updated':
          if (p.info?.role === 'assistant' && p.info.time?.completed && p.info.tokens && !p.info.error) onAssistant(p.info)
          break
        case 'session.compacted':
          if (p.sessionID) {
            const s = session(p.sessionID)
            s.due = null
            disarm(s, true)
          }
          break
        case 'session.idle': {
          const s = state.sessions.get(p.sessionID)
          // A process that exits with its turn (`opencode run`) cannot wait
          // for an answer here: its next start asks before its first request.
          if (!s?.due || s.asking || !state.userAuto || exitsAtIdle) break
          s.asking = gate(p.sessionID, s).catch(error => logger.warn?.(`tollgate: ${error?.message ?? error}`)).finally(() => { s.asking = null })
          break
        }
      }
    },
  }
  return { hooks, state, gate: id => gate(id, session(id)) }
}
