import { JwtLoginError } from '../core/errors.js'
import type { Mailer } from '../mail/types.js'
import type { PasskeyOptions, PasskeyPort } from './passkeys.js'
import type { SecondFactorGate } from './second-factor.js'
import type { TwoFactorOptions, TwoFactorPort } from './two-factor.js'
import { isUserExists, type PasswordPolicy, type PublicUser, type UserAdapter } from './users.js'

/** What stands in for a value of a call or a request in a log line. */
const REDACTED = '[redacted]'

/** What stands in for a message when the values to cut out of it are too many, or too deep, to look through. */
const WITHHELD = '[message withheld: too many values to cut out of it]'

/** How far into the values the strings are looked for: a user record, a mail message, a request body. */
const MAX_DEPTH = 8
const MAX_STRINGS = 2000

/** An error as a log line of the plugin carries it: never its stack, its `cause` or its other fields. */
export interface LoggedError {
  /** The error's class name (`typeof` for a thrown non-object). */
  type: string
  /** Its `code`, when a string or a number. */
  code?: string | number
  /** Its message, with every value it was told about cut out. */
  message: string
}

/**
 * Every string in `values` (and in their arrays and objects' own enumerable
 * properties, to `MAX_DEPTH`), or `null` when there are more than
 * `MAX_STRINGS` or they are deeper than that: then nothing may be logged.
 */
function stringsIn (values: readonly unknown[]): Set<string> | null {
  const found = new Set<string>()
  const seen = new WeakSet<object>()
  const visit = (value: unknown, depth: number): boolean => {
    if (typeof value === 'string') {
      if (value !== '') found.add(value)
      return found.size <= MAX_STRINGS
    }
    if (typeof value !== 'object' || value === null || seen.has(value)) return true
    if (depth >= MAX_DEPTH) return false
    seen.add(value)
    return Object.values(value).every(item => visit(item, depth + 1))
  }
  try {
    return values.every(value => visit(value, 0)) ? found : null
  } catch {
    // a getter that throws: the values cannot be read, so neither can the message be cleared
    return null
  }
}

/**
 * The ways an error may quote `value`: as it is, URL-encoded, escaped in
 * JSON, and each line of it (a mail's text quoted a line at a time).
 */
function formsOf (value: string, forms: Set<string>): void {
  forms.add(value).add(encodeURIComponent(value)).add(JSON.stringify(value).slice(1, -1))
  if (!value.includes('\n')) return
  for (const line of value.split('\n')) {
    const trimmed = line.trim()
    if (trimmed !== '') forms.add(trimmed)
  }
}

/**
 * `text` with every string found in `values` replaced by `[redacted]`, in
 * any letter case (an email address comes back lower-cased) and in the
 * forms of `formsOf`. Only called once something failed.
 */
function redactValues (text: string, values: readonly unknown[]): string {
  const strings = stringsIn(values)
  if (strings === null) return WITHHELD
  const forms = new Set<string>()
  for (const value of strings) formsOf(value, forms)
  if (forms.size === 0) return text
  // the longest first, so that a value containing another is cut out whole
  const pattern = [...forms].sort((a, b) => b.length - a.length).map(form => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')
  return text.replace(new RegExp(pattern, 'gi'), REDACTED)
}

function typeOf (thrown: unknown): string {
  if (thrown === null) return 'null'
  if (typeof thrown !== 'object') return typeof thrown
  const name: unknown = (thrown as { constructor?: { name?: unknown } }).constructor?.name
  return typeof name === 'string' && name !== '' ? name : 'Object'
}

function messageOf (thrown: unknown): string {
  if (typeof thrown === 'string') return thrown
  const message: unknown = (thrown as { message?: unknown } | null)?.message
  return typeof message === 'string' ? message : ''
}

function codeOf (thrown: unknown): string | number | undefined {
  const code: unknown = (thrown as { code?: unknown } | null)?.code
  return typeof code === 'string' || typeof code === 'number' ? code : undefined
}

/**
 * What a log line carries of an error: its class name, its code and its
 * message with every string of `values` cut out (the call's arguments, the
 * request's fields). Never the stack (its first line is the message as
 * thrown), the `cause` or any other field, which may hold the input. A
 * jwt-login error that wraps a dependency's failure (a store's, a port's)
 * is told by that failure. Without a prototype, so that pino's `err`
 * serializer keeps `type` as it is (it adds an empty `stack`).
 */
export function loggedError (thrown: unknown, values: readonly unknown[] = []): LoggedError {
  const error = thrown instanceof JwtLoginError && thrown.cause !== undefined ? thrown.cause : thrown
  const code = codeOf(error)
  const logged: LoggedError = Object.assign(Object.create(null) as LoggedError, { type: typeOf(error), message: redactValues(messageOf(error), values) })
  if (code !== undefined) logged.code = typeof code === 'string' ? redactValues(code, values) : code
  return logged
}

/**
 * What a host port (the user adapter, the two-factor port, a mailer, the
 * password policy, a second-factor gate) threw or rejected with, as the
 * plugin passes it on: which port and method failed, the original's class
 * name, its `code`, and its message with every value the call received cut
 * out. It keeps no reference to the original: no `cause`, no stack of it.
 */
export class HostPortError extends Error {
  /** The port: `users`, `twoFactor.port`, `passkeys.port`, `mailer`, `twoFactor.mailer`, `passwordPolicy` or `secondFactor`. */
  readonly port: string
  /** The method that failed (the port's name again for a function port). */
  readonly method: string
  /** The class name of what the port threw. */
  readonly originalType: string
  /** The `code` of what the port threw, when it was a string (redacted) or a number. */
  readonly code: string | number | undefined

  constructor (port: string, method: string, thrown: unknown, args: readonly unknown[]) {
    const logged = loggedError(thrown, args)
    const label = port === method ? port : `${port}.${method}`
    const code = logged.code === undefined ? '' : ` (${logged.code})`
    super(`${label} failed: ${logged.type}${code}${logged.message === '' ? '' : `: ${logged.message}`}`)
    this.name = 'HostPortError'
    this.port = port
    this.method = method
    this.originalType = logged.type
    this.code = logged.code
  }
}

/**
 * What a port's failure becomes. A `JwtLoginError` (a gate may refuse with
 * one) keeps its answer, without what the port attached to it; a taken
 * email or login that `createUser` reports (`isUserExists`) is a conflict
 * (409 / 38, which the flows act on), not a failure of the port.
 */
function portFailure (port: string, method: string, thrown: unknown, args: readonly unknown[]): Error {
  if (method === 'createUser' && isUserExists(thrown)) return new JwtLoginError('ERR_JWT_LOGIN_USER_EXISTS')
  if (thrown instanceof JwtLoginError) return new JwtLoginError(thrown.code, { retryAfter: thrown.retryAfter })
  return new HostPortError(port, method, thrown, args)
}

type AnyMethod = (...args: any[]) => any

/** What a port broke of its contract, beyond throwing: named in the log as the port's failure. */
class PortContractError extends Error {}

/** A user ID as `pg` answers a `bigint` column: decimal digits, no sign, no leading zero. */
const DECIMAL_ID = /^[1-9][0-9]*$/

/** Why `id` is no user ID, by its type and shape only: an ID a host mistook may be personal (an email, a UUID). */
function idProblem (id: unknown): string {
  if (typeof id === 'string') return DECIMAL_ID.test(id) ? 'got a string of digits above 2^53 - 1' : 'got a string that is not a positive decimal integer'
  if (typeof id !== 'number') return `got ${id === null ? 'null' : typeof id}`
  if (Number.isNaN(id)) return 'got NaN'
  if (!Number.isInteger(id)) return 'got a number that is not an integer'
  return id < 1 ? 'got a number below 1' : 'got a number above 2^53 - 1'
}

/**
 * The user's public form with its `ID` a positive safe integer, the one
 * type every token, answer and `request.jwtLogin.user` carries. A string of
 * digits (what `pg` answers for a `bigint` column) becomes its number, in a
 * copy; any other ID is the adapter's failure (503 / 201), never served as
 * it came: a UUID would sign tokens whose `sub` names no user.
 */
function publicUserOf (answer: PublicUser): PublicUser {
  const id: unknown = (answer as Partial<PublicUser> | null)?.ID
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 1) return answer
  const parsed = typeof id === 'string' && DECIMAL_ID.test(id) ? Number(id) : Number.NaN
  if (Number.isSafeInteger(parsed)) return { ...answer, ID: parsed }
  const problem = `toPublicUser returned an ID that is not a positive safe integer (${idProblem(id)}); ` +
    'return the ID as a number, parsing a bigint column (see docs/adapters.md#user-ids)'
  throw new HostPortError('users', 'toPublicUser', new PortContractError(problem), [])
}

/**
 * How each method of a port is called: `async` (Promise-only), `sync`
 * (`toPublicUser`), or `optional` (Promise-only, and present on the guard
 * only while the port has it: the plugin checks for it).
 */
type MethodKind = 'async' | 'sync' | 'optional'

/**
 * One guard per method, made once: it calls the method on the port as it is
 * at the time of the call (so `this` is the port), and looks at the
 * arguments only when the method failed.
 */
function guardMethod (port: string, method: string, target: Record<string, AnyMethod>, kind: MethodKind): AnyMethod {
  if (kind === 'sync') {
    return (...args: unknown[]) => {
      try {
        return (target[method] as AnyMethod).call(target, ...args)
      } catch (error) {
        throw portFailure(port, method, error, args)
      }
    }
  }
  return async (...args: unknown[]) => {
    try {
      return await (target[method] as AnyMethod).call(target, ...args)
    } catch (error) {
      throw portFailure(port, method, error, args)
    }
  }
}

/** `target` seen through guards of `methods`; nothing else of it shows. */
function guardPort<T extends object> (port: string, target: T, methods: Record<string, MethodKind>): T {
  const methodsOf = target as unknown as Record<string, AnyMethod>
  const guarded: Record<string, unknown> = {}
  for (const [method, kind] of Object.entries(methods)) {
    const guard = guardMethod(port, method, methodsOf, kind)
    if (kind === 'optional') Object.defineProperty(guarded, method, { enumerable: true, get: () => typeof methodsOf[method] === 'function' ? guard : undefined })
    else guarded[method] = guard
  }
  return guarded as T
}

/** A function port (the password policy, a second-factor gate) behind a guard. */
function guardFunction<F extends AnyMethod> (port: string, fn: F): F {
  return guardMethod(port, port, { [port]: fn }, 'async') as F
}

/** A record, so that a method added to a port and not listed here fails the type check. */
const USER_METHODS: Record<keyof UserAdapter, MethodKind> = {
  findByEmail: 'async',
  findByLogin: 'async',
  findById: 'async',
  verifyPassword: 'async',
  getPasswordHash: 'optional',
  toPublicUser: 'sync',
  setPassword: 'optional',
  createUser: 'optional',
  deleteUser: 'optional'
}

const TWO_FACTOR_METHODS: Record<keyof TwoFactorPort, MethodKind> = {
  methodOf: 'async',
  getTotpSecret: 'async',
  setTotpSecret: 'async',
  consumeBackupCode: 'async',
  replaceBackupCodes: 'async'
}

const PASSKEY_METHODS: Record<keyof PasskeyPort, MethodKind> = {
  listByUser: 'async',
  findById: 'async',
  create: 'async',
  recordUse: 'async',
  rename: 'async',
  delete: 'async'
}

const MAILER_METHODS: Record<keyof Mailer, MethodKind> = { send: 'async' }

function guardMailer (port: string, mailer: Mailer | undefined): Mailer | undefined {
  return mailer === undefined ? undefined : guardPort(port, mailer, MAILER_METHODS)
}

/** The user adapter behind guards; `toPublicUser`'s answer also has its `ID` checked (`publicUserOf`). */
function guardUsers<U> (users: UserAdapter<U>): UserAdapter<U> {
  const guarded = guardPort('users', users, USER_METHODS)
  const toPublicUser = guarded.toPublicUser
  guarded.toPublicUser = (user) => publicUserOf(toPublicUser(user))
  return guarded
}

/** The ports a host passes as plugin options. */
export interface HostPorts {
  /** The host's users. */
  users: UserAdapter<any>
  /** Sends mail (reset codes). Needed when `resetPassword.enabled` is on. */
  mailer?: Mailer
  /** The host's own rule for a new password, after the length settings (see `PasswordPolicy`). */
  passwordPolicy?: PasswordPolicy
  /** Two-factor sign-in: the host's two-factor port (and a mailer for email codes). */
  twoFactor?: TwoFactorOptions
  /** A second factor for every sign-in (password or provider); a two-factor module fills this seam. */
  secondFactor?: SecondFactorGate
  /** Passkeys (WebAuthn): the host's passkey port. */
  passkeys?: PasskeyOptions
}

/**
 * The host's ports, each behind guards made once at registration: whatever
 * a port throws reaches the flows (and so the log) as a `HostPortError`.
 */
export function guardPorts (options: HostPorts): HostPorts {
  const { users, mailer, passwordPolicy, twoFactor, secondFactor, passkeys } = options
  return {
    users: guardUsers(users),
    mailer: guardMailer('mailer', mailer),
    passwordPolicy: passwordPolicy === undefined ? undefined : guardFunction('passwordPolicy', passwordPolicy),
    twoFactor: twoFactor === undefined
      ? undefined
      : { ...twoFactor, port: guardPort('twoFactor.port', twoFactor.port, TWO_FACTOR_METHODS), mailer: guardMailer('twoFactor.mailer', twoFactor.mailer) },
    secondFactor: secondFactor === undefined ? undefined : guardFunction('secondFactor', secondFactor),
    passkeys: passkeys === undefined ? undefined : { port: guardPort('passkeys.port', passkeys.port, PASSKEY_METHODS) }
  }
}
