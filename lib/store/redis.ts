import { Redis, type RedisOptions } from 'ioredis'
import type { StateStore } from './types.js'

export interface RedisStoreOptions {
  /** An ioredis client the host owns, or a URL / options for one the store creates and closes. */
  client?: Redis
  url?: string
  redisOptions?: RedisOptions
  /** Prepended to every key so several apps can share one Redis (default `jwt-login:`). */
  prefix?: string
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
 * Shared state for many instances. `consume` is one GETDEL, `increment` and
 * `compareAndSet` one Lua script each, so single use, counting and session
 * updates stay atomic across processes.
 */
export class RedisStore implements StateStore {
  readonly #client: IncrementingRedis
  readonly #owned: boolean
  readonly #prefix: string

  constructor (options: RedisStoreOptions = {}) {
    this.#prefix = options.prefix ?? 'jwt-login:'
    const client = options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', {
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      enableAutoPipelining: true,
      ...options.redisOptions
    })
    this.#owned = options.client === undefined
    client.defineCommand('jwtLoginIncrement', { numberOfKeys: 1, lua: INCREMENT })
    client.defineCommand('jwtLoginCompareAndSet', { numberOfKeys: 1, lua: COMPARE_AND_SET })
    this.#client = client as IncrementingRedis
  }

  async get (key: string): Promise<string | null> {
    return await this.#client.get(this.#prefix + key)
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
    if (this.#owned) await this.#client.quit()
  }
}
