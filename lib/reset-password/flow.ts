import { setTimeout as sleep } from 'node:timers/promises'
import { clientKey } from '../core/client-key.js'
import { CodeHasher, type KeyedHashes } from '../services/code-hash.js'
import { randomCode, randomToken } from '../core/crypto.js'
import type { Call, JwtLoginContext } from '../context/context.js'
import { errorNumber, JwtLoginError } from '../core/errors.js'
import type { GateAudit } from '../http/gates.js'
import { countInWindow, subjectKey } from '../services/limits.js'
import { renderMail } from '../mail/templates.js'
import type { Mailer, MailMessage } from '../mail/types.js'
import { JwtLoginSettingsError, type ResolvedLimit, type Settings } from '../config/settings.js'
import { loggedError, type LoggedError } from '../adapters/guard.js'
import { claimOnce, isClaimed } from '../store/claim.js'
import type { PublicUser, UserAdapter } from '../adapters/users.js'

/**
 * The host's own rule for new passwords, on top of the length settings.
 * Resolve `true` to accept; anything else answers 400 / 204. Throwing means
 * the host is unavailable: 503, and the code stays usable.
 */
export type PasswordPolicy = (password: string, user: PublicUser) => boolean | Promise<boolean>

/** Password reset's own parts, built once at registration. */
export interface PasswordReset {
  readonly ctx: JwtLoginContext
  // registration refuses reset switched on without a mailer, so it is there whenever it is used
  readonly mailer: Mailer
  readonly policy: PasswordPolicy | null
  /** The codes' keyed hashes, under every signing key. */
  readonly hasher: CodeHasher
  /** Aborted on close: mail retries stop waiting. */
  readonly stop: AbortController
}

/** What the store holds per user: never the code, only its keyed hashes. */
interface CodeRecord extends KeyedHashes {
  /** Random per code: salts the hash and names the code's tries counter. */
  id: string
  /** Expiry in ms on the plugin's clock. */
  exp: number
}

const REQUEST_MESSAGE = 'If the email belongs to an account, a reset code has been sent to it.'
const COMPLETE_MESSAGE = 'User Password has been changed.'
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/
const MAX_EMAIL_LENGTH = 254
/** How far ahead the cutoff of a password change is set while the host changes the password. */
const PROVISIONAL_CUTOFF_MS = 60_000

const keys = {
  /** One code per user: a new one replaces (and so invalidates) the older one. */
  record: (userId: number | null) => `reset:${userId ?? 'none'}`,
  tries: (recordId: string) => `reset-tries:${recordId}`,
  decoyTries: 'reset-tries:decoy'
}

/** Refuses settings that switch reset on without what it needs. Called at registration and on every reload. */
export function checkResetSetup (settings: Settings, users: UserAdapter<any>, mailer: Mailer | undefined): void {
  if (!settings.resetPassword.enabled) return
  if (typeof users.setPassword !== 'function') {
    throw new JwtLoginSettingsError('resetPassword/enabled', 'the user adapter must implement setPassword')
  }
  if (mailer === undefined) throw new JwtLoginSettingsError('resetPassword/enabled', 'password reset needs the `mailer` option')
}

export function isEmail (value: string): boolean {
  return value.length <= MAX_EMAIL_LENGTH && EMAIL.test(value)
}

/** Codes are typed by people: surrounding spaces go, and case does not matter when the alphabet has one case. */
function normalizeCode (code: string, alphabet: string): string {
  const trimmed = code.trim()
  return alphabet === alphabet.toUpperCase() ? trimmed.toUpperCase() : trimmed
}

function parseRecord (raw: string | null): CodeRecord | null {
  return raw === null || isClaimed(raw) ? null : JSON.parse(raw) as CodeRecord
}

export function createPasswordReset (ctx: JwtLoginContext, mailer: Mailer | undefined, policy: PasswordPolicy | null): PasswordReset {
  // keyed hashes: a copy of the store alone does not let anyone search the code space offline
  return { ctx, mailer: mailer as Mailer, policy, hasher: new CodeHasher('reset code'), stop: new AbortController() }
}

/** Reports a refusal of a reset route's gate on the auth code. */
export function auditResetGate (step: 'request' | 'complete'): GateAudit {
  return (events, call, error, stage) => {
    if (stage === 'auth_code') events.emit('reset.failed', { step, userId: null, ip: call.ip, reason: 'auth_code', errorCode: error.errorCode })
  }
}

/** One counter a code request is counted on. */
interface RequestSubject {
  key: string
  limit: ResolvedLimit
}

/** An email as the request limit counts it: NFKC, lower case, trimmed, so its spellings count together. */
function normalizedEmail (email: string): string {
  return email.normalize('NFKC').toLowerCase().trim()
}

/** Counts the request on its subjects (one increment each, sent together); over any limit answers 429. */
async function countRequest (reset: PasswordReset, call: Call, subjects: RequestSubject[]): Promise<void> {
  const waits = (await Promise.all(subjects.map(async s => await countInWindow(reset.ctx.store, s.key, s.limit)))).filter(wait => wait !== null)
  if (waits.length === 0) return
  reset.ctx.events.emit('reset.failed', { step: 'request', userId: null, ip: call.ip, reason: 'rate_limited', errorCode: errorNumber('ERR_JWT_LOGIN_RATE_LIMITED') })
  throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(...waits) })
}

/**
 * Whether the account may get one more code: counted per user, so every
 * spelling the host matches to it counts together. Over the limit the
 * request still answers as any other (a 429 here would tell that the email
 * has an account): no code is written and no mail goes. An unknown email
 * counts a decoy, for the same store work.
 */
async function accountMaySend (reset: PasswordReset, call: Call, user: PublicUser | null): Promise<boolean> {
  const limit = call.settings.resetPassword.limits.perEmail
  const over = await countInWindow(reset.ctx.store, subjectKey('reset-requests:user', user === null ? 'none' : String(user.ID)), limit) !== null
  if (user === null || !over) return true
  reset.ctx.events.emit('reset.failed', { step: 'request', userId: user.ID, ip: call.ip, reason: 'rate_limited', errorCode: errorNumber('ERR_JWT_LOGIN_RATE_LIMITED') })
  return false
}

/**
 * `POST /user/reset_password`: stores a new code for a known email and mails
 * it after the answer; unknown emails get the same answer after the same work.
 * Order, the same store calls whether the email has an account or not: the
 * request counted per IP and per address (normalised), together (over either
 * limit, 429, before the host is asked); the user lookup; the request
 * counted per account (a decoy counter for an unknown email; over the limit,
 * silently no code); then one store round trip: the write of the code (it
 * replaces any older code), or a read. The mail goes after the answer. A
 * failure before the write changes nothing but the counters; the retry asks again.
 */
export async function requestPasswordReset (reset: PasswordReset, call: Call, email: string | undefined): Promise<{ message: string }> {
  const { ctx } = reset
  const settings = call.settings.resetPassword
  if (email === undefined || !isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID')
  await countRequest(reset, call, [
    { key: subjectKey('reset-requests:ip', clientKey(call.ip)), limit: settings.limits.perIp },
    { key: subjectKey('reset-requests:email', normalizedEmail(email)), limit: settings.limits.perEmail }
  ])

  const user = await ctx.users.findByEmail(email)
  const publicUser: PublicUser | null = user === null ? null : ctx.users.toPublicUser(user)
  const sends = await accountMaySend(reset, call, publicUser)
  // the same work for an unknown email: a code, its hash, the mail and one store round trip
  const code = randomCode(settings.code.length, settings.code.alphabet)
  const id = randomToken(16)
  const record: CodeRecord = { id, ...reset.hasher.hash(call.settings.tokens, `${id}:${code}`), exp: ctx.clock() + settings.code.lifetimeMs }
  const mail = renderMail(settings.mail.templates, {
    code,
    display_name: publicUser?.display_name ?? email,
    email: publicUser?.user_email ?? email,
    site_name: settings.mail.siteName,
    expires_in_minutes: String(Math.ceil(settings.code.lifetimeMs / 60_000))
  })
  if (publicUser === null || !sends) {
    await ctx.store.get(keys.record(publicUser?.ID ?? null))
  } else {
    const raw = JSON.stringify(record)
    await ctx.store.set(keys.record(publicUser.ID), raw, settings.code.lifetimeMs)
    // after the answer has gone: neither the mailer's work nor its latency shows in the response time
    const written = { userId: publicUser.ID, raw, exp: record.exp }
    setImmediate(() => { deliver(reset, call, written, code, { to: publicUser.user_email, ...mail }) })
  }
  ctx.events.emit('reset.requested', { userId: publicUser?.ID ?? null, ip: call.ip })
  return { message: REQUEST_MESSAGE }
}

/** A code record as the request wrote it. */
interface WrittenCode { userId: number, raw: string, exp: number }

/** Sends with bounded retries. Never rejects: on final failure the code is withdrawn, logged and reported. */
async function deliver (reset: PasswordReset, call: Call, written: WrittenCode, code: string, message: MailMessage): Promise<void> {
  const { userId } = written
  const { retries, retryDelayMs } = call.settings.resetPassword.mail
  for (let attempt = 1; ; attempt++) {
    try {
      await reset.mailer.send(message)
      reset.ctx.events.emit('reset.code_sent', { userId, attempts: attempt })
      return
    } catch (error) {
      if (attempt > retries || reset.stop.signal.aborted) {
        // the mailer's error may echo the message: its code and the recipient's address
        await withdraw(reset, written, attempt, loggedError(error, [code, message]))
        return
      }
    }
    await sleep(retryDelayMs, undefined, { signal: reset.stop.signal }).catch((aborted: unknown) => aborted)
  }
}

/**
 * Withdraws an undelivered code by claiming it (one compare-and-set from the
 * value this request wrote): a newer code for the same user, written in
 * between, is another value and keeps working.
 */
async function withdraw (reset: PasswordReset, written: WrittenCode, attempts: number, error: LoggedError): Promise<void> {
  const { ctx } = reset
  const { userId } = written
  try {
    await claimOnce(ctx.store, keys.record(userId), written.raw, () => Math.max(1, written.exp - ctx.clock()), () => {})
  } catch (storeError) {
    ctx.log.error({ userId, err: loggedError(storeError) }, 'jwt-login: an undelivered reset code could not be withdrawn; it expires with its lifetime')
  }
  ctx.log.error({ userId, attempts, err: error }, 'jwt-login: the reset mail could not be sent; its code was withdrawn')
  ctx.events.emit('reset.code_failed', { userId, attempts })
}

/** `PUT /user/reset_password` as the route read it. */
export interface ResetCompleteInput {
  email: string | undefined
  code: string | undefined
  newPassword: string | undefined
}

type CompleteFailure = (reason: 'code_invalid' | 'password_policy', userId: number | null) => JwtLoginError

/** The fields present and well formed, the new password within the length settings. */
function checkCompleteInput (call: Call, input: ResetCompleteInput, fail: CompleteFailure): { email: string, code: string, newPassword: string } {
  const { email, code, newPassword } = input
  if (email === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_EMAIL_MISSING')
  if (code === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_CODE_MISSING')
  if (newPassword === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_PASSWORD_MISSING')
  if (!isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED')
  const length = [...newPassword].length
  const { minLength, maxLength } = call.settings.resetPassword.password
  if (length < minLength || length > maxLength) throw fail('password_policy', null)
  return { email, code, newPassword }
}

/**
 * Every path does one read, one counted try and one comparison, so timing
 * tells nothing about the account. The try is counted before comparing:
 * concurrent guesses cannot compare more than `maxTries` times. Answers the
 * raw record (for the claim) and the record, or throws 62.
 */
async function matchCode (reset: PasswordReset, call: Call, userId: number | null, code: string, fail: CompleteFailure): Promise<{ raw: string, record: CodeRecord }> {
  const { store } = reset.ctx
  const settings = call.settings.resetPassword
  const now = reset.ctx.clock()
  const raw = await store.get(keys.record(userId))
  const record = parseRecord(raw)
  const live = record !== null && record.exp > now
  const tries = live
    ? await store.increment(keys.tries(record.id), record.exp - now)
    : await store.increment(keys.decoyTries, 1000)
  const presented = `${live ? record.id : 'decoy'}:${normalizeCode(code, settings.code.alphabet)}`
  const matches = reset.hasher.matches(call.settings.tokens, live ? record : null, presented)
  if (!live || !matches || tries.count > settings.code.maxTries) throw fail('code_invalid', userId)
  return { raw: raw as string, record }
}

/** `PUT /user/reset_password`: one answer (62) for every bad code; a good one is consumed once. */
export async function completePasswordReset (reset: PasswordReset, call: Call, input: ResetCompleteInput): Promise<{ message: string }> {
  const { ctx } = reset
  const fail: CompleteFailure = (reason, userId) => {
    const code = reason === 'code_invalid' ? 'ERR_JWT_LOGIN_RESET_CODE_INVALID' : 'ERR_JWT_LOGIN_PASSWORD_POLICY'
    ctx.events.emit('reset.failed', { step: 'complete', userId, ip: call.ip, reason, errorCode: errorNumber(code) })
    return new JwtLoginError(code)
  }
  const { email, code, newPassword } = checkCompleteInput(call, input, fail)
  const user = await ctx.users.findByEmail(email)
  const publicUser: PublicUser | null = user === null ? null : ctx.users.toPublicUser(user)
  const userId = publicUser?.ID ?? null
  const { raw, record } = await matchCode(reset, call, userId, code, fail)

  // checked before the code is spent, so a rejected password leaves it usable (it costs one try)
  if (reset.policy !== null && await reset.policy(newPassword, publicUser as PublicUser) !== true) {
    throw fail('password_policy', userId)
  }
  await changePassword(reset, call, { user, userId: userId as number, raw, record, newPassword }, fail)
  ctx.events.emit('reset.completed', { userId: userId as number, ip: call.ip })
  return { message: COMPLETE_MESSAGE }
}

interface Change { user: unknown, userId: number, raw: string, record: CodeRecord, newPassword: string }

/**
 * Order, so that no session older than the new password survives and a
 * failure leaves the password as it was and the code usable:
 * 1. claim the code: one compare-and-set replaces it with this request's
 *    mark, so of concurrent requests exactly one goes on;
 * 2. a provisional cutoff, a minute ahead, ends every session of the
 *    user, including any started while the password changes;
 * 3. the host sets the password (and the user cache forgets the user);
 * 4. this change's provisional cutoff is replaced by the moment the
 *    password changed (plus `sessions.clockSkew`), so the next sign-in
 *    counts. Cutoffs only move forward: a newer change's provisional
 *    cutoff, or a later cutoff, stays (compare-and-set on the user's one
 *    cutoff entry).
 * A failure in 1–3 gives the code back — only over this request's own
 * mark, so a code another request has claimed is never revived; from 2
 * on the answer says that sessions may have ended. After 3 the change
 * stands; a failure in 4 leaves the provisional cutoff, which refuses
 * sessions started in the next minute too (fails closed) and is logged.
 */
async function changePassword (reset: PasswordReset, call: Call, change: Change, fail: CompleteFailure): Promise<void> {
  const { ctx } = reset
  const { userId, record } = change
  const { won, giveBack } = await claimOnce(ctx.store, keys.record(userId), change.raw, () => Math.max(1, record.exp - ctx.clock()), (error) => {
    ctx.log.error({ userId, err: loggedError(error) }, 'jwt-login: a reset code could not be given back after a failure; the user needs a new one')
  })
  if (!won) throw fail('code_invalid', userId)
  const changeId = randomToken(12)
  try {
    await ctx.tokens.holdUserTokens(call.settings, userId, changeId, ctx.clock() + PROVISIONAL_CUTOFF_MS)
    await (ctx.users as Required<UserAdapter<any>>).setPassword(change.user, change.newPassword)
  } catch (error) {
    await Promise.all([giveBack(), ctx.tokens.releaseUserTokens(call.settings, userId, changeId).catch(() => {})])
    throw new JwtLoginError('ERR_JWT_LOGIN_RESET_INCOMPLETE', { cause: error })
  }
  ctx.forgetUser(userId)
  // a session's start is the start of its sign-in request, so any sign-in
  // that checked the old password started before this moment (plus the
  // clock skew the settings allow between instances)
  await ctx.tokens.releaseUserTokens(call.settings, userId, changeId, ctx.clock()).catch((error: unknown) => {
    ctx.log.warn({ userId, err: loggedError(error) }, 'jwt-login: the password changed, but its session cutoff stays a minute ahead; new sign-ins of this user are refused until then')
  })
}
