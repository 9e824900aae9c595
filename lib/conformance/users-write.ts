// The user adapter's rules for the methods that write users: createUser, setPassword, deleteUser, setEmail.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { isUserExists, type NewUser } from '../adapters/users.js'
import { settleAll } from './port-helpers.js'
import {
  assertOneWinner, assertSameUser, assertUserExists, describe, findsNobody, idOf, kitOf, race, refind, sameUser, signsIn, type UserRule
} from './users-kit.js'

const TAKEN = 'When the email (compared case-insensitively) or the login is taken, throw `UserExistsError` (or any error whose `code` is `\'ERR_JWT_LOGIN_USER_EXISTS\'`)'
const CREATE_RACE = '`createUser` must check again, atomically with its insert, and throw `UserExistsError` when one is taken.'
const NO_PASSWORD = 'Without `password` (a provider sign-in) the user has no usable password.'

/** Fails when a `UserExistsError` names one of `names` (what else was thrown is another rule's). */
function assertNamesNeither (thrown: unknown, names: string[]): void {
  if (!isUserExists(thrown)) return
  const message = describe(thrown).toLowerCase()
  for (const name of names) assert.ok(!message.includes(name.toLowerCase()), `the error of a taken email or login names ${name}: ${describe(thrown)}`)
}

/** A password nobody gave: what a user without one must not sign in with either. */
const guesses = (login: string, email: string): string[] => ['', 'password', login, email, randomBytes(12).toString('base64url')]

export const CREATE_RULES: UserRule[] = [
  {
    name: 'createUser makes a user found by its email, its login and its ID',
    contract: 'Creates a user',
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const input = kit.newUser()
      const created = await kit.method('createUser')(input)
      const view = kit.adapter.toPublicUser(created)
      assert.equal(view.user_login, input.login, `the created user's user_login is ${JSON.stringify(view.user_login)}, not ${input.login}`)
      assert.equal(String(view.user_email).toLowerCase(), input.email, `the created user's user_email is ${JSON.stringify(view.user_email)}, not ${input.email}`)
      const id = idOf(kit.adapter, created)
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(input.email), created, 'findByEmail of the created user')
      assertSameUser(kit.adapter, await kit.adapter.findByLogin(input.login), created, 'findByLogin of the created user')
      assertSameUser(kit.adapter, await kit.adapter.findById(id), created, 'findById of the created user')
    }
  },
  {
    name: 'createUser without a password makes a user no password signs in as',
    contract: NO_PASSWORD,
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const input = kit.newUser()
      const created = await kit.method('createUser')(input)
      for (const record of [created, await refind(kit.adapter, created)]) {
        for (const guess of guesses(input.login, input.email)) {
          assert.equal(await signsIn(kit.adapter, record, guess), false, `a user created without a password signs in with ${JSON.stringify(guess)}`)
        }
      }
    }
  },
  {
    name: 'createUser with a password makes a user that password signs in as',
    contract: 'with `password`, which the adapter hashes and stores, as `setPassword` does',
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const password = `chosen at POST /users ${randomBytes(6).toString('base64url')}`
      const created = await kit.method('createUser')(kit.newUser({ password }))
      for (const record of [created, await refind(kit.adapter, created)]) {
        assert.equal(await signsIn(kit.adapter, record, password), true, 'the password given to createUser does not sign the user in')
        assert.equal(await signsIn(kit.adapter, record, `${password}!`), false, 'another password signs in a user created with a password')
      }
    }
  },
  {
    name: 'createUser stores the role given, which toPublicUser answers among roles',
    contract: 'The user\'s role: store it, and `toPublicUser` answers it among `roles`.',
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const created = await kit.method('createUser')(kit.newUser())
      for (const record of [created, await refind(kit.adapter, created)]) {
        const { roles } = kit.adapter.toPublicUser(record)
        // flat: roles that are no array are the public view's rule
        assert.ok([roles].flat().includes(settings.role), `a user created with the role ${settings.role} has roles ${JSON.stringify(roles)}`)
      }
    }
  },
  {
    name: 'createUser stores emailVerified as given',
    contract: 'An adapter that tracks verification stores it',
    needs: ['createUser', 'setEmailVerified'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      for (const emailVerified of [false, true]) {
        const created = await kit.method('createUser')(kit.newUser({ emailVerified }))
        for (const record of [created, await refind(kit.adapter, created)]) {
          const answered = kit.adapter.toPublicUser(record).email_verified
          assert.equal(answered, emailVerified, `a user created with emailVerified: ${String(emailVerified)} has email_verified ${String(answered)}`)
        }
      }
    }
  },
  {
    name: 'createUser refuses an email taken in another case with UserExistsError',
    contract: TAKEN,
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const seeded = await kit.seed()
      const input = kit.newUser({ email: seeded.email.toUpperCase() })
      await assertUserExists(kit.method('createUser')(input), `createUser with the email of another user (${input.email})`)
      assert.ok(await findsNobody(async () => await kit.adapter.findByLogin(input.login)), 'the refused createUser made a user all the same')
    }
  },
  {
    name: 'createUser refuses a taken login with UserExistsError',
    contract: TAKEN,
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const seeded = await kit.seed()
      const input = kit.newUser({ login: seeded.login })
      await assertUserExists(kit.method('createUser')(input), `createUser with the login of another user (${input.login})`)
      assert.ok(await findsNobody(async () => await kit.adapter.findByEmail(input.email)), 'the refused createUser made a user all the same')
    }
  },
  {
    name: 'UserExistsError names neither the email nor the login',
    contract: 'Its message names neither (it may be logged)',
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const seeded = await kit.seed()
      const createUser = kit.method('createUser')
      for (const input of [kit.newUser({ email: seeded.email }), kit.newUser({ login: seeded.login })]) {
        assertNamesNeither(await createUser(input).catch((error: unknown) => error), [input.email, input.login])
      }
    }
  },
  {
    name: 'of concurrent createUser calls with one email, exactly one succeeds',
    contract: CREATE_RACE,
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const createUser = kit.method('createUser')
      const { email } = kit.names()
      // the same address in two cases: the check must be the case-insensitive one
      const inputs = Array.from({ length: settings.parallelism }, (_, index) => kit.newUser({ email: index % 2 === 0 ? email : email.toUpperCase() }))
      const outcome = await race(inputs.length, async (index) => await createUser(inputs[index] as NewUser))
      const winner = assertOneWinner(outcome, 'createUser calls with one email', isUserExists, 'UserExistsError')
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(email), outcome.won[0]?.value, 'findByEmail after the race')
      for (const { index } of outcome.lost) {
        assert.ok(await findsNobody(async () => await kit.adapter.findByLogin(inputs[index]?.login as string)), `a losing createUser (not call ${winner.index}) made a user all the same`)
      }
    }
  },
  {
    name: 'of concurrent createUser calls with one login, exactly one succeeds',
    contract: CREATE_RACE,
    needs: ['createUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const createUser = kit.method('createUser')
      const { login } = kit.names()
      const inputs = Array.from({ length: settings.parallelism }, () => kit.newUser({ login }))
      const outcome = await race(inputs.length, async (index) => await createUser(inputs[index] as NewUser))
      assertOneWinner(outcome, 'createUser calls with one login', isUserExists, 'UserExistsError')
      assertSameUser(kit.adapter, await kit.adapter.findByLogin(login), outcome.won[0]?.value, 'findByLogin after the race')
      for (const { index } of outcome.lost) {
        assert.ok(await findsNobody(async () => await kit.adapter.findByEmail(inputs[index]?.email as string)), 'a losing createUser made a user all the same')
      }
    }
  }
]

export const CHANGE_RULES: UserRule[] = [
  {
    name: 'setPassword makes the new password sign in and the old one not',
    contract: 'Hashes and stores a new password',
    needs: ['setPassword'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, password } = await kit.seed()
      const next = `a new password ${randomBytes(6).toString('base64url')}`
      await kit.method('setPassword')(await refind(kit.adapter, user), next)
      const again = await refind(kit.adapter, user)
      assert.equal(await signsIn(kit.adapter, again, next), true, 'the new password does not sign in')
      assert.equal(await signsIn(kit.adapter, again, password), false, 'the old password still signs in')
    }
  },
  {
    name: 'deleteUser leaves the user found by no lookup',
    contract: 'Deletes the user',
    needs: ['deleteUser'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const [gone, stays] = [await kit.seed(), await kit.seed()]
      const id = idOf(kit.adapter, gone.user)
      await kit.method('deleteUser')(await refind(kit.adapter, gone.user))
      const lookups: Array<[string, () => Promise<unknown>]> = [
        [`findByEmail(${gone.email})`, async () => await kit.adapter.findByEmail(gone.email)],
        [`findByLogin(${gone.login})`, async () => await kit.adapter.findByLogin(gone.login)],
        [`findById(${id})`, async () => await kit.adapter.findById(id)]
      ]
      for (const [what, lookup] of lookups) assert.ok(await findsNobody(lookup), `${what} still finds the deleted user`)
      assertSameUser(kit.adapter, await kit.adapter.findById(idOf(kit.adapter, stays.user)), stays.user, 'findById of another user')
    }
  },
  {
    name: 'setEmail moves the user to the new email',
    contract: 'Changes the user\'s email to `email`',
    needs: ['setEmail'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, email } = await kit.seed()
      const next = kit.names().email
      await kit.method('setEmail')(await refind(kit.adapter, user), next)
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(next), user, `findByEmail of the new email ${next}`)
      assert.ok(await findsNobody(async () => await kit.adapter.findByEmail(email)), 'the old email still finds the user')
      const stored = kit.adapter.toPublicUser(await refind(kit.adapter, user)).user_email
      assert.equal(String(stored).toLowerCase(), next, `user_email is ${stored} after setEmail(user, ${next})`)
    }
  },
  {
    name: 'setEmail stores the new email verified',
    contract: 'store it verified',
    needs: ['setEmail', 'setEmailVerified'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user } = await kit.seed()
      await kit.method('setEmailVerified')(await refind(kit.adapter, user), false)
      await kit.method('setEmail')(await refind(kit.adapter, user), kit.names().email)
      const verified = kit.adapter.toPublicUser(await refind(kit.adapter, user)).email_verified
      assert.equal(verified, true, `email_verified is ${String(verified)} after setEmail`)
    }
  },
  {
    name: 'setEmail refuses an email another user has, in another case, with UserExistsError',
    contract: 'when another user has it, throw `UserExistsError`',
    needs: ['setEmail'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const [holder, mover] = [await kit.seed(), await kit.seed()]
      const asked = holder.email.toUpperCase()
      await assertUserExists(kit.method('setEmail')(await refind(kit.adapter, mover.user), asked), `setEmail to another user's email (${asked})`)
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(holder.email), holder.user, 'findByEmail of the holder\'s email after the refusal')
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(mover.email), mover.user, 'findByEmail of the refused user\'s email after the refusal')
    }
  },
  {
    name: 'setEmail\'s UserExistsError names neither email',
    contract: 'Its message names neither (it may be logged)',
    needs: ['setEmail'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const [holder, mover] = [await kit.seed(), await kit.seed()]
      const thrown = await kit.method('setEmail')(await refind(kit.adapter, mover.user), holder.email).catch((error: unknown) => error)
      assertNamesNeither(thrown, [holder.email, mover.email, mover.login])
    }
  },
  {
    name: 'setEmail takes the user\'s own email in another case',
    contract: 'The address is compared case-insensitively with every other user\'s',
    needs: ['setEmail'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const { user, email } = await kit.seed()
      const asked = email.toUpperCase()
      const refused = await kit.method('setEmail')(await refind(kit.adapter, user), asked).then(() => null, (error: unknown) => ({ error }))
      if (refused !== null) assert.fail(`setEmail(user, ${asked}) of the user's own email in another case threw ${describe(refused.error)}`)
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(email), user, 'findByEmail after the change of case')
    }
  },
  {
    name: 'of concurrent setEmail calls of many users to one email, exactly one succeeds',
    contract: 'decided atomically with the update (a unique index, or a check under a lock)',
    needs: ['setEmail'],
    run: async (made, settings) => {
      const kit = kitOf(made, settings)
      const setEmail = kit.method('setEmail')
      const movers = await settleAll(Array.from({ length: settings.parallelism }, async () => await kit.seed()))
      const { email } = kit.names()
      const outcome = await race(movers.length, async (index) => { await setEmail(movers[index]?.user, index % 2 === 0 ? email : email.toUpperCase()) })
      const { index: won } = assertOneWinner(outcome, 'setEmail calls to one email', isUserExists, 'UserExistsError')
      assertSameUser(kit.adapter, await kit.adapter.findByEmail(email), movers[won]?.user, 'findByEmail after the race')
      for (const { index } of outcome.lost) {
        const mover = movers[index] as { user: unknown, email: string }
        assert.ok(sameUser(kit.adapter, await kit.adapter.findByEmail(mover.email), mover.user), `a refused setEmail moved its user off ${mover.email}`)
      }
    }
  }
]
