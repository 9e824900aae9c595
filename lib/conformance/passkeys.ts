// The passkey port's conformance suite: what every PasskeyPort (in memory, on PostgreSQL, a host's own) must do.
import { PASSKEY_PORT_MANIFEST, supportsOf } from '../adapters/manifest.js'
import type { PasskeyPortFixture, PasskeyPortSettings, PasskeyRule } from './passkey-samples.js'
import { changingRules } from './passkeys-changing.js'
import { storingRules } from './passkeys-storing.js'
import { declareSuite, parallelismOf, type SuiteOptions } from './runner.js'

export type { PasskeyPortFixture, PasskeyPortSettings } from './passkey-samples.js'

/**
 * The suite's options. `create` answers a port on a database for tests,
 * never one with real users: the suite stores, renames and deletes
 * credentials of the users it picks.
 */
export interface PasskeyPortSuiteOptions extends SuiteOptions<PasskeyPortFixture> {}

export const passkeyPortRules: readonly PasskeyRule[] = [...storingRules, ...changingRules]

/**
 * The passkey port's contract, one test per rule, on the runner's `test`.
 * Credential ids are random and user ids new on every run, so a `create`
 * that answers one shared table still meets no other test's credentials.
 */
export async function passkeyPortSuite (options: PasskeyPortSuiteOptions): Promise<void> {
  const settings: PasskeyPortSettings = { parallelism: parallelismOf(options) }
  await declareSuite(options, 'PasskeyPort', passkeyPortRules, made => supportsOf(PASSKEY_PORT_MANIFEST, made.port), settings)
}
