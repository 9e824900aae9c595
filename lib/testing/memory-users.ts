import { randomToken } from '../core/crypto.js'
import { hashPassword, IdentityTakenError, UserExistsError, verifyPasswordHash, type IdentityDetails, type LinkedIdentity, type NewUser, type PublicUser, type UserAdapter } from '../adapters/users.js'

export interface MemoryUser {
  ID: number
  user_login: string
  user_email: string
  display_name: string
  roles: string[]
  passwordHash: string
  /** How many times the password was set since the user was added: its password fingerprint. */
  passwordChanges?: number
  /** `undefined` for a user added without saying: `toPublicUser` then leaves `email_verified` out. */
  emailVerified?: boolean
  /** True for a user created without a password (a provider sign-in) who never set one. */
  passwordless?: boolean
}

export interface NewMemoryUser {
  login: string
  email: string
  password: string
  displayName?: string
  roles?: string[]
  /** Whether the email is verified; left out, the user says nothing about it (`email_verified` absent). */
  emailVerified?: boolean
}

/** One key per provider account: the provider's name cannot hold the separator. */
const identityKey = (provider: string, subject: string): string => `${provider}\u0000${subject}`

/**
 * Users kept in memory with argon2id hashes: for the demo, for tests, and as
 * a worked example for adapter authors.
 */
export class MemoryUserAdapter implements UserAdapter<MemoryUser> {
  readonly #byId = new Map<number, MemoryUser>()
  /** Lookups by email (lower-cased) and by login: one map read each, whatever the number of users. */
  readonly #byEmail = new Map<string, MemoryUser>()
  readonly #byLogin = new Map<string, MemoryUser>()
  /** The user of each linked provider account (by provider and subject), and each user's links in the order they were made. */
  readonly #byIdentity = new Map<string, MemoryUser>()
  readonly #identities = new Map<number, LinkedIdentity[]>()
  #nextId = 1

  /** A new user; an email (in any case) or a login (exactly) that is taken throws `UserExistsError`. */
  async addUser (input: NewMemoryUser): Promise<MemoryUser> {
    const email = input.email.toLowerCase()
    // hash first: the check and the insert below run with no await between them, so of two
    // concurrent sign-ups (or auto-registrations) of one email or login one gets in, and
    // the other is told so as the port's contract says (UserExistsError: 409, or a lookup again)
    const passwordHash = await hashPassword(input.password)
    if (this.#byEmail.has(email) || this.#byLogin.has(input.login)) throw new UserExistsError()
    const user: MemoryUser = {
      ID: this.#nextId++,
      user_login: input.login,
      user_email: email,
      display_name: input.displayName ?? input.login,
      roles: input.roles ?? ['subscriber'],
      passwordHash
    }
    if (input.emailVerified !== undefined) user.emailVerified = input.emailVerified
    this.#byId.set(user.ID, user)
    this.#byEmail.set(email, user)
    this.#byLogin.set(user.user_login, user)
    return user
  }

  /** A registered user (`POST /users`), or one without a usable password, who signs in through their provider. */
  async createUser (input: NewUser): Promise<MemoryUser> {
    const user = await this.addUser({
      login: input.login,
      email: input.email,
      password: input.password ?? randomToken(),
      displayName: input.displayName,
      roles: [input.role],
      emailVerified: input.emailVerified
    })
    if (input.password === undefined) user.passwordless = true
    return user
  }

  /** `DELETE /users`: the user is removed (`removeUser`). */
  async deleteUser (user: MemoryUser): Promise<void> {
    await this.removeUser(user.ID)
  }

  async removeUser (id: number): Promise<void> {
    const user = this.#byId.get(id)
    if (user === undefined) return
    this.#byId.delete(id)
    this.#byEmail.delete(user.user_email)
    this.#byLogin.delete(user.user_login)
    for (const link of this.#identities.get(id) ?? []) this.#byIdentity.delete(identityKey(link.provider, link.subject))
    this.#identities.delete(id)
  }

  async setPassword (user: MemoryUser, password: string): Promise<void> {
    user.passwordHash = await hashPassword(password)
    user.passwordChanges = (user.passwordChanges ?? 0) + 1
    delete user.passwordless
  }

  async hasPassword (user: MemoryUser): Promise<boolean> {
    return user.passwordless !== true
  }

  async findByIdentity (provider: string, subject: string): Promise<MemoryUser | null> {
    return this.#byIdentity.get(identityKey(provider, subject)) ?? null
  }

  /**
   * The check and the insert run with no await between them: of two concurrent links, one wins.
   * A user removed meanwhile (a deletion during a provider sign-in) gets no link: removeUser has
   * already cleared theirs, so one made now would hold the provider account for nobody, for good.
   */
  async linkIdentity (user: MemoryUser, provider: string, subject: string, details: IdentityDetails): Promise<boolean> {
    const stored = this.#byId.get(user.ID)
    if (stored === undefined) throw new Error('no user with this ID: it was removed')
    const key = identityKey(provider, subject)
    const holder = this.#byIdentity.get(key)
    if (holder?.ID === user.ID) return false
    const links = this.#identities.get(user.ID) ?? []
    if (holder !== undefined || links.some(link => link.provider === provider)) throw new IdentityTakenError()
    this.#byIdentity.set(key, stored)
    this.#identities.set(user.ID, [...links, { provider, subject, display: details.display, linkedAt: details.linkedAt }])
    return true
  }

  async listIdentities (user: MemoryUser): Promise<LinkedIdentity[]> {
    return (this.#identities.get(user.ID) ?? []).map(link => ({ ...link }))
  }

  async unlinkIdentity (user: MemoryUser, provider: string, subject: string): Promise<boolean> {
    const links = this.#identities.get(user.ID) ?? []
    const kept = links.filter(link => link.provider !== provider || link.subject !== subject)
    if (kept.length === links.length) return false
    this.#byIdentity.delete(identityKey(provider, subject))
    this.#identities.set(user.ID, kept)
    return true
  }

  async setEmailVerified (user: MemoryUser, verified: boolean): Promise<void> {
    user.emailVerified = verified
  }

  /** The new address, verified; one another user has (in any case) throws `UserExistsError`. */
  async setEmail (user: MemoryUser, email: string): Promise<void> {
    const lower = email.toLowerCase()
    const holder = this.#byEmail.get(lower)
    if (holder !== undefined && holder !== user) throw new UserExistsError()
    this.#byEmail.delete(user.user_email)
    user.user_email = lower
    user.emailVerified = true
    this.#byEmail.set(lower, user)
  }

  async findByEmail (email: string): Promise<MemoryUser | null> {
    return this.#byEmail.get(email.toLowerCase()) ?? null
  }

  async findByLogin (login: string): Promise<MemoryUser | null> {
    return this.#byLogin.get(login) ?? null
  }

  async findById (id: number): Promise<MemoryUser | null> {
    return this.#byId.get(id) ?? null
  }

  async verifyPassword (user: MemoryUser, password: string): Promise<boolean> {
    return await verifyPasswordHash(user.passwordHash, password)
  }

  async getPasswordHash (user: MemoryUser): Promise<string | null> {
    return user.passwordHash
  }

  /**
   * How many times the password was set: it changes with every new
   * password, so a session ends when the password is changed outside
   * jwt-login, and instances that seeded the same users agree on it.
   * `null` for a user created without a password who never set one, as
   * the port's contract says.
   */
  passwordFingerprint (user: MemoryUser): string | null {
    return user.passwordless === true ? null : String(user.passwordChanges ?? 0)
  }

  toPublicUser (user: MemoryUser): PublicUser {
    const answer: PublicUser = {
      ID: user.ID,
      user_login: user.user_login,
      user_email: user.user_email,
      display_name: user.display_name,
      roles: [...user.roles]
    }
    if (user.emailVerified !== undefined) answer.email_verified = user.emailVerified
    return answer
  }
}
