/**
 * The users both host processes seed. In production the instances share
 * one user database; the example seeds the same in-memory users in the same
 * order in each process, so each user has the same ID everywhere.
 */
export const ALICE = { login: 'alice', email: 'alice@example.com', password: 'correct horse battery staple', displayName: 'Alice Example' }
export const BOB = { login: 'bob', email: 'bob@example.com', password: 'bob has a long password', displayName: 'Bob Example' }
export const SEEDED_USERS = [ALICE, BOB]

/** Failed logins per account (summed over every instance) before the account is locked. */
export const LOCKOUT_MAX = 3
