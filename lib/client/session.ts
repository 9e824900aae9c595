import { JwtLoginClientError, retryAfterOf } from './errors.js'

/**
 * Where the client keeps what outlives a page: `localStorage`, a mobile
 * secure store (sync or async), or the default, memory. The same three
 * methods as Web Storage.
 */
export interface ClientStorage {
  getItem: (key: string) => string | null | Promise<string | null>
  setItem: (key: string, value: string) => void | Promise<void>
  removeItem: (key: string) => void | Promise<void>
}

/** A storage that forgets with the page or process: the default. */
export function memoryStorage (): ClientStorage {
  const items = new Map<string, string>()
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => { items.set(key, value) },
    removeItem: (key) => { items.delete(key) }
  }
}

/** What happened to the session: `fromOtherTab` when another tab of the origin did it. */
export interface SessionEvent {
  type: 'signed-in' | 'refreshed' | 'signed-out' | 'ended'
  fromOtherTab: boolean
}

/** The session's tokens: the access token, and the refresh token (bearer mode) or the CSRF token (cookie mode). */
interface Tokens { jwt?: string | undefined, refresh?: string | undefined, csrf?: string | undefined }

export interface SessionOptions {
  api: string
  cookie: boolean
  storage: ClientStorage
  name: string
  language: string | undefined
  fetch: typeof fetch
  now: () => number
  refreshAhead: number
  lockWait: number
  crossTab: boolean
  authCode: Record<string, string>
}

/** `whole`: the answer is not the envelope (`/jwks`): answered whole. */
interface Call { method: string, path: string, body?: unknown, token?: string | undefined, csrf?: boolean, whole?: boolean }

// the browser's parts a page has and Node has not: typed here, so the entry needs no DOM library
interface Page {
  document?: { visibilityState: string, addEventListener: (type: string, listener: () => void) => void }
  navigator?: { locks?: { request: (name: string, options: { signal: AbortSignal }, work: () => Promise<unknown>) => Promise<unknown> } }
}
const page = globalThis as Page

/** The stored tokens; none when the value is missing or not ours (a corrupt entry must not stop the client for good). */
function parse (stored: string | null): Tokens {
  try {
    const tokens = JSON.parse(stored ?? '{}') as unknown
    return typeof tokens === 'object' && tokens !== null ? tokens as Tokens : {}
  } catch {
    return {}
  }
}

/** A JWT's own id (`jti`), as a string ('undefined' for none). */
function jtiOf (jwt: string | undefined): string {
  return String(claimsOf(jwt ?? '').jti)
}

/** A JWT's claims, unverified (the server verifies); none when it is not a JWT. */
function claimsOf (jwt: string): Record<string, unknown> {
  try {
    const claims = JSON.parse(atob(jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as unknown
    return typeof claims === 'object' && claims !== null ? claims as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/** Seconds left on a JWT at `now` (ms); -1 when it has no readable `exp`. */
export function secondsLeft (jwt: string, now: number): number {
  const { exp } = claimsOf(jwt)
  return typeof exp === 'number' ? exp - now / 1000 : -1
}

/**
 * The session of one client: its tokens, one refresh at a time (in this
 * process, and across the origin's tabs through Web Locks), shared with the
 * other tabs through a BroadcastChannel, and renewed shortly before expiry.
 */
export class Session {
  readonly #o: SessionOptions
  #tokens: Tokens = {}
  /** The interim token of a sign-in waiting for its second factor. */
  interim: string | undefined
  #stored: string | null = null
  readonly #ready: Promise<void>
  #inflight: Promise<string> | undefined
  readonly #listeners = new Set<(event: SessionEvent) => void>()
  #channel: InstanceType<typeof BroadcastChannel> | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  /** This client among the origin's tabs, in its refresh marks. */
  readonly #id = Math.random().toString(36).slice(2)
  #closed = false
  /** Milliseconds the server's clock is ahead of this one, from the `iat` of the last token the server answered this client. */
  #skew = 0

  constructor (options: SessionOptions) {
    this.#o = options
    this.#ready = this.#reload()
    if (options.crossTab && typeof BroadcastChannel === 'function') {
      this.#channel = new BroadcastChannel(options.name)
      // Node: the channel must not keep the process alive
      ;(this.#channel as { unref?: () => void }).unref?.()
      this.#channel.onmessage = ({ data }: { data: { type: SessionEvent['type'], tokens: Tokens } }) => {
        this.#set(data.tokens)
        this.#emit(data.type, true)
      }
    }
    page.document?.addEventListener('visibilitychange', () => { this.#schedule() })
  }

  get jwt (): string | undefined { return this.#tokens.jwt }

  onSession (listener: (event: SessionEvent) => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  /** Reads the stored tokens when another tab or process changed them since this client last read or wrote them. */
  async #reload (): Promise<void> {
    const stored = await this.#o.storage.getItem(this.#o.name)
    if (stored === this.#stored) return
    this.#stored = stored
    const tokens = parse(stored)
    // cookie mode stores only the CSRF token: the access token this tab holds (or was sent by another) stays
    this.#set(this.#o.cookie && stored !== null ? { ...this.#tokens, csrf: tokens.csrf } : tokens)
  }

  #set (tokens: Tokens): void {
    this.#tokens = tokens
    this.#schedule()
  }

  #emit (type: SessionEvent['type'], fromOtherTab: boolean): void {
    for (const listener of this.#listeners) listener({ type, fromOtherTab })
  }

  /** Takes new tokens: kept (cookie mode keeps only the CSRF token: the access token stays in memory), told to the other tabs and the listeners. */
  async take (type: SessionEvent['type'], tokens: Tokens): Promise<void> {
    this.#set(tokens)
    const kept = this.#o.cookie ? (tokens.csrf === undefined ? null : JSON.stringify({ csrf: tokens.csrf })) : (tokens.jwt === undefined ? null : JSON.stringify(tokens))
    this.#stored = kept
    await (kept === null ? this.#o.storage.removeItem(this.#o.name) : this.#o.storage.setItem(this.#o.name, kept))
    this.#channel?.postMessage({ type, tokens })
    this.#emit(type, false)
  }

  /** Merges the fields of a sign-in or refresh answer into the session. */
  async answer (type: SessionEvent['type'], data: { jwt: string, refresh_token?: string | undefined, csrf_token?: string | undefined }): Promise<void> {
    this.interim = undefined
    // the token was issued a moment ago, by the server's clock
    const { iat } = claimsOf(data.jwt)
    if (typeof iat === 'number') this.#skew = iat * 1000 - this.#o.now()
    await this.take(type, { jwt: data.jwt, refresh: data.refresh_token ?? this.#tokens.refresh, csrf: data.csrf_token ?? this.#tokens.csrf })
  }

  #canRefresh (): boolean {
    return (this.#o.cookie ? this.#tokens.csrf : this.#tokens.refresh) !== undefined
  }

  /** The server's time, as well as this client can tell it: a device whose clock is off still judges expiry right. */
  #now (): number {
    return this.#o.now() + this.#skew
  }

  #fresh (margin: number): boolean {
    return this.#tokens.jwt !== undefined && secondsLeft(this.#tokens.jwt, this.#now()) > margin
  }

  /**
   * Refreshes `refreshAhead` seconds before expiry, at most half the token's lifetime (a token of one minute is not refreshed on
   * arrival), a little earlier in some tabs than others; not while the page is hidden.
   */
  #schedule (): void {
    clearTimeout(this.#timer)
    const { jwt } = this.#tokens
    if (this.#closed || jwt === undefined || !this.#canRefresh() || page.document?.visibilityState === 'hidden') return
    const { exp, iat } = claimsOf(jwt)
    const ahead = Math.min(this.#o.refreshAhead, (Number(exp) - Number(iat)) / 2 || this.#o.refreshAhead) * (1 + Math.random() / 4)
    // setTimeout takes at most 2³¹ − 1 ms: a longer delay would fire at once
    const due = Math.min((secondsLeft(jwt, this.#now()) - ahead) * 1000, 2 ** 31 - 1)
    this.#timer = setTimeout(() => { this.refresh().catch(() => {}) }, Math.max(0, due))
    ;(this.#timer as { unref?: () => void }).unref?.()
  }

  /** An access token good for a few more seconds, refreshed first if needed and possible; `undefined` without a session. */
  async token (): Promise<string | undefined> {
    await this.#ready
    if (this.#fresh(5)) return this.#tokens.jwt
    // another tab or process sharing the storage may have signed in, refreshed or signed out since
    await this.#reload()
    if (this.#fresh(5) || !this.#canRefresh()) return this.#tokens.jwt
    return await this.refresh().catch((error: unknown) => {
      // the session is over, or went while this refresh started (no refresh token left to send: 400 / 51)
      if (error instanceof JwtLoginClientError && (error.status === 401 || error.errorCode === 51)) return undefined
      throw error
    })
  }

  /** After a 401 for `sent`: the session's newer token, else one refresh; `undefined` when there is none. */
  async renew (sent: string): Promise<string | undefined> {
    if (this.#tokens.jwt !== sent && this.#fresh(5)) return this.#tokens.jwt
    return this.#canRefresh() ? await this.refresh().catch(() => undefined) : undefined
  }

  /** One refresh for all concurrent callers of this client (and, with Web Locks, of all tabs). */
  async refresh (): Promise<string> {
    this.#inflight ??= this.#refreshShared().finally(() => { this.#inflight = undefined })
    return await this.#inflight
  }

  async #refreshShared (): Promise<string> {
    await this.#ready
    const seen = this.#o.cookie ? this.#tokens.jwt : this.#tokens.refresh
    const locks = this.#o.crossTab ? page.navigator?.locks : undefined
    if (locks === undefined) return await this.#refreshNow(seen)
    let granted = false
    try {
      return await locks.request(`${this.#o.name}:refresh`, { signal: AbortSignal.timeout(this.#o.lockWait) }, async () => {
        granted = true
        return await this.#refreshNow(seen)
      }) as string
    } catch (error) {
      if (granted) throw error
      // the lock was held too long (a frozen tab): refresh without it. Two refreshes of one
      // token within the server's retry window (refresh.reuseInterval) both get the same successor
      return await this.#refreshNow(seen)
    }
  }

  async #refreshNow (seen: string | undefined): Promise<string> {
    await this.#reload()
    // another tab refreshed while this one waited: take its tokens
    if ((this.#o.cookie ? this.#tokens.jwt : this.#tokens.refresh) !== seen && this.#fresh(5)) return this.#tokens.jwt!
    if (this.#o.cookie && this.#o.crossTab && await this.#otherTabRefreshed(seen)) return this.#tokens.jwt!
    try {
      const data = await this.call<{ jwt: string, refresh_token?: string, csrf_token?: string }>({
        method: 'POST', path: '/auth/refresh', body: this.#o.cookie ? {} : { refresh_token: this.#tokens.refresh }, csrf: true
      })
      await this.answer('refreshed', data)
      return data.jwt
    } catch (error) {
      // the session is over (revoked, expired, reused, or the CSRF token is another session's)
      if (error instanceof JwtLoginClientError && (error.status === 401 || error.errorCode === 209)) await this.end('ended')
      throw error
    }
  }

  /**
   * Cookie mode across tabs: the browser sends whatever refresh cookie it holds, and another tab's answer
   * moves it before its new JWT reaches this tab. A refresh sent then rotates the session a second time
   * inside the retry window, and a request still in flight with the first token (a tab without the lock,
   * a killed one's) becomes a reuse that ends the session. So each refresh is marked in storage before it
   * is sent (by whom, from which JWT, when), and a tab that finds another's mark from the JWT it holds,
   * younger than `lockWait`, waits that long at most for the new JWT (BroadcastChannel): answers whether it came.
   */
  async #otherTabRefreshed (seen: string | undefined): Promise<boolean> {
    const key = `${this.#o.name}:refreshing`
    const from = jtiOf(seen)
    const came = (): boolean => this.#tokens.jwt !== seen && this.#fresh(5)
    const mark = parse(await this.#o.storage.getItem(key)) as { by?: string, from?: string, at?: number }
    const left = mark.by !== this.#id && mark.from === from ? Number(mark.at) + this.#o.lockWait - this.#o.now() : 0
    for (let waited = 0; waited < Math.min(left, this.#o.lockWait) && !came(); waited += 50) await new Promise(resolve => setTimeout(resolve, 50))
    if (came()) return true
    await this.#o.storage.setItem(key, JSON.stringify({ by: this.#id, from, at: this.#o.now() }))
    return false
  }

  async end (type: 'signed-out' | 'ended'): Promise<void> {
    this.interim = undefined
    await this.take(type, {})
  }

  /** One call of a plugin route: JSON in and out; the answer's `data`, or a `JwtLoginClientError`. */
  async call<Data> ({ method, path, body, token, csrf = false, whole = false }: Call): Promise<Data> {
    const o = this.#o
    const headers: Record<string, string> = { accept: 'application/json' }
    if (o.language !== undefined) headers['accept-language'] = o.language
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (csrf && o.cookie && this.#tokens.csrf !== undefined) headers['x-csrf-token'] = this.#tokens.csrf
    let url = o.api + path
    const auth = Object.keys(o.authCode).length > 0
    if (method === 'GET' || method === 'DELETE') {
      if (auth) url += (url.includes('?') ? '&' : '?') + new URLSearchParams(o.authCode).toString()
    } else {
      headers['content-type'] = 'application/json'
      body = { ...o.authCode, ...(body as object) }
    }
    const response = await o.fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: o.cookie ? 'include' : 'same-origin'
    }).catch((error: unknown) => { throw Object.assign(new JwtLoginClientError(0, String(error)), { cause: error }) })
    const text = await response.text()
    let answer: { success?: boolean, data?: { message?: string, errorCode?: number } } | undefined
    try { answer = JSON.parse(text) } catch {}
    if (response.ok && whole && answer !== undefined) return answer as Data
    if (response.ok && answer?.success === true) return answer.data as Data
    const data = answer?.data
    throw new JwtLoginClientError(response.status, data?.message ?? `${response.status} ${response.statusText}`,
      typeof data?.errorCode === 'number' ? data.errorCode : undefined, retryAfterOf(response.headers.get('retry-after'), this.#now()))
  }

  /** Stops the proactive refresh and leaves the channel: for a client that is done (tests, a Node process). */
  close (): void {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#channel?.close()
    // a call still under way, or made after, must not post to the closed channel (it throws) nor start the timer again
    this.#channel = undefined
  }
}
