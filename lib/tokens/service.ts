import { createCipheriv, createDecipheriv, createPublicKey, createPrivateKey, randomBytes, randomUUID, type KeyObject, type JsonWebKey } from 'node:crypto'
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import type { Algorithm } from '../../schemas/settings.js'
import { systemClock, type Clock } from '../core/clock.js'
import { deriveKey, randomToken, safeEqual, sha256Base64url } from '../core/crypto.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'
import { JwtLoginSettingsError, type Settings } from '../config/settings.js'
import { readMany } from '../store/read.js'
import type { StateStore } from '../store/types.js'
import { updateEntry } from '../store/update.js'
import type { PublicUser } from '../adapters/users.js'

/** The kinds of JWT jwt-login issues, written into the `typ` claim. */
export type TokenKind = 'access' | 'interim'

export interface TokenClaims {
  sub: string
  iat: number
  exp: number
  jti: string
  iss: string
  aud: string
  typ: TokenKind
  /** The session (refresh-token family) the token belongs to. */
  sid: string
  email?: string
  username?: string
  display_name?: string
  roles?: string[]
  [claim: string]: unknown
}

export interface VerifiedToken {
  token: string
  header: Record<string, unknown>
  payload: TokenClaims
}

export interface SignedToken {
  token: string
  claims: TokenClaims
}

const REQUIRED_CLAIMS = ['sub', 'iat', 'exp', 'jti', 'iss', 'aud', 'typ', 'sid']
const HMAC_MIN_BYTES: Record<string, number> = { HS256: 32, HS384: 48, HS512: 64 }
const SEGMENTS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/
/** A user id: a positive integer, as a string. */
const SUBJECT = /^[1-9]\d*$/

interface KeyMaterial {
  kid: string
  /** What verifies, as fast-jwt takes it: the HMAC secret, or the public key as SPKI PEM. */
  verifyKey: string
  /** What signs: the HMAC secret or the private key PEM; `null` for a key kept only to verify. */
  signKey: string | null
  publicKey: KeyObject | null
}

function curveOf (key: KeyObject): string | undefined {
  return key.asymmetricKeyDetails?.namedCurve
}

const RSA_MIN_BITS = 2048
/** What to choose instead of HMAC, for the refusal of a key pair under an HS algorithm. */
const KEY_PAIR_ALGORITHMS = 'RS256, RS384, RS512, PS256, ES256, ES384 or EdDSA'

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

/**
 * fast-jwt's refusals as ours, in one place. A code without an entry (a
 * `crit` header it does not know, a code a later fast-jwt adds) is a claim
 * failure.
 */
const TOKEN_ERRORS: Record<string, JwtLoginErrorCode> = {
  [TokenError.codes.invalidAlgorithm]: 'ERR_JWT_LOGIN_TOKEN_ALGORITHM',
  [TokenError.codes.missingSignature]: 'ERR_JWT_LOGIN_TOKEN_ALGORITHM',
  [TokenError.codes.invalidSignature]: 'ERR_JWT_LOGIN_TOKEN_SIGNATURE',
  [TokenError.codes.verifyError]: 'ERR_JWT_LOGIN_TOKEN_SIGNATURE',
  [TokenError.codes.malformed]: 'ERR_JWT_LOGIN_TOKEN_DECODE',
  [TokenError.codes.invalidType]: 'ERR_JWT_LOGIN_TOKEN_DECODE',
  [TokenError.codes.invalidPayload]: 'ERR_JWT_LOGIN_TOKEN_DECODE',
  [TokenError.codes.expired]: 'ERR_JWT_LOGIN_TOKEN_EXPIRED',
  [TokenError.codes.inactive]: 'ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID',
  [TokenError.codes.missingRequiredClaim]: 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID',
  [TokenError.codes.invalidClaimType]: 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID',
  [TokenError.codes.invalidClaimValue]: 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID'
}

/** What a verifier answers (`complete: true`): the header and the claims, decoded once. */
interface Decoded {
  header: Record<string, unknown>
  payload: TokenClaims
}

type Verifier = (token: string) => Decoded

/** A key as the service uses it: its place in the list picks its verifiers. */
interface Key extends KeyMaterial {
  index: number
}

/** The one rule for a revoked session: its entry says it ended, or it started before its user's cutoff. */
function sessionEnded (sessionId: string, entry: string | null, cutoff: string | null): boolean {
  return entry === REVOKED || (cutoff !== null && sessionStart(sessionId) < cutoffTime(cutoff))
}

/**
 * A user's cutoff as stored: sessions started before `t` (ms) are ended,
 * and so are those started before any provisional cutoff in `h` (a password
 * change in progress, by its id). Written as the bare time when there is no
 * provisional one, so the check on every request reads a number.
 */
interface CutoffRecord {
  t: number
  h?: Record<string, number>
}

function parseCutoff (raw: string | null): CutoffRecord | null {
  if (raw === null) return null
  return raw.startsWith('{') ? JSON.parse(raw) as CutoffRecord : { t: Number(raw) }
}

function writeCutoff (record: CutoffRecord): string {
  return record.h === undefined || Object.keys(record.h).length === 0 ? String(record.t) : JSON.stringify(record)
}

/** The time before which a user's sessions are ended: the latest of the cutoff and every provisional one. */
export function cutoffTime (raw: string): number {
  // the bare time unless a password change is running: no parse on the request's path
  if (!raw.startsWith('{')) return Number(raw)
  const record = JSON.parse(raw) as Required<CutoffRecord>
  return Math.max(record.t, ...Object.values(record.h))
}

/** The start time (ms) written at the head of a session id; NaN-safe (0 for a foreign id). */
export function sessionStart (sessionId: string): number {
  const dash = sessionId.indexOf('-')
  const start = dash > 0 ? parseInt(sessionId.slice(0, dash), 36) : 0
  return Number.isFinite(start) ? start : 0
}

/** Store keys of the token state. */
export const stateKeys = {
  /** One entry per session: its refresh family (JSON) or `revoked`. */
  session: (sid: string) => `session:${sid}`,
  /** Tokens of this user issued before the stored time (ms) are refused. */
  userCutoff: (userId: string | number) => `revoked:user:${userId}`
}

/** What `stateKeys.session` holds once the session has ended. */
const REVOKED = 'revoked'

/**
 * A session's refresh state, O(1) however often it rotates: the hash of the
 * current refresh token, the hash of the previous one, the current token
 * sealed under the previous one (so a retry of the previous token within the
 * reuse interval gets the same successor back, and a copy of the store alone
 * reveals no usable token), and when it rotated.
 */
interface SessionRecord {
  /** User id. */
  u: number
  /** Hash of the current refresh token. */
  h: string
  /** Hash of the previous refresh token. */
  p?: string
  /** The current token, encrypted with a key derived from the previous one. */
  n?: string
  /** Time of the last rotation (ms). */
  t?: number
}

const SESSION_ID = /^[0-9a-z]{1,12}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
function sealKey (sessionId: string, secret: string): Buffer {
  return deriveKey(secret, sessionId, 'jwt-login refresh successor')
}

/**
 * The successor token, readable only with the token it replaced: AES-256-GCM
 * under a key derived (HKDF) from the previous token's secret, written as
 * base64url(iv ‖ ciphertext ‖ tag). node:crypto rather than a JWE library:
 * jose's compact JWE costs about seven times as much per refresh here (a Web
 * Crypto key import each time) for the same algorithm.
 */
function seal (sessionId: string, previousSecret: string, token: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', sealKey(sessionId, previousSecret), iv)
  const sealed = Buffer.concat([iv, cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return sealed.toString('base64url')
}

function unseal (sessionId: string, previousSecret: string, sealed: string): string {
  const bytes = Buffer.from(sealed, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', sealKey(sessionId, previousSecret), bytes.subarray(0, 12))
  decipher.setAuthTag(bytes.subarray(bytes.length - 16))
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString('utf8')
}

/** A refresh token: `<session id>.<secret>`; only the secret's hash is stored. */
function parseRefreshToken (token: string): { sessionId: string, secret: string } | null {
  const dot = token.indexOf('.')
  const sessionId = token.slice(0, dot)
  const secret = token.slice(dot + 1)
  if (dot === -1 || !SESSION_ID.test(sessionId) || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return null
  return { sessionId, secret }
}

/**
 * The session part of a refresh token: what comes before its first dot (''
 * without one). Its form is checked where the token is spent, so a cookie
 * that holds something else still reaches that refusal (and is cleared).
 */
export function refreshTokenSession (token: string): string {
  return token.slice(0, Math.max(0, token.indexOf('.')))
}

/** What reuse detection reports. */
export interface RefreshReuse { uid: number, sid: string }

export interface RefreshResult<U = unknown> {
  userId: number
  /** What `lookUp` answered for the session's user. */
  user: U
  sessionId: string
  refreshToken: string
}

/**
 * Signs and verifies every kind of token with fast-jwt; issues, rotates and
 * revokes refresh tokens. The plugin owns its JWT engine: nothing is
 * registered on the host, so a host's own @fastify/jwt is left alone.
 */
export class TokenService {
  /** Keys by `kid`, for a header read in full. */
  readonly #byKid = new Map<string, Key>()
  /** Keys by the exact header segment this service writes for them: its own tokens need no header parse. */
  readonly #byHeader = new Map<string, Key>()
  readonly #sign: (claims: TokenClaims) => string
  /** Per settings snapshot, each key's verifiers (access, interim). */
  readonly #verifiers = new WeakMap<Settings['tokens'], Array<Verifier | undefined>>()
  readonly #cachedVerifiers: boolean
  readonly #algorithm: Algorithm
  readonly #store: StateStore
  readonly #clock: Clock
  /**
   * The longest any token or session this instance issued may live (ms),
   * whatever the settings say now: a reload that shortens a lifetime must
   * not let a revocation expire before a token issued under the longer one.
   */
  #longestTokenMs = 0
  /** The same for refresh families. */
  #longestSessionMs = 0
  readonly #jwks: { keys: JsonWebKey[] } | null

  constructor (keys: KeyMaterial[], algorithm: Algorithm, store: StateStore, clock: Clock) {
    const entries: Key[] = keys.map((key, index) => ({ ...key, index }))
    for (const key of entries) {
      this.#byKid.set(key.kid, key)
      // fast-jwt writes the header as {alg, typ, kid}, in this order
      this.#byHeader.set(Buffer.from(JSON.stringify({ alg: algorithm, typ: 'JWT', kid: key.kid })).toString('base64url'), key)
    }
    const first = entries[0] as Key
    // no noTimestamp: it would drop our iat; the signer keeps an iat and exp the payload has
    this.#sign = createSigner<TokenClaims>({ key: first.signKey as string, algorithm, kid: first.kid })
    // fast-jwt fixes a verifier's time when it is made (`clockTimestamp`), or
    // reads Date.now() per call without one. So the system clock gets
    // verifiers made once per settings snapshot and key; another clock (tests,
    // a host's own) gets a verifier per call made at its time, so exp and nbf
    // are judged at the time the rest of the plugin sees.
    this.#cachedVerifiers = clock === systemClock
    this.#algorithm = algorithm
    this.#store = store
    this.#clock = clock
    // keys change only with a restart, so their JWKS is exported once
    this.#jwks = algorithm.startsWith('HS')
      ? null
      : {
          keys: keys.map(key => ({
            ...(key.publicKey as KeyObject).export({ format: 'jwk' }),
            kid: key.kid,
            alg: algorithm,
            use: 'sig'
          }))
        }
  }

  get algorithm (): Algorithm {
    return this.#algorithm
  }

  /** The public keys as a JWKS, or `null` for HMAC keys. */
  jwks (): { keys: JsonWebKey[] } | null {
    return this.#jwks
  }

  #audience (kind: TokenKind, tokens: Settings['tokens']): string {
    return kind === 'access' ? tokens.audience : `${tokens.audience}:2fa`
  }

  /** Signs a token of `kind` for `user`. Only claims the settings name are taken from the user. */
  sign (settings: Settings, user: PublicUser, kind: TokenKind, options: { sessionId: string, lifetimeMs?: number }): SignedToken {
    const tokens = settings.tokens
    const iat = Math.floor(this.#clock() / 1000)
    const lifetime = Math.max(1, Math.floor((options.lifetimeMs ?? tokens.lifetimeMs) / 1000))
    this.#longestTokenMs = Math.max(this.#longestTokenMs, lifetime * 1000)
    const claims: TokenClaims = {
      sub: String(user.ID),
      iat,
      exp: iat + lifetime,
      jti: randomUUID(),
      iss: tokens.issuer,
      aud: this.#audience(kind, tokens),
      typ: kind,
      sid: options.sessionId
    }
    if (kind === 'access') {
      if (tokens.claims.email) claims.email = user.user_email
      if (tokens.claims.login) claims.username = user.user_login
      if (tokens.claims.displayName) claims.display_name = user.display_name
      if (tokens.claims.roles) claims.roles = user.roles
    }
    return { token: this.#sign(claims), claims }
  }

  /**
   * Verifies signature, algorithm, `kid`, issuer, audience, kind and times.
   * Revocation is checked separately by `isRevoked`.
   */
  verify (settings: Settings, token: string, kind: TokenKind): VerifiedToken {
    if (!SEGMENTS.test(token)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_MALFORMED')
    const key = this.#keyOf(token)
    try {
      return this.#check(settings.tokens, key, token, kind)
    } catch (error) {
      throw this.#refusal(settings.tokens, key, token, kind, error)
    }
  }

  /**
   * The key a token names. A token of this service has one of the headers
   * this service writes, found as it is; any other header is parsed (its
   * segment only) to refuse a wrong `alg` or an unknown `kid` with their own
   * codes. The verifier then decodes the token once.
   */
  #keyOf (token: string): Key {
    const segment = token.slice(0, token.indexOf('.'))
    const known = this.#byHeader.get(segment)
    if (known !== undefined) return known
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

  /** fast-jwt checks the signature, `alg`, the required claims, iss, aud, sub, exp and nbf; the rest is here. */
  #check (tokens: Settings['tokens'], key: Key, token: string, kind: TokenKind): VerifiedToken {
    const { header, payload } = this.#verifier(tokens, key, kind)(token)
    // fast-jwt takes an aud array when one entry matches; a token of ours has one audience
    if (typeof payload.aud !== 'string' || typeof payload.jti !== 'string' || typeof payload.sid !== 'string' || typeof payload.iat !== 'number') {
      throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID')
    }
    if (payload.typ !== kind) throw new JwtLoginError(kind === 'interim' ? 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' : 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID')
    // fast-jwt checks only the age of iat (maxAge); an iat in the future is refused here, as nbf is by fast-jwt
    if (payload.iat * 1000 - tokens.leewayMs > this.#clock()) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID')
    return { token, header, payload }
  }

  /**
   * Why a token was refused. A value check failing on a token signed with
   * our key may mean it is our other kind: an interim token where a final
   * one belongs (110), or a final token where the interim one belongs.
   */
  #refusal (tokens: Settings['tokens'], key: Key, token: string, kind: TokenKind, error: unknown): JwtLoginError {
    if (error instanceof JwtLoginError) return error
    const code = (error as TokenError).code
    if (code === TokenError.codes.invalidClaimValue && this.#isKind(tokens, key, token, kind === 'access' ? 'interim' : 'access')) {
      return new JwtLoginError(kind === 'access' ? 'ERR_JWT_LOGIN_INTERIM_TOKEN_USED' : 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID')
    }
    return new JwtLoginError(TOKEN_ERRORS[code] ?? 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID', { cause: error })
  }

  #isKind (tokens: Settings['tokens'], key: Key, token: string, kind: TokenKind): boolean {
    try {
      this.#check(tokens, key, token, kind)
      return true
    } catch {
      return false
    }
  }

  /** The verifier of a key and kind under these settings (issuer, audience and leeway may change on a reload). */
  #verifier (tokens: Settings['tokens'], key: Key, kind: TokenKind): Verifier {
    if (!this.#cachedVerifiers) return this.#createVerifier(tokens, key, kind, this.#clock())
    let verifiers = this.#verifiers.get(tokens)
    if (verifiers === undefined) {
      verifiers = []
      this.#verifiers.set(tokens, verifiers)
    }
    const slot = key.index * 2 + (kind === 'access' ? 0 : 1)
    let verifier = verifiers[slot]
    if (verifier === undefined) {
      verifier = this.#createVerifier(tokens, key, kind)
      verifiers[slot] = verifier
    }
    return verifier
  }

  #createVerifier (tokens: Settings['tokens'], key: Key, kind: TokenKind, clockTimestamp?: number): Verifier {
    return createVerifier({
      key: key.verifyKey,
      algorithms: [this.#algorithm],
      complete: true,
      requiredClaims: REQUIRED_CLAIMS,
      allowedIss: tokens.issuer,
      allowedAud: this.#audience(kind, tokens),
      allowedSub: SUBJECT,
      // milliseconds, as leewayMs: exp is good until exp + leeway (inclusive), nbf from nbf - leeway
      clockTolerance: tokens.leewayMs,
      clockTimestamp
    })
  }

  /**
   * Whether a token is revoked: its session ended, or every token of its user
   * issued before a cutoff. Both entries are read in one store round trip.
   */
  async isRevoked (claims: TokenClaims): Promise<boolean> {
    const [session, cutoff] = await readMany(this.#store, [stateKeys.session(claims.sid), stateKeys.userCutoff(claims.sub)]) as [string | null, string | null]
    return sessionEnded(claims.sid, session, cutoff)
  }

  /**
   * Revokes a token by ending its session: one write, so it is either done or
   * not. Its access tokens and its refresh token stop working together.
   */
  async revoke (settings: Settings, claims: TokenClaims): Promise<void> {
    await this.revokeSession(settings, claims.sid, claims.exp * 1000)
  }

  /**
   * Ends a session: the one entry of the session becomes `revoked`, so its
   * refresh family is gone and its access tokens are refused until they have
   * all expired: the later of `until` (the presented token's `exp`) and a
   * full lifetime from now, since a token refreshed later in the session
   * outlives the one presented.
   */
  async revokeSession (settings: Settings, sessionId: string, until?: number): Promise<void> {
    const { tokens } = settings
    const now = this.#clock()
    const ttl = Math.max(1000, (until ?? now + tokens.lifetimeMs) - now, tokens.lifetimeMs, this.#longestTokenMs) + tokens.leewayMs
    await this.#store.set(stateKeys.session(sessionId), REVOKED, ttl)
  }

  /**
   * Ends every session of the user started before `at` (default now), plus
   * `sessions.clockSkew`: their access and refresh tokens are refused from
   * then on. The cutoff only moves forward: a later write with an earlier
   * time leaves it as it is.
   */
  async revokeUserTokens (settings: Settings, userId: number, at: number = this.#clock()): Promise<void> {
    const until = at + settings.sessions.clockSkewMs
    await this.#changeCutoff(settings, userId, (record) => ({ ...record, t: Math.max(record.t, until) }))
  }

  /**
   * A provisional cutoff at `until` while a password changes (`id` names the
   * change): it ends every session started before it, including those that
   * start while the change runs, until `releaseUserTokens` with the same id
   * replaces it by the moment the change ended. Never lowers the cutoff.
   */
  async holdUserTokens (settings: Settings, userId: number, id: string, until: number): Promise<void> {
    await this.#changeCutoff(settings, userId, (record) => ({ t: record.t, h: { ...record.h, [id]: until } }))
  }

  /**
   * Replaces the provisional cutoff `id` by `at` (default now, plus
   * `sessions.clockSkew`), never lowering the cutoff below what another
   * write set: a newer change's provisional cutoff stays.
   */
  async releaseUserTokens (settings: Settings, userId: number, id: string, at: number = this.#clock()): Promise<void> {
    const until = at + settings.sessions.clockSkewMs
    await this.#changeCutoff(settings, userId, (record) => {
      const { [id]: _released, ...held } = record.h ?? {}
      return { t: Math.max(record.t, until), h: held }
    })
  }

  /**
   * One change of a user's cutoff, as a compare-and-set from the value read,
   * so concurrent writes (other instances, other changes) are never lost.
   * Provisional cutoffs already past are folded into the time.
   */
  async #changeCutoff (settings: Settings, userId: number, change: (record: CutoffRecord) => CutoffRecord): Promise<void> {
    const ttlMs = Math.max(settings.refresh.lifetimeMs, settings.tokens.lifetimeMs, this.#longestTokenMs, this.#longestSessionMs) + settings.tokens.leewayMs
    await updateEntry(this.#store, stateKeys.userCutoff(userId), 'the user\'s cutoff', (raw) => {
      const next = change(parseCutoff(raw) ?? { t: 0 })
      const now = this.#clock()
      const held = Object.entries(next.h ?? {})
      const value = writeCutoff({
        t: Math.max(next.t, ...held.filter(([, until]) => until <= now).map(([, until]) => until)),
        h: Object.fromEntries(held.filter(([, until]) => until > now))
      })
      return value === raw ? null : { value, ttlMs }
    })
  }

  /** The time (ms) before which the user's sessions are ended, or `null` when none is set. */
  async userCutoff (userId: number): Promise<number | null> {
    const raw = await this.#store.get(stateKeys.userCutoff(userId))
    return raw === null ? null : cutoffTime(raw)
  }

  /**
   * A new session id. It starts with the session's start time in ms (base 36)
   * so a per-user cutoff can end older sessions to the millisecond, though
   * `iat` has whole seconds only. Sign-in flows pass the time their request
   * started (`startedAt`): a password change ends every session whose
   * sign-in checked the old password.
   */
  newSessionId (startedAt: number = this.#clock()): string {
    return `${startedAt.toString(36)}-${randomUUID()}`
  }

  /** Starts the refresh family of a new session: one store entry. Only the token's hash is stored. */
  async issueRefreshToken (settings: Settings, userId: number, sessionId: string): Promise<string> {
    const secret = randomToken()
    const record: SessionRecord = { u: userId, h: sha256Base64url(secret) }
    this.#longestSessionMs = Math.max(this.#longestSessionMs, settings.refresh.lifetimeMs)
    await this.#store.set(stateKeys.session(sessionId), JSON.stringify(record), settings.refresh.lifetimeMs)
    return `${sessionId}.${secret}`
  }

  /** Whether each session's refresh family is still there: not ended, not expired (one read). */
  async liveSessions (sessionIds: string[]): Promise<boolean[]> {
    const entries = await readMany(this.#store, sessionIds.map(stateKeys.session))
    return entries.map(entry => entry !== null && entry !== REVOKED)
  }

  /** Forgets a session prepared for an answer that was not given (best effort: unused, it only expires). */
  async discardSession (sessionId: string): Promise<void> {
    await this.#store.delete(stateKeys.session(sessionId)).catch(() => {})
  }

  /**
   * Spends a refresh token and answers its successor in the same session.
   *
   * Order: read the session's one entry, then the user's cutoff (reads only),
   * then `lookUp` the session's user (the host's adapter); then one
   * compare-and-set writes the rotation. A failure before the write (the
   * user database down included) changes nothing, and a retry rotates as if
   * it were the first use; a write that ran although its answer was lost leaves the
   * token retryable: the previous token, presented again within
   * `refresh.reuseInterval`, gets the same successor (no write). Of two
   * concurrent uses, one rotates and the other sees the previous token and
   * gets the same successor. Any other token of a live session (an older one,
   * or the previous one later) is a reuse: the session ends and `onReuse` is told.
   */
  async rotateRefreshToken<U> (settings: Settings, token: string, lookUp: (userId: number, sessionId: string) => Promise<U>, onReuse: (reuse: RefreshReuse) => void): Promise<RefreshResult<U>> {
    const parsed = parseRefreshToken(token)
    if (parsed === null) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    const { sessionId, secret } = parsed
    const key = stateKeys.session(sessionId)
    const presented = sha256Base64url(secret)
    for (let attempt = 0; attempt < 3; attempt++) {
      // the session first: the user whose cutoff applies is inside it
      const raw = await this.#store.get(key)
      const record = raw === null || raw === REVOKED ? null : JSON.parse(raw) as SessionRecord
      const cutoff = record === null ? null : await this.#store.get(stateKeys.userCutoff(record.u))
      if (record === null || sessionEnded(sessionId, raw, cutoff)) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
      const { refresh } = settings
      const now = this.#clock()

      if (safeEqual(presented, record.h)) {
        const user = await lookUp(record.u, sessionId)
        const next = randomToken()
        const rotated: SessionRecord = { u: record.u, h: sha256Base64url(next), p: presented, n: seal(sessionId, secret, next), t: now }
        this.#longestSessionMs = Math.max(this.#longestSessionMs, refresh.lifetimeMs)
        if (await this.#store.compareAndSet(key, raw, JSON.stringify(rotated), refresh.lifetimeMs)) {
          return { userId: record.u, user, sessionId, refreshToken: `${sessionId}.${next}` }
        }
        continue // the session changed under us (a concurrent use or a revoke): decide again
      }
      const retry = record.p !== undefined && record.n !== undefined && record.t !== undefined &&
        refresh.reuseIntervalMs > 0 && safeEqual(presented, record.p) && now - record.t <= refresh.reuseIntervalMs
      if (retry) {
        return { userId: record.u, user: await lookUp(record.u, sessionId), sessionId, refreshToken: `${sessionId}.${unseal(sessionId, secret, record.n as string)}` }
      }
      await this.revokeSession(settings, sessionId)
      onReuse({ uid: record.u, sid: sessionId })
      throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    }
    throw new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: new Error('the session kept changing during a refresh') })
  }

  /**
   * Ends the session of a refresh token (sign-out through the refresh
   * cookie): reads the session and its user's cutoff, then one write. The
   * session's current token may end it, and so may the previous one at any
   * time (a client whose last rotation answer was lost; ending the session
   * is what a reuse of it would do anyway). Any other token, or a session
   * already ended, is refused (401 / 51) and changes nothing.
   */
  async endSessionOf (settings: Settings, token: string): Promise<{ userId: number, sessionId: string }> {
    const parsed = parseRefreshToken(token)
    if (parsed === null) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    const { sessionId, secret } = parsed
    const raw = await this.#store.get(stateKeys.session(sessionId))
    const record = raw === null || raw === REVOKED ? null : JSON.parse(raw) as SessionRecord
    const cutoff = record === null ? null : await this.#store.get(stateKeys.userCutoff(record.u))
    const presented = sha256Base64url(secret)
    // with a record, both hashes are compared, so the time does not say which one matched
    const current = record !== null && safeEqual(presented, record.h)
    const previous = record?.p !== undefined && safeEqual(presented, record.p)
    if (record === null || sessionEnded(sessionId, raw, cutoff) || !(current || previous)) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID')
    await this.revokeSession(settings, sessionId)
    return { userId: record.u, sessionId }
  }
}
