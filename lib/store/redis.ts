import type { Redis, RedisOptions } from 'ioredis'
import { requirePeer } from '../peer.js'
import type { StateStore, StoreLogger } from './types.js'

const ioredis = requirePeer<typeof import('ioredis')>('ioredis', 'jwt-login/redis')

export interface RedisStoreOptions {
  /** An ioredis client the host owns, or a URL / options for one the store creates and closes. */
  client?: Redis
  url?: string
  redisOptions?: RedisOptions
  /** Prepended to every key so several apps can share one Redis (default `jwt-login:`). */
  prefix?: string
  /**
   * Where the store reports a lost connection (at most one line per 10 s)
   * and a server that would lose its data on a restart. Without it the
   * plugin hands the store the Fastify logger at registration.
   */
  log?: StoreLogger
}

/** At most one log line per this many ms about a connection that keeps failing. */
export const REDIS_ERROR_LOG_INTERVAL_MS = 10_000

/** What the store's Redis says about keeping its data (`CONFIG GET` answers; absent when not known). */
export interface RedisDurability {
  save?: string
  appendonly?: string
  'maxmemory-policy'?: string
}

/** The warnings a server's settings call for: jwt-login's state must survive a restart and must never be evicted. */
export function durabilityWarnings (config: RedisDurability): Array<{ details: object, message: string }> {
  const warnings: Array<{ details: object, message: string }> = []
  if (config.save === '' && config.appendonly === 'no') {
    warnings.push({
      details: { save: config.save, appendonly: config.appendonly },
      message: 'jwt-login: Redis keeps nothing on disk (no RDB save points, no AOF): revocations and spent refresh tokens are lost when it restarts'
    })
  }
  const policy = config['maxmemory-policy']
  if (policy !== undefined && policy !== 'noeviction') {
    warnings.push({
      details: { 'maxmemory-policy': policy },
      message: 'jwt-login: Redis may evict keys when its memory is full: a revocation or a spent refresh token could vanish; use maxmemory-policy noeviction'
    })
  }
  return warnings
}

// INCR, set the expiry on the first increment, answer the count and the time left.
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`

// Write ARGV[3] for ARGV[4] ms only when the key holds ARGV[2] (or, with ARGV[1] = '1', is absent).
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (ARGV[1] == '1' and current == false) or (ARGV[1] == '0' and current == ARGV[2]) then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
  return 1
end
return 0
`

type IncrementingRedis = Redis & {
  jwtLoginIncrement: (key: string, ttlMs: number) => Promise<[number, number]>
  jwtLoginCompareAndSet: (key: string, absent: string, expected: string, value: string, ttlMs: number) => Promise<number>
}

/**
 * Shared state for many instances. `getMany` is one MGET, `consume` one
 * GETDEL, `increment` and `compareAndSet` one Lua script each, so single
 * use, counting and session updates stay atomic across processes.
 */
export class RedisStore implements StateStore {
  readonly #client: IncrementingRedis
  readonly #owned: boolean
  readonly #prefix: string
  #log: StoreLogger | null
  #durabilityChecked = false
  #lastErrorLineAt = -Infinity
  #errorsSinceLine = 0
  #errorReported = false
  readonly #onReady = (): void => { this.#ready() }

  constructor (options: RedisStoreOptions = {}) {
    this.#prefix = options.prefix ?? 'jwt-login:'
    const client = options.client ?? new ioredis.Redis(options.url ?? 'redis://127.0.0.1:6379', {
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      enableAutoPipelining: true,
      ...options.redisOptions
    })
    this.#owned = options.client === undefined
    client.defineCommand('jwtLoginIncrement', { numberOfKeys: 1, lua: INCREMENT })
    client.defineCommand('jwtLoginCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET })
    this.#client = client as IncrementingRedis
    this.#log = options.log ?? null
    // a client the host owns keeps the host's own error handling
    if (this.#owned) client.on('error', (error: Error) => { this.#failed(error) })
    client.on('ready', this.#onReady)
    this.#checkDurability()
  }

  attachLogger (log: StoreLogger): void {
    this.#log ??= log
    this.#checkDurability()
  }

  /** One line per burst of connection errors, then at most one per interval, with the count of those not logged. */
  #failed (error: Error): void {
    const now = Date.now()
    if (now - this.#lastErrorLineAt < REDIS_ERROR_LOG_INTERVAL_MS) {
      this.#errorsSinceLine++
      return
    }
    const details = { err: { message: error.message, code: (error as NodeJS.ErrnoException).code }, notLogged: this.#errorsSinceLine }
    const message = 'jwt-login: the Redis store cannot reach Redis; requests that need it answer 503'
    this.#lastErrorLineAt = now
    this.#errorsSinceLine = 0
    this.#errorReported = true
    if (this.#log === null) console.error(message, details)
    else this.#log.error(details, message)
  }

  #ready (): void {
    if (this.#errorReported) {
      this.#errorReported = false
      this.#log?.warn({ notLogged: this.#errorsSinceLine }, 'jwt-login: the Redis store reaches Redis again')
    }
    this.#checkDurability()
  }

  /** Once, on the first connection with a logger: warns when the server would lose jwt-login's state. */
  #checkDurability (): void {
    const log = this.#log
    if (log === null || this.#durabilityChecked || this.#client.status !== 'ready') return
    this.#durabilityChecked = true
    const names = ['save', 'appendonly', 'maxmemory-policy']
    Promise.all(names.map(async (name) => await this.#client.config('GET', name) as [string, string])).then((answers) => {
      for (const warning of durabilityWarnings(Object.fromEntries(answers))) {
        log.warn(warning.details, warning.message)
      }
    }, (error: Error) => {
      // CONFIG is often disabled on managed Redis: nothing to check then
      log.debug?.({ err: { message: error.message } }, 'jwt-login: could not read the Redis persistence settings; not checked')
    })
  }

  async get (key: string): Promise<string | null> {
    return await this.#client.get(this.#prefix + key)
  }

  async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    // MGET takes at least one key
    if (keys.length === 0) return []
    // one MGET; a Redis Cluster refuses it for keys in different hash slots (CROSSSLOT): see issue 11
    return await this.#client.mget(keys.map(key => this.#prefix + key))
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    await this.#client.set(this.#prefix + key, value, 'PX', Math.max(1, Math.ceil(ttlMs)))
  }

  async consume (key: string): Promise<string | null> {
    return await this.#client.getdel(this.#prefix + key)
  }

  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    const [count, ttl] = await this.#client.jwtLoginIncrement(this.#prefix + key, Math.max(1, Math.ceil(ttlMs)))
    return { count, ttlMs: ttl }
  }

  async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    const written = await this.#client.jwtLoginCompareAndSet(
      this.#prefix + key, expected === null ? '1' : '0', expected ?? '', value, Math.max(1, Math.ceil(ttlMs))
    )
    return written === 1
  }

  async delete (key: string): Promise<void> {
    await this.#client.del(this.#prefix + key)
  }

  async close (): Promise<void> {
    this.#client.off('ready', this.#onReady)
    if (this.#owned) await this.#client.quit()
  }
}
