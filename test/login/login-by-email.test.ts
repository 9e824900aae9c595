// POST /auth with `login`: the login name, then the email (Simple JWT Login 4), through the routes; `username` and `email` each name one column.
import t from 'tap'
import type { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { claimsOf, errorOf, login } from '../helpers/http.js'

const BOB = { login: 'bob', email: 'bob@example.net', password: 'bob has a password too', displayName: 'Bob' }

/** Records each adapter lookup as it starts, and which had started before the first one answered. */
function recordLookups (users: MemoryUserAdapter): { started: string[], beforeFirstAnswer: () => string[] } {
  const started: string[] = []
  let firstAnswer: string[] | null = null
  for (const method of ['findByEmail', 'findByLogin'] as const) {
    const original = users[method].bind(users)
    users[method] = async (value: string) => {
      started.push(method)
      const found = await original(value)
      firstAnswer ??= [...started]
      return found
    }
  }
  return { started, beforeFirstAnswer: () => firstAnswer ?? [] }
}

/** Counts the adapter's password verifications. */
function countVerifications (users: MemoryUserAdapter): () => number {
  const original = users.verifyPassword.bind(users)
  let count = 0
  users.verifyPassword = async (user, password) => {
    count++
    return await original(user, password)
  }
  return () => count
}

t.test('login set to an email signs that email\'s account in, in any case of the address', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  for (const address of [ALICE.email, ALICE.email.toUpperCase()]) {
    const res = await login(app, { login: address, password: ALICE.password })
    t.equal(res.statusCode, 200, res.body)
    t.equal(claimsOf(res.json().data.jwt).sub, '1', 'alice')
  }
})

t.test('login tries the login name first: a login name that is another account\'s email signs in its own account', async (t) => {
  const { app, users } = await buildApp()
  t.teardown(() => app.close())
  // only a database written before registration refused such names holds one
  const squatter = await users.addUser({ ...BOB, login: ALICE.email })
  const asLogin = await login(app, { login: ALICE.email, password: BOB.password })
  t.equal(asLogin.statusCode, 200, asLogin.body)
  t.equal(claimsOf(asLogin.json().data.jwt).sub, String(squatter.ID), 'the login name wins')
  t.same(errorOf(await login(app, { login: ALICE.email, password: ALICE.password })), [401, 48], 'no second try by email once a login name matched: one password check per attempt')
  const byEmail = await login(app, { email: ALICE.email, password: ALICE.password })
  t.equal(claimsOf(byEmail.json().data.jwt).sub, '1', 'the email field still names alice')
})

t.test('username and email each name one column, as in Simple JWT Login 4', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  t.same(errorOf(await login(app, { username: ALICE.email, password: ALICE.password })), [401, 48], 'username is the login name only')
  t.same(errorOf(await login(app, { email: ALICE.login, password: ALICE.password })), [401, 48], 'email is the email only')
})

t.test('login with an @ asks both lookups at once; without one only the login name', async (t) => {
  const { app, users } = await buildApp()
  t.teardown(() => app.close())
  const withAt = recordLookups(users)
  t.equal((await login(app, { login: 'nobody@example.com', password: ALICE.password })).statusCode, 401)
  t.same(withAt.beforeFirstAnswer().sort(), ['findByEmail', 'findByLogin'], 'both started before either answered')
  withAt.started.length = 0
  t.equal((await login(app, { login: 'nobody', password: ALICE.password })).statusCode, 401)
  t.same(withAt.started, ['findByLogin'], 'no email lookup for a name without @')
})

t.test('login by email: a wrong password and an unknown address get the same refusal, one password check at most', async (t) => {
  const { app, users } = await buildApp()
  t.teardown(() => app.close())
  const verifications = countVerifications(users)
  const wrong = await login(app, { login: ALICE.email, password: 'not it' })
  t.equal(verifications(), 1, 'the password was checked once')
  const unknown = await login(app, { login: 'nobody@example.com', password: 'not it' })
  t.equal(verifications(), 1, 'an unknown address checks no user (the flow spends the same time on a dummy hash)')
  t.same(errorOf(wrong), [401, 48])
  t.equal(unknown.statusCode, wrong.statusCode)
  t.equal(unknown.body, wrong.body, 'the same body')
})
