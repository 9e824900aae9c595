import argon2 from 'argon2'

/** The user fields jwt-login ever returns to a client. Never a hash or a reset key. */
export interface PublicUser {
  /**
   * A positive safe integer (1 to 2^53 - 1). A string of digits (`pg`'s answer
   * for a `bigint` column) is taken as its number; any other ID answers 503.
   */
  ID: number
  user_login: string
  user_email: string
  display_name: string
  roles: string[]
  /**
   * Whether the user proved they receive mail at `user_email` (a code sent
   * there, a password reset, a provider that vouches for it). Absent: the
   * host does not track it, and nothing is refused for it. An adapter with
   * `setEmailVerified` answers it for every user.
   */
  email_verified?: boolean
}

/**
 * The host's user store, as jwt-login sees it. The plugin stores no user;
 * every method is called with the host's own record type `U`.
 *
 * Contract for every `find*`: resolve `null` when no user matches (never
 * throw for an absent user). Throwing means the store is unavailable: the
 * request answers 503 / errorCode 201 and nothing changes.
 */
export interface UserAdapter<U = unknown> {
  /** The user with this email (compare case-insensitively), or `null`. */
  findByEmail (email: string): Promise<U | null>
  /** The user with this login name, or `null`. */
  findByLogin (login: string): Promise<U | null>
  /** The user with this ID, or `null`. */
  findById (id: number): Promise<U | null>
  /** Whether `password` is the user's password. Must not throw for a wrong one. */
  verifyPassword (user: U, password: string): Promise<boolean>
  /**
   * Rehashes the user's password, after `verifyPassword` accepted
   * `password` at a password sign-in (`POST /auth` with `password`, never
   * `password_hash`): an adapter that upgrades old hashes as users sign in
   * writes the new hash here (only when it is due, and only if the stored
   * hash is still the one verified), updates `user` to hold it, and
   * resolves `true`; `false` when it wrote nothing (no upgrade due, or
   * another write came first), so the plugin keeps its cached copy of the
   * user. The sign-in awaits it before the session starts. Throwing never
   * fails the sign-in: the plugin logs a warning (the error as every port's
   * is logged, with the call's values cut out) and emits
   * `password.rehash_failed`.
   */
  rehashPassword? (user: U, password: string): Promise<boolean>
  /** The stored password hash; needed only when `login.allowPasswordHash` is on. */
  getPasswordHash? (user: U): Promise<string | null>
  /** The public view of the user; its `ID` as `PublicUser.ID` says. */
  toPublicUser (user: U): PublicUser
  /**
   * Hashes and stores a new password (needed only when `resetPassword.enabled`
   * is on). Throwing means the store is unavailable: the reset answers 503 and
   * the code stays usable.
   */
  setPassword? (user: U, newPassword: string): Promise<void>
  /**
   * Creates a user: for a provider sign-in with auto-registration on (no
   * `password`), and for `POST /users` (with `password`, which the adapter
   * hashes and stores, as `setPassword` does). When the email (compared
   * case-insensitively) or the login is taken, throw `UserExistsError` (or
   * any error whose `code` is `'ERR_JWT_LOGIN_USER_EXISTS'`), decided
   * atomically with the insert (a unique index, or a check under a lock):
   * `POST /users` answers 409 / errorCode 38, and a provider sign-in looks
   * the email up again and signs that user in. Throwing anything else means
   * the store is unavailable: 503 / errorCode 201 and nothing is signed; a
   * retry looks the email up again first.
   */
  createUser? (input: NewUser): Promise<U>
  /**
   * Deletes the user (needed only when `users.delete.enabled` is on). The
   * plugin has already ended the user's sessions. Throwing means the store
   * is unavailable: 503 / errorCode 226, the user stays, signed out.
   */
  deleteUser? (user: U): Promise<void>
  /**
   * Records whether the user's email is verified, as `toPublicUser` then
   * answers it in `email_verified` (needed for email verification: account
   * routes, `users.register.verifyEmail`, `authentication.requireVerifiedEmail`,
   * and for registration beside a provider that matches accounts by email).
   * Throwing means the store is unavailable (503).
   */
  setEmailVerified? (user: U, verified: boolean): Promise<void>
  /**
   * Changes the user's email to `email`, which the plugin has just proven
   * receives mail: store it verified. The address is compared
   * case-insensitively with every other user's; when another user has it,
   * throw `UserExistsError`, decided atomically with the update (a unique
   * index, or a check under a lock). Needed for `account.email.enabled`.
   */
  setEmail? (user: U, email: string): Promise<void>
  /**
   * A value that changes whenever the user's password changes (the stored
   * hash, or a part of it; `null` for a user without a password), for hosts
   * whose users can change passwords outside jwt-login (the host's own
   * pages, an admin screen, WordPress). Each session records its keyed hash
   * at sign-in, and a refresh (and, with `sessions.checkPasswordOnValidate`,
   * every check of an access token) whose user's value changed ends the
   * session. The plugin never stores, sends or logs the value itself.
   * Throwing means the store is unavailable (503).
   */
  passwordFingerprint? (user: U): string | null | Promise<string | null>
  /**
   * Whether the user has a password they could sign in with: `false` for a
   * user created without one (a provider sign-in) who never set one. Read
   * only before unlinking a provider (`DELETE /account/identities/{provider}`
   * refuses to take away the last way in). Without it, a `passwordFingerprint`
   * of `null` means no password, and without either every user has one.
   */
  hasPassword? (user: U): Promise<boolean>
  /**
   * The user linked to the provider account `subject` of `provider` (the
   * key of `oauth.providers`, such as `gh`; the subject is the provider's
   * stable id: the ID token's `sub`, GitHub's numeric id), or `null`.
   * The four identity methods come together (registration refuses some
   * without the others); with them a provider sign-in finds its user by the
   * link first, and only without one by a verified email, which it then links.
   * Both are opaque: compare them exactly, without folding case, leading
   * zeros, spaces or Unicode forms. Keep subjects of at least 255 characters
   * and provider names of 64, whole.
   */
  findByIdentity? (provider: string, subject: string): Promise<U | null>
  /**
   * Links the provider account to the user, with `details` to show in
   * `GET /account/identities` (a login or an email, or `null`), at `details.linkedAt`
   * (ms since the epoch). A user has at most one identity per provider, and
   * a provider account belongs to at most one user: when either is taken
   * (by another link), throw `IdentityTakenError`, decided atomically with
   * the insert (unique indexes on (provider, subject) and (user, provider),
   * or a check under a lock). Linking the same provider account to the same
   * user again is not an error: keep the first link. Resolves whether this
   * call made the link (`false`: it was there), so that of concurrent
   * sign-ins only the one that linked reports it. A provider name has at
   * most 64 characters of `A-Z a-z 0-9 _ -`; a subject may have 255
   * characters and any Unicode: store both whole.
   */
  linkIdentity? (user: U, provider: string, subject: string, details: IdentityDetails): Promise<boolean>
  /** The user's linked identities, oldest first. */
  listIdentities? (user: U): Promise<LinkedIdentity[]>
  /**
   * Removes the link; resolves whether there was one. A user's deletion
   * (`deleteUser`) removes the user's links too. After an unlink the
   * provider account is free for another user, and the user for another
   * account of the provider.
   */
  unlinkIdentity? (user: U, provider: string, subject: string): Promise<boolean>
}

/** The adapter methods that keep identity links; registration refuses an adapter with some and not all. */
export const IDENTITY_METHODS = ['findByIdentity', 'linkIdentity', 'listIdentities', 'unlinkIdentity'] as const

/** Whether the adapter keeps identity links (all four methods). */
export function keepsLinks (users: UserAdapter<any>): boolean {
  return IDENTITY_METHODS.every(method => typeof users[method] === 'function')
}

/** The adapter's link methods, for where `keepsLinks` holds. */
export const linksOf = (users: UserAdapter<any>): Required<Pick<UserAdapter<unknown>, typeof IDENTITY_METHODS[number]>> =>
  users as Required<Pick<UserAdapter<unknown>, typeof IDENTITY_METHODS[number]>>

/** What is shown of a linked provider account. */
export interface IdentityDetails {
  /** The provider account as its owner knows it (a login, an email), or `null`. */
  display: string | null
  /** When it was linked, in ms since the epoch. */
  linkedAt: number
}

/** One provider account linked to a user. */
export interface LinkedIdentity extends IdentityDetails {
  provider: string
  subject: string
}

/** The `code` of `IdentityTakenError`. */
export const IDENTITY_TAKEN_CODE = 'ERR_JWT_LOGIN_IDENTITY_TAKEN'

/**
 * What `linkIdentity` throws when the provider account is linked to another
 * user, or the user already has another account of the provider linked.
 */
export class IdentityTakenError extends Error {
  readonly code = IDENTITY_TAKEN_CODE

  constructor (message = 'this provider account or this provider of the user is linked already', options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'IdentityTakenError'
  }
}

/** Whether `thrown` reports a taken identity: an `IdentityTakenError`, or any object whose `code` is `IDENTITY_TAKEN_CODE`. */
export function isIdentityTaken (thrown: unknown): boolean {
  return (thrown as { code?: unknown } | null)?.code === IDENTITY_TAKEN_CODE
}

/**
 * A user to create. The plugin looked `email` and `login` up first and
 * found neither, but another request may create either between that lookup
 * and this call: `createUser` must check again, atomically with its insert,
 * and throw `UserExistsError` when one is taken. Without `password` (a
 * provider sign-in) the user has no usable password.
 */
export interface NewUser {
  email: string
  login: string
  displayName: string
  /** The user's role: store it, and `toPublicUser` answers it among `roles`. */
  role: string
  /** The password chosen at `POST /users`, already checked against the policy; store only its hash. */
  password?: string
  /**
   * Whether the email is verified: `false` at `POST /users` (nobody has
   * proven the address yet), `true` for a provider that vouches for it.
   * An adapter that tracks verification stores it; one that does not may ignore it.
   */
  emailVerified?: boolean
}

/** The `code` of `UserExistsError`, and of any error by which `createUser` reports a taken email or login. */
export const USER_EXISTS_CODE = 'ERR_JWT_LOGIN_USER_EXISTS'

/**
 * What an adapter's `createUser` throws when the email or the login is
 * taken: a conflict, not an outage. Its message names neither (it may be
 * logged); pass the database's error as `cause` if you like, it is dropped.
 */
export class UserExistsError extends Error {
  readonly code = USER_EXISTS_CODE

  constructor (message = 'a user with this email or login exists', options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'UserExistsError'
  }
}

/** Whether `thrown` reports a taken email or login: a `UserExistsError`, or any object whose `code` is `USER_EXISTS_CODE`. */
export function isUserExists (thrown: unknown): boolean {
  return (thrown as { code?: unknown } | null)?.code === USER_EXISTS_CODE
}

/** A user to create from a provider's verified identity (no password). */
export type NewProviderUser = NewUser

/**
 * The host's own rule for new passwords, on top of the length settings.
 * Resolve `true` to accept; anything else answers 400 / 204. Throwing means
 * the host is unavailable: 503, and the code stays usable.
 */
export type PasswordPolicy = (password: string, user: PublicUser) => boolean | Promise<boolean>

/** OWASP's argon2id parameters: 19 MiB memory, 2 iterations, 1 lane. */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const

/**
 * An argon2id hash of `password` with `ARGON2_OPTIONS`, as a PHC string: for
 * an adapter's `setPassword` and `createUser`, so that a host needs no argon2
 * of its own and a wrong password costs what an unknown user costs.
 */
export async function hashPassword (password: string): Promise<string> {
  return await argon2.hash(password, ARGON2_OPTIONS)
}

/** Checks a password against an argon2 hash; false (never a throw) for a wrong password or a hash argon2 cannot read. */
export async function verifyPasswordHash (hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password)
  } catch {
    return false
  }
}
