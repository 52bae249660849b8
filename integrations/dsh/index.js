/**
 * tollgate for dsh: a Cordis plugin that asks tollgate before the
 * compaction engine (the `compaction` service) rewrites the model-visible
 * context. See ../README.md and the tollgate README's Integrations section.
 *
 *   plugins:
 *     tollgate:                    # this package
 *       home: ~/.config/tollgate   # optional; else $TOLLGATE_HOME or TOLLGATE_URL+TOLLGATE_TOKEN
 *       profile: deepseek-flash    # optional pricing profile
 *       deadlineSeconds: 120       # how long a question may wait
 *
 * @module @tollgate/dsh-plugin
 */
import { TollgateClient } from './lib/client.js'
import { installGate } from './lib/gate.js'

export const name = 'tollgate'
export const inject = { optional: ['compaction', 'toolResultPruner', 'tokenMeter'] }

/** The service whose registration announces a compaction engine. */
export const ENGINE_SERVICE = 'compaction'

export function apply(ctx, config = {}) {
  const logger = typeof ctx.logger === 'function' ? ctx.logger('tollgate') : console
  const client = config.client ?? new TollgateClient({ home: config.home, logger })
  client.register({ harness: 'dsh', version: config.harnessVersion, profile: config.profile }).catch(() => {})
  const disposers = []
  const tryInstall = () => {
    const engine = typeof ctx.get === 'function' ? ctx.get(ENGINE_SERVICE) : ctx[ENGINE_SERVICE]
    if (engine && typeof engine.compactIfNeeded === 'function') disposers.push(installGate({ ctx, engine, client, config, logger }))
  }
  tryInstall()
  // The engine may register after this plugin: install when it appears.
  const off = typeof ctx.on === 'function' ? ctx.on('internal/service', nameOf => { if (nameOf === ENGINE_SERVICE) tryInstall() }) : undefined
  const dispose = () => {
    off?.()
    for (const d of disposers.splice(0)) d()
    return client.close()
  }
  if (typeof ctx.on === 'function') ctx.on('dispose', dispose)
  return dispose
}

export { TollgateClient, discover, unguarded } from './lib/client.js'
export { installGate, executeOrder, sessionKey } from './lib/gate.js'
export { buildAsk } from './lib/plan.js'
