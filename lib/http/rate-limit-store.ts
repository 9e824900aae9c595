import type { FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { StateStore } from '../store/types.js'

type Callback = (error: Error | null, result?: { current: number, ttl: number }) => void

/**
 * @fastify/rate-limit's store interface over the jwt-login state store, so
 * request rates are shared by every instance that shares the store.
 */
export class StoreRateLimit {
  readonly #store: StateStore

  constructor (store: StateStore) {
    this.#store = store
  }

  incr (key: string, callback: Callback, timeWindow: number): void {
    this.#store.increment(`rate:${key}`, timeWindow).then(
      ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
      (error: Error) => callback(error)
    )
  }

  child (): StoreRateLimit {
    return this
  }
}

/** The constructor @fastify/rate-limit takes (it builds the store itself), bound to our store. */
export function storeRateLimitFor (store: StateStore): FastifyRateLimitStoreCtor {
  return class extends StoreRateLimit {
    constructor () {
      super(store)
    }
  }
}
