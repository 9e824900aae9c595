import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import type { MemoryUser } from '../../lib/testing.js'
import { buildAccountApp } from '../helpers/account.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { claimsOf, errorOf, loginTokens, post } from '../helpers/http.js'

const ON = { refresh: { enabled: true } }

/** Alice's password changed as a host's own page would: through the adapter, with jwt-login not told. */
async function changeOutside (users: { findById: (id: number) => Promise<MemoryUser | null>, setPassword: (user: MemoryUser, password: string) => Promise<void> }, password = 'a new password set elsewhere'): Promise<void> {
  await users.setPassword(await users.findById(1) as MemoryUser, password)
}

/** `PUT /account/password` with alice's password, by the session of `jwt`. */
async function changeOwnPassword (app: FastifyInstance, jwt: string): Promise<LightMyRequestResponse> {
  return await app.inject({
    method: 'PUT',
    url: '/jwt-login/v1/account/password',
    headers: { authorization: `Bearer ${jwt}` },
    payload: { current_password: ALICE.password, new_password: 'another long new password' }
  })
}

t.test('a password changed outside jwt-login ends the session at its next refresh; a retry and the access token end with it', async (t) => {
  const clock = testClock()
  const { app, users } = await buildApp(ON, { clock })
  t.teardown(() => app.close())
  const ended: unknown[] = []
  app.jwtLogin.events.on('session.ended', (e) => ended.push(e))
  const first = await loginTokens(app)
  clock.advance(1000)
  const rotated = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(rotated.statusCode, 200, 'an unchanged password refreshes')
  t.notOk('pfp' in claimsOf(rotated.json().data.jwt), 'no fingerprint in tokens unless sessions.checkPasswordOnValidate')

  await changeOutside(users)
  const refused = await post(app, '/auth/refresh', { refresh_token: rotated.json().data.refresh_token })
  t.same(errorOf(refused), [401, 51], 'the refresh is refused as an ended session')
  t.same(ended, [{ userId: 1, sessionId: claimsOf(first.jwt).sid, reason: 'password_changed_outside' }])
  const retried = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.same(errorOf(retried), [401, 51], 'the previous token within the reuse interval too')
  const validated = await post(app, '/auth/validate', { JWT: rotated.json().data.jwt })
  t.same(errorOf(validated), [401, 55], 'and the session\'s access token')
  t.equal(ended.length, 1, 'ended once')
  t.notOk(JSON.stringify(ended).includes((await users.findById(1) as MemoryUser).passwordHash), 'no hash in the event')

  const again = await post(app, '/auth', { email: ALICE.email, password: 'a new password set elsewhere' })
  t.equal(again.statusCode, 200, 'the new password signs in')
  const next = await post(app, '/auth/refresh', { refresh_token: again.json().data.refresh_token })
  t.equal(next.statusCode, 200, 'and its session refreshes')
})

t.test('sessions.checkPasswordOnValidate: the access token carries a keyed hash, and is refused at once after a change', async (t) => {
  const { app, users } = await buildApp({ ...ON, sessions: { enabled: true, checkPasswordOnValidate: true } })
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const pfp = claimsOf(first.jwt).pfp
  t.type(pfp, 'string')
  t.notOk(String(pfp).includes((await users.findById(1) as MemoryUser).passwordHash), 'not the hash')
  t.equal((await post(app, '/auth/validate', { JWT: first.jwt })).statusCode, 200)
  const rotated = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(claimsOf(rotated.json().data.jwt).pfp, pfp, 'a refresh carries it')

  await changeOutside(users)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: first.jwt })), [401, 55], 'validate refuses the token')
  const host = await app.inject({ method: 'GET', url: '/jwt-login/v1/sessions', headers: { authorization: `Bearer ${first.jwt as string}` } })
  t.equal(host.statusCode, 401, 'so does every route that checks it')
  const refresh = await post(app, '/auth/refresh', { refresh_token: rotated.json().data.refresh_token })
  t.same(errorOf(refresh), [401, 51], 'and the session ends at its refresh')
})

t.test('without sessions.checkPasswordOnValidate an access token lives out its lifetime after a change', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  await changeOutside(users)
  t.equal((await post(app, '/auth/validate', { JWT: first.jwt })).statusCode, 200)
})

t.test('an adapter without passwordFingerprint: nothing is recorded, a change outside ends nothing', async (t) => {
  const { app, users } = await buildApp({ ...ON, sessions: { checkPasswordOnValidate: true } })
  t.teardown(() => app.close())
  Object.defineProperty(users, 'passwordFingerprint', { value: undefined, configurable: true })
  const first = await loginTokens(app)
  t.notOk('pfp' in claimsOf(first.jwt))
  await changeOutside(users)
  t.equal((await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).statusCode, 200)
})

t.test('a session from before the adapter had a fingerprint records one at its next refresh', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const fingerprint = users.passwordFingerprint.bind(users)
  Object.defineProperty(users, 'passwordFingerprint', { value: undefined, configurable: true })
  const first = await loginTokens(app)
  Object.defineProperty(users, 'passwordFingerprint', { value: fingerprint, configurable: true })
  const rotated = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(rotated.statusCode, 200, 'refreshes, and records it')
  await changeOutside(users)
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: rotated.json().data.refresh_token })), [401, 51], 'a change since ends it')
})

t.test('a user whose password went (null) counts as a change', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  Object.defineProperty(users, 'passwordFingerprint', { value: () => null, configurable: true })
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: first.refresh_token })), [401, 51])
})

t.test('an adapter whose passwordFingerprint throws: 503 at sign-in and refresh, and the session goes on once it answers', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const fingerprint = users.passwordFingerprint.bind(users)
  Object.defineProperty(users, 'passwordFingerprint', { value: () => { throw new Error('db down, user_pass=$P$secret') }, configurable: true })
  t.same(errorOf(await post(app, '/auth', { email: ALICE.email, password: ALICE.password })), [503, 201], 'a sign-in fails closed')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: first.refresh_token })), [503, 201], 'so does a refresh, ending nothing')
  Object.defineProperty(users, 'passwordFingerprint', { value: fingerprint, configurable: true })
  t.equal((await post(app, '/auth/refresh', { refresh_token: first.refresh_token })).statusCode, 200, 'the same token refreshes once it answers')
})

t.test('a password change through PUT /account/password keeps the caller\'s session refreshing, and its next token valid', async (t) => {
  const kit = await buildAccountApp(t, { sessions: { checkPasswordOnValidate: true } })
  const { app } = kit
  const mine = await loginTokens(app)
  const other = await loginTokens(app)
  const changed = await changeOwnPassword(app, mine.jwt)
  t.equal(changed.statusCode, 200, changed.body)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: mine.jwt })), [401, 55], 'the token that carried the old fingerprint is refused')
  const refreshed = await post(app, '/auth/refresh', { refresh_token: mine.refresh_token })
  t.equal(refreshed.statusCode, 200, 'but the kept session refreshes')
  t.equal((await post(app, '/auth/validate', { JWT: refreshed.json().data.jwt })).statusCode, 200, 'and its new token validates')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: other.refresh_token })), [401, 51], 'the other session ended')
})

t.test('a kept session whose fingerprint cannot be recorded is logged, and the change stands', async (t) => {
  const kit = await buildAccountApp(t)
  const { app, users } = kit
  const mine = await loginTokens(app)
  const findById = users.findById.bind(users)
  let reads = 0
  // the change reads the user once for the token; the read for the fingerprint fails
  Object.defineProperty(users, 'findById', { value: async (id: number) => { reads++; if (reads > 1) throw new Error('db down'); return await findById(id) }, configurable: true })
  const changed = await changeOwnPassword(app, mine.jwt)
  t.equal(changed.statusCode, 200, changed.body)
  Object.defineProperty(users, 'findById', { value: findById, configurable: true })
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: mine.refresh_token })), [401, 51], 'its next refresh ends it, as the log says')
})

t.test('a copy that differs is read again past the user cache: a stale copy ends nothing, a user gone since ends the session', async (t) => {
  const { app, users } = await buildApp(ON)
  t.teardown(() => app.close())
  const first = await loginTokens(app)
  const findById = users.findById.bind(users)
  const answers: Array<MemoryUser | null | 'real'> = []
  Object.defineProperty(users, 'findById', { value: async (id: number) => { const next = answers.length > 0 ? answers.shift() : 'real'; return next === 'real' ? await findById(id) : next }, configurable: true })
  const stale = { ...(await findById(1) as MemoryUser), passwordChanges: 7 }
  answers.push(stale, 'real')
  const kept = await post(app, '/auth/refresh', { refresh_token: first.refresh_token })
  t.equal(kept.statusCode, 200, 'the second read agrees with the session: it goes on')
  app.jwtLogin.forgetUser(1)
  answers.push(stale, null)
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: kept.json().data.refresh_token })), [401, 51], 'no user on the second read: the session ends')
})

t.test('PUT /account/password records nothing without passwordFingerprint, nor for a user gone meanwhile', async (t) => {
  await t.test('no passwordFingerprint', async (t) => {
    const { app, users } = await buildAccountApp(t)
    Object.defineProperty(users, 'passwordFingerprint', { value: undefined, configurable: true })
    const mine = await loginTokens(app)
    t.equal((await changeOwnPassword(app, mine.jwt)).statusCode, 200)
    t.equal((await post(app, '/auth/refresh', { refresh_token: mine.refresh_token })).statusCode, 200, 'the kept session refreshes')
  })
  await t.test('the user gone when the fingerprint is read', async (t) => {
    const { app, users } = await buildAccountApp(t)
    const mine = await loginTokens(app)
    const setPassword = users.setPassword.bind(users)
    const findById = users.findById.bind(users)
    let gone = false
    Object.defineProperty(users, 'setPassword', { value: async (user: MemoryUser, password: string) => { await setPassword(user, password); gone = true }, configurable: true })
    Object.defineProperty(users, 'findById', { value: async (id: number) => gone ? null : await findById(id), configurable: true })
    t.equal((await changeOwnPassword(app, mine.jwt)).statusCode, 200, 'the change stands')
  })
})
