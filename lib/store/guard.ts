import { JwtLoginError } from '../core/errors.js'
import type { StateStore } from './types.js'

function unavailable (error: unknown): never {
  if (error instanceof JwtLoginError) throw error
  throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
}

/** The store as flows see it: any failure becomes 503 / errorCode 201, so requests fail closed. */
export function guardStore (store: StateStore): StateStore {
  const guarded: StateStore = {
    get: async (key) => await store.get(key).catch(unavailable),
    set: async (key, value, ttlMs) => await store.set(key, value, ttlMs).catch(unavailable),
    consume: async (key) => await store.consume(key).catch(unavailable),
    increment: async (key, ttlMs) => await store.increment(key, ttlMs).catch(unavailable),
    compareAndSet: async (key, expected, value, ttlMs) => await store.compareAndSet(key, expected, value, ttlMs).catch(unavailable),
    delete: async (key) => await store.delete(key).catch(unavailable),
    close: async () => { await store.close?.() }
  }
  // only when the store has it: without it, readers fall back to one get per key
  if (store.getMany !== undefined) {
    const batched = store as Required<Pick<StateStore, 'getMany'>>
    guarded.getMany = async (keys) => await batched.getMany(keys).catch(unavailable)
  }
  return guarded
}
