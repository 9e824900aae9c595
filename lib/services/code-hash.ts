import { hmacSha256, keyFromSigningKey, randomToken, safeEqual } from '../core/crypto.js'
import type { Settings } from '../config/settings.js'

/** One use's key under one signing key. */
interface CodeKey { kid: string, key: Buffer }

/**
 * A short code's keyed hashes as stored. `macs` holds one per signing key
 * with a secret when the code was issued, by kid; `hash` is the first of
 * them, the one field versions before rotation-safe codes wrote and read
 * (an instance of such a version still checks codes this one issued, and a
 * record such a version wrote has `hash` alone).
 */
export interface KeyedHashes {
  hash: string
  macs?: Array<[kid: string, mac: string]>
}

/**
 * Keyed hashes of short codes (reset codes, email 2FA codes): a plain hash
 * would not hide a six-digit code from whoever reads the store. They are
 * keyed by EVERY signing key that holds a secret (an HS secret or a private
 * key; a public key is no secret), from the settings snapshot of the
 * request, never by the first key alone: in a rolling key rotation,
 * instances disagree for a while about which key is first, and a code
 * issued on one must still check on another. A code checks while any key
 * it was hashed under is still configured.
 */
export class CodeHasher {
  readonly #info: string
  /** Per settings snapshot: keys change only with a restart, but each reload makes a new snapshot. */
  readonly #keys = new WeakMap<Settings['tokens'], CodeKey[]>()
  /** Compared with when there is no stored code, so that path does the same work. */
  readonly #decoy = randomToken()

  /** `info` names the use, so each use has its own keys. */
  constructor (info: string) {
    this.#info = info
  }

  #keysOf (tokens: Settings['tokens']): CodeKey[] {
    let keys = this.#keys.get(tokens)
    if (keys === undefined) {
      keys = tokens.keys
        .filter(key => key.secret !== undefined || key.privateKey !== undefined)
        .map(key => ({ kid: key.kid, key: keyFromSigningKey(key, this.#info) }))
      this.#keys.set(tokens, keys)
    }
    return keys
  }

  /** The keyed hashes of `value` under every key of the snapshot; the first key always has a secret (registration checks it). */
  hash (tokens: Settings['tokens'], value: string): KeyedHashes {
    const macs = this.#keysOf(tokens).map(({ kid, key }): [string, string] => [kid, hmacSha256(key, value).toString('base64url')])
    return { hash: (macs[0] as [string, string])[1], macs }
  }

  /**
   * The keyed hash of `value` under the first key alone: for a value handed
   * to a client (a CSRF token) and checked later by `matches`, which tries
   * every key, so it needs no hash per key.
   */
  first (tokens: Settings['tokens'], value: string): string {
    const [key] = this.#keysOf(tokens) as [CodeKey]
    return hmacSha256(key.key, value).toString('base64url')
  }

  /**
   * Whether `value` is the code `stored` was made from (`null`: no code, a
   * decoy is compared). Every key of the snapshot is tried, each once, in
   * constant time and without stopping at a match: the work depends only on
   * the number of keys. A key the code was not hashed under is compared with
   * `hash`, which it cannot match unless the record predates `macs`.
   */
  matches (tokens: Settings['tokens'], stored: KeyedHashes | null, value: string): boolean {
    const byKid = new Map(stored?.macs ?? [])
    let matched = false
    for (const { kid, key } of this.#keysOf(tokens)) {
      const expected = stored === null ? this.#decoy : byKid.get(kid) ?? stored.hash
      if (safeEqual(hmacSha256(key, value).toString('base64url'), expected)) matched = true
    }
    return matched
  }
}

/** Codes are typed by people: surrounding spaces go, and case does not matter when the alphabet has one case. */
export function normalizeCode (code: string, alphabet: string): string {
  const trimmed = code.trim()
  return alphabet === alphabet.toUpperCase() ? trimmed.toUpperCase() : trimmed
}
