/**
 * The users every host process seeds. In production the instances share
 * one user database; the example seeds the same in-memory users in the same
 * order in each process, so each user has the same ID everywhere.
 *
 * What a process changes in its users (a new password after a reset) stays
 * in that process: only the state in the shared store is shared.
 */
export const ALICE = { login: 'alice', email: 'alice@example.com', password: 'correct horse battery staple', displayName: 'Alice Example' }
export const BOB = { login: 'bob', email: 'bob@example.com', password: 'bob has a long password', displayName: 'Bob Example' }
/** Two-factor by an authenticator app (TOTP with `TOTP_SECRET`). */
export const CAROL = { login: 'carol', email: 'carol@example.com', password: 'carol signs in with a code', displayName: 'Carol Example', twoFactor: 'totp' as const }
/** Two-factor by a code sent by email. */
export const DAVE = { login: 'dave', email: 'dave@example.com', password: 'dave waits for his mail', displayName: 'Dave Example', twoFactor: 'email' as const }
/** Forgets her password (the reset flow). */
export const ERIN = { login: 'erin', email: 'erin@example.com', password: 'erin forgot this one', displayName: 'Erin Example' }

export interface SeededUser {
  login: string
  email: string
  password: string
  displayName: string
  /** The user's second factor, when they have one. */
  twoFactor?: 'totp' | 'email'
}

export const SEEDED_USERS: SeededUser[] = [ALICE, BOB, CAROL, DAVE, ERIN]

/**
 * Carol's TOTP secret, the same in every process (a real host keeps it in
 * its user database; the two-factor docs show how a user enrolls). Fixed
 * here so a script can compute her codes; never reuse it.
 */
export const TOTP_SECRET = 'BHKNALYVSX6XKO5HAAPZHQIF5FW7R2JO'

/** Failed logins per account (summed over every instance) before the account is locked. */
export const LOCKOUT_MAX = 3

/** The scope the host declares for its API keys, and its route for scripts (`GET /orders`) asks for. */
export const API_KEY_SCOPE = 'orders:read'
