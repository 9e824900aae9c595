import type { AtomicBatch, StateStore } from './types.js'

/** The values of `keys` in their order: one `getMany`, or, from a store without it, one `get` each in parallel. */
export async function readMany (store: StateStore, keys: readonly string[]): Promise<Array<string | null>> {
  if (store.getMany !== undefined) return await store.getMany(keys)
  return await Promise.all(keys.map(async (key) => await store.get(key)))
}

/** The store's `readAndIncrement`, bound, when it has one (`AtomicBatch`); else `null`. */
export function batchOf (store: StateStore): AtomicBatch['readAndIncrement'] | null {
  return store.readAndIncrement?.bind(store) ?? null
}
