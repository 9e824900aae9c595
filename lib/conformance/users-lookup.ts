// The user adapter's rules every adapter meets: the lookups, the password check, the public view.
import assert from 'node:assert/strict'
import { randomBytes, randomInt } from 'node:crypto'
import { FIND_NULL, assertNull, assertSameUser, describe, idOf, kitOf, refind, type UserRule } from './users-kit.js'

const MUST_NOT_THROW = 'Must not throw for a wrong one.'

/** The fields of `PublicUser`: a client sees no other. */
const PUBLIC_FIELDS = new Set(['ID', 'user_login', 'user_email', 'display_name', 'roles', 'email_verified'])

/**
 * An ID no user has: a random one among the top 2^24 below 2^31, which a
 * database that counts its IDs up from 1 reaches only past two billion users
 * (and which an `integer` column still holds: a larger one would throw there,
 * though the plugin never asks for an ID the adapter did not give), and never
 * the ID of the user the rule made.
 */
function absentIdBeside (id: number): number {
  const probe = 2 ** 31 - 1 - randomInt(2 ** 24)
  return probe - Number(probe === id)
}

/** Where a hash shows itself: argon2's PHC strings, bcrypt's, phpass's and WordPress's. */
const HASH_MARKS = /\$(argon2(id|i|d)?\$|2[abxy]\$|P\$|H\$|wp\$)/

/** A password check whose answer must be `expected`, exactly, and no throw. */
async function assertVerifies (verify: () => Promise<unknown>, expected: boolean, what: string): Promise<void> {
  let answer: unknown
  try {
    answer = await verify()
  } catch (error) {
    assert.fail(`verifyPassword threw ${describe(error)} for ${what}; it must answer ${String(expected)}`)
  }
  assert.equal(answer, expected, `verifyPassword answered ${String(answer)} for ${what}; it must answer ${String(expected)}`)
}

export const LOOKUP_RULES: UserRule[] = [
  {
    name: 'findByEmail finds the user by its email',
    contract: 'The user with this email (compare case-insensitively), or `null`.',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, email } = await kit.seed()
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(email), user, `findByEmail(${email})`)
    }
  },
  {
    name: 'findByEmail compares case-insensitively',
    contract: 'compare case-insensitively',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { login, email } = kit.names()
      const mixed = `${login.slice(0, 1).toUpperCase()}${login.slice(1)}@Example.COM`
      const user = await made.addUser({ login, email: mixed, password: randomBytes(12).toString('base64url') })
      for (const asked of [email, email.toUpperCase(), mixed]) assertSameUser(kit.adapter, await kit.adapter.findByEmail(asked), user, `findByEmail(${asked}) of a user seeded as ${mixed}`)
    }
  },
  {
    name: 'findByEmail resolves null for an absent user',
    contract: FIND_NULL,
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { login, email } = await kit.seed()
      // no affix, no SQL LIKE pattern (`_` for one character, `%` for any), and no login (`WHERE email = ? OR login = ?`) finds the user
      const asked = [kit.names().email, `x${email}`, `${email}.org`, email.replaceAll('-', '_'), `%${email.slice(1)}`, `${login}%`, login]
      for (const candidate of asked) await assertNull(async () => await kit.adapter.findByEmail(candidate), `findByEmail(${candidate})`)
    }
  },
  {
    name: 'findByLogin finds the user by its login',
    contract: 'The user with this login name, or `null`.',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, login } = await kit.seed()
      assertSameUser(kit.adapter, await kit.adapter.findByLogin(login), user, `findByLogin(${login})`)
    }
  },
  {
    name: 'findByLogin resolves null for an absent user',
    contract: FIND_NULL,
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { login } = await kit.seed()
      const asked = [kit.names().login, `${login}x`, `x${login}`, login.replaceAll('-', '_'), `${login.slice(0, -1)}%`]
      for (const candidate of asked) await assertNull(async () => await kit.adapter.findByLogin(candidate), `findByLogin(${candidate})`)
    }
  },
  {
    name: 'findById finds the user by its public ID',
    contract: 'The user with this ID, or `null`.',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user } = await kit.seed()
      const id = idOf(kit.adapter, user)
      assertSameUser(kit.adapter, await kit.adapter.findById(id), user, `findById(${id})`)
    }
  },
  {
    name: 'findById resolves null for an absent user',
    contract: FIND_NULL,
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const asked = absentIdBeside(idOf(kit.adapter, (await kit.seed()).user))
      await assertNull(async () => await kit.adapter.findById(asked), `findById(${asked})`)
    }
  },
  {
    name: 'verifyPassword accepts the user\'s password',
    contract: 'Whether `password` is the user\'s password.',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { email, password } = await kit.seed()
      const found = await kit.adapter.findByEmail(email)
      await assertVerifies(async () => await kit.adapter.verifyPassword(found, password), true, 'the user\'s password')
    }
  },
  {
    name: 'verifyPassword answers false, not a throw, for a wrong, an empty or a very long password',
    contract: MUST_NOT_THROW,
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { email, password } = await kit.seed()
      const found = await kit.adapter.findByEmail(email)
      const wrong: Array<[string, string]> = [
        ['another password', 'another password of 24 chars'],
        ['the password in upper case', password.toUpperCase()],
        ['the password less its last character', [...password].slice(0, -1).join('')],
        ['an empty password', ''],
        ['a password of 10,000 characters that starts with the right one', `${password}${'x'.repeat(10_000 - password.length)}`]
      ]
      for (const [what, candidate] of wrong) await assertVerifies(async () => await kit.adapter.verifyPassword(found, candidate), false, what)
    }
  },
  {
    name: 'verifyPassword answers, not throws, for a user created without a password',
    contract: MUST_NOT_THROW,
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const seeded = await kit.seed()
      // a port that throws for any wrong password fails the rule above, not this one too
      if (await kit.adapter.verifyPassword(seeded.user, `${seeded.password}!`).then(() => false, () => true)) return
      const input = kit.newUser()
      const created = await kit.method('createUser')(input)
      // a hash column left NULL or empty must not reach the hash library's throw; that it answers false is createUser's rule
      for (const record of [created, await refind(kit.adapter, created)]) {
        for (const guess of ['', input.login, randomBytes(12).toString('base64url')]) {
          let answer: unknown
          try {
            answer = await kit.adapter.verifyPassword(record, guess)
          } catch (error) {
            assert.fail(`verifyPassword threw ${describe(error)} for ${JSON.stringify(guess)} and a user created without a password; it must answer false`)
          }
          assert.equal(typeof answer, 'boolean', `verifyPassword answered ${String(answer)} for a user created without a password, not a boolean`)
        }
      }
    }
  },
  {
    name: 'toPublicUser gives a positive safe integer ID, or a string of its digits',
    contract: 'A positive safe integer (1 to 2^53 - 1).',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user } = await kit.seed()
      for (const record of [user, await refind(kit.adapter, user)]) {
        const { ID } = kit.adapter.toPublicUser(record) as { ID: unknown }
        const id = typeof ID === 'string' && /^[0-9]+$/.test(ID) ? Number(ID) : ID
        assert.ok(typeof id === 'number' && Number.isSafeInteger(id) && id >= 1, `toPublicUser answered ID ${JSON.stringify(ID)}; it must be an integer from 1 to 2^53 - 1 (or a string of its digits)`)
      }
    }
  },
  {
    name: 'toPublicUser gives the user\'s login and email, a display name, and roles as strings',
    contract: 'The user fields jwt-login ever returns to a client.',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, login, email } = await kit.seed()
      const view = kit.adapter.toPublicUser(await refind(kit.adapter, user)) as unknown as Record<string, unknown>
      assert.equal(view.user_login, login, `user_login is ${JSON.stringify(view.user_login)}, not the login ${login}`)
      assert.equal(String(view.user_email).toLowerCase(), email, `user_email is ${JSON.stringify(view.user_email)}, not the email ${email}`)
      assert.equal(typeof view.display_name, 'string', `display_name is ${JSON.stringify(view.display_name)}, not a string`)
      assert.ok(Array.isArray(view.roles) && view.roles.every(role => typeof role === 'string'), `roles is ${JSON.stringify(view.roles)}, not an array of strings`)
      assert.ok(view.email_verified === undefined || typeof view.email_verified === 'boolean', `email_verified is ${JSON.stringify(view.email_verified)}: a boolean, or absent`)
    }
  },
  {
    name: 'toPublicUser answers PublicUser\'s fields and no other (no hash)',
    contract: 'Never a hash or a reset key.',
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user } = await kit.seed()
      for (const record of [user, await refind(kit.adapter, user)]) {
        const view = kit.adapter.toPublicUser(record)
        // as a client gets it: through JSON, where a toJSON may add what the keys did not show
        const sent = JSON.stringify(view)
        for (const [how, keys] of [['its keys', Object.keys(view)], ['its JSON', Object.keys(JSON.parse(sent))]] as const) {
          const extra = keys.filter(key => !PUBLIC_FIELDS.has(key))
          assert.deepEqual(extra, [], `toPublicUser answered fields beyond PublicUser's, in ${how}: ${extra.join(', ')}`)
        }
        assert.ok(!HASH_MARKS.test(sent), 'a value toPublicUser answered looks like a password hash')
      }
    }
  },
  {
    name: 'email_verified is a boolean for every user',
    contract: 'An adapter with `setEmailVerified` answers it for every user.',
    needs: ['setEmailVerified'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user } = await kit.seed()
      for (const record of [user, await refind(kit.adapter, user)]) {
        const verified = kit.adapter.toPublicUser(record).email_verified
        assert.equal(typeof verified, 'boolean', `email_verified of a seeded user is ${String(verified)}, not a boolean`)
      }
    }
  },
  {
    name: 'setEmailVerified records what email_verified then answers',
    contract: 'Records whether the user\'s email is verified, as `toPublicUser` then answers it in `email_verified`',
    needs: ['setEmailVerified'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const setEmailVerified = kit.method('setEmailVerified')
      const { user } = await kit.seed()
      for (const verified of [false, true, false]) {
        await setEmailVerified(await refind(kit.adapter, user), verified)
        const answered = kit.adapter.toPublicUser(await refind(kit.adapter, user)).email_verified
        assert.equal(answered, verified, `after setEmailVerified(user, ${String(verified)}) email_verified is ${String(answered)}`)
      }
    }
  }
]
