// The user adapter suite catches each broken rule: a good in-memory port with one rule broken fails that rule's test, and no other.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { setImmediate as tick } from 'node:timers/promises'
import t from 'tap'
import * as users from '../../lib/adapters/users.js'
import { IdentityTakenError, UserExistsError, isIdentityTaken, isUserExists, type LinkedIdentity, type NewUser, type UserAdapter } from '../../lib/adapters/users.js'
import { USER_ADAPTER_MANIFEST, supportsOf, userAdapterRules, userAdapterSuite, type UserAdapterFixture } from '../../lib/conformance.js'
import type { MemoryUser } from '../../lib/testing.js'
import { runSuite, type SuiteRun } from '../helpers/conformance.js'

/**
 * A salted SHA-256 instead of argon2id: fifty full runs of the suite at
 * OWASP's cost would take minutes, and the hash is no part of what they
 * show. Nothing else of the memory adapter changes.
 */
function quickHash (password: string): string {
  const salt = randomBytes(8).toString('hex')
  return `quick$${salt}$${createHash('sha256').update(`${salt}${password}`).digest('hex')}`
}

async function quickVerify (hash: string, password: string): Promise<boolean> {
  const [, salt = '', digest = ''] = hash.split('$')
  const wanted = Buffer.from(digest, 'hex')
  const given = createHash('sha256').update(`${salt}${password}`).digest()
  return wanted.length === given.length && timingSafeEqual(wanted, given)
}

const { MemoryUserAdapter } = await t.mockImport<typeof import('../../lib/testing/memory-users.js')>('../../lib/testing/memory-users.js', {
  '../../lib/adapters/users.js': { ...users, hashPassword: async (password: string) => quickHash(password), verifyPasswordHash: quickVerify }
})
type Memory = InstanceType<typeof MemoryUserAdapter>
type Port = UserAdapter<MemoryUser>

const METHODS = [
  'findByEmail', 'findByLogin', 'findById', 'verifyPassword', 'getPasswordHash', 'toPublicUser', 'setPassword', 'createUser', 'deleteUser',
  'setEmailVerified', 'setEmail', 'passwordFingerprint', 'hasPassword', 'findByIdentity', 'linkIdentity', 'listIdentities', 'unlinkIdentity'
] as const

/** The memory adapter's methods on a plain object, and a `rehashPassword` for which no upgrade is ever due, so that its rules run too. */
function delegate (inner: Memory): Port {
  const port = Object.fromEntries(METHODS.map(method => [method, (inner[method] as (...args: unknown[]) => unknown).bind(inner)])) as unknown as Port
  port.rehashPassword = async () => false
  return port
}

/** One way to break the port: what it replaces, given the good port and the memory adapter under it. */
interface Variant {
  /** The rule it breaks, as the suite names it; null for a port that must pass every rule. */
  rule: string | null
  /** What is wrong with it. */
  what: string
  breaks?: (good: Port, inner: Memory) => Partial<Port>
  /** How the host seeds a user instead (default: verified, as a host that records verification does). */
  seed?: (inner: Memory) => UserAdapterFixture<MemoryUser>['addUser']
}

const TITLE = 'UserAdapter'
const ruleNamed = (name: string): string => {
  if (!userAdapterRules.some(rule => rule.name === name)) throw new Error(`no rule is named ${name}`)
  return name
}

/** Runs the whole suite on the port `variant` makes, a fresh one for each test. */
async function run (variant: Variant, parallelism = 8): Promise<SuiteRun> {
  return await runSuite(async (test) => {
    await userAdapterSuite<MemoryUser>({
      test,
      parallelism,
      role: 'author',
      create: async () => {
        const inner = new MemoryUserAdapter()
        const good = delegate(inner)
        const adapter = { ...good, ...variant.breaks?.(good, inner) }
        const addUser = variant.seed?.(inner) ?? (async (user) => await inner.addUser({ ...user, emailVerified: true }))
        return { adapter, addUser }
      }
    })
  })
}

/** What a driver may reject with that is no Error. */
const NO_ERROR: unknown = { code: 'ER_NO_ROW' }

/** A lookup that throws, for variants that must not resolve. */
const refuse = (message: string): never => { throw new Error(message) }

/** IDs `offset` away from the store's: consistent between `toPublicUser` and `findById`. */
function shiftedIds (good: Port, toPublic: (id: number) => number | string, toStored: (id: number) => number): Partial<Port> {
  return {
    toPublicUser: (user) => ({ ...good.toPublicUser(user), ID: toPublic(user.ID) as number }),
    findById: async (id) => await good.findById(toStored(id))
  }
}

/** A check, a pause in which concurrent calls make their own check, then the write: what a host without a unique index or a lock does. */
async function checkThenWrite<T> (check: () => Promise<void>, write: () => Promise<T>): Promise<T> {
  await check()
  await tick()
  return await write()
}

/** Added to the store's IDs: the public ones then end just below 2^53 (a run makes fewer than a thousand users). */
const NEAR_2_53 = Number.MAX_SAFE_INTEGER - 1000

const key = (provider: string, subject: string): string => `${provider}\u0000${subject}`

const VARIANTS: Variant[] = [
  { rule: null, what: 'the memory adapter as it is' },
  {
    rule: null,
    what: 'IDs near 2^53, answered as strings of digits',
    breaks: (good) => shiftedIds(good, id => String(id + NEAR_2_53), id => id - NEAR_2_53)
  },
  {
    rule: 'findByEmail compares case-insensitively',
    what: 'findByEmail compares exactly',
    breaks: (good) => ({ findByEmail: async (email) => { const found = await good.findByEmail(email); return found?.user_email === email ? found : null } })
  },
  {
    rule: 'findByEmail resolves null for an absent user',
    what: 'findByEmail throws for an absent user',
    breaks: (good) => ({ findByEmail: async (email) => (await good.findByEmail(email)) ?? refuse('no user with this email') })
  },
  {
    rule: 'findByEmail resolves null for an absent user',
    what: 'findByEmail finds a user whose email the address holds (a LIKE with wildcards)',
    breaks: (good, inner) => ({
      findByEmail: async (email) => (await good.findByEmail(email)) ?? (email.startsWith('x') ? await inner.findByEmail(email.slice(1)) : null)
    })
  },
  {
    rule: 'findByLogin finds the user by its login',
    what: 'findByLogin finds only the users createUser made',
    breaks: (good) => {
      const created = new Set<number>()
      return {
        createUser: async (input) => { const user = await good.createUser!(input); created.add(user.ID); return user },
        findByLogin: async (login) => { const found = await good.findByLogin(login); return found !== null && created.has(found.ID) ? found : null }
      }
    }
  },
  { rule: 'findByLogin resolves null for an absent user', what: 'findByLogin answers undefined', breaks: (good) => ({ findByLogin: async (login) => (await good.findByLogin(login)) ?? undefined as never }) },
  {
    rule: 'findById resolves null for an absent user',
    what: 'findById rejects with no Error for an absent user, as some drivers do',
    breaks: (good) => ({ findById: async (id) => (await good.findById(id)) ?? await Promise.reject(NO_ERROR) })
  },
  { rule: 'findById resolves null for an absent user', what: 'findById answers undefined', breaks: (good) => ({ findById: async (id) => (await good.findById(id)) ?? undefined as never }) },
  {
    rule: 'verifyPassword answers false, not a throw, for a wrong, an empty or a very long password',
    what: 'verifyPassword throws for a wrong password',
    breaks: (good) => ({ verifyPassword: async (user, password) => await good.verifyPassword(user, password) || refuse('wrong password') })
  },
  { rule: 'toPublicUser gives a positive safe integer ID, or a string of its digits', what: 'negative IDs', breaks: (good) => shiftedIds(good, id => -id, id => -id) },
  { rule: 'toPublicUser gives a positive safe integer ID, or a string of its digits', what: 'IDs that are no integers', breaks: (good) => shiftedIds(good, id => id + 0.5, id => id - 0.5) },
  { rule: 'toPublicUser gives a positive safe integer ID, or a string of its digits', what: 'IDs off by two: the first user\'s is -1', breaks: (good) => shiftedIds(good, id => id - 2, id => id + 2) },
  {
    rule: 'toPublicUser gives the user\'s login and email, a display name, and roles as strings',
    what: 'roles as one string',
    breaks: (good) => ({ toPublicUser: (user) => ({ ...good.toPublicUser(user), roles: user.roles.join(',') as never }) })
  },
  {
    rule: 'toPublicUser answers PublicUser\'s fields and no other (no hash)',
    what: 'toPublicUser leaks the hash',
    breaks: (good) => ({ toPublicUser: (user) => ({ ...good.toPublicUser(user), passwordHash: user.passwordHash }) })
  },
  {
    rule: 'email_verified is a boolean for every user',
    what: 'users the host seeds say nothing of verification',
    seed: (inner) => async (user) => await inner.addUser(user)
  },
  { rule: 'setEmailVerified records what email_verified then answers', what: 'setEmailVerified stores nothing', breaks: () => ({ setEmailVerified: async () => {} }) },
  {
    rule: 'createUser without a password makes a user no password signs in as',
    what: 'an empty password signs in a user created without one',
    breaks: (good) => ({ verifyPassword: async (user, password) => (user.passwordless === true && password === '') || await good.verifyPassword(user, password) })
  },
  {
    rule: 'createUser with a password makes a user that password signs in as',
    what: 'createUser stores the password in lower case',
    breaks: (good) => ({ createUser: async (input) => await good.createUser!({ ...input, password: input.password?.toLowerCase() }) })
  },
  {
    rule: 'createUser stores emailVerified as given',
    what: 'createUser drops emailVerified',
    breaks: (good) => ({ createUser: async ({ emailVerified, ...input }) => await good.createUser!(input) })
  },
  {
    rule: 'createUser refuses an email taken in another case with UserExistsError',
    what: 'createUser throws a plain error for a taken email',
    breaks: (good) => ({
      createUser: async (input) => (await good.findByEmail(input.email)) === null ? await good.createUser!(input) : refuse('duplicate key value violates unique constraint')
    })
  },
  {
    rule: 'createUser refuses a taken login with UserExistsError',
    what: 'createUser throws a plain error for a taken login',
    breaks: (good) => ({
      createUser: async (input) => (await good.findByLogin(input.login)) === null ? await good.createUser!(input) : refuse('duplicate key value violates unique constraint')
    })
  },
  {
    rule: 'UserExistsError names neither the email nor the login',
    what: 'UserExistsError names both',
    breaks: (good) => ({
      createUser: async (input) => await good.createUser!(input).catch((error: unknown) => {
        throw isUserExists(error) ? new UserExistsError(`${input.email} or ${input.login} is taken`) : error
      })
    })
  },
  ...reviewedVariants(),
  ...raceVariants(),
  ...changeVariants(),
  ...passwordStateVariants(),
  ...identityVariants()
]

/** Every user a port made, for the variants that scan them as SQL does. */
const everyone = new WeakMap<Memory, MemoryUser[]>()
const made = (inner: Memory, user: MemoryUser): MemoryUser => { everyone.set(inner, [...everyone.get(inner) ?? [], user]); return user }

/** Whether `value` matches the SQL LIKE `pattern` (`_` one character, `%` any), in any case as MySQL's collations compare. */
const like = (pattern: string, value: string): boolean =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('%', '.*').replaceAll('_', '.')}$`, 'isu').test(value)

/** A port whose `field` lookup is a LIKE over every user it made. */
function likeLookup (field: 'user_email' | 'user_login'): Pick<Variant, 'breaks' | 'seed'> {
  return {
    seed: (inner) => async (user) => made(inner, await inner.addUser({ ...user, emailVerified: true })),
    breaks: (good, inner) => {
      const scan = async (pattern: string): Promise<MemoryUser | null> => {
        for (const user of everyone.get(inner) ?? []) if (await inner.findById(user.ID) !== null && like(pattern, user[field])) return user
        return null
      }
      return {
        createUser: async (input) => made(inner, await good.createUser!(input)),
        ...field === 'user_email' ? { findByEmail: scan } : { findByLogin: scan }
      }
    }
  }
}

/** A port whose finds answer copies of the rows, as a database does, and whose rehash is due once, until the password is next written. */
function rowCopies (rehash: 'updates user' | 'leaves user' | 'leaves user, answers false'): Pick<Variant, 'breaks' | 'seed'> {
  const copy = (user: MemoryUser): MemoryUser => ({ ...user, roles: [...user.roles] })
  const copyOf = (user: MemoryUser | null): MemoryUser | null => user === null ? null : copy(user)
  return {
    seed: (inner) => async (user) => copy(await inner.addUser({ ...user, emailVerified: true })),
    breaks: (good, inner) => {
      const stored = async (user: MemoryUser): Promise<MemoryUser> => await inner.findById(user.ID) ?? refuse('no such user')
      return {
        findByEmail: async (email) => copyOf(await good.findByEmail(email)),
        findByLogin: async (login) => copyOf(await good.findByLogin(login)),
        findById: async (id) => copyOf(await good.findById(id)),
        findByIdentity: async (provider, subject) => copyOf(await good.findByIdentity!(provider, subject)),
        createUser: async (input) => copy(await good.createUser!(input)),
        setPassword: async (user, password) => { const row = await stored(user); await good.setPassword!(row, password); Object.assign(user, copy(row)) },
        setEmail: async (user, email) => { await good.setEmail!(await stored(user), email) },
        setEmailVerified: async (user, verified) => { await good.setEmailVerified!(await stored(user), verified) },
        deleteUser: async (user) => { await good.deleteUser!(await stored(user)) },
        rehashPassword: async (user, password) => {
          const row = await stored(user)
          if (row.passwordHash !== user.passwordHash || row.passwordChanges !== undefined || !await good.verifyPassword(row, password)) return false
          await good.setPassword!(row, password)
          if (rehash === 'updates user') Object.assign(user, copy(row))
          return rehash !== 'leaves user, answers false'
        }
      }
    }
  }
}

/** A hash that is the same for everyone with one password. */
const unsalted = (password: string): string => `sha256$${createHash('sha256').update(password).digest('hex')}`

/** A verifyPassword that also reads the plain and unsalted forms the variants store. */
const readsEveryForm = (good: Port): Pick<Port, 'verifyPassword'> => ({
  verifyPassword: async (user, password) => user.passwordHash.startsWith('plain$')
    ? user.passwordHash === `plain$${password}`
    : user.passwordHash.startsWith('sha256$') ? user.passwordHash === unsalted(password) : await good.verifyPassword(user, password)
})

/** The ports of mistakes a review found the suite let through. */
function reviewedVariants (): Variant[] {
  return [
    { rule: 'findByEmail resolves null for an absent user', what: 'findByEmail is a LIKE', ...likeLookup('user_email') },
    { rule: 'findByLogin resolves null for an absent user', what: 'findByLogin is a LIKE', ...likeLookup('user_login') },
    {
      rule: 'findByEmail resolves null for an absent user',
      what: 'findByEmail finds a login too (WHERE email = ? OR login = ?)',
      breaks: (good) => ({ findByEmail: async (email) => (await good.findByEmail(email)) ?? await good.findByLogin(email) })
    },
    {
      rule: 'verifyPassword answers, not throws, for a user created without a password',
      what: 'verifyPassword throws for a user created without a password',
      breaks: (good) => ({ verifyPassword: async (user, password) => user.passwordless === true ? refuse('hash must be a string') : await good.verifyPassword(user, password) })
    },
    {
      rule: 'toPublicUser answers PublicUser\'s fields and no other (no hash)',
      what: 'toPublicUser answers a view whose toJSON adds the whole record',
      breaks: (good) => ({
        toPublicUser: (user) => Object.defineProperty({ ...good.toPublicUser(user) }, 'toJSON', { enumerable: false, value: () => ({ ...good.toPublicUser(user), ...user }) })
      })
    },
    {
      rule: 'toPublicUser answers PublicUser\'s fields and no other (no hash)',
      what: 'toPublicUser answers a bcrypt hash as the display name',
      breaks: (good) => ({ toPublicUser: (user) => ({ ...good.toPublicUser(user), display_name: `$2y$10$${user.passwordHash.slice(-53)}` }) })
    },
    {
      rule: 'createUser stores the role given, which toPublicUser answers among roles',
      what: 'createUser makes every user an administrator',
      breaks: (good) => ({ createUser: async (input) => await good.createUser!({ ...input, role: 'administrator' }) })
    },
    {
      rule: 'setEmail\'s UserExistsError names neither email',
      what: 'setEmail\'s UserExistsError names the email',
      breaks: (good) => ({ setEmail: async (user, email) => await good.setEmail!(user, email).catch((error: unknown) => { throw isUserExists(error) ? new UserExistsError(`${email} is taken`) : error }) })
    },
    {
      rule: 'passwordFingerprint never holds the password',
      what: 'passwordFingerprint holds the password createUser or setPassword was given',
      breaks: (good) => {
        const given = new Map<number, string>()
        return {
          createUser: async (input) => { const user = await good.createUser!(input); given.set(user.ID, input.password ?? ''); return user },
          setPassword: async (user, password) => { await good.setPassword!(user, password); given.set(user.ID, password) },
          passwordFingerprint: (user) => { const value = good.passwordFingerprint!(user); return value === null ? null : `${value as string}:${given.get(user.ID) ?? ''}` }
        }
      }
    },
    {
      rule: 'createUser stores a salted hash, not the password',
      what: 'createUser stores the password itself',
      breaks: (good) => ({
        ...readsEveryForm(good),
        createUser: async (input) => { const user = await good.createUser!(input); if (input.password !== undefined) user.passwordHash = `plain$${input.password}`; return user }
      })
    },
    {
      rule: 'createUser stores a salted hash, not the password',
      what: 'createUser stores an unsalted hash',
      breaks: (good) => ({
        ...readsEveryForm(good),
        createUser: async (input) => { const user = await good.createUser!(input); if (input.password !== undefined) user.passwordHash = unsalted(input.password); return user }
      })
    },
    {
      rule: 'setPassword stores a salted hash, not the password',
      what: 'setPassword stores the password itself',
      breaks: (good) => ({ ...readsEveryForm(good), setPassword: async (user, password) => { await good.setPassword!(user, password); user.passwordHash = `plain$${password}` } })
    },
    { rule: null, what: 'rows copied at each find, and a rehash due once that updates the record it was given', ...rowCopies('updates user') },
    { rule: 'rehashPassword leaves the record it was given holding the stored password', what: 'a rehash that leaves the record it was given as it was', ...rowCopies('leaves user') },
    { rule: 'rehashPassword leaves the record it was given holding the stored password', what: 'a rehash that writes, leaves the record, and answers false', ...rowCopies('leaves user, answers false') }
  ]
}

/** The ports whose concurrent creates are not decided with the insert. */
function raceVariants (): Variant[] {
  /** On a conflict of the insert, a host without that unique index stores the user all the same; here under a changed name, which the caller never sees. */
  const stored = (good: Port, inner: Memory, input: NewUser, field: 'email' | 'login'): Promise<MemoryUser> =>
    good.createUser!(input).catch(async (error: unknown) => {
      const other = field === 'email' ? await inner.findByLogin(input.login) : await inner.findByEmail(input.email)
      if (!isUserExists(error) || other !== null) throw error
      const user = await good.createUser!({ ...input, [field]: `${randomBytes(4).toString('hex')}-${input[field]}` })
      return { ...user, user_email: input.email, user_login: input.login }
    })
  return [
    {
      rule: 'of concurrent createUser calls with one email, exactly one succeeds',
      what: 'createUser checks the email, then inserts without a unique index on it',
      breaks: (good, inner) => ({
        createUser: async (input) => await checkThenWrite(async () => { if (await good.findByEmail(input.email) !== null) throw new UserExistsError() }, async () => await stored(good, inner, input, 'email'))
      })
    },
    {
      rule: 'of concurrent createUser calls with one email, exactly one succeeds',
      what: 'the losers of a race for an email throw the database\'s error',
      breaks: (good, inner) => ({
        createUser: async (input) => await checkThenWrite(async () => { if (await good.findByEmail(input.email) !== null) throw new UserExistsError() }, async () =>
          await good.createUser!(input).catch(async (error: unknown) => {
            throw isUserExists(error) && await inner.findByLogin(input.login) === null ? new Error('duplicate key value violates unique constraint') : error
          }))
      })
    },
    {
      rule: 'of concurrent createUser calls with one login, exactly one succeeds',
      what: 'createUser checks the login, then inserts without a unique index on it',
      breaks: (good, inner) => ({
        createUser: async (input) => await checkThenWrite(async () => { if (await good.findByLogin(input.login) !== null) throw new UserExistsError() }, async () => await stored(good, inner, input, 'login'))
      })
    }
  ]
}

/** The ports whose setPassword, deleteUser or setEmail break a rule. */
function changeVariants (): Variant[] {
  return [
    {
      rule: 'setPassword makes the new password sign in and the old one not',
      what: 'the old hash stays valid after setPassword',
      breaks: (good) => {
        const old = new Map<number, string[]>()
        return {
          setPassword: async (user, password) => { old.set(user.ID, [...old.get(user.ID) ?? [], user.passwordHash]); await good.setPassword!(user, password) },
          verifyPassword: async (user, password) => await good.verifyPassword(user, password) || (await Promise.all((old.get(user.ID) ?? []).map(async hash => await quickVerify(hash, password)))).includes(true)
        }
      }
    },
    {
      rule: 'deleteUser leaves the user found by no lookup',
      what: 'findById still finds a deleted user',
      breaks: (good) => {
        const ghosts = new Map<number, MemoryUser>()
        return {
          deleteUser: async (user) => { ghosts.set(user.ID, user); await good.deleteUser!(user) },
          findById: async (id) => (await good.findById(id)) ?? ghosts.get(id) ?? null
        }
      }
    },
    {
      rule: 'setEmail moves the user to the new email',
      what: 'the old email stays an alias of the user',
      breaks: (good) => {
        const aliases = new Map<string, MemoryUser>()
        return {
          setEmail: async (user, email) => { const old = user.user_email; await good.setEmail!(user, email); aliases.set(old, user) },
          findByEmail: async (email) => (await good.findByEmail(email)) ?? aliases.get(email.toLowerCase()) ?? null
        }
      }
    },
    { rule: 'setEmail stores the new email verified', what: 'setEmail leaves the email unverified', breaks: (good) => ({ setEmail: async (user, email) => { await good.setEmail!(user, email); await good.setEmailVerified!(user, false) } }) },
    {
      rule: 'setEmail refuses an email another user has, in another case, with UserExistsError',
      what: 'setEmail resolves, changing nothing, for a taken email',
      breaks: (good) => ({
        setEmail: async (user, email) => { const holder = await good.findByEmail(email); if (holder === null || holder.ID === user.ID) await good.setEmail!(user, email) }
      })
    },
    {
      rule: 'setEmail takes the user\'s own email in another case',
      what: 'setEmail refuses an email any user has, the user too',
      breaks: (good) => ({ setEmail: async (user, email) => { if (await good.findByEmail(email) !== null) throw new UserExistsError(); await good.setEmail!(user, email) } })
    },
    {
      rule: 'of concurrent setEmail calls of many users to one email, exactly one succeeds',
      what: 'setEmail checks, then writes without a unique index',
      breaks: (good) => ({
        setEmail: async (user, email) => {
          await checkThenWrite(async () => { if (((await good.findByEmail(email))?.ID ?? user.ID) !== user.ID) throw new UserExistsError() }, async () => {
            await good.setEmail!(user, email).catch((error: unknown) => { if (!isUserExists(error)) throw error })
          })
        }
      })
    }
  ]
}

/** The ports whose fingerprint, hasPassword, getPasswordHash or rehashPassword break a rule. */
function passwordStateVariants (): Variant[] {
  return [
    { rule: 'passwordFingerprint stays the same while the password does', what: 'a new fingerprint at each read', breaks: (good) => ({ passwordFingerprint: (user) => good.passwordFingerprint!(user) === null ? null : randomBytes(8).toString('hex') }) },
    {
      rule: 'passwordFingerprint changes when the password changes',
      what: 'one fingerprint for every password',
      breaks: (good) => ({ passwordFingerprint: (user) => good.passwordFingerprint!(user) === null ? null : 'the same' })
    },
    { rule: 'passwordFingerprint is null for a user created without a password', what: 'a fingerprint for a user without a password', breaks: (good) => ({ passwordFingerprint: (user) => good.passwordFingerprint!(user) ?? 'none' }) },
    {
      rule: 'hasPassword is true for a user the host made with a password',
      what: 'hasPassword reads a mark only createUser and setPassword write',
      breaks: (good) => {
        const marked = new Set<number>()
        return {
          createUser: async (input) => { const user = await good.createUser!(input); if (input.password !== undefined) marked.add(user.ID); return user },
          setPassword: async (user, password) => { await good.setPassword!(user, password); marked.add(user.ID) },
          hasPassword: async (user) => marked.has(user.ID)
        }
      }
    },
    { rule: 'hasPassword is false for a user created without a password, true with one', what: 'hasPassword is always true', breaks: () => ({ hasPassword: async () => true }) },
    {
      rule: 'hasPassword turns true once a user created without a password sets one',
      what: 'hasPassword stays false for a user created without a password',
      breaks: (good) => {
        const without = new Set<number>()
        return {
          createUser: async (input) => { const user = await good.createUser!(input); if (input.password === undefined) without.add(user.ID); return user },
          hasPassword: async (user) => !without.has(user.ID) && await good.hasPassword!(user)
        }
      }
    },
    { rule: 'getPasswordHash answers the stored hash, a string that is not the password', what: 'getPasswordHash answers null', breaks: () => ({ getPasswordHash: async () => null }) },
    {
      rule: 'rehashPassword resolves a boolean, and the password still signs in',
      what: 'rehashPassword writes a hash of another form of the password',
      breaks: (good) => ({
        rehashPassword: async (user, password) => await good.verifyPassword(user, password) && await good.setPassword!(user, `${password} `).then(() => true)
      })
    },
    { rule: 'rehashPassword resolves false when no upgrade is due', what: 'rehashPassword writes every time', breaks: () => ({ rehashPassword: async () => true }) },
    {
      rule: 'rehashPassword leaves a password changed meanwhile alone',
      what: 'rehashPassword writes without comparing the stored hash',
      breaks: (good) => ({ rehashPassword: async (user, password) => { await good.setPassword!(user, password); return false } })
    }
  ]
}

/** The ports whose identity methods break a rule. */
function identityVariants (): Variant[] {
  /** A pre-check of who holds the account, for variants that go wrong only one call at a time. */
  const holder = async (good: Port, provider: string, subject: string): Promise<MemoryUser | null> => await good.findByIdentity!(provider, subject)
  const linked = (good: Port, user: MemoryUser, provider: string): Promise<boolean> => good.listIdentities!(user).then(links => links.some(link => link.provider === provider))
  return [
    {
      rule: 'findByIdentity resolves null for an account nobody linked',
      what: 'findByIdentity answers undefined',
      breaks: (good) => ({ findByIdentity: async (provider, subject) => (await good.findByIdentity!(provider, subject)) ?? undefined as never })
    },
    { rule: 'listIdentities answers the links oldest first', what: 'newest first', breaks: (good) => ({ listIdentities: async (user) => (await good.listIdentities!(user)).reverse() }) },
    {
      rule: 'listIdentities keeps each link\'s display and linkedAt as given',
      what: 'linkedAt kept in seconds',
      breaks: (good) => ({ listIdentities: async (user) => (await good.listIdentities!(user)).map(link => ({ ...link, linkedAt: Math.floor(link.linkedAt / 1000) * 1000 })) })
    },
    {
      rule: 'linking the same account to the same user again resolves false and keeps the first link',
      what: 'linking again replaces the details',
      breaks: (good) => {
        const latest = new Map<string, { display: string | null, linkedAt: number }>()
        return {
          linkIdentity: async (user, provider, subject, details) => { const made = await good.linkIdentity!(user, provider, subject, details); latest.set(key(provider, subject), details); return made },
          listIdentities: async (user) => (await good.listIdentities!(user)).map((link): LinkedIdentity => ({ ...link, ...latest.get(key(link.provider, link.subject)) }))
        }
      }
    },
    {
      rule: 'linking an account another user has throws IdentityTakenError',
      what: 'linking another user\'s account takes it from them',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => {
          const other = await holder(good, provider, subject)
          if (other !== null && other.ID !== user.ID) await good.unlinkIdentity!(other, provider, subject)
          return await good.linkIdentity!(user, provider, subject, details)
        }
      })
    },
    {
      rule: 'linking an account another user has throws IdentityTakenError',
      what: 'a taken account throws a plain error',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => {
          const other = await holder(good, provider, subject)
          return other !== null && other.ID !== user.ID ? refuse('duplicate key') : await good.linkIdentity!(user, provider, subject, details)
        }
      })
    },
    {
      rule: 'linking a second account of one provider to a user throws IdentityTakenError',
      what: 'a second account of a provider resolves true, linking nothing',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => await linked(good, user, provider) && await holder(good, provider, subject) === null ? true : await good.linkIdentity!(user, provider, subject, details)
      })
    },
    {
      rule: 'one subject under two provider names is two accounts, and provider names compare exactly',
      what: 'findByIdentity folds the provider name\'s case',
      breaks: (good) => ({ findByIdentity: async (provider, subject) => await good.findByIdentity!(provider.toLowerCase(), subject) })
    },
    {
      rule: 'subjects compare exactly: case, leading zeros, spaces and Unicode forms tell them apart',
      what: 'findByIdentity trims the subject',
      breaks: (good) => ({ findByIdentity: async (provider, subject) => await good.findByIdentity!(provider, subject.trim()) })
    },
    {
      rule: 'a subject of 255 characters, one beyond Latin, and a provider name of 64 are kept whole',
      what: 'subjects cut at 200 characters',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => await good.linkIdentity!(user, provider, subject.slice(0, 200), details),
        findByIdentity: async (provider, subject) => await good.findByIdentity!(provider, subject.slice(0, 200))
      })
    },
    {
      rule: 'unlinkIdentity removes the link and resolves true',
      what: 'unlinkIdentity resolves false when it removed the link',
      breaks: (good) => ({ unlinkIdentity: async (user, provider, subject) => { await good.unlinkIdentity!(user, provider, subject); return false } })
    },
    {
      rule: 'unlinkIdentity resolves false, and removes nothing, where the user has no such link',
      what: 'unlinkIdentity always resolves true',
      breaks: (good) => ({ unlinkIdentity: async (user, provider, subject) => { await good.unlinkIdentity!(user, provider, subject); return true } })
    },
    {
      rule: 'after an unlink the account can go to another user, and the user can link another account',
      what: 'an unlinked account stays reserved for its user',
      breaks: (good) => {
        const reserved = new Map<string, number>()
        return {
          unlinkIdentity: async (user, provider, subject) => { const removed = await good.unlinkIdentity!(user, provider, subject); if (removed) reserved.set(key(provider, subject), user.ID); return removed },
          linkIdentity: async (user, provider, subject, details) => {
            const owner = reserved.get(key(provider, subject))
            if (owner !== undefined && owner !== user.ID) throw new IdentityTakenError()
            return await good.linkIdentity!(user, provider, subject, details)
          }
        }
      }
    },
    {
      rule: 'of concurrent links of one account to many users, exactly one succeeds',
      what: 'linkIdentity checks the account, then inserts without a unique index on it',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => await checkThenWrite(async () => {
          const other = await holder(good, provider, subject)
          if (other !== null && other.ID !== user.ID) throw new IdentityTakenError()
        }, async () => await good.linkIdentity!(user, provider, subject, details).catch(async (error: unknown) => {
          const other = await holder(good, provider, subject)
          if (isIdentityTaken(error) && other !== null && other.ID !== user.ID) return true
          throw error
        }))
      })
    },
    {
      rule: 'of concurrent links of many accounts of one provider to one user, exactly one succeeds',
      what: 'linkIdentity checks the user\'s provider, then inserts without a unique index on it',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => await checkThenWrite(async () => {
          if (await linked(good, user, provider) && await holder(good, provider, subject) === null) throw new IdentityTakenError()
        }, async () => await good.linkIdentity!(user, provider, subject, details).catch(async (error: unknown) => {
          if (isIdentityTaken(error) && await holder(good, provider, subject) === null) return true
          throw error
        }))
      })
    },
    {
      rule: 'concurrent links of one account to its user all resolve, and one says it linked',
      what: 'every concurrent link of the same account says it linked',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => {
          if ((await holder(good, provider, subject))?.ID === user.ID) return false
          await tick()
          await good.linkIdentity!(user, provider, subject, details)
          return true
        }
      })
    },
    {
      rule: 'concurrent links of one account to its user all resolve, and one says it linked',
      what: 'the losers of a race for the same link are told the account is taken',
      breaks: (good) => ({
        linkIdentity: async (user, provider, subject, details) => {
          if ((await holder(good, provider, subject))?.ID === user.ID) return false
          await tick()
          if (!await good.linkIdentity!(user, provider, subject, details)) throw new IdentityTakenError()
          return true
        }
      })
    },
    {
      rule: 'deleteUser removes the user\'s links, and their accounts can be linked again',
      what: 'a deleted user\'s links stay',
      breaks: (good) => {
        const kept = new Map<string, MemoryUser>()
        return {
          deleteUser: async (user) => {
            for (const link of await good.listIdentities!(user)) kept.set(key(link.provider, link.subject), user)
            await good.deleteUser!(user)
          },
          findByIdentity: async (provider, subject) => (await good.findByIdentity!(provider, subject)) ?? kept.get(key(provider, subject)) ?? null,
          linkIdentity: async (user, provider, subject, details) => kept.has(key(provider, subject)) ? refuse('the account is linked') : await good.linkIdentity!(user, provider, subject, details)
        }
      }
    }
  ]
}

for (const variant of VARIANTS) {
  const expected = variant.rule === null ? [] : [`${TITLE}: ${ruleNamed(variant.rule)}`]
  t.test(`${variant.what}: ${variant.rule === null ? 'every rule passes' : `fails "${variant.rule}" alone`}`, async (t) => {
    const outcome = await run(variant)
    t.strictSame([...outcome.failed.keys()], expected, [...outcome.failed.values()].map(error => error.message).join('\n\n'))
    t.equal(outcome.skipped.length, 0, 'the port provides every capability: nothing is skipped')
    for (const error of outcome.failed.values()) t.match(error, { name: 'ConformanceError', rule: variant.rule }, 'the failure names the rule')
  })
}

t.test('every rule has a broken port of its own but those whose break reaches the rules that build on them', async (t) => {
  const covered = new Set(VARIANTS.map(variant => variant.rule))
  const uncovered = userAdapterRules.map(rule => rule.name).filter(name => !covered.has(name))
  t.strictSame(uncovered, [
    'findByEmail finds the user by its email',
    'findById finds the user by its public ID',
    'verifyPassword accepts the user\'s password',
    'createUser makes a user found by its email, its login and its ID',
    'linkIdentity resolves true, and findByIdentity finds the user by the link'
  ])
})

t.test('a `supports` that claims a method the port lacks fails the rules that need it, saying so', async (t) => {
  const outcome = await runSuite(async (test) => {
    await userAdapterSuite<MemoryUser>({
      test,
      supports: supportsOf(USER_ADAPTER_MANIFEST, delegate(new MemoryUserAdapter())),
      create: async () => {
        const inner = new MemoryUserAdapter()
        const { setPassword, ...adapter } = delegate(inner)
        return { adapter, addUser: async (user) => await inner.addUser({ ...user, emailVerified: true }) }
      }
    })
  })
  const needing = userAdapterRules.filter(rule => rule.needs?.includes('setPassword') === true).map(rule => `${TITLE}: ${rule.name}`)
  t.ok(needing.length > 0)
  t.strictSame([...outcome.failed.keys()], needing)
  for (const error of outcome.failed.values()) t.match(error.message, 'the adapter has no setPassword, though `supports` says it provides it')
})

t.test('a rule that seeds users at once waits for every seed before it fails: none writes after destroy', async (t) => {
  const seeding = /concurrent setEmail calls|concurrent links of one account to many users|subjects compare exactly/
  const late: string[] = []
  const outcome = await runSuite(async (test) => {
    const only = Object.assign((name: string, body: () => Promise<void>) => { if (seeding.test(name)) test(name, body) }, { skip: test.skip })
    await userAdapterSuite<MemoryUser, UserAdapterFixture<MemoryUser> & { destroyed: boolean }>({
      test: only,
      parallelism: 10,
      create: async () => {
        const inner = new MemoryUserAdapter()
        let calls = 0
        const made = {
          destroyed: false,
          adapter: delegate(inner),
          addUser: async (user: { login: string, email: string, password: string }) => {
            // the second INSERT fails at once; the others are still on their way
            if (++calls === 2) throw new Error('a transient failure of one INSERT')
            await tick()
            await new Promise(resolve => setTimeout(resolve, 20))
            if (made.destroyed) late.push(user.login)
            return await inner.addUser({ ...user, emailVerified: true })
          }
        }
        return made
      },
      destroy: (made) => { made.destroyed = true }
    })
  })
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(outcome.failed.size, 3, 'the three rules that seed at once fail, on the failed seed')
  for (const error of outcome.failed.values()) t.match(error.message, 'a transient failure of one INSERT')
  t.strictSame(late, [], 'no seed wrote after destroy')
})
