import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { checkAuthCode } from './auth-codes.js'
import { clientKey } from './client-key.js'
import type { JwtLoginContext } from './context.js'
import { JwtLoginError } from './errors.js'
import { subjectKey } from './limits.js'
import { renderMail } from './mail/templates.js'
import type { Mailer, MailMessage } from './mail/types.js'
import { stringField, type Fields } from './params.js'
import { JwtLoginSettingsError, type ResolvedKey, type Settings } from './settings.js'
import { claimOnce, isClaimed } from './store/claim.js'
import type { PublicUser, UserAdapter } from './users.js'

/**
 * The host's own rule for new passwords, on top of the length settings.
 * Resolve `true` to accept; anything else answers 400 / 204. Throwing means
 * the host is unavailable: 503, and the code stays usable.
 */
export type PasswordPolicy = (password: string, user: PublicUser) => boolean | Promise<boolean>

export interface PasswordResetOptions {
  mailer: Mailer | null
  passwordPolicy: PasswordPolicy | null
  log: FastifyBaseLogger
}

/** What the store holds per user: never the code, only its keyed hash. */
interface CodeRecord {
  /** Random per code: salts the hash and names the code's tries counter. */
  id: string
  hash: string
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

/** A code of `length` characters drawn uniformly (CSPRNG, no modulo bias) from `alphabet`. */
export function generateCode (length: number, alphabet: string): string {
  const characters = [...alphabet]
  let code = ''
  for (let i = 0; i < length; i++) code += characters[randomInt(characters.length)]
  return code
}

/** Codes are typed by people: surrounding spaces go, and case does not matter when the alphabet has one case. */
function normalizeCode (code: string, alphabet: string): string {
  const trimmed = code.trim()
  return alphabet === alphabet.toUpperCase() ? trimmed.toUpperCase() : trimmed
}

function parseRecord (raw: string | null): CodeRecord | null {
  return raw === null || isClaimed(raw) ? null : JSON.parse(raw) as CodeRecord
}

function describeError (error: unknown, code: string): { message: string, code?: unknown } {
  const { message, code: errorCode } = error instanceof Error ? error as NodeJS.ErrnoException : { message: String(error), code: undefined }
  // a mailer's error text could echo the message; the code never reaches a log
  return { message: message.split(code).join('[redacted]'), code: errorCode }
}

/**
 * `POST` and `PUT /user/reset_password`. The code is emailed off the
 * response path; unknown emails get the same answer after the same work.
 */
export class PasswordReset {
  readonly #ctx: JwtLoginContext
  // registration refuses reset switched on without a mailer, so it is there whenever it is used
  readonly #mailer: Mailer
  readonly #policy: PasswordPolicy | null
  readonly #log: FastifyBaseLogger
  readonly #hashKey: Buffer
  readonly #decoyHash = randomBytes(32)
  readonly #stop = new AbortController()

  constructor (ctx: JwtLoginContext, options: PasswordResetOptions) {
    this.#ctx = ctx
    this.#mailer = options.mailer as Mailer
    this.#policy = options.passwordPolicy
    this.#log = options.log
    // a keyed hash: a copy of the store alone does not let anyone search the code space offline
    const signingKey = ctx.settings.current.tokens.keys[0] as ResolvedKey
    this.#hashKey = createHash('sha256')
      .update('jwt-login/reset-code\u0000')
      .update(signingKey.secret ?? signingKey.privateKey as string)
      .digest()
  }

  #hash (recordId: string, code: string): Buffer {
    return createHmac('sha256', this.#hashKey).update(`${recordId}:${code}`).digest()
  }

  #gate (body: Fields, query: Fields, ip: string, step: 'request' | 'complete'): Settings['resetPassword'] {
    const settings = this.#ctx.settings.current
    const reset = settings.resetPassword
    if (!reset.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_DISABLED')
    if (reset.requireAuthCode) {
      const name = settings.authCodes.parameter
      try {
        checkAuthCode(stringField(body, name) ?? stringField(query, name), settings.authCodes.codes, this.#ctx.clock())
      } catch (error) {
        this.#ctx.events.emit('reset.failed', { step, userId: null, ip, reason: 'auth_code', errorCode: (error as JwtLoginError).errorCode })
        throw error
      }
    }
    return reset
  }

  /** Counts the request per email and per IP (known email or not); over either limit answers 429. */
  async #countRequest (email: string, ip: string, reset: Settings['resetPassword']): Promise<void> {
    const subjects = [
      { key: subjectKey('reset-requests:email', email.toLowerCase()), limit: reset.limits.perEmail },
      { key: subjectKey('reset-requests:ip', clientKey(ip)), limit: reset.limits.perIp }
    ]
    const counts = await Promise.all(subjects.map(async s => await this.#ctx.store.increment(s.key, s.limit.windowMs)))
    let waitMs = 0
    counts.forEach((counted, index) => {
      if (counted.count > (subjects[index] as typeof subjects[number]).limit.max) waitMs = Math.max(waitMs, counted.ttlMs)
    })
    if (waitMs > 0) {
      this.#ctx.events.emit('reset.failed', { step: 'request', userId: null, ip, reason: 'rate_limited', errorCode: 200 })
      throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) })
    }
  }

  /**
   * `POST /user/reset_password`: stores a new code for a known email and mails it in the background.
   * Order: the request counters, the user lookup, then one write of the code
   * (it replaces any older code); the mail goes after the answer. A failure
   * before the write changes nothing but the counters; the retry asks again.
   */
  async request (body: Fields, query: Fields, ip: string): Promise<{ message: string }> {
    const reset = this.#gate(body, query, ip, 'request')
    const email = stringField(body, 'email')
    if (email === undefined || !isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID')
    await this.#countRequest(email, ip, reset)

    const user = await this.#ctx.users.findByEmail(email)
    const publicUser: PublicUser | null = user === null ? null : this.#ctx.users.toPublicUser(user)
    // the same work for an unknown email: a code, its hash, the mail and one store round trip
    const code = generateCode(reset.code.length, reset.code.alphabet)
    const record: CodeRecord = { id: randomBytes(16).toString('base64url'), hash: '', exp: this.#ctx.clock() + reset.code.lifetimeMs }
    record.hash = this.#hash(record.id, code).toString('base64url')
    const mail = renderMail(reset.mail.templates, {
      code,
      display_name: publicUser?.display_name ?? email,
      email: publicUser?.user_email ?? email,
      site_name: reset.mail.siteName,
      expires_in_minutes: String(Math.ceil(reset.code.lifetimeMs / 60_000))
    })
    if (publicUser === null) {
      await this.#ctx.store.get(keys.record(null))
    } else {
      await this.#ctx.store.set(keys.record(publicUser.ID), JSON.stringify(record), reset.code.lifetimeMs)
      // after the answer has gone: neither the mailer's work nor its latency shows in the response time
      const userId = publicUser.ID
      setImmediate(() => { this.#deliver(userId, record, code, { to: publicUser.user_email, ...mail }) })
    }
    this.#ctx.events.emit('reset.requested', { userId: publicUser?.ID ?? null, ip })
    return { message: REQUEST_MESSAGE }
  }

  /** Sends with bounded retries. Never rejects: on final failure the code is withdrawn, logged and reported. */
  async #deliver (userId: number, record: CodeRecord, code: string, message: MailMessage): Promise<void> {
    const { retries, retryDelayMs } = this.#ctx.settings.current.resetPassword.mail
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#mailer.send(message)
        this.#ctx.events.emit('reset.code_sent', { userId, attempts: attempt })
        return
      } catch (error) {
        if (attempt > retries || this.#stop.signal.aborted) {
          await this.#withdraw(userId, record, attempt, describeError(error, code))
          return
        }
      }
      await sleep(retryDelayMs, undefined, { signal: this.#stop.signal }).catch((aborted: unknown) => aborted)
    }
  }

  async #withdraw (userId: number, record: CodeRecord, attempts: number, error: { message: string, code?: unknown }): Promise<void> {
    try {
      // only this code: a newer request for the same user keeps its own
      const stored = parseRecord(await this.#ctx.store.get(keys.record(userId)))
      if (stored?.id === record.id) await this.#ctx.store.delete(keys.record(userId))
    } catch (storeError) {
      this.#log.error({ userId, err: storeError }, 'jwt-login: an undelivered reset code could not be withdrawn; it expires with its lifetime')
    }
    this.#log.error({ userId, attempts, err: error }, 'jwt-login: the reset mail could not be sent; its code was withdrawn')
    this.#ctx.events.emit('reset.code_failed', { userId, attempts })
  }

  /** `PUT /user/reset_password`: one answer (62) for every bad code; a good one is consumed once. */
  async complete (body: Fields, query: Fields, ip: string): Promise<{ message: string }> {
    const reset = this.#gate(body, query, ip, 'complete')
    const email = stringField(body, 'email')
    if (email === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_EMAIL_MISSING')
    const code = stringField(body, 'code')
    if (code === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_CODE_MISSING')
    const newPassword = stringField(body, 'new_password')
    if (newPassword === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_PASSWORD_MISSING')
    if (!isEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED')
    const length = [...newPassword].length
    if (length < reset.password.minLength || length > reset.password.maxLength) {
      this.#ctx.events.emit('reset.failed', { step: 'complete', userId: null, ip, reason: 'password_policy', errorCode: 204 })
      throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_POLICY')
    }

    const user = await this.#ctx.users.findByEmail(email)
    const publicUser: PublicUser | null = user === null ? null : this.#ctx.users.toPublicUser(user)
    const userId = publicUser?.ID ?? null
    const failed = (): JwtLoginError => {
      this.#ctx.events.emit('reset.failed', { step: 'complete', userId, ip, reason: 'code_invalid', errorCode: 62 })
      return new JwtLoginError('ERR_JWT_LOGIN_RESET_CODE_INVALID')
    }

    // Every path does one read, one counted try and one comparison, so timing
    // tells nothing about the account. The try is counted before comparing:
    // concurrent guesses cannot compare more than `maxTries` times.
    const now = this.#ctx.clock()
    const raw = await this.#ctx.store.get(keys.record(userId))
    const record = parseRecord(raw)
    const live = record !== null && record.exp > now
    const tries = live
      ? await this.#ctx.store.increment(keys.tries(record.id), record.exp - now)
      : await this.#ctx.store.increment(keys.decoyTries, 1000)
    const presented = this.#hash(live ? record.id : 'decoy', normalizeCode(code, reset.code.alphabet))
    const matches = timingSafeEqual(presented, live ? Buffer.from(record.hash, 'base64url') : this.#decoyHash)
    if (!live || !matches || tries.count > reset.code.maxTries) throw failed()

    // checked before the code is spent, so a rejected password leaves it usable (it costs one try)
    if (this.#policy !== null && await this.#policy(newPassword, publicUser as PublicUser) !== true) {
      this.#ctx.events.emit('reset.failed', { step: 'complete', userId, ip, reason: 'password_policy', errorCode: 204 })
      throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_POLICY')
    }

    // Order, so that no session older than the new password survives and a
    // failure leaves the password as it was and the code usable:
    // 1. claim the code: one compare-and-set replaces it with this request's
    //    mark, so of concurrent requests exactly one goes on;
    // 2. a provisional cutoff, a minute ahead, ends every session of the
    //    user, including any started while the password changes;
    // 3. the host sets the password;
    // 4. the cutoff moves to the moment the password changed, so the next
    //    sign-in counts.
    // A failure in 1–3 gives the code back — only over this request's own
    // mark, so a code another request has claimed is never revived; from 2
    // on the answer says that sessions may have ended. After 3 the change
    // stands; a failure in 4 leaves the provisional cutoff, which refuses
    // sessions started in the next minute too (fails closed) and is logged.
    const { won, giveBack } = await claimOnce(this.#ctx.store, keys.record(userId), raw as string, () => Math.max(1, record.exp - this.#ctx.clock()), (error) => {
      this.#log.error({ userId, err: error }, 'jwt-login: a reset code could not be given back after a failure; the user needs a new one')
    })
    if (!won) throw failed()
    const id = userId as number
    try {
      await this.#ctx.tokens.revokeUserTokens(this.#ctx.settings.current, id, this.#ctx.clock() + PROVISIONAL_CUTOFF_MS)
      await (this.#ctx.users as Required<UserAdapter<any>>).setPassword(user, newPassword)
    } catch (error) {
      await Promise.all([giveBack(), this.#ctx.tokens.revokeUserTokens(this.#ctx.settings.current, id).catch(() => {})])
      throw new JwtLoginError('ERR_JWT_LOGIN_RESET_INCOMPLETE', { cause: error })
    }
    // a session's start is the start of its sign-in request, so any sign-in
    // that checked the old password started before this moment
    await this.#ctx.tokens.revokeUserTokens(this.#ctx.settings.current, id, this.#ctx.clock()).catch((error: unknown) => {
      this.#log.warn({ userId, err: error }, 'jwt-login: the password changed, but its session cutoff stays a minute ahead; new sign-ins of this user are refused until then')
    })
    this.#ctx.events.emit('reset.completed', { userId: userId as number, ip })
    return { message: COMPLETE_MESSAGE }
  }

  /** Stops waiting between retries (on close); a send in flight still settles. */
  close (): void {
    this.#stop.abort()
  }
}
