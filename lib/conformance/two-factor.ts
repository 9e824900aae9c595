// The two-factor port's conformance suite: what every TwoFactorPort (in memory, on PostgreSQL, a host's own) must do.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { TWO_FACTOR_PORT_MANIFEST, supportsOf } from '../adapters/manifest.js'
import type { TwoFactorMethod, TwoFactorPort } from '../adapters/two-factor.js'
import { nextUserId, optionalMethod, promised, settleAll } from './port-helpers.js'
import { declareSuite, parallelismOf, type Rule, type SuiteOptions } from './runner.js'

/** What `create` resolves: the port, and how the suite makes its users exist. */
export interface TwoFactorPortFixture<U = unknown> {
  port: TwoFactorPort<U>
  /**
   * Creates the user with this id and answers its record, as the user
   * adapter would answer it now: the record `methodOf` takes. The suite
   * picks the ids (positive integers below 2^31, new ones on every run) and
   * calls this before it first uses one. It must create the user, never find
   * an existing one: a user that already has two-factor state (a method, a
   * TOTP secret, unused backup codes) is refused before anything is written,
   * and the rule fails saying so. The suite calls it again before each
   * `methodOf`, so a host that keeps the method on the user's record answers
   * it fresh.
   */
  user: (userId: number) => Promise<U>
}

/**
 * The suite's options. `create` answers a port on a database for tests,
 * never one with real users: the suite writes secrets, codes and methods
 * to the users it picks.
 */
export interface TwoFactorPortSuiteOptions<U = unknown> extends SuiteOptions<TwoFactorPortFixture<U>> {}

/** What the rules read of the options. */
export interface TwoFactorPortSettings {
  parallelism: number
}

type Fixture = TwoFactorPortFixture<unknown>
type TwoFactorRule = Rule<Fixture, TwoFactorPortSettings>

/** Every primary method, in the order the setMethod rule sets them. */
const METHODS: readonly TwoFactorMethod[] = ['totp', 'email', 'backup_codes', 'passkey']

/**
 * A user of this run, made to exist through the fixture. Refused when the
 * port already holds two-factor state for it: `user` found a real user,
 * whose secrets the rules would overwrite.
 */
async function newUser (fixture: Fixture): Promise<number> {
  const userId = nextUserId()
  const found = await stateOf(fixture, userId)
  if (found.length > 0) throw new Error(`user ${userId} already has two-factor state (${found.join(', ')}): the suite only writes to users it made`)
  return userId
}

/**
 * What the port holds for the user before the suite writes anything. Only a
 * method, a secret or a positive count is state: a port that answers
 * `undefined` for `null` or -1 codes fails its own rule, not every rule.
 */
async function stateOf ({ port, user }: Fixture, userId: number): Promise<string[]> {
  const method = await port.methodOf(userId, await user(userId))
  const secret = await port.getTotpSecret(userId)
  const codes = typeof port.countBackupCodes === 'function' ? await port.countBackupCodes(userId) : 0
  return [
    ...(typeof method === 'string' ? [`the method ${method}`] : []),
    ...(typeof secret === 'string' && secret !== '' ? ['a TOTP secret'] : []),
    ...(codes > 0 ? [`backup codes (${codes} unused)`] : [])
  ]
}

/** What `methodOf` answers with the user's record as it is now. */
async function methodOf (fixture: Fixture, userId: number): Promise<TwoFactorMethod | null> {
  return await fixture.port.methodOf(userId, await fixture.user(userId))
}

/** A backup code hash as the plugin makes them (SHA-256, base64url): random, so no run meets another's. */
function codeHash (): string {
  return randomBytes(32).toString('base64url')
}

/**
 * A sign-in attempt's claim (its two-factor challenge). Random, so no two
 * differ by letter case alone: a port may compare claims as its database
 * compares text (MySQL's default collations ignore case).
 */
function claim (): string {
  return `challenge-${randomBytes(16).toString('base64url')}`
}

function codeHashes (count: number): string[] {
  return Array.from({ length: count }, codeHash)
}

/** The setMethod and countBackupCodes the rules that need them call (the runner skips those rules without them). */
function setMethodOf (port: TwoFactorPort<unknown>): NonNullable<TwoFactorPort['setMethod']> {
  return optionalMethod(port, 'setMethod', 'the two-factor port')
}

function countOf (port: TwoFactorPort<unknown>): NonNullable<TwoFactorPort['countBackupCodes']> {
  return optionalMethod(port, 'countBackupCodes', 'the two-factor port')
}

export const twoFactorPortRules: readonly TwoFactorRule[] = [
  {
    name: 'every method answers a promise',
    contract: 'Every method is Promise-only.',
    async run ({ port, user }) {
      const userId = await newUser({ port, user })
      const hash = codeHash()
      const record = await user(userId)
      await promised('methodOf', () => port.methodOf(userId, record))
      await promised('getTotpSecret', () => port.getTotpSecret(userId))
      await promised('setTotpSecret', () => port.setTotpSecret(userId, 'JBSWY3DPEHPK3PXP'))
      await promised('replaceBackupCodes', () => port.replaceBackupCodes(userId, [hash]))
      await promised('consumeBackupCode', () => port.consumeBackupCode(userId, hash, claim()))
      if (typeof port.setMethod === 'function') await promised('setMethod', () => setMethodOf(port)(userId, 'totp'))
      if (typeof port.countBackupCodes === 'function') await promised('countBackupCodes', () => countOf(port)(userId))
    }
  },
  {
    name: 'methodOf resolves null for a user without two-factor',
    contract: 'The user\'s primary method when two-factor is on, or `null` when it is off',
    async run (fixture) {
      const userId = await newUser(fixture)
      assert.equal(await methodOf(fixture, userId), null, 'methodOf of a user the port never heard of')
    }
  },
  {
    name: 'methodOf answers the method setMethod set, for that user only',
    contract: 'Sets the user\'s primary method, turning two-factor on',
    needs: ['setMethod'],
    async run (fixture) {
      const setMethod = setMethodOf(fixture.port)
      const [userId, other] = [await newUser(fixture), await newUser(fixture)]
      await setMethod(other, 'email')
      for (const method of METHODS) {
        await setMethod(userId, method)
        assert.equal(await methodOf(fixture, userId), method, `methodOf after setMethod(userId, '${method}')`)
      }
      assert.equal(await methodOf(fixture, other), 'email', 'methodOf of another user, who chose email')
    }
  },
  {
    name: 'setMethod(null) turns two-factor off',
    contract: 'or off with `null` (then `methodOf` answers `null`)',
    needs: ['setMethod'],
    async run (fixture) {
      const setMethod = setMethodOf(fixture.port)
      const [userId, other] = [await newUser(fixture), await newUser(fixture)]
      await setMethod(userId, 'totp')
      await setMethod(other, 'email')
      await setMethod(userId, null)
      assert.equal(await methodOf(fixture, userId), null, 'methodOf after setMethod(userId, null)')
      assert.equal(await methodOf(fixture, other), 'email', 'methodOf of another user, who kept two-factor on')
      await setMethod(userId, 'backup_codes')
      assert.equal(await methodOf(fixture, userId), 'backup_codes', 'methodOf after turning it on again')
    }
  },
  {
    name: 'getTotpSecret resolves null before a secret is stored',
    contract: 'The user\'s confirmed TOTP secret (base32), or `null` when there is none.',
    async run (fixture) {
      const userId = await newUser(fixture)
      assert.equal(await fixture.port.getTotpSecret(userId), null, 'getTotpSecret of a user without a secret')
    }
  },
  {
    name: 'setTotpSecret stores the secret getTotpSecret answers, for that user only',
    contract: 'Stores the user\'s TOTP secret once enrollment is confirmed',
    async run (fixture) {
      const [userId, other] = [await newUser(fixture), await newUser(fixture)]
      // 32 base32 characters: 160 bits, as the plugin makes them
      const [secret, theirs] = ['GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 'MFRGGZDFMZTWQ2LKNNWG23TPOBYXE43U']
      await fixture.port.setTotpSecret(other, theirs)
      await fixture.port.setTotpSecret(userId, secret)
      assert.equal(await fixture.port.getTotpSecret(userId), secret, 'getTotpSecret after setTotpSecret')
      assert.equal(await fixture.port.getTotpSecret(other), theirs, 'getTotpSecret of another user, who stored their own')
    }
  },
  {
    name: 'setTotpSecret replaces an earlier secret',
    contract: '(replaces an earlier one)',
    async run (fixture) {
      const [userId, other] = [await newUser(fixture), await newUser(fixture)]
      await fixture.port.setTotpSecret(userId, 'JBSWY3DPEHPK3PXP')
      await fixture.port.setTotpSecret(other, 'MFRGGZDFMZTWQ2LK')
      await fixture.port.setTotpSecret(userId, 'KRUGKIDROVUWG2ZA')
      assert.equal(await fixture.port.getTotpSecret(userId), 'KRUGKIDROVUWG2ZA', 'getTotpSecret after a second setTotpSecret')
      assert.equal(await fixture.port.getTotpSecret(other), 'MFRGGZDFMZTWQ2LK', 'getTotpSecret of another user, unchanged')
    }
  },
  {
    name: 'consumeBackupCode spends the code once, and only that code',
    contract: 'Spends the user\'s backup code with this hash and resolves `true` only when it was unused.',
    async run ({ port, user }) {
      const userId = await newUser({ port, user })
      const [first, second] = codeHashes(2) as [string, string]
      await port.replaceBackupCodes(userId, [first, second])
      assert.equal(await port.consumeBackupCode(userId, second, claim()), true, 'the first use of an unused code (the second of two)')
      assert.equal(await port.consumeBackupCode(userId, second, claim()), false, 'a second use of it, by another sign-in attempt')
      assert.equal(await port.consumeBackupCode(userId, first, claim()), true, 'the user\'s other code, still unused')
    }
  },
  {
    name: 'consumeBackupCode resolves false for a hash the user does not hold',
    contract: 'Resolve `false`, never throw, for a hash the user does not hold',
    async run ({ port, user }) {
      const userId = await newUser({ port, user })
      assert.equal(await port.consumeBackupCode(userId, codeHash(), claim()), false, 'a user who never had codes')
      const [held] = codeHashes(1) as [string]
      await port.replaceBackupCodes(userId, [held])
      assert.equal(await port.consumeBackupCode(userId, codeHash(), claim()), false, 'a hash that is not one of the user\'s codes')
      assert.equal(await port.consumeBackupCode(userId, '', claim()), false, 'an empty hash')
      assert.equal(await port.consumeBackupCode(userId, held, claim()), true, 'the user\'s own code, untouched by the misses')
    }
  },
  {
    name: 'consumeBackupCode resolves false for another user\'s code',
    contract: 'Spends the user\'s backup code with this hash',
    async run ({ port, user }) {
      const [userId, other] = [await newUser({ port, user }), await newUser({ port, user })]
      const [theirs] = codeHashes(1) as [string]
      await port.replaceBackupCodes(other, [theirs])
      await port.replaceBackupCodes(userId, codeHashes(2))
      assert.equal(await port.consumeBackupCode(userId, theirs, claim()), false, 'a code of another user')
      assert.equal(await port.consumeBackupCode(other, theirs, claim()), true, 'the other user\'s code, still unused')
    }
  },
  {
    name: 'of concurrent consumes of one code exactly one resolves true',
    contract: 'Must be atomic on the host\'s side: of two calls with one code, one gets `true`.',
    async run ({ port, user }, { parallelism }) {
      const userId = await newUser({ port, user })
      const [hash] = codeHashes(1) as [string]
      await port.replaceBackupCodes(userId, [hash])
      const answers = await settleAll(Array.from({ length: parallelism }, async () => await port.consumeBackupCode(userId, hash, claim())))
      assert.equal(answers.filter(answer => answer).length, 1, `of ${parallelism} concurrent consumes of one code by different sign-in attempts, how many resolved true`)
    }
  },
  {
    name: 'the retry with the same claim resolves true again',
    contract: 'answer `true` to a later call with the same hash and the same claim',
    async run ({ port, user }) {
      const userId = await newUser({ port, user })
      const [hash] = codeHashes(1) as [string]
      const attempt = claim()
      await port.replaceBackupCodes(userId, [hash])
      assert.equal(await port.consumeBackupCode(userId, hash, attempt), true, 'the first use')
      assert.equal(await port.consumeBackupCode(userId, hash, attempt), true, 'the retry of the same sign-in attempt (same hash, same claim)')
      assert.equal(await port.consumeBackupCode(userId, hash, attempt), true, 'a second retry of it')
    }
  },
  {
    name: 'a spent code resolves false to another claim',
    contract: 'Any other call with a spent code answers `false`.',
    async run ({ port, user }) {
      const userId = await newUser({ port, user })
      const [hash] = codeHashes(1) as [string]
      const attempt = claim()
      await port.replaceBackupCodes(userId, [hash])
      await port.consumeBackupCode(userId, hash, attempt)
      assert.equal(await port.consumeBackupCode(userId, hash, claim()), false, 'another sign-in attempt with the spent code')
      await port.consumeBackupCode(userId, hash, attempt)
      assert.equal(await port.consumeBackupCode(userId, hash, claim()), false, 'another attempt after the first one\'s retry')
    }
  },
  {
    name: 'replaceBackupCodes drops the old codes and the new ones work',
    contract: 'Replaces every backup code hash of the user (after regenerating them).',
    async run ({ port, user }) {
      const [userId, other] = [await newUser({ port, user }), await newUser({ port, user })]
      const old = codeHashes(3) as [string, string, string]
      const fresh = codeHashes(3) as [string, string, string]
      const [theirs] = codeHashes(1) as [string]
      await port.replaceBackupCodes(userId, old)
      await port.replaceBackupCodes(other, [theirs])
      await port.consumeBackupCode(userId, old[0], claim())
      await port.replaceBackupCodes(userId, fresh)
      for (const [n, hash] of old.entries()) assert.equal(await port.consumeBackupCode(userId, hash, claim()), false, `old code ${n + 1} of 3 after replaceBackupCodes`)
      for (const [n, hash] of fresh.entries()) assert.equal(await port.consumeBackupCode(userId, hash, claim()), true, `new code ${n + 1} of 3`)
      assert.equal(await port.consumeBackupCode(other, theirs, claim()), true, 'another user\'s code, kept')
      await port.replaceBackupCodes(userId, [])
      assert.equal(await port.consumeBackupCode(userId, fresh[0], claim()), false, 'a code after replaceBackupCodes with none')
    }
  },
  {
    name: 'countBackupCodes counts the user\'s unused codes',
    contract: 'How many unused backup codes the user holds',
    needs: ['countBackupCodes'],
    async run ({ port, user }) {
      const count = countOf(port)
      const [userId, other] = [await newUser({ port, user }), await newUser({ port, user })]
      assert.equal(await count(userId), 0, 'countBackupCodes of a user who never had codes')
      const hashes = codeHashes(10) as [string, ...string[]]
      await port.replaceBackupCodes(userId, hashes)
      await port.replaceBackupCodes(other, codeHashes(4))
      assert.equal(await count(userId), 10, 'countBackupCodes after replaceBackupCodes with 10')
      const attempt = claim()
      await port.consumeBackupCode(userId, hashes[0], attempt)
      await port.consumeBackupCode(userId, hashes[0], attempt)
      assert.equal(await count(userId), 9, 'countBackupCodes after one code spent (and its retry)')
      assert.equal(await count(other), 4, 'countBackupCodes of another user')
    }
  }
]

/**
 * The two-factor port's contract, one test per rule, on the runner's `test`:
 * the optional `setMethod` and `countBackupCodes` are skipped, saying so,
 * when the port lacks them.
 */
export async function twoFactorPortSuite<U = unknown> (options: TwoFactorPortSuiteOptions<U>): Promise<void> {
  const settings: TwoFactorPortSettings = { parallelism: parallelismOf(options) }
  await declareSuite(options as unknown as SuiteOptions<Fixture>, 'TwoFactorPort', twoFactorPortRules, made => supportsOf(TWO_FACTOR_PORT_MANIFEST, made.port), settings)
}
