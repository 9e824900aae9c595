import { JwtLoginError } from '../core/errors.js'
import { HostPortError, loggedError, type LoggedError } from './logged-error.js'
import type { Mailer } from '../mail/types.js'
import type { Telemetry } from '../telemetry/telemetry.js'
import type { PasskeyOptions, PasskeyPort } from './passkeys.js'
import type { SecondFactorGate } from './second-factor.js'
import type { TwoFactorOptions, TwoFactorPort } from './two-factor.js'
import { isIdentityTaken, isUserExists, type PasswordPolicy, type PublicUser, type UserAdapter } from './users.js'

export { HostPortError, loggedError, type LoggedError }

/**
 * What a port's failure becomes. A `JwtLoginError` (a gate may refuse with
 * one) keeps its answer, without what the port attached to it; a taken
 * email or login that `createUser` reports (`isUserExists`) is a conflict
 * (409 / 38, which the flows act on), not a failure of the port; so is
 * a taken identity that `linkIdentity` reports (`isIdentityTaken`).
 */
function portFailure (port: string, method: string, thrown: unknown, args: readonly unknown[]): Error {
  if ((method === 'createUser' || method === 'setEmail') && isUserExists(thrown)) return new JwtLoginError('ERR_JWT_LOGIN_USER_EXISTS')
  if (method === 'linkIdentity' && isIdentityTaken(thrown)) return new JwtLoginError('ERR_JWT_LOGIN_IDENTITY_TAKEN')
  if (thrown instanceof JwtLoginError) return new JwtLoginError(thrown.code, { retryAfter: thrown.retryAfter })
  return new HostPortError(port, method, thrown, args)
}

type AnyMethod = (...args: any[]) => any

/** How a port's calls run: timed and traced with telemetry (see Telemetry.runner), else straight through. */
type Run = <T>(operation: string, work: () => Promise<T>) => Promise<T>

const straight: Run = (_operation, work) => work()

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
function guardMethod (port: string, method: string, target: Record<string, AnyMethod>, kind: MethodKind, run: Run): AnyMethod {
  if (kind === 'sync') {
    return (...args: unknown[]) => {
      try {
        return (target[method] as AnyMethod).call(target, ...args)
      } catch (error) {
        throw portFailure(port, method, error, args)
      }
    }
  }
  // the port's own promise, its failure mapped, without another async step (findById is on every authenticated request)
  return (...args: unknown[]) => {
    try {
      return run(method, () => Promise.resolve((target[method] as AnyMethod).call(target, ...args))).catch((error: unknown) => { throw portFailure(port, method, error, args) })
    } catch (error) {
      return Promise.reject(portFailure(port, method, error, args))
    }
  }
}

/** `target` seen through guards of `methods`; nothing else of it shows. */
function guardPort<T extends object> (port: string, target: T, methods: Record<string, MethodKind>, run: Run): T {
  const methodsOf = target as unknown as Record<string, AnyMethod>
  const guarded: Record<string, unknown> = {}
  for (const [method, kind] of Object.entries(methods)) {
    const guard = guardMethod(port, method, methodsOf, kind, run)
    if (kind === 'optional') Object.defineProperty(guarded, method, { enumerable: true, get: () => typeof methodsOf[method] === 'function' ? guard : undefined })
    else guarded[method] = guard
  }
  return guarded as T
}

/** A function port (the password policy, a second-factor gate) behind a guard. */
function guardFunction<F extends AnyMethod> (port: string, fn: F, run: Run): F {
  return guardMethod(port, port, { [port]: fn }, 'async', run) as F
}

/** A record, so that a method added to a port and not listed here fails the type check. */
const USER_METHODS: Record<keyof UserAdapter, MethodKind> = {
  findByEmail: 'async',
  findByLogin: 'async',
  findById: 'async',
  verifyPassword: 'async',
  rehashPassword: 'optional',
  getPasswordHash: 'optional',
  toPublicUser: 'sync',
  setPassword: 'optional',
  createUser: 'optional',
  deleteUser: 'optional',
  setEmailVerified: 'optional',
  setEmail: 'optional',
  passwordFingerprint: 'optional',
  hasPassword: 'optional',
  findByIdentity: 'optional',
  linkIdentity: 'optional',
  listIdentities: 'optional',
  unlinkIdentity: 'optional'
}

const TWO_FACTOR_METHODS: Record<keyof TwoFactorPort, MethodKind> = {
  methodOf: 'async',
  getTotpSecret: 'async',
  setTotpSecret: 'async',
  consumeBackupCode: 'async',
  replaceBackupCodes: 'async',
  setMethod: 'optional',
  countBackupCodes: 'optional'
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

function guardMailer (port: string, mailer: Mailer | undefined, run: Run): Mailer | undefined {
  return mailer === undefined ? undefined : guardPort(port, mailer, MAILER_METHODS, run)
}

/** The user adapter behind guards; `toPublicUser`'s answer also has its `ID` checked (`publicUserOf`). */
function guardUsers<U> (users: UserAdapter<U>, run: Run): UserAdapter<U> {
  const guarded = guardPort('users', users, USER_METHODS, run)
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
 * With `telemetry`, each call of a port is timed and traced as
 * `<port>.<method>` (`users.findByEmail`, `mailer.send`, `twoFactor.methodOf`).
 */
export function guardPorts (options: HostPorts, telemetry?: Telemetry): HostPorts {
  const { users, mailer, passwordPolicy, twoFactor, secondFactor, passkeys } = options
  const run = (port: string): Run => telemetry?.runner(port) ?? straight
  return {
    users: guardUsers(users, run('users')),
    mailer: guardMailer('mailer', mailer, run('mailer')),
    passwordPolicy: passwordPolicy === undefined ? undefined : guardFunction('passwordPolicy', passwordPolicy, run('passwordPolicy')),
    twoFactor: twoFactor === undefined
      ? undefined
      : { ...twoFactor, port: guardPort('twoFactor.port', twoFactor.port, TWO_FACTOR_METHODS, run('twoFactor')), mailer: guardMailer('twoFactor.mailer', twoFactor.mailer, run('twoFactor.mailer')) },
    secondFactor: secondFactor === undefined ? undefined : guardFunction('secondFactor', secondFactor, run('secondFactor')),
    passkeys: passkeys === undefined ? undefined : { port: guardPort('passkeys.port', passkeys.port, PASSKEY_METHODS, run('passkeys')) }
  }
}
