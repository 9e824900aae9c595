import { JwtLoginClientError } from './errors.js'
import { claimsOf, jtiOf, parse, secondsLeft, type ClientStorage, type Tokens } from './tokens.js'
import { request, type Call, type TransportOptions } from './transport.js'

/** What happened to the session: `fromOtherTab` when another tab (or a client sharing the storage) did it. */
export interface SessionEvent {
  type: 'signed-in' | 'refreshed' | 'signed-out' | 'ended'
  fromOtherTab: boolean
}

export interface SessionOptions extends TransportOptions {
  storage: ClientStorage
  name: string
  now: () => number
  refreshAhead: number
  lockWait: number
  crossTab: boolean
}

// the browser's parts a page has and Node has not: typed here, so the entry needs no DOM library
interface Page {
  document?: { visibilityState: string, addEventListener: (type: string, listener: () => void) => void }
  navigator?: { locks?: { request: (name: string, options: { signal: AbortSignal }, work: () => Promise<unknown>) => Promise<unknown> } }
}
const page = globalThis as Page
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

/** The refusals of a refresh that end the session: invalid, expired or reused (51), its user gone (24), no refresh token (51), another session's CSRF token (209), its user locked (251: the session never comes back). */
const ENDING = new Set(['51/401', '24/401', '51/400', '209/403', '251/403'])
/** The least time between two background refreshes: whatever the clocks say, never a loop. */
const REFRESH_GAP = 5_000

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
  /** The stored value as this client last read or wrote it; `undefined` before the first read. */
  #stored: string | null | undefined
  /** Counts the changes made here, so a storage read that was slower than one of them does not undo it. */
  #version = 0
  /** Counts the sessions ended here, so a refresh answer that comes after a sign-out does not bring the session back. */
  #generation = 0
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
  #refreshedAt = -Infinity

  constructor (options: SessionOptions) {
    this.#o = options
    this.#ready = this.#reload()
    if (options.crossTab && typeof BroadcastChannel === 'function') {
      this.#channel = new BroadcastChannel(options.name)
      // Node: the channel must not keep the process alive
      ;(this.#channel as { unref?: () => void }).unref?.()
      this.#channel.onmessage = ({ data }: { data: { type: SessionEvent['type'], tokens: Tokens } }) => {
        this.#version++
        if (!this.#live(data.tokens)) this.#ended()
        this.#set(data.tokens)
        // kept here too: a tab whose storage is its own (sessionStorage) must not come back from a reload with a spent refresh token
        Promise.resolve(this.#keep(data.tokens)).catch(() => {})
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

  /** Whether `tokens` hold a session this client can refresh. */
  #live (tokens: Tokens): boolean {
    return (this.#o.cookie ? tokens.csrf : tokens.refresh) !== undefined
  }

  /** The session ended here: a pending second factor goes, and a refresh under way brings nothing back. */
  #ended (): void {
    this.interim = undefined
    this.#generation++
  }

  /** Reads the stored tokens when another tab or process changed them since this client last read or wrote them. */
  async #reload (): Promise<void> {
    const version = this.#version
    const stored = await this.#o.storage.getItem(this.#o.name)
    if (version !== this.#version || stored === this.#stored) return
    const first = this.#stored === undefined
    this.#stored = stored
    const tokens = parse(stored) as Tokens
    const before = this.#tokens
    // cookie mode stores only the CSRF token: the access token this tab holds stays while the session (its CSRF token) is the same
    this.#set(this.#o.cookie ? { csrf: tokens.csrf, jwt: tokens.csrf === before.csrf ? before.jwt : undefined } : tokens)
    const live = this.#live(this.#tokens)
    if (first || live === this.#live(before)) return
    if (!live) this.#ended()
    this.#emit(live ? 'signed-in' : 'signed-out', true)
  }

  #set (tokens: Tokens): void {
    this.#tokens = tokens
    this.#schedule()
  }

  #emit (type: SessionEvent['type'], fromOtherTab: boolean): void {
    for (const listener of this.#listeners) listener({ type, fromOtherTab })
  }

  /** Stores the tokens as this mode keeps them: cookie mode only the CSRF token (the access token stays in memory). */
  #keep (tokens: Tokens): void | Promise<void> {
    const kept = this.#o.cookie ? (tokens.csrf === undefined ? null : JSON.stringify({ csrf: tokens.csrf })) : (tokens.jwt === undefined ? null : JSON.stringify(tokens))
    if (kept === this.#stored) return
    this.#stored = kept
    return kept === null ? this.#o.storage.removeItem(this.#o.name) : this.#o.storage.setItem(this.#o.name, kept)
  }

  /** Takes new tokens: kept, told to the other tabs and the listeners. */
  async take (type: SessionEvent['type'], tokens: Tokens): Promise<void> {
    await this.#ready
    this.#version++
    this.#set(tokens)
    await this.#keep(tokens)
    this.#channel?.postMessage({ type, tokens })
    this.#emit(type, false)
  }

  /** Merges the fields of a sign-in or refresh answer into the session. */
  async answer (type: SessionEvent['type'], data: { jwt: string, refresh_token?: string | undefined, csrf_token?: string | undefined }): Promise<void> {
    // the token was issued a moment ago, by the server's clock
    const { iat } = claimsOf(data.jwt)
    if (typeof iat === 'number') this.#skew = iat * 1000 - this.#o.now()
    await this.take(type, { jwt: data.jwt, refresh: data.refresh_token ?? this.#tokens.refresh, csrf: data.csrf_token ?? this.#tokens.csrf })
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
   * arrival), a little earlier in some tabs than others, never twice within `REFRESH_GAP`; not while the page is hidden.
   */
  #schedule (): void {
    clearTimeout(this.#timer)
    const { jwt } = this.#tokens
    if (this.#closed || jwt === undefined || !this.#live(this.#tokens) || page.document?.visibilityState === 'hidden') return
    const { exp, iat } = claimsOf(jwt)
    const ahead = Math.min(this.#o.refreshAhead, (Number(exp) - Number(iat)) / 2 || this.#o.refreshAhead) * (1 + Math.random() / 4)
    const due = Math.max((secondsLeft(jwt, this.#now()) - ahead) * 1000, this.#refreshedAt + REFRESH_GAP - this.#o.now())
    // setTimeout takes at most 2³¹ − 1 ms: a longer delay would fire at once
    this.#timer = setTimeout(() => { this.refresh().catch(() => {}) }, Math.min(Math.max(0, due), 2 ** 31 - 1))
    ;(this.#timer as { unref?: () => void }).unref?.()
  }

  /** An access token good for a few more seconds, refreshed first if needed and possible; `undefined` without a session. */
  async token (): Promise<string | undefined> {
    await this.#ready
    if (this.#fresh(5)) return this.#tokens.jwt
    // another tab or process sharing the storage may have signed in, refreshed or signed out since
    await this.#reload()
    if (this.#fresh(5) || !this.#live(this.#tokens)) return this.#tokens.jwt
    return await this.refresh().catch((error: unknown) => {
      // the refresh ended the session: no token; any other failure (the network, 503, 429) is the caller's to see
      if (this.#live(this.#tokens)) throw error
      return undefined
    })
  }

  /** After a 401 for `sent`: the session's newer token, else one refresh; `undefined` when there is none. */
  async renew (sent: string): Promise<string | undefined> {
    if (this.#tokens.jwt !== sent && this.#fresh(5)) return this.#tokens.jwt
    return this.#live(this.#tokens) ? await this.refresh().catch(() => undefined) : undefined
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
    const marks = this.#o.cookie && this.#o.crossTab
    if (marks && await this.#otherTabRefreshed(seen)) return this.#tokens.jwt!
    const refreshed = this.#refreshCall()
    // the mark goes once the refresh has its answer, whatever it is
    return await (marks ? refreshed.finally(async () => { await this.#unmark() }) : refreshed)
  }

  async #refreshCall (): Promise<string> {
    const generation = this.#generation
    try {
      const data = await this.call<{ jwt: string, refresh_token?: string, csrf_token?: string }>({
        method: 'POST', path: '/auth/refresh', body: this.#o.cookie ? {} : { refresh_token: this.#tokens.refresh }, csrf: this.#tokens.csrf
      })
      this.#refreshedAt = this.#o.now()
      // signed out while the refresh was under way: the answer does not bring the session back
      if (generation === this.#generation) await this.answer('refreshed', data)
      return data.jwt
    } catch (error) {
      // the session is over (revoked, expired, reused, its user gone, or the CSRF token is another session's)
      if (error instanceof JwtLoginClientError && ENDING.has(`${error.errorCode}/${error.status}`) && this.#live(this.#tokens)) await this.end('ended')
      throw error
    }
  }

  /**
   * Cookie mode across tabs: the browser sends whatever refresh cookie it holds, and another tab's answer
   * moves it before its new JWT reaches this tab. A refresh sent then rotates the session a second time
   * inside the retry window, and a request still in flight with the first token (a tab without the lock,
   * a killed one's) becomes a reuse that ends the session. So each refresh is marked in storage while it
   * is under way (by whom, from which JWT, since when), and a tab that finds another's mark from the JWT it
   * holds waits, up to `lockWait`, for that refresh's JWT (BroadcastChannel): answers whether it came.
   */
  async #otherTabRefreshed (seen: string | undefined): Promise<boolean> {
    const key = `${this.#o.name}:refreshing`
    const from = jtiOf(seen)
    const came = (): boolean => this.#tokens.jwt !== seen && this.#fresh(5)
    for (let waited = 0; !came() && waited < this.#o.lockWait; waited += 50) {
      const mark = parse(await this.#o.storage.getItem(key))
      const busy = mark.by !== this.#id && mark.from === from && Number(mark.at) + this.#o.lockWait > this.#o.now()
      if (!busy) {
        // a refresh that just ended: a moment for its JWT to arrive over the channel
        if (waited > 0) await sleep(100)
        break
      }
      await sleep(50)
    }
    if (came()) return true
    await this.#o.storage.setItem(key, JSON.stringify({ by: this.#id, from, at: this.#o.now() }))
    return false
  }

  /** Removes this client's refresh mark, once its refresh has an answer. */
  async #unmark (): Promise<void> {
    const key = `${this.#o.name}:refreshing`
    if (parse(await this.#o.storage.getItem(key)).by === this.#id) await this.#o.storage.removeItem(key)
  }

  async end (type: 'signed-out' | 'ended'): Promise<void> {
    this.#ended()
    await this.take(type, {})
  }

  /** One call of a plugin route, at the server's time. */
  async call<Data> (call: Call): Promise<Data> {
    return await request<Data>(this.#o, this.#now(), call)
  }

  /** The CSRF token of a cookie-mode session, for the calls the refresh cookie authenticates. */
  get csrf (): string | undefined { return this.#tokens.csrf }

  /** Stops the proactive refresh and leaves the channel: for a client that is done (tests, a Node process). */
  close (): void {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#channel?.close()
    // a call still under way, or made after, must not post to the closed channel (it throws) nor start the timer again
    this.#channel = undefined
  }
}
