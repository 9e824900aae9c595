// What reset codes are in the store (one record per user: never the code, only its keyed hashes), their keys, and the email rule.
import type { KeyedHashes } from '../services/code-hash.js'
import { isClaimed } from '../store/claim.js'

export { normalizeCode } from '../services/code-hash.js'

/** What the store holds per user: never the code, only its keyed hashes. */
export interface CodeRecord extends KeyedHashes {
  /** Random per code: salts the hash. */
  id: string
  /** Expiry in ms on the plugin's clock. */
  exp: number
}

export const keys = {
  /** One code per user: a new one replaces (and so invalidates) the older one. */
  record: (userId: number | null) => `reset:${userId ?? 'none'}`,
  /** The tries at the user's code: a new code starts them again. */
  tries: (userId: number | null) => `reset-tries:${userId ?? 'none'}`
}

export function parseRecord (raw: string | null): CodeRecord | null {
  return raw === null || isClaimed(raw) ? null : JSON.parse(raw) as CodeRecord
}
