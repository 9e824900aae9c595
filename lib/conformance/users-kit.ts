// What the rules of the user adapter's suite share: the fixture, fresh names per rule, the user's ID, and the checks that keep one broken rule to one failed test.
import { AssertionError } from 'node:assert'
import { randomBytes } from 'node:crypto'
import { inspect, types } from 'node:util'
import { isIdentityTaken, isUserExists, type NewUser, type UserAdapter } from '../adapters/users.js'
import type { Rule } from './runner.js'

/** A user to seed, as the suite asks the host for one. */
export interface SeedUser {
  login: string
  email: string
  password: string
}

/** What `create` resolves: the adapter, and how the host makes a user without it. */
export interface UserAdapterFixture<U = unknown> {
  adapter: UserAdapter<U>
  /**
   * A new user with this login, email and password, made by the host's own
   * means (its sign-up, an INSERT), not by `createUser`: the host's record.
   * The suite gives names no other test uses, so one database may serve
   * every test.
   */
  addUser: (user: SeedUser) => Promise<U>
}

/** The settings the rules read. */
export interface UserSettings {
  /** How many concurrent calls the concurrency rules make. */
  parallelism: number
  /** The `role` of the users the suite creates through `createUser`. */
  role: string
}

export type UserRule = Rule<UserAdapterFixture, UserSettings>

/** The optional methods of the port, by name. */
type Optional = 'getPasswordHash' | 'rehashPassword' | 'setPassword' | 'createUser' | 'deleteUser' | 'setEmailVerified' | 'setEmail' |
'passwordFingerprint' | 'hasPassword' | 'findByIdentity' | 'linkIdentity' | 'listIdentities' | 'unlinkIdentity'

/** A seeded user, with what the suite asked for. */
export interface Seeded extends SeedUser {
  user: unknown
}

/** One rule's run: the adapter, its settings, and names of its own. */
export interface Kit {
  adapter: UserAdapter<unknown>
  settings: UserSettings
  /** A login and an email (lower case) no other run and no other call of this run has. */
  names: () => { login: string, email: string }
  /** A user the host adds, with a password of its own. */
  seed: () => Promise<Seeded>
  /** A `NewUser` with fresh names, no password, `emailVerified: false`, and `changes` over it. */
  newUser: (changes?: Partial<NewUser>) => NewUser
  /** A provider name of this run: `base` and a random part (within ^[A-Za-z0-9_-]{1,64}$). */
  provider: (base: string) => string
  /** An optional method of the adapter, bound to it. */
  method: <K extends Optional>(name: K) => NonNullable<UserAdapter<unknown>[K]>
}

/** The rule's view of the fixture. */
export function kitOf ({ adapter, addUser }: UserAdapterFixture, settings: UserSettings): Kit {
  const run = randomBytes(5).toString('hex')
  let count = 0
  const names = (): { login: string, email: string } => {
    const login = `conform-${run}-${++count}`
    return { login, email: `${login}@example.com` }
  }
  return {
    adapter,
    settings,
    names,
    seed: async () => {
      // a quote, a backslash and letters beyond ASCII: hosts that escape or slash a password must still match it
      const seeded = { ...names(), password: `it's "${randomBytes(6).toString('base64url')}" \\ Ünï 🔑` }
      return { ...seeded, user: await addUser(seeded) }
    },
    newUser: (changes = {}) => ({ ...names(), displayName: 'Conformance User', role: settings.role, emailVerified: false, ...changes }),
    provider: (base) => `${base}-${run}`,
    method: (name) => {
      const found = adapter[name]
      if (typeof found !== 'function') throw new AssertionError({ message: `the adapter has no ${name}, though \`supports\` says it provides it` })
      return found.bind(adapter) as never
    }
  }
}

/** The user's ID as a number, as the plugin reads `PublicUser.ID` (a string of digits is its number). */
export function idOf (adapter: UserAdapter<unknown>, user: unknown): number {
  return Number(adapter.toPublicUser(user).ID)
}

/** Whether both records are one user, by their public IDs. */
export function sameUser (adapter: UserAdapter<unknown>, found: unknown, user: unknown): boolean {
  return found !== null && found !== undefined && idOf(adapter, found) === idOf(adapter, user)
}

/** Fails unless `found` is `user`: `what` says which lookup. */
export function assertSameUser (adapter: UserAdapter<unknown>, found: unknown, user: unknown, what: string): void {
  if (sameUser(adapter, found, user)) return
  const seen = found === null || found === undefined ? String(found) : `user ${idOf(adapter, found)}`
  throw new AssertionError({ message: `${what}: expected user ${idOf(adapter, user)}, got ${seen}` })
}

/** The user as the adapter reads it again, by its public ID. */
export async function refind (adapter: UserAdapter<unknown>, user: unknown): Promise<unknown> {
  const found = await adapter.findById(idOf(adapter, user))
  assertSameUser(adapter, found, user, 'findById of a user the suite just made')
  return found
}

/**
 * Whether a lookup found nobody, for rules that are not about lookups:
 * `null`, and also `undefined` or a throw, which the lookup rules refuse on
 * their own, so that one broken rule fails one test.
 */
export async function findsNobody (lookup: () => Promise<unknown>): Promise<boolean> {
  try {
    return (await lookup()) == null
  } catch {
    return true
  }
}

/**
 * Whether the password signs the user in, for rules that are not about
 * `verifyPassword`: `true` only (a throw is a 503, no sign-in).
 */
export async function signsIn (adapter: UserAdapter<unknown>, user: unknown, password: string): Promise<boolean> {
  try {
    return await adapter.verifyPassword(user, password) === true
  } catch {
    return false
  }
}

/** The contract of every lookup, findByIdentity too. */
export const FIND_NULL = 'Contract for every `find*`: resolve `null` when no user matches (never throw for an absent user).'

/** Fails unless the lookup resolves `null`, exactly: not `undefined`, not a throw. */
export async function assertNull (lookup: () => Promise<unknown>, what: string): Promise<void> {
  let found: unknown
  try {
    found = await lookup()
  } catch (error) {
    throw new AssertionError({ message: `${what} threw ${describe(error)}; an absent user is \`null\`, never a throw` })
  }
  if (found !== null) throw new AssertionError({ message: `${what} resolved ${found === undefined ? 'undefined' : 'a user'}; an absent user is \`null\`` })
}

/** A thrown value as a message shows it. */
export function describe (thrown: unknown): string {
  // an error of another realm (node's own, under jest) is no instance of this realm's Error
  if (!(thrown instanceof Error) && !types.isNativeError(thrown)) return inspect(thrown, { depth: 1 })
  const { name, message, code } = thrown as Error & { code?: unknown }
  return `${name}: ${message}${code === undefined ? '' : ` (code ${String(code)})`}`
}

/** What a call threw; fails when it resolved. */
export async function thrownBy (call: Promise<unknown>, what: string, expected: string): Promise<unknown> {
  const outcome = await call.then(() => ({ resolved: true as const }), (error: unknown) => ({ resolved: false as const, error }))
  if (outcome.resolved) throw new AssertionError({ message: `${what} resolved; it must throw ${expected}` })
  return outcome.error
}

/** Fails unless the call rejects with `UserExistsError` or an error of its code. */
export async function assertUserExists (call: Promise<unknown>, what: string): Promise<void> {
  const error = await thrownBy(call, what, 'UserExistsError')
  if (!isUserExists(error)) throw new AssertionError({ message: `${what} threw ${describe(error)}, not UserExistsError (code 'ERR_JWT_LOGIN_USER_EXISTS')` })
}

/** Fails unless the call rejects with `IdentityTakenError` or an error of its code. */
export async function assertIdentityTaken (call: Promise<unknown>, what: string): Promise<void> {
  const error = await thrownBy(call, what, 'IdentityTakenError')
  if (!isIdentityTaken(error)) throw new AssertionError({ message: `${what} threw ${describe(error)}, not IdentityTakenError (code 'ERR_JWT_LOGIN_IDENTITY_TAKEN')` })
}

/** What concurrent calls came to: the index of each that resolved, and what the others threw. */
export interface Race<T> {
  won: Array<{ index: number, value: T }>
  lost: Array<{ index: number, error: unknown }>
}

/** Starts every call at once and waits for all. */
export async function race<T> (count: number, call: (index: number) => Promise<T>): Promise<Race<T>> {
  const results = await Promise.allSettled(Array.from({ length: count }, async (_, index) => await call(index)))
  const outcome: Race<T> = { won: [], lost: [] }
  results.forEach((result, index) => {
    if (result.status === 'fulfilled') outcome.won.push({ index, value: result.value })
    else outcome.lost.push({ index, error: result.reason })
  })
  return outcome
}

/** Fails unless exactly one call won and every other one threw a conflict `isConflict` knows, named `conflict`. */
export function assertOneWinner (outcome: Race<unknown>, what: string, isConflict: (thrown: unknown) => boolean, conflict: string): { index: number } {
  const total = outcome.won.length + outcome.lost.length
  if (outcome.won.length !== 1) throw new AssertionError({ message: `${outcome.won.length} of ${total} concurrent ${what} succeeded; exactly one must` })
  const other = outcome.lost.find(({ error }) => !isConflict(error))
  if (other !== undefined) throw new AssertionError({ message: `a losing ${what} threw ${describe(other.error)}, not ${conflict}` })
  return outcome.won[0] as { index: number }
}
