/**
 * tollgate for OpenCode: a plugin that lets tollgate price and approve each
 * compaction before OpenCode runs it, and records every request's usage.
 * See ../README.md ("OpenCode") and the tollgate README's OpenCode section.
 *
 * The tollgate binary embeds this folder's index.js and lib/ (embed.go):
 * `tollgate hook opencode --install` writes them into OpenCode's plugins
 * folder. From a checkout, list it in opencode.json instead (not both):
 *
 *   { "plugin": ["file:///path/to/tollgate/integrations/opencode/index.js"] }
 *
 * Options (the second element of a plugin entry, or the environment):
 * home (tollgate's home; else $TOLLGATE_HOME or ~/.config/tollgate),
 * deadlineSeconds (how long a question may wait, default 120),
 * heartbeatSeconds (how often the engine lease is renewed, and so how soon
 * a stopped tollgate hands compaction back to OpenCode; default 10).
 *
 * OpenCode calls every exported function as a plugin, so this module
 * exports the plugin only; the parts live in lib/.
 *
 * @module tollgate-opencode
 */
import { TollgateClient } from './lib/client.js'
import { createGuard } from './lib/guard.js'

// The OpenCode subcommand this process runs (argv is ["bun", script, …]):
// `run` exits when its turn ends.
const command = argv => argv.slice(2).find(a => !a.startsWith('-')) ?? ''

export const TollgatePlugin = async (input, options = {}) => {
  const logger = {
    warn: message => input.client?.app?.log?.({ body: { service: 'tollgate', level: 'warn', message } })?.catch?.(() => {}),
    info: message => input.client?.app?.log?.({ body: { service: 'tollgate', level: 'info', message } })?.catch?.(() => {}),
  }
  const client = new TollgateClient({ home: options?.home, logger, heartbeatMs: (Number(options?.heartbeatSeconds) || 10) * 1000 })
  const { hooks } = createGuard({ client, opencode: input.client, logger, deadlineSeconds: Number(options?.deadlineSeconds) || 120,
    exitsAtIdle: command(process.argv) === 'run' })
  return hooks
}
