import { hmacSha256, keyFromSigningKey, randomToken, safeEqual, sha256, sha256Base64url } from '../core/crypto.js'
import type { Settings } from '../config/settings.js'
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'

/** How long a nonce this server issued is accepted: as long as a provider's code lives (RFC 6749 §4.1.2). */
export const NONCE_LIFETIME_MS = 10 * 60 * 1000
const PREFIX = 'n1'

/** The nonce keys of a settings snapshot, one per signing key (so nonces survive a key rotation). */
const keysOf = new WeakMap<Settings['tokens']['keys'], Buffer[]>()

function nonceKeys (tokens: Settings['tokens']): Buffer[] {
  let keys = keysOf.get(tokens.keys)
  if (keys === undefined) {
    keys = tokens.keys.filter(key => key.secret !== undefined || key.privateKey !== undefined).map(key => keyFromSigningKey(key, 'jwt-login oauth nonce'))
    keysOf.set(tokens.keys, keys)
  }
  return keys
}

function mac (key: Buffer, body: string): string {
  return hmacSha256(key, body).subarray(0, 16).toString('base64url')
}

/** The SHA-256 of a nonce as a provider gets it: hex, as Sign in with Apple and Firebase write it. */
export function nonceHash (nonce: string): string {
  return sha256(nonce).toString('hex')
}

/**
 * Whether the nonce an ID token carries is the one presented beside it, or
 * its SHA-256 (hex or base64url): a client that gave the provider the hash
 * and keeps the nonce itself proves, by presenting it, that it asked for the
 * token; whoever only holds the token holds only the hash.
 */
export function nonceMatches (carried: unknown, presented: string, hashedOnly: boolean): boolean {
  if (typeof carried !== 'string') return false
  const hashes = [nonceHash(presented), sha256Base64url(presented)]
  return hashes.includes(carried) || (!hashedOnly && carried === presented)
}

/**
 * A nonce for an ID-token sign-in, issued by this server: its expiry and 128
 * random bits, signed with a key derived from the first signing key, so any
 * instance checks it without the store. The client keeps `nonce` and gives
 * the provider `hash`; its single use is the ID token's (see `spendIdToken`).
 */
export function issueNonce (tokens: Settings['tokens'], now: number): { nonce: string, hash: string, expiresIn: number } {
  const body = `${PREFIX}.${(now + NONCE_LIFETIME_MS).toString(36)}.${randomToken(16)}`
  const nonce = `${body}.${mac(nonceKeys(tokens)[0] as Buffer, body)}`
  return { nonce, hash: nonceHash(nonce), expiresIn: NONCE_LIFETIME_MS / 1000 }
}

/** Whether `nonce` was issued by this server (under any of its keys) and has not expired. */
export function isIssuedNonce (tokens: Settings['tokens'], nonce: string, now: number): boolean {
  const parts = nonce.split('.')
  if (parts.length !== 4 || parts[0] !== PREFIX) return false
  const body = parts.slice(0, 3).join('.')
  const signed = nonceKeys(tokens).some(key => safeEqual(mac(key, body), parts[3] as string))
  return signed && parseInt(parts[1] as string, 36) > now
}

/** `GET /oauth/nonce`: a server nonce for the client to keep, its SHA-256 for the provider, and its lifetime in seconds. */
export function oauthNonce (ctx: Pick<JwtLoginContext, 'clock'>, call: Call): { nonce: string, nonce_sha256: string, expires_in: number } {
  const { nonce, hash, expiresIn } = issueNonce(call.settings.tokens, ctx.clock())
  return { nonce, nonce_sha256: hash, expires_in: expiresIn }
}
