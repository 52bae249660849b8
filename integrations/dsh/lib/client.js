/**
 * A small tollgate client (ARCHITECTURE.md, "The API") with no dependencies: discovery,
 * engine registration with heartbeats, usage records, the rewrite ask and
 * outcomes. It fails open — when tollgate cannot be reached, a rewrite is
 * allowed with reason `unguarded` and the harness proceeds as shipped.
 *
 * @module @tollgate/dsh-plugin/client
 */
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * Where tollgate is: $TOLLGATE_URL + $TOLLGATE_TOKEN, else `<home>/api.json`
 * with home = the argument, $TOLLGATE_HOME, or the user config dir's
 * `tollgate` folder.
 * @returns {{url: string, token: string, home?: string} | null}
 */
export function discover(home, env = process.env) {
  if (env.TOLLGATE_URL && env.TOLLGATE_TOKEN) return { url: env.TOLLGATE_URL, token: env.TOLLGATE_TOKEN }
  const dir = home || env.TOLLGATE_HOME || defaultHome(env)
  try {
    const info = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8'))
    if (typeof info.url === 'string' && info.url !== '') return { url: info.url, token: String(info.token ?? ''), home: dir }
  } catch {
    // not running
  }
  return null
}

function defaultHome(env) {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'tollgate')
  if (process.platform === 'win32') return join(env.APPDATA ?? homedir(), 'tollgate')
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'tollgate')
}

/** An error answer from tollgate. */
export class TollgateError extends Error {
  constructor(status, code, message, field) {
    super(`tollgate: HTTP ${status} ${code}: ${message}`)
    this.status = status
    this.code = code
    this.field = field
  }
}

export class TollgateClient {
  /**
   * @param {{home?: string, endpoint?: {url: string, token: string}, logger?: {warn: Function, info?: Function}, fetch?: typeof fetch}} [options]
   */
  constructor(options = {}) {
    this.home = options.home
    this.endpoint = options.endpoint ?? null
    this.discovered = options.endpoint === undefined
    this.logger = options.logger ?? console
    this.fetch = options.fetch ?? globalThis.fetch
    this.engineId = ''
    this.engine = null
    this.beat = null
    this.warned = false
  }

  ep() {
    if (this.endpoint === null && this.discovered) this.endpoint = discover(this.home)
    return this.endpoint
  }

  async call(method, path, body, { signal, timeoutMs = 10_000 } = {}) {
    const ep = this.ep()
    if (ep === null) throw new Error('tollgate is not running (no api.json)')
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
    const onAbort = () => controller.abort(signal.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
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
        if (this.discovered) this.endpoint = null // it may have restarted elsewhere
        throw error
      }
      const text = await res.text()
      if (res.status < 200 || res.status > 299) {
        let e = {}
        try { e = JSON.parse(text).error ?? {} } catch { /* not JSON */ }
        throw new TollgateError(res.status, e.code ?? '', e.message ?? text, e.field)
      }
      return { status: res.status, body: text === '' ? null : JSON.parse(text) }
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }

  unguarded(what, error) {
    if (this.warned) return
    this.warned = true
    this.logger.warn(`tollgate unreachable while ${what}: proceeding unguarded (${error?.message ?? error})`)
  }

  /** Register the engine and keep its lease with heartbeats until close(). */
  async register(engine) {
    this.engine = { pid: process.pid, ...engine }
    await this.registerOnce()
    if (this.beat === null) {
      this.beat = setInterval(() => { this.heartbeat().catch(() => {}) }, 10_000)
      this.beat.unref?.()
    }
  }

  async registerOnce() {
    try {
      const { body } = await this.call('POST', '/v1/engines', this.engine)
      this.engineId = body?.engine ?? ''
      this.warned = false
    } catch (error) {
      this.unguarded('registering', error)
    }
  }

  async heartbeat() {
    if (this.engineId === '') return this.registerOnce()
    try {
      await this.call('POST', `/v1/engines/${encodeURIComponent(this.engineId)}/heartbeat`, {})
    } catch (error) {
      if (error instanceof TollgateError && error.status === 404) return this.registerOnce()
      if (!(error instanceof TollgateError)) return this.registerOnce()
    }
  }

  async close() {
    if (this.beat !== null) clearInterval(this.beat)
    this.beat = null
    const id = this.engineId
    this.engineId = ''
    if (id !== '') await this.call('DELETE', `/v1/engines/${encodeURIComponent(id)}`, undefined, { timeoutMs: 2000 }).catch(() => {})
  }

  /** Record one routed request (idempotent by requestId). */
  async recordRequest(session, request) {
    const body = { engine: this.engineId || undefined, at: new Date().toISOString(), ...request }
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const { body: out } = await this.call('POST', `/v1/sessions/${encodeURIComponent(session)}/requests`, body)
        return out
      } catch (error) {
        if (error instanceof TollgateError && error.status < 500) throw error
        if (attempt === 2) { this.unguarded('recording a request', error); return null }
        await new Promise(resolve => setTimeout(resolve, 100 << attempt))
      }
    }
    return null
  }

  /**
   * Ask before a rewrite. Never throws: when tollgate cannot answer, the
   * decision is allow / unguarded with apply = the plan as shipped.
   */
  async askRewrite(session, request, { signal } = {}) {
    const req = { engine: this.engineId || undefined, ...request }
    const holdMs = ((req.deadlineSeconds ?? 120) + 5) * 1000
    try {
      let { status, body } = await this.call('POST', `/v1/sessions/${encodeURIComponent(session)}/rewrites`, req, { signal, timeoutMs: holdMs })
      while (status === 202 || body?.status === 'pending') {
        ;({ status, body } = await this.call('GET', `/v1/rewrites/${encodeURIComponent(body.rewrite)}?wait=30`, undefined, { signal, timeoutMs: 40_000 }))
        if (body?.status !== 'pending') break
      }
      this.warned = false
      return body
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error
      this.unguarded('asking before a rewrite', error)
      return unguarded(request.plan, error)
    }
  }

  /** Report whether the rewrite landed. */
  async outcome(rewrite, applied, error) {
    if (!rewrite) return
    await this.call('POST', `/v1/rewrites/${encodeURIComponent(rewrite)}/outcome`, { applied, ...(error ? { error: String(error) } : {}) }).catch(() => {})
  }
}

/** The fail-open decision: allow, as shipped. */
export function unguarded(plan, error) {
  const apply = { summarize: null, prune: [] }
  if (plan?.summarize) apply.summarize = { start: plan.summarize.start, end: plan.summarize.end }
  for (const p of plan?.prune ?? []) apply.prune.push(p.id)
  return { rewrite: '', status: 'decided', decision: 'allow', reason: 'unguarded', order: '', apply, quote: null,
    message: `tollgate unreachable${error ? ': ' + (error.message ?? error) : ''}` }
}
