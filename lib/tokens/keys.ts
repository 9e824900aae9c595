// Key material: the configured keys checked against the algorithm at start, the key a token names, and the JWKS.
import { createPublicKey, createPrivateKey, type KeyObject } from 'node:crypto'
import type { Algorithm } from '../../schemas/settings.js'
import { JwtLoginError, JwtLoginSettingsError } from '../core/errors.js'
import type { Settings } from '../config/settings.js'

/** A configured key, checked and ready for fast-jwt. */
export interface KeyMaterial {
  kid: string
  /** What verifies, as fast-jwt takes it: the HMAC secret, or the public key as SPKI PEM. */
  verifyKey: string
  /** What signs: the HMAC secret or the private key PEM; `null` for a key kept only to verify. */
  signKey: string | null
  publicKey: KeyObject | null
}

/**
 * One public key of the `/jwks` answer (RFC 7517): the members Node writes for
 * its type (RSA: `n`, `e`; EC: `crv`, `x`, `y`; OKP: `crv`, `x`), then ours.
 * The package's own type, not `node:crypto`'s `JsonWebKey`, which not every
 * `@types/node` release exports; a type, not an interface, so that it is
 * still assignable to that `JsonWebKey` where a host has it.
 */
export type PublicJwk = {
  kty: string
  kid: string
  alg: string
  use: 'sig'
  n?: string
  e?: string
  crv?: string
  x?: string
  y?: string
}

/** A key as the service uses it: its place in the list picks its verifiers. */
export interface Key extends KeyMaterial {
  index: number
}

const HMAC_MIN_BYTES: Record<string, number> = { HS256: 32, HS384: 48, HS512: 64 }
const RSA_MIN_BITS = 2048
/** What to choose instead of HMAC, for the refusal of a key pair under an HS algorithm. */
const KEY_PAIR_ALGORITHMS = 'RS256, RS384, RS512, PS256, ES256, ES384 or EdDSA'

function curveOf (key: KeyObject): string | undefined {
  return key.asymmetricKeyDetails?.namedCurve
}

function checkKeyType (algorithm: Algorithm, key: KeyObject, path: string, kid: string): void {
  const type = key.asymmetricKeyType
  const bits = (key.asymmetricKeyDetails as { modulusLength?: number }).modulusLength ?? 0
  const rsa = algorithm.startsWith('RS') || algorithm === 'PS256'
  if (rsa && type === 'rsa' && bits < RSA_MIN_BITS) {
    throw new JwtLoginSettingsError(path, `the RSA key of kid "${kid}" has ${bits} bits, under ${RSA_MIN_BITS} bits: ${algorithm} needs at least ${RSA_MIN_BITS}`)
  }
  const ok =
    (rsa && type === 'rsa') ||
    (algorithm === 'ES256' && type === 'ec' && curveOf(key) === 'prime256v1') ||
    (algorithm === 'ES384' && type === 'ec' && curveOf(key) === 'secp384r1') ||
    (algorithm === 'EdDSA' && (type === 'ed25519' || type === 'ed448'))
  if (!ok) throw new JwtLoginSettingsError(path, `the key of kid "${kid}" does not fit ${algorithm}`)
}

/**
 * A PEM key under an HMAC algorithm would be ignored (or, as a secret, leak
 * the wrong thing): the host almost always meant RS256 or ES256 and left the
 * algorithm at its default.
 */
function refuseKeyPair (algorithm: Algorithm, key: Settings['tokens']['keys'][number], path: string): void {
  const field = key.privateKey !== undefined ? 'privateKey' : key.publicKey !== undefined ? 'publicKey' : null
  if (field === null) return
  const which = algorithm === 'HS256' ? 'HS256, the default algorithm,' : algorithm
  throw new JwtLoginSettingsError(`${path}/${field}`, `${which} signs with a shared secret and takes no ${field}; to sign with a key pair set tokens/algorithm to ${KEY_PAIR_ALGORITHMS}`)
}

/** Checks every key against the algorithm at start; a bad key refuses registration. */
export function buildKeyMaterial (tokens: Settings['tokens']): KeyMaterial[] {
  const { algorithm } = tokens
  return tokens.keys.map((key, index) => {
    const path = `tokens/keys/${index}`
    if (algorithm.startsWith('HS')) {
      refuseKeyPair(algorithm, key, path)
      if (key.secret === undefined) throw new JwtLoginSettingsError(`${path}/secret`, `${algorithm} needs a secret`)
      const minimum = HMAC_MIN_BYTES[algorithm] as number
      if (Buffer.byteLength(key.secret) < minimum) {
        throw new JwtLoginSettingsError(`${path}/secret`, `an ${algorithm} secret must be at least ${minimum} bytes`)
      }
      return { kid: key.kid, verifyKey: key.secret, signKey: key.secret, publicKey: null }
    }
    if (key.secret !== undefined) throw new JwtLoginSettingsError(`${path}/secret`, `${algorithm} takes a key pair, not a secret`)
    if (index === 0 && key.privateKey === undefined) {
      throw new JwtLoginSettingsError(`${path}/privateKey`, 'the first key signs and needs a private key')
    }
    let publicKey: KeyObject
    try {
      publicKey = key.publicKey !== undefined
        ? createPublicKey(key.publicKey)
        : createPublicKey(createPrivateKey(key.privateKey as string))
      if (key.privateKey !== undefined) checkKeyType(algorithm, createPrivateKey(key.privateKey), `${path}/privateKey`, key.kid)
    } catch (error) {
      if (error instanceof JwtLoginSettingsError) throw error
      throw new JwtLoginSettingsError(path, 'the key is not a readable PEM key')
    }
    checkKeyType(algorithm, publicKey, `${path}/publicKey`, key.kid)
    return {
      kid: key.kid,
      verifyKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      signKey: key.privateKey ?? null,
      publicKey
    }
  })
}

/** The public keys as a JWKS, or `null` for HMAC keys; keys change only with a restart, so it is built once. */
export function jwksOf (keys: KeyMaterial[], algorithm: Algorithm): { keys: PublicJwk[] } | null {
  if (algorithm.startsWith('HS')) return null
  return {
    keys: keys.map(key => ({
      // a public key's JWK: Node writes its `kty` and no private member
      ...(key.publicKey as KeyObject).export({ format: 'jwk' }) as Omit<PublicJwk, 'kid' | 'alg' | 'use'>,
      kid: key.kid,
      alg: algorithm,
      use: 'sig'
    }))
  }
}

/** The keys of a service, found by the header of a token; the first one signs. */
export class KeyRing {
  readonly signing: Key
  readonly #algorithm: Algorithm
  /** Keys by `kid`, for a header read in full. */
  readonly #byKid = new Map<string, Key>()
  /**
   * Each key with the exact header segment (and its dot) this service writes
   * for it: its own tokens need no header parse, and a few `startsWith`
   * compare less than cutting the segment out and hashing it for a map.
   */
  readonly #byHeader: Array<{ start: string, key: Key }> = []

  constructor (keys: KeyMaterial[], algorithm: Algorithm) {
    const entries: Key[] = keys.map((key, index) => ({ ...key, index }))
    for (const key of entries) {
      this.#byKid.set(key.kid, key)
      // fast-jwt writes the header as {alg, typ, kid}, in this order
      this.#byHeader.push({ start: `${Buffer.from(JSON.stringify({ alg: algorithm, typ: 'JWT', kid: key.kid })).toString('base64url')}.`, key })
    }
    this.signing = entries[0] as Key
    this.#algorithm = algorithm
  }

  /**
   * The key a token names. A token of this service has one of the headers
   * this service writes, found as it is; any other header is parsed (its
   * segment only) to refuse a wrong `alg` or an unknown `kid` with their own
   * codes. The verifier then decodes the token once.
   */
  keyOf (token: string): Key {
    for (const { start, key } of this.#byHeader) {
      if (token.startsWith(start)) return key
    }
    const segment = token.slice(0, token.indexOf('.'))
    let header: unknown
    try {
      header = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    } catch (error) {
      throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_DECODE', { cause: error })
    }
    if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_DECODE')
    const { alg, kid } = header as Record<string, unknown>
    if (alg !== this.#algorithm) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_ALGORITHM')
    const key = typeof kid === 'string' ? this.#byKid.get(kid) : undefined
    if (key === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN')
    return key
  }
}
