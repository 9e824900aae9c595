import { createHash, createHmac, createPrivateKey, hkdfSync, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'

/** The SHA-256 digest of `value` (a string is taken as UTF-8). */
export function sha256 (value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest()
}

/** The SHA-256 digest of `value`, base64url. */
export function sha256Base64url (value: string | Buffer): string {
  return createHash('sha256').update(value).digest('base64url')
}

/** HMAC-SHA256 of `value` under `key`: a keyed hash, for secrets too few to hide behind a plain hash. */
export function hmacSha256 (key: Buffer, value: string): Buffer {
  return createHmac('sha256', key).update(value).digest()
}

/**
 * Whether `a` equals `b`, in a time that tells nothing about either. Both are
 * compared as SHA-256 digests, so values of different lengths take the same
 * path and even a length is not given away.
 */
export function safeEqual (a: string | Buffer, b: string | Buffer): boolean {
  return timingSafeEqual(sha256(a), sha256(b))
}

/** A key of `bytes` bytes derived from `secret` with HKDF-SHA256; `info` names its use, so each use gets its own key. */
export function deriveKey (secret: string | Buffer, salt: string | Buffer, info: string | Buffer, bytes = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, info, bytes))
}

/**
 * A key for one use (`info`), derived from a signing key's secret: every
 * instance with the same key derives the same one, and a copy of the store
 * alone reveals nothing it protects. A private key counts by its PKCS#8 DER
 * encoding, not its PEM text, so instances holding the same key in another
 * form (PKCS#1 or SEC1, CRLF line ends) derive the same key.
 */
export function keyFromSigningKey (key: { secret?: string, privateKey?: string }, info: string): Buffer {
  if (key.secret !== undefined) return deriveKey(key.secret, 'jwt-login', info)
  if (key.privateKey === undefined) throw new TypeError('the signing key has neither a secret nor a private key')
  return deriveKey(createPrivateKey(key.privateKey).export({ type: 'pkcs8', format: 'der' }), 'jwt-login', info)
}

/**
 * A code of `length` characters drawn uniformly from `alphabet` (code points,
 * so any character counts as one) with the CSPRNG. `randomInt` draws by
 * rejection, so no character is more likely than another.
 */
export function randomCode (length: number, alphabet: string): string {
  const characters = [...alphabet]
  // a repeated character would be drawn more often; one alone would make every code the same
  if (characters.length < 2 || new Set(characters).size !== characters.length) {
    throw new RangeError('randomCode needs an alphabet of at least two distinct characters')
  }
  let code = ''
  for (let i = 0; i < length; i++) code += characters[randomInt(characters.length)]
  return code
}

/** `bytes` random bytes from the CSPRNG, base64url (32 bytes: 43 characters). */
export function randomToken (bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}
