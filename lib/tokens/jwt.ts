// Our JWTs: their claims, and signing and verifying them with fast-jwt, the algorithm pinned and its refusals mapped to our error codes.
import { randomUUID } from 'node:crypto'
import { createSigner, createVerifier, TokenError } from 'fast-jwt'
import type { Algorithm } from '../../schemas/settings.js'
import { systemClock, type Clock } from '../core/clock.js'
import { JwtLoginError, type JwtLoginErrorCode } from '../core/errors.js'
import type { Settings } from '../config/settings.js'
import type { PublicUser } from '../adapters/users.js'
import { KeyRing, type Key, type KeyMaterial } from './keys.js'
import type { TokenHeaderFields } from '../../schemas/auth.js'
import type { SessionOrigin } from '../adapters/second-factor.js'

/** The kinds of JWT jwt-login issues, written into the `typ` claim. */
export type TokenKind = 'access' | 'interim'

/** The claims of a token jwt-login issues. */
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
  /** Whether the user had verified `email` when the token was signed (with the `email` claim; absent when the host does not track it). */
  email_verified?: boolean
  username?: string
  display_name?: string
  roles?: string[]
  /** When the user last authenticated (seconds): the sign-in, or the last step-up. Absent on tokens from `sign()`. */
  auth_time?: number
  /** How (RFC 8176 values): `pwd`, `fed`, `hwk` (a passkey), `otp`, `user`, and `mfa` for two factors. */
  amr?: string[]
  /** The user's password fingerprint when the session started, sealed (`sessions.checkPasswordOnValidate`). */
  pfp?: string
  /** The actor of an impersonation token (RFC 8693 §4.1): the id of the user acting as `sub`, as a string. */
  act?: { sub: string }
  [claim: string]: unknown
}

/** When and how a token's user authenticated: `auth_time` (ms here, seconds in the token) and `amr`. */
export interface Authentication {
  at: number
  methods: string[]
}

/** The RFC 8176 `amr` of each first and second factor. */
const FIRST_FACTOR_AMR: Record<SessionOrigin['method'], string> = { password: 'pwd', provider: 'fed', passkey: 'hwk', email: 'otp' }
const SECOND_FACTOR_AMR: Record<string, string> = { totp: 'otp', email: 'otp', backup_codes: 'otp', passkey: 'hwk', user_verification: 'user' }

/**
 * The `amr` of a sign-in: its first factor, its second, and `mfa` when
 * there were two. A trusted device stands in for the second factor but is
 * none (no `mfa`).
 */
export function amrOf (origin: SessionOrigin): string[] {
  const first = FIRST_FACTOR_AMR[origin.method]
  const second = origin.secondFactor === undefined ? undefined : SECOND_FACTOR_AMR[origin.secondFactor]
  // a passkey's second factor is never a passkey again (a code is due then); a code after a mailed code (sign-in by email) is `otp` once
  return second === undefined ? [first] : [...new Set([first, second]), 'mfa']
}

/** A token that passed verification, with its header and claims. */
export interface VerifiedToken {
  token: string
  header: TokenHeaderFields
  payload: TokenClaims
}

/** What a token is signed for: its session, its lifetime (default `tokens.lifetime`), and for an access token how its user authenticated. */
export interface SignOptions {
  sessionId: string
  lifetimeMs?: number
  auth?: Authentication
  /** The session's password fingerprint, sealed: written as `pfp` when `sessions.checkPasswordOnValidate` is on. */
  fingerprint?: string
  /** An impersonation token's actor (a user id): written as `act: { sub }` on an access token. */
  actor?: number
}

/** A token just signed, with the claims written into it. */
export interface SignedToken {
  token: string
  claims: TokenClaims
}

const REQUIRED_CLAIMS = ['sub', 'iat', 'exp', 'jti', 'iss', 'aud', 'typ', 'sid']
const SEGMENTS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/
/** A user id: a positive integer, as a string. */
const SUBJECT = /^[1-9]\d*$/

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
  header: TokenHeaderFields
  payload: TokenClaims
}

type Verifier = (token: string) => Decoded

/**
 * `"act":` as base64url, once for each of the three places it may start
 * within a 3-byte group: the characters that it alone decides (6 bits each,
 * none shared with a neighbouring byte). A payload that holds the key holds
 * one of them; one that does not may still, rarely (only a scope then).
 */
const ACT_ENCODINGS = [0, 1, 2].map(offset => Buffer.concat([Buffer.alloc(offset), Buffer.from('"act":')]).toString('base64url').slice(Math.ceil(offset * 4 / 3), Math.floor((offset + 6) * 4 / 3)))

/**
 * Whether a presented value may be a token with an actor (`act`): a cheap
 * look at its payload, as it came (no decoding), before any check, so that
 * only such requests enter the events' scope (which, on Node 20, turns async hooks on for the process). A
 * `true` for a token that is no impersonation's costs only that; a token the
 * plugin signed with `act` always answers `true`. Takes a bare token or an
 * `Authorization` value; anything but a string answers `false`.
 */
export function mayCarryActor (value: unknown): boolean {
  if (typeof value !== 'string') return false
  const start = value.indexOf('.')
  const end = start === -1 ? -1 : value.indexOf('.', start + 1)
  if (end === -1) return false
  // the payload as it came, not decoded: a search for each encoding of the key
  const payload = value.slice(start + 1, end)
  return ACT_ENCODINGS.some(encoding => payload.includes(encoding))
}

/** An `act` claim as the plugin writes it: an object whose `sub` is a user id. */
function isActor (act: unknown): act is { sub: string } {
  return typeof act === 'object' && act !== null && typeof (act as { sub?: unknown }).sub === 'string' && SUBJECT.test((act as { sub: string }).sub)
}

function audience (kind: TokenKind, tokens: Settings['tokens']): string {
  return kind === 'access' ? tokens.audience : `${tokens.audience}:2fa`
}

/** Signs and verifies every kind of token; nothing is registered on the host, so a host's own @fastify/jwt is left alone. */
export class Jwt {
  readonly #keys: KeyRing
  readonly #sign: (claims: TokenClaims) => string
  /** Per settings snapshot, each key's verifiers (access, interim). */
  readonly #verifiers = new WeakMap<Settings['tokens'], Array<Verifier | undefined>>()
  readonly #cachedVerifiers: boolean
  readonly #algorithm: Algorithm
  readonly #clock: Clock

  constructor (keys: KeyMaterial[], algorithm: Algorithm, clock: Clock) {
    this.#keys = new KeyRing(keys, algorithm)
    const first = this.#keys.signing
    // no noTimestamp: it would drop our iat; the signer keeps an iat and exp the payload has
    this.#sign = createSigner<TokenClaims>({ key: first.signKey as string, algorithm, kid: first.kid })
    // fast-jwt fixes a verifier's time when it is made (`clockTimestamp`), or
    // reads Date.now() per call without one. So the system clock gets
    // verifiers made once per settings snapshot and key; another clock (tests,
    // a host's own) gets a verifier per call made at its time, so exp and nbf
    // are judged at the time the rest of the plugin sees.
    this.#cachedVerifiers = clock === systemClock
    this.#algorithm = algorithm
    this.#clock = clock
  }

  /** Signs a token of `kind` for `user`. Only claims the settings name are taken from the user. */
  sign (settings: Settings, user: PublicUser, kind: TokenKind, options: SignOptions): SignedToken {
    const tokens = settings.tokens
    const iat = Math.floor(this.#clock() / 1000)
    const lifetime = Math.max(1, Math.floor((options.lifetimeMs ?? tokens.lifetimeMs) / 1000))
    const claims: TokenClaims = {
      sub: String(user.ID),
      iat,
      exp: iat + lifetime,
      jti: randomUUID(),
      iss: tokens.issuer,
      aud: audience(kind, tokens),
      typ: kind,
      sid: options.sessionId
    }
    if (kind === 'access') {
      if (tokens.claims.email) {
        claims.email = user.user_email
        if (typeof user.email_verified === 'boolean') claims.email_verified = user.email_verified
      }
      if (tokens.claims.login) claims.username = user.user_login
      if (tokens.claims.displayName) claims.display_name = user.display_name
      if (tokens.claims.roles) claims.roles = user.roles
      if (options.auth !== undefined) {
        claims.auth_time = Math.floor(options.auth.at / 1000)
        claims.amr = options.auth.methods
      }
      if (options.fingerprint !== undefined && settings.sessions.checkPasswordOnValidate) claims.pfp = options.fingerprint
      if (options.actor !== undefined) claims.act = { sub: String(options.actor) }
    }
    return { token: this.#sign(claims), claims }
  }

  /**
   * Verifies signature, algorithm, `kid`, issuer, audience, kind and times.
   * Revocation is checked separately by `isRevoked`.
   */
  verify (settings: Settings, token: string, kind: TokenKind): VerifiedToken {
    if (!SEGMENTS.test(token)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_MALFORMED')
    const key = this.#keys.keyOf(token)
    try {
      return this.#check(settings.tokens, key, token, kind)
    } catch (error) {
      throw this.#refusal(settings.tokens, key, token, kind, error)
    }
  }

  /** fast-jwt checks the signature, `alg`, the required claims, iss, aud, sub, exp and nbf; the rest is here. */
  #check (tokens: Settings['tokens'], key: Key, token: string, kind: TokenKind): VerifiedToken {
    const { header, payload } = this.#verifier(tokens, key, kind)(token)
    // fast-jwt takes an aud array when one entry matches; a token of ours has one audience
    if (typeof payload.aud !== 'string' || typeof payload.jti !== 'string' || typeof payload.sid !== 'string' || typeof payload.iat !== 'number') {
      throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID')
    }
    if (payload.typ !== kind) throw new JwtLoginError(kind === 'interim' ? 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' : 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID')
    // an actor only on an access token (the plugin signs no other kind with one), and only as `{ sub: <user id> }`
    if (payload.act !== undefined && (kind !== 'access' || !isActor(payload.act))) {
      throw new JwtLoginError(kind === 'interim' ? 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' : 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID')
    }
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
      allowedAud: audience(kind, tokens),
      allowedSub: SUBJECT,
      // milliseconds, as leewayMs: exp is good until exp + leeway (inclusive), nbf from nbf - leeway
      clockTolerance: tokens.leewayMs,
      clockTimestamp
    })
  }
}
