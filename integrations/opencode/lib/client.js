/**
 * A small tollgate client (tollgate ARCHITECTURE.md, "The API") with no
 * dependencies: discovery through <home>/api.json, the engine lease with
 * heartbeats, usage records, the rewrite ask and its outcome. It never
 * throws at the plugin: when tollgate cannot be reached the ask answers
 * allow with reason `unguarded`, and `onReachable(false)` tells the guard to
 * hand compaction back to OpenCode.
 *
 * @module tollgate-opencode/client
 */
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * Where tollgate is: $TOLLGATE_URL + $TOLLGATE_TOKEN, else `<home>/api.json`
 * with home = the argument, $TOLLGATE_HOME, or the user config dir's
 * `tollgate` folder. Null while tollgate is not running.
 * @returns {{url: string, token: string, home?: string} | null}
 */
export function discover(home, env = process.env) {
  if (env.TOLLGATE_URL && env.TOLLGATE_TOKEN) return { url: env.TOLLGATE_URL, token: env.TOLLGATE_TOKEN, home: home || env.TOLLGATE_HOME }
  const dir = home || env.TOLLGATE_HOME || defaultHome(env)
  try {
    const info = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8'))
    if (typeof info.url === 'string' && info.url !== '') return { url: info.url, token: String(info.token ?? ''), home: dir }
  } catch {
    // not running
  }
  return null
}

export function defaultHome(env = process.env) {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'tollgate')
  if (process.platform === 'win32') return join(env.APPDATA ?? homedir(), 'tollgate')
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'tollgate')
}

/** An error answer from tollgate. */
export class TollgateError extends Error {
  constructor(status, code, message) {
    super(`tollgate: HTTP ${status} ${code}: ${message}`)
    this.status = status
    this.code = code
  }
}

export class TollgateClient {
  /**
   * @param {{home?: string, env?: object, fetch?: typeof fetch, logger?: {warn: Function}, onReachable?: (up: boolean) => void, heartbeatMs?: number}} [options]
   */
  constructor(options = {}) {
    this.home = options.home
    this.env = options.env ?? process.env
    this.fetch = options.fetch ?? globalThis.fetch
    this.logger = options.logger ?? console
    this.onReachable = options.onReachable ?? (() => {})
    this.heartbeatMs = options.heartbeatMs ?? 10_000
    this.endpoint = null
    this.engineId = ''
    this.engine = null
    this.beat = null
    this.up = null
  }

  /** The endpoint, found again after a restart (a new port and token). */
  ep() {
    if (this.endpoint === null) this.endpoint = discover(this.home, this.env)
    return this.endpoint
  }

  setUp(up) {
    if (this.up === up) return
    this.up = up
    if (!up) this.logger.warn?.('tollgate is not reachable: OpenCode compacts on its own until it is back')
    this.onReachable(up)
  }

  async call(method, path, body, { timeoutMs = 10_000 } = {}) {
    const ep = this.ep()
    if (ep === null) throw new Error('tollgate is not running (no api.json)')
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
    try {
      let res
      try {
        res = await this.fetch(ep.url + path, {
          method,
          headers: { authorization: `Bearer ${ep.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: controller.signal,
        })
      } catch (error) {
        this.endpoint = null // it may have restarted elsewhere
        throw error
      }
      const text = await res.text()
      if (res.status === 401) this.endpoint = null // the token was rotated
      if (res.status < 200 || res.status > 299) {
        let e = {}
        try { e = JSON.parse(text).error ?? {} } catch { /* not JSON */ }
        throw new TollgateError(res.status, e.code ?? '', e.message ?? text)
      }
      return { status: res.status, body: text === '' ? null : JSON.parse(text) }
    } finally {
      clearTimeout(timer)
    }
  }

  /** Register the engine and keep its lease until close(); reports reachability. */
  async register(engine) {
    this.engine = { pid: process.pid, ...engine }
    const up = await this.registerOnce()
    if (this.beat === null) {
      this.beat = setInterval(() => { this.heartbeat().catch(() => {}) }, this.heartbeatMs)
      this.beat.unref?.()
    }
    return up
  }

  async registerOnce() {
    try {
      const { body } = await this.call('POST', '/v1/engines', this.engine)
      this.engineId = body?.engine ?? ''
      this.setUp(true)
      return true
    } catch {
      this.engineId = ''
      this.setUp(false)
      return false
    }
  }

  async heartbeat() {
    if (this.engineId === '') return this.registerOnce()
    try {
      await this.call('POST', `/v1/engines/${encodeURIComponent(this.engineId)}/heartbeat`, {})
      this.setUp(true)
      return true
    } catch {
      return this.registerOnce()
    }
  }

  async close() {
    if (this.beat !== null) clearInterval(this.beat)
    this.beat = null
    const id = this.engineId
    this.engineId = ''
    if (id !== '') await this.call('DELETE', `/v1/engines/${encodeURIComponent(id)}`, undefined, { timeoutMs: 2000 }).catch(() => {})
  }

  /** Record one request (idempotent by requestId); null when it could not. */
  async recordRequest(session, request) {
    try {
      const { body } = await this.call('POST', `/v1/sessions/${encodeURIComponent(session)}/requests`,
        { engine: this.engineId || undefined, ...request })
      return body
    } catch (error) {
      if (!(error instanceof TollgateError)) this.setUp(false)
      return null
    }
  }

  /**
   * Ask before a compaction and wait for the answer. Never throws: when
   * tollgate cannot answer, the decision is allow with reason unguarded.
   */
  async askRewrite(session, request) {
    const req = { engine: this.engineId || undefined, ...request }
    const holdMs = ((req.deadlineSeconds ?? 120) + 5) * 1000
    try {
      let { status, body } = await this.call('POST', `/v1/sessions/${encodeURIComponent(session)}/rewrites`, req, { timeoutMs: holdMs })
      while (status === 202 || body?.status === 'pending') {
        ;({ status, body } = await this.call('GET', `/v1/rewrites/${encodeURIComponent(body.rewrite)}?wait=30`, undefined, { timeoutMs: 40_000 }))
      }
      this.setUp(true)
      return body
    } catch (error) {
      if (!(error instanceof TollgateError) || error.status >= 500) this.setUp(false)
      return { rewrite: '', status: 'decided', decision: 'allow', reason: 'unguarded', message: `tollgate unreachable: ${error?.message ?? error}` }
    }
  }

  /** Report whether the allowed compaction landed. */
  async outcome(rewrite, applied, error) {
    if (!rewrite) return
    await this.call('POST', `/v1/rewrites/${encodeURIComponent(rewrite)}/outcome`, { applied, ...(error ? { error: String(error) } : {}) }).catch(() => {})
  }
}
