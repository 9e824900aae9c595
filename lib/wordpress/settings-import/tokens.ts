// The signing settings of the import: algorithm, secret or key pair, claims.
import { createPrivateKey, createPublicKey, type AsymmetricKeyDetails, type KeyObject } from 'node:crypto'
import { AlgorithmSchema, type Algorithm } from '../../../schemas/settings.js'
import { filled, text, type Key, type Reader, type Tokens } from './reader.js'

/** The algorithms jwt-login signs with. */
const ALGORITHMS: readonly string[] = AlgorithmSchema.anyOf.map(member => member.const)

/** The shortest HMAC secret jwt-login takes for each HS algorithm, in bytes. */
const HMAC_MIN_BYTES: Readonly<Record<string, number>> = { HS256: 32, HS384: 48, HS512: 64 }

/** The kinds of key (`type`, or `ec:<curve>`) each key-pair algorithm signs with. */
const KEY_KINDS: Readonly<Record<string, readonly string[]>> = {
  RS256: ['rsa'],
  RS384: ['rsa'],
  RS512: ['rsa'],
  PS256: ['rsa'],
  ES256: ['ec:prime256v1'],
  ES384: ['ec:secp384r1'],
  EdDSA: ['ed25519', 'ed448']
}

/**
 * A PEM key from the export: Simple JWT Login stores its key pair
 * base64-encoded (`base64_encode` on save); a plain PEM is taken as it is.
 */
function pemOf (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const pem = value.includes('-----BEGIN') ? value : Buffer.from(value, 'base64').toString('utf8')
  return pem.includes('-----BEGIN') ? pem : undefined
}

/** Why a private key cannot sign with the algorithm, if it cannot. */
function keyProblem (algorithm: string, key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails as AsymmetricKeyDetails
  const kind = key.asymmetricKeyType === 'ec' ? `ec:${String(details.namedCurve)}` : String(key.asymmetricKeyType)
  if (!(KEY_KINDS[algorithm] as readonly string[]).includes(kind)) return `is a ${kind} key, which does not sign ${algorithm}`
  const bits = details.modulusLength ?? 2048
  if (bits < 2048) return `is an RSA key of ${bits} bits; jwt-login needs at least 2048, so generate a new key pair`
  return undefined
}

/** Whether a PEM public key is the public half of the private key. */
function isPublicHalf (pem: string, privateKey: KeyObject): boolean {
  const spki = (key: KeyObject): string => key.export({ type: 'spki', format: 'pem' }).toString()
  try {
    return spki(createPublicKey(pem)) === spki(createPublicKey(privateKey))
  } catch {
    return false
  }
}

/**
 * The signing key: Simple JWT Login's `decryption_key` (HS*, base64 when
 * `decryption_key_base64` is on) or its key pair `decryption_key_private`
 * / `decryption_key_public` (RS*), both under `general`; with
 * `decryption_source` 1 the keys live in wp-config.php, not in the export.
 */
export function readTokens (r: Reader): Partial<Tokens> {
  const tokens: Partial<Tokens> = { claims: readClaims(r) }
  const algorithm = readAlgorithm(r)
  if (algorithm !== undefined) tokens.algorithm = algorithm
  const lifetime = r.minutes('authorization.ttl')
  if (lifetime !== undefined) tokens.lifetime = lifetime
  const issuer = text(r.from.value('authorization.iss'))
  if (issuer !== undefined) tokens.issuer = issuer
  const key = readKey(r, algorithm)
  if (key !== undefined) {
    tokens.keys = [key]
  } else {
    r.left.push({ setting: 'tokens.keys', reason: 'no usable signing key came over: supply tokens.keys ({ kid, secret } or PEM keys) before using these settings' })
  }
  return tokens
}

export function readAlgorithm (r: Reader): Algorithm | undefined {
  const value = r.from.value('general.jwt_algorithm')
  const name = value === undefined || value === '' ? 'HS256' : value
  if (typeof name === 'string' && ALGORITHMS.includes(name)) return name as Algorithm
  r.leave('general.jwt_algorithm', `is not an algorithm jwt-login signs with (${ALGORITHMS.join(', ')}): choose one in tokens.algorithm`)
  return undefined
}

export function readKey (r: Reader, algorithm: Algorithm | undefined): Key | undefined {
  const source = r.from.value('general.decryption_source')
  const secret = r.from.value('general.decryption_key')
  const base64 = r.on('general.decryption_key_base64')
  const privateKey = r.from.value('general.decryption_key_private')
  const publicKey = r.from.value('general.decryption_key_public')
  if (String(source) === '1') {
    r.leave('general.decryption_source', 'keeps the keys in wp-config.php (SIMPLE_JWT_PRIVATE_KEY, SIMPLE_JWT_PUBLIC_KEY), not in the export')
    return undefined
  }
  if (algorithm === undefined) return undefined
  return algorithm.startsWith('HS') ? readSecret(r, algorithm, secret, base64) : readKeyPair(r, algorithm, privateKey, publicKey)
}

/**
 * An HMAC secret, carried only when it is long enough for jwt-login.
 * jwt-login's secret is a string, used as its UTF-8 bytes: a base64 key
 * carries over only when its bytes are UTF-8 text, so that the key stays
 * the same bytes. (Tokens Simple JWT Login issued carry no `kid`, `typ`
 * or `aud`, so jwt-login refuses them whatever the key.)
 */
export function readSecret (r: Reader, algorithm: string, value: unknown, base64: boolean): Key | undefined {
  const written = text(value)
  if (written === undefined) return undefined
  const path = 'general.decryption_key'
  let bytes = Buffer.from(written, 'utf8')
  if (base64) {
    const compact = written.replace(/\s+/g, '')
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
      r.leave(path, 'is marked base64 (decryption_key_base64) but is not base64 text: generate a new secret')
      return undefined
    }
    bytes = Buffer.from(compact, 'base64')
  }
  const secret = bytes.toString('utf8')
  if (!Buffer.from(secret, 'utf8').equals(bytes)) {
    r.leave(path, "decodes to bytes that are not UTF-8 text, and jwt-login's secret is a string: generate a new secret (tokens signed with this one stop validating)")
    return undefined
  }
  const minimum = HMAC_MIN_BYTES[algorithm] as number
  if (bytes.length < minimum) {
    r.leave(path, `is shorter than the ${minimum} bytes jwt-login needs for ${algorithm}: generate a new secret of at least ${minimum} bytes (tokens signed with this one stop validating)`)
    return undefined
  }
  return { kid: 'imported', secret }
}

/** A key pair; the public key only when it is the half of the private one (jwt-login derives it otherwise). */
export function readKeyPair (r: Reader, algorithm: string, privateValue: unknown, publicValue: unknown): Key | undefined {
  const path = 'general.decryption_key_private'
  const privatePem = pemOf(privateValue)
  if (privatePem === undefined) {
    r.leave(path, `is missing or not a PEM key, and ${algorithm} needs a private key`)
    return undefined
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(privatePem)
  } catch {
    r.leave(path, 'is not a readable PEM private key')
    return undefined
  }
  const problem = keyProblem(algorithm, privateKey)
  if (problem !== undefined) {
    r.leave(path, problem)
    return undefined
  }
  const key: Key = { kid: 'imported', privateKey: privatePem }
  const publicPem = pemOf(publicValue)
  if (publicPem !== undefined && isPublicHalf(publicPem, privateKey)) {
    key.publicKey = publicPem
  } else if (text(publicValue) !== undefined) {
    r.leave('general.decryption_key_public', 'is not the public half of the private key; jwt-login derives the public key from the private key instead')
  }
  return key
}

/**
 * `jwt_payload` lists the payload fields: `email` and `username` map to
 * `tokens.claims`; `iat`, `exp` and `iss` are always there; `id` and
 * `site` are not written by jwt-login. `custom_claims` (v2) is left behind.
 */
export function readClaims (r: Reader): NonNullable<Tokens['claims']> {
  const value = r.from.value('authorization.jwt_payload')
  const fields: unknown[] = Array.isArray(value) ? value : []
  const dropped = ['id', 'site'].filter(field => fields.includes(field))
  if (dropped.length > 0) {
    r.leave('authorization.jwt_payload', `puts ${dropped.join(' and ')} in the payload; jwt-login puts the user ID in sub and writes no site field, so clients that read them must change`)
  }
  if (r.from.under('authorization.custom_claims').some(filled)) {
    r.leave('authorization.custom_claims', 'adds custom claims; jwt-login writes only the user claims tokens.claims names')
  }
  return { email: fields.includes('email'), login: fields.includes('username') }
}
