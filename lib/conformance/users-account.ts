// The user adapter's rules for what the plugin reads of a user's password: passwordFingerprint, hasPassword, getPasswordHash, rehashPassword.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { kitOf, refind, signsIn, type UserRule } from './users-kit.js'

const NO_PASSWORD_UNTIL_SET = '`false` for a user created without one (a provider sign-in) who never set one'

/** A fresh password for a change. */
const another = (): string => `another password ${randomBytes(6).toString('base64url')}`

export const PASSWORD_STATE_RULES: UserRule[] = [
  {
    name: 'passwordFingerprint stays the same while the password does',
    contract: 'Each session records its keyed hash at sign-in, and a refresh (and, with `sessions.checkPasswordOnValidate`, every check of an access token) whose user\'s value changed ends the session.',
    needs: ['passwordFingerprint'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const fingerprint = kit.method('passwordFingerprint')
      const { user, email, password } = await kit.seed()
      const byEmail = await kit.adapter.findByEmail(email)
      const first = await fingerprint(byEmail)
      await signsIn(kit.adapter, byEmail, password)
      const reads: Array<[string, unknown]> = [
        ['the same record after verifyPassword', byEmail],
        ['the user found by ID', await refind(kit.adapter, user)],
        ['the user found by ID again', await refind(kit.adapter, user)]
      ]
      // compared without showing the values: a fingerprint may be the stored hash
      for (const [what, record] of reads) assert.ok(await fingerprint(record) === first, `passwordFingerprint of ${what} differs from the first read: every session would end`)
    }
  },
  {
    name: 'passwordFingerprint changes when the password changes',
    contract: 'A value that changes whenever the user\'s password changes',
    needs: ['passwordFingerprint', 'setPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const fingerprint = kit.method('passwordFingerprint')
      const { user } = await kit.seed()
      const seen = [await fingerprint(await refind(kit.adapter, user))]
      for (const change of ['first', 'second']) {
        await kit.method('setPassword')(await refind(kit.adapter, user), another())
        const now = await fingerprint(await refind(kit.adapter, user))
        assert.ok(typeof now === 'string' && !seen.includes(now), `passwordFingerprint after the ${change} setPassword is null or a value it had before; it must change`)
        seen.push(now)
      }
    }
  },
  {
    name: 'passwordFingerprint is null for a user created without a password',
    contract: '`null` for a user without a password',
    needs: ['passwordFingerprint', 'createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const created = await kit.method('createUser')(kit.newUser())
      for (const record of [created, await refind(kit.adapter, created)]) {
        const value = await kit.method('passwordFingerprint')(record)
        assert.ok(value === null, `passwordFingerprint of a user created without a password is ${typeof value}, not null`)
      }
    }
  },
  {
    name: 'hasPassword is true for a user the host made with a password',
    contract: 'Whether the user has a password they could sign in with',
    needs: ['hasPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user } = await kit.seed()
      const answer = await kit.method('hasPassword')(await refind(kit.adapter, user))
      assert.equal(answer, true, `hasPassword of a user with a password is ${String(answer)}`)
    }
  },
  {
    name: 'hasPassword is false for a user created without a password, true with one',
    contract: NO_PASSWORD_UNTIL_SET,
    needs: ['hasPassword', 'createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const createUser = kit.method('createUser')
      const hasPassword = kit.method('hasPassword')
      const cases: Array<[boolean, string | undefined]> = [[false, undefined], [true, another()]]
      for (const [expected, password] of cases) {
        const created = await createUser(password === undefined ? kit.newUser() : kit.newUser({ password }))
        for (const record of [created, await refind(kit.adapter, created)]) {
          const answer = await hasPassword(record)
          assert.equal(answer, expected, `hasPassword of a user created ${password === undefined ? 'without' : 'with'} a password is ${String(answer)}`)
        }
      }
    }
  },
  {
    name: 'hasPassword turns true once a user created without a password sets one',
    contract: NO_PASSWORD_UNTIL_SET,
    needs: ['hasPassword', 'createUser', 'setPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const created = await kit.method('createUser')(kit.newUser())
      await kit.method('setPassword')(await refind(kit.adapter, created), another())
      const answer = await kit.method('hasPassword')(await refind(kit.adapter, created))
      assert.equal(answer, true, `hasPassword after setPassword is ${String(answer)}`)
    }
  },
  {
    name: 'getPasswordHash answers the stored hash, a string that is not the password',
    contract: 'The stored password hash',
    needs: ['getPasswordHash'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, password } = await kit.seed()
      const hash = await kit.method('getPasswordHash')(await refind(kit.adapter, user))
      assert.ok(typeof hash === 'string' && hash !== '', `getPasswordHash of a user with a password answered ${JSON.stringify(hash)}, not a hash`)
      assert.ok(!hash.includes(password), 'getPasswordHash answered the password itself')
    }
  },
  {
    name: 'rehashPassword resolves a boolean, and the password still signs in',
    contract: 'writes the new hash here (only when it is due, and only if the stored hash is still the one verified), updates `user` to hold it, and resolves `true`',
    needs: ['rehashPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, email, password } = await kit.seed()
      // as at a sign-in: the user found by email, the password accepted, then the rehash
      const found = await kit.adapter.findByEmail(email)
      await signsIn(kit.adapter, found, password)
      const answer = await kit.method('rehashPassword')(found, password)
      assert.equal(typeof answer, 'boolean', `rehashPassword resolved ${String(answer)}, not a boolean`)
      assert.equal(await signsIn(kit.adapter, found, password), true, 'the record rehashPassword was given no longer signs in with the password')
      const again = await refind(kit.adapter, user)
      assert.equal(await signsIn(kit.adapter, again, password), true, 'after rehashPassword the password no longer signs in')
      assert.equal(await signsIn(kit.adapter, again, another()), false, 'after rehashPassword another password signs in')
    }
  },
  {
    name: 'rehashPassword resolves false when no upgrade is due',
    contract: '`false` when it wrote nothing (no upgrade due, or another write came first)',
    needs: ['rehashPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const rehash = kit.method('rehashPassword')
      const { user, email, password } = await kit.seed()
      const found = await kit.adapter.findByEmail(email)
      await signsIn(kit.adapter, found, password)
      await rehash(found, password)
      const again = await refind(kit.adapter, user)
      await signsIn(kit.adapter, again, password)
      for (const [what, record] of [['the user read again', again], ['the record the first rehash updated', found]] as const) {
        const answer = await rehash(record, password)
        assert.equal(answer, false, `a second rehashPassword of ${what} resolved ${String(answer)}: nothing was due`)
      }
    }
  },
  {
    name: 'rehashPassword leaves a password changed meanwhile alone',
    contract: 'only if the stored hash is still the one verified',
    needs: ['rehashPassword', 'setPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, email, password } = await kit.seed()
      const stale = await kit.adapter.findByEmail(email)
      await signsIn(kit.adapter, stale, password)
      // another request changes the password between this sign-in's check and its rehash
      const next = another()
      await kit.method('setPassword')(await refind(kit.adapter, user), next)
      await kit.method('rehashPassword')(stale, password)
      assert.equal(await signsIn(kit.adapter, await refind(kit.adapter, user), next), true, 'rehashPassword undid a password change made meanwhile')
    }
  }
]
