/**
 * A TCP proxy in the bench's parent that puts a store one network hop away:
 * every chunk, each way, is held for a fixed delay before it is passed on
 * (`node:net` only). It also counts the sequential round trips the store's
 * clients make through it.
 *
 * Round trips are counted as waves: a wave starts when the proxy goes from
 * idle (no connection waiting for an answer) to busy (a client sent
 * something). A connection waits from the first chunk its client sends
 * after the server last answered it (or ever) until the server's next
 * chunk. On one connection (ioredis) the waves are the client's bursts; on a
 * pool (pg) calls made in parallel on several connections overlap in time
 * and count once, as they cost one delay.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

export interface Upstream {
  host: string
  port: number
}

export class DelayProxy {
  readonly #server: Server
  readonly #upstream: Upstream
  readonly #sockets = new Set<Socket>()
  #delayMs = 0
  #waves = 0
  /** connections whose client sent something the server has not answered yet */
  #waiting = 0
  /** chunks held, not passed on yet */
  #held = 0
  /** `performance.now()` of the last chunk either way */
  #lastChunk = 0
  /** what the held chunks really waited (timers fire late), for `holdPerHop` */
  #holdTotalMs = 0
  #holdCount = 0

  private constructor (server: Server, upstream: Upstream) {
    this.#server = server
    this.#upstream = upstream
    server.on('connection', (client) => { this.#pair(client) })
  }

  /** A proxy to `upstream` on a spare loopback port, passing chunks on at once until `delayMs` is set. */
  static async start (upstream: Upstream): Promise<DelayProxy> {
    const server = createServer()
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve() })
    })
    return new DelayProxy(server, upstream)
  }

  get port (): number {
    return (this.#server.address() as AddressInfo).port
  }

  /** The hold, each way, from now on; changed only while the proxy is settled, so no chunk overtakes another. */
  set delayMs (ms: number) {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`a proxy delay must be 0 ms or more, not ${ms}`)
    this.#delayMs = ms
    this.#holdTotalMs = 0
    this.#holdCount = 0
  }

  get delayMs (): number {
    return this.#delayMs
  }

  /** The waves (sequential round trips) so far; the difference over a request is that request's. */
  get waves (): number {
    return this.#waves
  }

  /** What a held chunk really waited since the delay was set, on average (ms), or null before any. */
  get holdPerHop (): number | null {
    return this.#holdCount === 0 ? null : this.#holdTotalMs / this.#holdCount
  }

  /**
   * Resolves once nothing is under way, and nothing has passed for
   * `quietMs` (the delay twice by default, plus 5 ms): no connection waits
   * for an answer and no chunk is held, so a write a request makes after its
   * answer has been counted before the next request starts.
   */
  async settled (quietMs = 2 * this.#delayMs + 5): Promise<void> {
    for (;;) {
      if (this.#waiting === 0 && this.#held === 0 && performance.now() - this.#lastChunk >= quietMs) return
      await sleep(1)
    }
  }

  /** One client connection and its own connection upstream. */
  #pair (client: Socket): void {
    const server = connect(this.#upstream.port, this.#upstream.host)
    for (const socket of [client, server]) {
      socket.setNoDelay(true)
      this.#sockets.add(socket)
      socket.once('close', () => { this.#sockets.delete(socket) })
    }
    let waiting = false
    const answered = (): void => {
      if (!waiting) return
      waiting = false
      this.#waiting--
    }
    client.on('data', (chunk: Buffer) => {
      this.#lastChunk = performance.now()
      if (!waiting) {
        waiting = true
        if (this.#waiting++ === 0) this.#waves++
      }
      this.#pass(chunk, server)
    })
    server.on('data', (chunk: Buffer) => {
      this.#lastChunk = performance.now()
      answered()
      this.#pass(chunk, client)
    })
    // a half-close follows the chunks ahead of it; an error or a close ends both sides
    client.on('end', () => { this.#after(() => { server.end() }) })
    server.on('end', () => { this.#after(() => { client.end() }) })
    const end = (): void => {
      answered()
      client.destroy()
      server.destroy()
    }
    for (const socket of [client, server]) {
      socket.on('error', end)
      socket.on('close', end)
    }
  }

  /** Passes a chunk on after the delay (at once with none). */
  #pass (chunk: Buffer, to: Socket): void {
    this.#after(() => { if (!to.destroyed) to.write(chunk) })
  }

  /** Runs `step` after the delay; timers of one delay fire in the order they were set, so chunks keep their order. */
  #after (step: () => void): void {
    const delay = this.#delayMs
    if (delay === 0) {
      step()
      return
    }
    const since = performance.now()
    this.#held++
    setTimeout(() => {
      this.#held--
      this.#holdTotalMs += performance.now() - since
      this.#holdCount++
      step()
    }, delay)
  }

  /** Stops listening and ends every proxied connection. */
  async close (): Promise<void> {
    const closed = new Promise<void>((resolve) => { this.#server.close(() => { resolve() }) })
    for (const socket of this.#sockets) socket.destroy()
    await closed
  }
}
