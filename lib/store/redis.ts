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

type IncrementingRedis = Redis & {
  jwtLoginIncrement: (key: string, ttlMs: number) => Promise<[number, number]>
}

/**
 * Shared state for many instances. `consume` is one GETDEL, `increment` one
 * Lua script, so single use and counting stay atomic across processes.
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

  async delete (key: string): Promise<void> {
    await this.#client.del(this.#prefix + key)
  }

  async close (): Promise<void> {
    if (this.#owned) await this.#client.quit()
  }
}
