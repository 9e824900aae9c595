// The user adapter's conformance suite: the written contract of UserAdapter (lib/adapters/users.ts), one named test per rule.
import { supportsOf, USER_ADAPTER_MANIFEST } from '../adapters/manifest.js'
import { declareSuite, parallelismOf, type SuiteOptions } from './runner.js'
import { PASSWORD_STATE_RULES } from './users-account.js'
import { IDENTITY_RACE_RULES } from './users-identity-races.js'
import { IDENTITY_RULES } from './users-identities.js'
import type { UserAdapterFixture, UserRule, UserSettings } from './users-kit.js'
import { LOOKUP_RULES } from './users-lookup.js'
import { CHANGE_RULES, CREATE_RULES } from './users-write.js'

export type { SeedUser, UserAdapterFixture, UserRule, UserSettings } from './users-kit.js'

/**
 * What `userAdapterSuite` takes: `create` resolves a `UserAdapterFixture`,
 * or more (a schema to drop), which `destroy` then gets.
 *
 * The suite never deletes the users it makes (through `addUser` and
 * `createUser`, named `conform-…` with `@example.com` emails and random
 * passwords), nor their links: `destroy` should, or the database should be
 * one for tests. To see an absent user, `findById` is asked for a random ID
 * among the top 2^24 below 2^31 (an `integer` column holds it), which a
 * database that counts its IDs up from 1 reaches only past two billion users.
 */
export interface UserAdapterSuiteOptions<U = unknown, Made extends UserAdapterFixture<U> = UserAdapterFixture<U>> extends SuiteOptions<Made> {
  /** The role the suite gives the users it creates through `createUser` (default 'subscriber'). */
  role?: string
}

/**
 * Every rule of the port, in the order the tests are declared. The names
 * and wording are the suite's; each `contract` is quoted from the port's
 * doc comments.
 */
export const userAdapterRules: ReadonlyArray<UserRule> = Object.freeze([
  ...LOOKUP_RULES,
  ...CREATE_RULES,
  ...CHANGE_RULES,
  ...PASSWORD_STATE_RULES,
  ...IDENTITY_RULES,
  ...IDENTITY_RACE_RULES
])

/**
 * Declares one test per rule of `UserAdapter` on the runner's `test`. The
 * users the suite makes have logins and emails of their own (a random part
 * per test), so an adapter over a database other users share passes too;
 * what the suite leaves there is `destroy`'s to remove.
 */
export async function userAdapterSuite<U, Made extends UserAdapterFixture<U> = UserAdapterFixture<U>> (options: UserAdapterSuiteOptions<U, Made>): Promise<void> {
  const settings: UserSettings = { parallelism: parallelismOf(options), role: options.role ?? 'subscriber' }
  await declareSuite(options as unknown as UserAdapterSuiteOptions, 'UserAdapter', userAdapterRules, made => supportsOf(USER_ADAPTER_MANIFEST, made.adapter), settings)
}
