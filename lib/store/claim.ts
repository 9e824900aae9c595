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
 * What an absent value is given back as (the store has no compare-and-delete):
 * claimable as if absent, and kept as long as a claim would be, so it never
 * expires between the two compare-and-sets of a claim.
 */
const RELEASED = 'released'

/**
 * Claims the single-use value `raw` under `key` (`null`: the key is absent,
 * as for a token spent once) with one compare-and-set that replaces it by
 * this request's mark (for an absent value that lost, a second one over a
 * value given back). A claim whose answer was lost (it may have run) is
 * given back before the error goes on; `onLost` hears when a give-back
 * itself fails. `ttlMs` is asked at each write.
 */
export async function claimOnce (store: StateStore, key: string, raw: string | null, ttlMs: () => number, onLost: (error: unknown) => void): Promise<Claim> {
  const mark = `${CLAIMED}${randomUUID()}`
  const giveBack = async (): Promise<void> => {
    await store.compareAndSet(key, mark, raw ?? RELEASED, ttlMs()).catch(onLost)
  }
  // an absent value that was given back is `RELEASED`: claimed like an absent one
  const claim = async (): Promise<boolean> =>
    await store.compareAndSet(key, raw, mark, ttlMs()) || (raw === null && await store.compareAndSet(key, RELEASED, mark, ttlMs()))
  try {
    return { won: await claim(), giveBack }
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
