/**
 * The rewrite the dsh compaction engine is about to make, as a tollgate ask
 * (ARCHITECTURE.md, "The API"): the surface from the session's surface nodes (token counts
 * from the harness's token meter, `ctx.tokenMeter.measure(session)`), prune
 * candidates from the tool-result pruner's own budget check
 * (`pruner.pruneContent(blocks)` returns the pruned blocks, or null when a
 * result is within budget), and the summary span from the engine's config —
 * everything older than the retained tail, cut where no tool call is left
 * without its result. Nothing here changes the session.
 *
 * @module @tollgate/dsh-plugin/plan
 */

/** Unit id of a surface node. */
export const unitId = seq => `seq-${seq}`

/** The seq a unit id names. */
export const seqOf = id => Number(String(id).slice(4))

/** The routed provider, model and window (request/header, then the newest request/context). */
export function routedTarget(session) {
  let header
  try {
    header = typeof session.requestHeader === 'function' ? session.requestHeader() : undefined
  } catch {
    header = undefined
  }
  const events = session.events ?? []
  let context
  for (let i = events.length - 1; i >= 0; i -= 1) {
    if (events[i]?.type === 'request/context') {
      context = events[i].data ?? {}
      break
    }
  }
  return {
    provider: header?.config?.provider ?? context?.provider,
    model: header?.config?.model ?? context?.model,
    profile: header?.config?.profile ?? context?.profile,
    contextWindow: context?.contextWindow,
  }
}

/** The newest turn/start's turn number (0 before the first turn). */
export function currentTurn(session) {
  const events = session.events ?? []
  for (let i = events.length - 1; i >= 0; i -= 1) {
    if (events[i]?.type === 'turn/start') return events[i].data?.turn ?? 0
  }
  return 0
}

/** Threshold and retention for the routed model, as the engine resolves them. */
export function budgets(config = {}, provider, model, contextWindow) {
  const policy = (config.modelPolicies ?? []).find(p => p.provider === provider && p.model === model)
  const thresholdRatio = policy?.thresholdRatio ?? config.thresholdRatio ?? 0.8
  const retainRatio = policy?.retainRatio ?? config.retainRatio
  const retainTokens = policy?.retainTokens ?? config.retainTokens
  const window = contextWindow ?? config.contextWindow
  return {
    window,
    thresholdTokens: window === undefined ? undefined : Math.floor(window * thresholdRatio),
    retainTokens: retainTokens ?? (window === undefined ? 0 : Math.floor(window * (retainRatio ?? 0))),
  }
}

/**
 * The fixed head of every request (tools + system prompt): the smallest
 * cache read the provider reported, else the meter's residual.
 */
export function envelopeTokens(session, measurement, nodeTotal) {
  let smallest
  for (const event of session.events ?? []) {
    const read = event?.type === 'assistant/message' ? event.data?.usage?.cacheReadTokens : undefined
    if (typeof read === 'number' && read > 0 && (smallest === undefined || read < smallest)) smallest = read
  }
  const residual = Math.max(0, (measurement.totalTokens ?? 0) - nodeTotal)
  return Math.max(0, Math.min(smallest ?? residual, measurement.totalTokens ?? 0))
}

/** Where a cut before each node (and after the last) leaves no tool call open. */
export function balancedCuts(nodes, events) {
  const cuts = []
  let open = 0
  for (const node of nodes) {
    cuts.push(open === 0)
    const event = events?.[node.seq]
    if (event?.type === 'assistant/message') {
      const content = event.data?.message?.content
      if (Array.isArray(content)) open += content.filter(b => b?.type === 'tool-call').length
    } else if (event?.type === 'tool/result') {
      open = Math.max(0, open - 1)
    }
  }
  cuts.push(open === 0)
  return cuts
}

/** Index of the first node of the retained tail. */
export function retainedTailStart(tokens, retain) {
  let i = tokens.length
  let kept = 0
  while (i > 0 && kept + tokens[i - 1] <= retain) {
    i -= 1
    kept += tokens[i]
  }
  return i
}

/**
 * Build the ask for one pending operation.
 * @param {{ctx: any, engine: any, session: any, trigger: string, estimatedSummaryTokens?: number, instructionTokens?: number, deadlineSeconds?: number, profile?: string}} input
 * @returns {{request: object, target: object, nodes: Array<{seq: number, tokens: number}>} | null} null when nothing would change
 */
export function buildAsk(input) {
  const { ctx, engine, session } = input
  const trigger = input.trigger === 'context-overflow' ? 'context-overflow' : 'pressure'
  const measurement = ctx.tokenMeter.measure(session)
  const nodes = (measurement.nodes ?? []).filter(n => Number.isFinite(n?.seq) && n.tokens > 0)
  const events = session.events ?? []
  const target = routedTarget(session)
  const b = budgets(engine.config, target.provider, target.model, target.contextWindow)
  const nodeTotal = nodes.reduce((t, n) => t + n.tokens, 0)
  const envelope = envelopeTokens(session, measurement, nodeTotal)
  const total = envelope + nodeTotal

  if (trigger === 'pressure' && b.thresholdTokens !== undefined && total < b.thresholdTokens) return null

  const surface = nodes.map(n => ({ id: unitId(n.seq), tokens: n.tokens, kind: events[n.seq]?.type === 'tool/result' ? 'tool-result' : 'message' }))

  // Prune candidates: the pruner's own budget check decides.
  const pruner = typeof ctx.get === 'function' ? ctx.get('toolResultPruner') : ctx.toolResultPruner
  const prune = []
  if (pruner && typeof pruner.pruneContent === 'function') {
    for (const n of nodes) {
      const event = events[n.seq]
      if (event?.type !== 'tool/result') continue
      const message = event.data?.message
      const result = message?.content?.[0]
      if (!Array.isArray(result?.content)) continue
      const pruned = pruner.pruneContent(result.content)
      if (pruned === null || pruned === undefined) continue
      const after = ctx.tokenMeter.estimateMessage({ ...message, content: [{ ...result, content: pruned }] })
      if (after < n.tokens) prune.push({ id: unitId(n.seq), tokensAfter: Math.max(0, Math.round(after)) })
    }
  }

  // The summary span: everything before the retained tail (on overflow,
  // everything but the last node), moved older to a balanced cut.
  let summarize
  const tokens = nodes.map(n => n.tokens)
  let keepFrom = trigger === 'context-overflow' ? nodes.length - 1 : retainedTailStart(tokens, b.retainTokens)
  const cuts = balancedCuts(nodes, events)
  while (keepFrom > 0 && !cuts[keepFrom]) keepFrom -= 1
  if (keepFrom > 0) {
    summarize = {
      start: unitId(nodes[0].seq),
      end: unitId(nodes[keepFrom - 1].seq),
      estimatedTokens: input.estimatedSummaryTokens ?? engine.config?.estimatedSummaryTokens ?? 0,
      instructionTokens: input.instructionTokens ?? 470,
      sameFamily: true,
    }
  }
  if (summarize === undefined && prune.length === 0) return null

  let idleSeconds = 0
  for (let i = events.length - 1; i >= 0; i -= 1) {
    if (events[i]?.type === 'assistant/message') {
      const at = Date.parse(events[i].at ?? events[i].data?.at ?? '')
      if (Number.isFinite(at)) idleSeconds = Math.max(0, (Date.now() - at) / 1000)
      break
    }
  }
  const request = {
    profile: input.profile ?? target.profile,
    turn: String(currentTurn(session)),
    trigger,
    deadlineSeconds: input.deadlineSeconds ?? 120,
    idleSeconds,
    contextWindow: b.window ?? 0,
    thresholdTokens: b.thresholdTokens ?? 0,
    envelopeTokens: envelope,
    surface,
    plan: { ...(prune.length > 0 ? { prune } : {}), ...(summarize ? { summarize } : {}) },
  }
  if (request.profile === undefined) delete request.profile
  return { request, target, nodes }
}
