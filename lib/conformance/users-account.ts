// The user adapter's rules for what the plugin reads of a user's password: passwordFingerprint, hasPassword, getPasswordHash, rehashPassword.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { kitOf, refind, signsIn, type UserRule } from './users-kit.js'

const FINGERPRINT_OF_HASH = 'the stored hash, or a part of it'

const NO_PASSWORD_UNTIL_SET = '`false` for a user created without one (a provider sign-in) who never set one'

/** A fresh password for a change. */
const another = (): string => `another password ${randomBytes(6).toString('base64url')}`

/**
 * Fails unless both users' stored hashes do not hold the password they
 * share, and differ (a salt): compared without showing them. A hash that is
 * no string is the rule of getPasswordHash's answer.
 */
async function assertSaltedHashes (getPasswordHash: (user: unknown) => Promise<string | null>, users: unknown[], password: string, how: string): Promise<void> {
  const hashes = await Promise.all(users.map(async user => await getPasswordHash(user)))
  if (!hashes.every(hash => typeof hash === 'string')) return
  for (const hash of hashes) assert.ok(!hash.includes(password), `getPasswordHash of a user ${how} holds the password itself`)
  assert.ok(hashes[0] !== hashes[1], `two users ${how}, with one password, have one hash: it is not salted`)
}

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
    name: 'passwordFingerprint never holds the password',
    contract: FINGERPRINT_OF_HASH,
    needs: ['passwordFingerprint'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const fingerprint = kit.method('passwordFingerprint')
      const check = async (how: string, user: unknown, password: string): Promise<void> => {
        for (const record of [user, await refind(kit.adapter, user)]) {
          const value = await fingerprint(record)
          assert.ok(value === null || !value.includes(password), `passwordFingerprint of a user ${how} holds the password itself`)
        }
      }
      const seeded = await kit.seed()
      await check('the host made', seeded.user, seeded.password)
      // createUser and setPassword where the adapter has them (their own rules check what `supports` claims)
      if (typeof kit.adapter.createUser === 'function') {
        const password = another()
        await check('createUser made', await kit.adapter.createUser(kit.newUser({ password })), password)
      }
      if (typeof kit.adapter.setPassword === 'function') {
        const password = another()
        await kit.adapter.setPassword(await refind(kit.adapter, seeded.user), password)
        await check('whose password setPassword changed', seeded.user, password)
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
    name: 'createUser stores a salted hash, not the password',
    contract: 'store only its hash',
    needs: ['createUser', 'getPasswordHash'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const createUser = kit.method('createUser')
      const password = another()
      const users = [await createUser(kit.newUser({ password })), await createUser(kit.newUser({ password }))]
      await assertSaltedHashes(kit.method('getPasswordHash'), await Promise.all(users.map(async user => await refind(kit.adapter, user))), password, 'createUser made')
    }
  },
  {
    name: 'setPassword stores a salted hash, not the password',
    contract: 'Hashes and stores a new password',
    needs: ['setPassword', 'getPasswordHash'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const password = another()
      const users = [(await kit.seed()).user, (await kit.seed()).user]
      for (const user of users) await kit.method('setPassword')(await refind(kit.adapter, user), password)
      await assertSaltedHashes(kit.method('getPasswordHash'), await Promise.all(users.map(async user => await refind(kit.adapter, user))), password, 'whose password setPassword changed')
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
    name: 'rehashPassword leaves the record it was given holding the stored password',
    contract: 'updates `user` to hold it, and resolves `true`',
    needs: ['rehashPassword', 'passwordFingerprint'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const fingerprint = kit.method('passwordFingerprint')
      const { user, email, password } = await kit.seed()
      const found = await kit.adapter.findByEmail(email)
      // a fingerprint that changes at each read is the rule above's
      const [first, second] = [await fingerprint(found), await fingerprint(found)]
      if (first !== second) return
      await signsIn(kit.adapter, found, password)
      // whatever it answers (a throw is another rule's): the plugin starts the session on `user`
      await kit.method('rehashPassword')(found, password).catch(() => false)
      const [given, stored] = [await fingerprint(found), await fingerprint(await refind(kit.adapter, user))]
      assert.ok(given === stored, 'after rehashPassword the record it was given has a passwordFingerprint other than the stored user\'s: every session it starts would end at its first refresh')
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
