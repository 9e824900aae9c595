// The second step of a sign-in (`POST /auth/2fa`): the interim token and a code or a passkey for the final tokens, each attempt counted first.
import type { Call, FirstFactor } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { subjectKey, type Hold, type Reservable } from '../services/limits.js'
import { admitVerified } from '../sessions/authenticate.js'
import { fingerprintOf } from '../sessions/fingerprint.js'
import { refuseLockedIn } from '../sessions/lock.js'
import { PASSWORD, prepareSession, type NewSession } from '../sessions/sign-in.js'
import { throwFirstFailure } from '../core/settled.js'
import { trustDevice } from '../sessions/devices.js'
import { claimOnce, isClaimed } from '../store/claim.js'
import type { TokenClaims } from '../tokens/jwt.js'
import { sessionEnded, stateKeys } from '../tokens/revocation.js'
import { sessionIndexKey } from '../tokens/session-index.js'
import { sessionStart } from '../tokens/session-id.js'
import { accountAttempts, checkCode, codeStateKeys, type CheckedCode, type KnownCodeState } from './methods/check.js'
import type { TwoFactor } from './methods/service.js'
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { passkeysOn } from '../webauthn/ceremonies.js'
import { challengeKey, type ChallengeRecord } from './gate.js'

/**
 * A passkey's assertion checked against its challenge (issued for this
 * two-factor challenge) without spending it; spending records the use on
 * the credential, then consumes it. A refused assertion is a wrong answer
 * (`null`).
 */
async function checkPasskey (ctx: JwtLoginContext, call: Call, userId: number, challengeId: string, response: AuthenticationResponseJSON, first: FirstFactor | undefined): Promise<CheckedCode | null> {
  const passkeys = passkeysOn(ctx.passkeys, call.settings)
  // after a passkey without user verification, another passkey is the same kind of factor again (or the same key twice): a code is due
  if (first?.method === 'passkey') return null
  let verified
  try {
    verified = await passkeys.verifyUnspent(call.settings, response, 'second_factor', { userId, sessionId: challengeId })
  } catch (error) {
    if (error instanceof JwtLoginError && error.code === 'ERR_JWT_LOGIN_PASSKEY_REFUSED') return null
    throw error
  }
  // spent once the two-factor challenge is this request's: a copy of the same answer meets a claimed challenge (107), not a wrong answer
  return {
    method: 'passkey',
    right: true,
    // the use first: a port that fails spends nothing (the two-factor challenge is given back, the same answer works again)
    spend: async () => {
      await passkeys.port.recordUse(verified.passkey.id, verified.use)
      return await verified.spend()
    }
  }
}

/**
 * `POST /auth/2fa/passkey/options`: with the interim token of an open
 * challenge, the request options for the user's passkeys; their challenge
 * is good for this two-factor challenge only. A user without a passkey
 * gets 404 / 219 (the password was right: nothing is given away), and so
 * does a sign-in whose first factor was a passkey: a code is due then.
 */
export async function twoFactorPasskeyOptions (ctx: JwtLoginContext, call: Call, token: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = passkeysOn(ctx.passkeys, call.settings)
  const { claims, user } = await interimSignIn(ctx, call, token)
  const raw = await ctx.store.get(challengeKey(user.ID, claims.sid))
  if (raw === null || isClaimed(raw)) throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
  // a passkey signed this sign-in in already (without user verification): a code is due, not a passkey again
  if ((JSON.parse(raw) as ChallengeRecord).o?.method === 'passkey') throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_NOT_FOUND')
  const held = await passkeys.port.listByUser(user.ID)
  if (held.length === 0) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_NOT_FOUND')
  return await passkeys.authenticationOptions(call.settings, 'second_factor', held, { userId: user.ID, sessionId: claims.sid })
}

/** `POST /auth/2fa` as the route read it: the interim token (the gate read it), and the code or a passkey's assertion. */
export interface TwoFactorInput {
  token: string
  code: string | undefined
  /** A passkey's assertion, from `/auth/2fa/passkey/options`, instead of a code. */
  passkey?: AuthenticationResponseJSON
  /** The client asks to trust its device (`twoFactor.rememberDevice`). */
  rememberDevice?: boolean
}

/**
 * `POST /auth/2fa`: the interim token and a code for the final token. Every
 * attempt is counted on the challenge before the code is looked at, so even
 * concurrent guesses never exceed the limit; failures also count per account.
 *
 * Order of store and host calls, so that a failure at any step leaves the
 * challenge and the code usable, or the sign-in complete:
 * 1. one round trip: the attempt is counted on the account (so a burst
 *    over many challenges is capped too) and on the challenge, and read
 *    along are the interim token's revocation (and with its user's cutoff,
 *    the user's lock: 403 / 251 before anything else), the challenge, what checking
 *    a code reads and the user's session index; the user is looked up
 *    meanwhile. An attempt not evaluated (the user locked, the token revoked, the challenge
 *    closed, a dependency failed) is given back;
 * 2. the code is checked without spending it (TOTP step, email code hash);
 * 3. one round trip: the new session is written (its refresh family;
 *    signing needs no store) and joins its user's index (ending no other
 *    session), and the challenge is claimed: one compare-and-set replaces
 *    it with this request's mark, so of concurrent right answers exactly
 *    one goes on (a backup code is claimed in the store here too);
 * 4. the factor is spent (TOTP step claim; a backup code: spent by the host
 *    under the challenge's id, so a host that committed and then threw
 *    answers `true` to this challenge's retry); a code already found right
 *    settles its attempt in the same round trip;
 * 5. the user's oldest sessions beyond `sessions.maxPerUser` end (best
 *    effort: a failure is logged; the next sign-in trims again).
 * A failure in 3–4 gives the challenge back — only over this request's own
 * mark, so a challenge another request has claimed is never revived — and
 * ends the session and takes it out of the index; nothing that can fail the
 * answer comes after 4, and a sign-in that fails ends no other session.
 */
export async function completeTwoFactor (ctx: JwtLoginContext, call: Call, input: TwoFactorInput): Promise<{ jwt: string, refresh_token?: string, device_token?: string }> {
  const { ip } = call
  const { twoFactor } = ctx
  // the route's gate answers 105 without the module; a direct caller gets the same
  if (twoFactor === null) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE')
  if (input.code === undefined && input.passkey === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING')
  if (input.code !== undefined && input.passkey !== undefined) throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
  const code: Answer = input.passkey === undefined ? { code: input.code as string } : { passkey: input.passkey }
  const claims = verifyInterim(ctx, call, input.token)
  const userId = Number(claims.sub)
  const settings = call.settings.twoFactor
  const account = accountAttempts(userId, settings)
  // counted like the account's attempt: a failed check stays counted, one that did not run is given back
  const onChallenge: Reservable = {
    key: subjectKey('2fa:challenge', claims.sid),
    limit: { max: settings.attemptsPerChallenge, windowMs: settings.interimLifetimeMs },
    onSuccess: 'release'
  }
  const key = challengeKey(userId, claims.sid)
  const reads = [stateKeys.session(claims.sid), stateKeys.userCutoff(claims.sub), key, ...codeStateKeys(userId, claims.sid), sessionIndexKey(userId)]
  const [reserved, found] = await Promise.allSettled([ctx.limiter.reserve([account, onChallenge], reads), ctx.users.findById(userId)])
  if (reserved.status === 'rejected') throw reserved.reason
  const reservation = reserved.value
  const holds = reservation.ok ? reservation.holds : []
  let settled = false
  const settle = async (outcome: 'failed' | 'succeeded'): Promise<void> => {
    if (settled) return
    settled = true
    if (outcome === 'failed') {
      await ctx.limiter.failed(holds)
      if ((holds[0] as Hold).counted >= settings.perAccount.max) ctx.events.emit('two_factor.account_locked', { userId, ip })
    } else {
      await ctx.limiter.succeeded(holds)
    }
  }
  try {
    const [session, cutoff, raw, totpLast, emailCode, index] = reservation.read
    // the user locked since the password step (`lockUser`, which ended the interim token's session too): 403 / 251, the code unread
    refuseLockedIn(ctx, cutoff)
    // the interim token's own checks first, as for any token: revoked (55), its user gone (24)
    if (sessionEnded(claims.sid, session ?? null, cutoff ?? null)) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_REVOKED')
    if (found.status === 'rejected') throw found.reason
    if (found.value === null) throw new JwtLoginError('ERR_JWT_LOGIN_TOKEN_USER_GONE')
    if (!reservation.ok) {
      if (reservation.refusedBy.includes(account.key)) throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_LOCKED', { retryAfter: reservation.retryAfter })
      throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
    }
    if (raw === null || raw === undefined || isClaimed(raw)) throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
    const user = ctx.users.toPublicUser(found.value)
    const fingerprint = await fingerprintOf(ctx, found.value)
    return await secondStep(ctx, twoFactor, call, { claims, user, fingerprint, code, raw, holds, remember: input.rememberDevice === true, known: { totpLast, emailCode }, index: index ?? null }, settle)
  } catch (error) {
    // not evaluated (the token or the challenge refused, or a dependency failed): the attempt is given back, on the challenge too
    if (!settled) await ctx.limiter.release(holds)
    throw error
  }
}

/** The interim token's signature and claims: any failure is 401 / 106. */
function verifyInterim (ctx: JwtLoginContext, call: Call, token: string): TokenClaims {
  try {
    return ctx.tokens.verify(call.settings, token, 'interim').payload
  } catch (error) {
    throw new JwtLoginError('ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', { cause: error })
  }
}

/** The interim token's claims and user: any failure to verify it is 401 / 106; revoked 55; its user gone 24. */
async function interimSignIn (ctx: JwtLoginContext, call: Call, token: string): Promise<{ claims: TokenClaims, user: PublicUser }> {
  let verified
  try {
    verified = ctx.tokens.verify(call.settings, token, 'interim')
  } catch (error) {
    throw new JwtLoginError('ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', { cause: error })
  }
  const { publicUser } = await admitVerified(ctx, verified)
  return { claims: verified.payload, user: publicUser }
}

/** What answers a challenge: a code, or a passkey's assertion. */
type Answer = { code: string } | { passkey: AuthenticationResponseJSON }

interface SecondStep {
  claims: TokenClaims
  user: PublicUser
  /** The user's password fingerprint to record in the session (`fingerprintOf`). */
  fingerprint: string | undefined
  code: Answer
  /** The challenge as read (open). */
  raw: string
  /** The attempt's holds (on the account, on the challenge), settled by `settle`. */
  holds: Hold[]
  remember: boolean
  /** What checking a code reads, read already. */
  known: KnownCodeState
  /** The user's session index, read already. */
  index: string | null
}

async function secondStep (
  ctx: JwtLoginContext,
  twoFactor: TwoFactor,
  call: Call,
  { claims, user, fingerprint, code, raw, holds, remember, known, index }: SecondStep,
  settle: (outcome: 'failed' | 'succeeded') => Promise<void>
): Promise<{ jwt: string, refresh_token?: string, device_token?: string }> {
  const userId = Number(claims.sub)
  const key = challengeKey(userId, claims.sid)
  const attempt = (holds[1] as Hold).counted
  const rejected = async (): Promise<never> => await rejectCode(ctx, call, { userId, key, attempt }, settle)

  const challenge = JSON.parse(raw) as ChallengeRecord
  ctx.telemetry.secondFactorTried('code' in code ? challenge.method : 'passkey')
  const checked = 'code' in code
    ? await checkCode(twoFactor, call.settings.tokens, userId, claims.sid, challenge.method, code.code, known)
    : await checkPasskey(ctx, call, userId, claims.sid, code.passkey, challenge.o)
  if (checked === null) return await rejected()

  // the session starts when its sign-in did (the password step), so a password
  // change between the two steps ends it too; it joins its user's index while
  // the challenge is claimed, before anything is spent, so a session that
  // validates is always listed
  const session = prepareSession(ctx, call, user, sessionStart(claims.sid), { ...challenge.o ?? PASSWORD, secondFactor: checked.method }, fingerprint)
  const giveBack = await startAndClaim(ctx, { key, raw, claims, session, checked, index })
  if (giveBack === null) return await rejected()
  let spent: boolean
  try {
    // a code found right settles with its spend; a backup code is right only once the host spent it
    const [spending] = await Promise.allSettled([checked.spend(), checked.right ? settle('succeeded') : null])
    if (spending.status === 'rejected') throw spending.reason
    spent = spending.value
  } catch (error) {
    await giveBack()
    throw error
  }
  if (!spent) {
    await giveBack()
    return await rejected()
  }

  await settle('succeeded')
  // after the spend nothing may fail: settling and trusting the device log their own failures
  await session.settle()
  ctx.events.emit('two_factor.code_accepted', { userId, method: checked.method, ip: call.ip })
  const deviceToken = remember && call.settings.twoFactor.rememberDevice.enabled ? await trustDevice(ctx, call, userId, sessionStart(claims.sid)) : undefined
  return deviceToken === undefined ? session.tokens : { ...session.tokens, device_token: deviceToken }
}

/** A wrong code: counted as a failure; the last attempt a challenge allows closes it (107), any other is 109. */
async function rejectCode (
  ctx: JwtLoginContext,
  call: Call,
  { userId, key, attempt }: { userId: number, key: string, attempt: number },
  settle: (outcome: 'failed') => Promise<void>
): Promise<never> {
  ctx.events.emit('two_factor.code_rejected', { userId, ip: call.ip, attempt })
  await settle('failed')
  if (attempt >= call.settings.twoFactor.attemptsPerChallenge) {
    await ctx.store.delete(key)
    ctx.events.emit('two_factor.challenge_closed', { userId, ip: call.ip })
    throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
  }
  throw new JwtLoginError('ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG')
}

/**
 * In one round trip: the prepared session starts (its refresh family, its
 * place in the index, from `index` as read already), the challenge is claimed (one compare-and-set) and,
 * for a backup code, the code is claimed in the store. Answers how to give
 * all of it back; a challenge another request won is closed (107), and a
 * backup code another challenge holds is a wrong answer (`null`), with the
 * rest given back. A failure gives back what was done, then throws.
 */
async function startAndClaim (
  ctx: JwtLoginContext,
  { key, raw, claims, session, checked, index }: { key: string, raw: string, claims: TokenClaims, session: NewSession, checked: CheckedCode, index: string | null }
): Promise<(() => Promise<void>) | null> {
  // a challenge that cannot be given back ends with its interim token: said in the log, as for reset codes
  const claiming = claimOnce(ctx.store, key, raw, () => Math.max(1, claims.exp * 1000 - ctx.clock()), (error) => {
    ctx.log.warn({ err: loggedError(error), userId: Number(claims.sub) }, 'jwt-login: a two-factor challenge could not be given back; it ends with its interim token')
  })
  const [started, claimed, codeClaimed] = await Promise.allSettled([session.start(index), claiming, checked.claim?.() ?? true])
  const claim = claimed.status === 'fulfilled' && claimed.value.won ? claimed.value : null
  const giveBack = async (): Promise<void> => { await Promise.all([claim?.giveBack(), session.discard()]) }
  if (started.status === 'rejected' || claimed.status === 'rejected' || codeClaimed.status === 'rejected') {
    await giveBack()
    throwFirstFailure([started, claimed, codeClaimed])
  }
  if (claim === null) {
    await giveBack()
    throw new JwtLoginError('ERR_JWT_LOGIN_CHALLENGE_CLOSED')
  }
  if ((codeClaimed as PromiseFulfilledResult<boolean>).value) return giveBack
  await giveBack()
  return null
}
