import { randomUUID } from 'node:crypto'
import type { StateStore } from './types.js'

/** What a single-use value becomes once a request has claimed it: no longer the value. */
const CLAIMED = 'claimed:'

export function isClaimed (raw: string): boolean {
  return raw.startsWith(CLAIMED)
}

export interface Claim {
  /** Whether this request claimed the value (of concurrent claims, one wins). */
  won: boolean
  /** Puts the value back, only over this request's own mark: a value another request claimed is never revived. */
  giveBack: () => Promise<void>
}

/**
 * Claims the single-use value `raw` under `key` with one compare-and-set that
 * replaces it by this request's mark. A claim whose answer was lost (it may
 * have run) is given back before the error goes on; `onLost` hears when a
 * give-back itself fails. `ttlMs` is asked at each write.
 */
export async function claimOnce (store: StateStore, key: string, raw: string, ttlMs: () => number, onLost: (error: unknown) => void): Promise<Claim> {
  const mark = `${CLAIMED}${randomUUID()}`
  const giveBack = async (): Promise<void> => {
    await store.compareAndSet(key, mark, raw, ttlMs()).catch(onLost)
  }
  try {
    return { won: await store.compareAndSet(key, raw, mark, ttlMs()), giveBack }
  } catch (error) {
    await giveBack()
    throw error
  }
}

/**
 * Takes the absent `key` for `claimant` (one compare-and-set), or finds it
 * already taken by the same claimant: a retry whose earlier write ran but
 * lost its answer still succeeds; anyone else gets `false`.
 */
export async function claimAs (store: StateStore, key: string, claimant: string, ttlMs: number): Promise<boolean> {
  return await store.compareAndSet(key, null, claimant, ttlMs) || await store.get(key) === claimant
}
