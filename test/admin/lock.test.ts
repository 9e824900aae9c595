// lockUser / unlockUser / isLocked through the plugin on the memory store: live tokens end, the password sign-in and the refresh answer 403 / 251, the lock lifts.
import t from 'tap'
import { JwtLoginSettingsError } from '../../lib/index.js'
import { ALICE, buildApp, testClock } from '../helpers/app.js'
import { errorOf, login, post } from '../helpers/http.js'
import { collect } from '../helpers/oauth.js'

type TapTest = Parameters<Parameters<typeof t.test>[0]>[0]

const ON = { refresh: { enabled: true } }
const ALICE_ID = 1
const WRONG = { email: ALICE.email, password: 'not the password at all' }

async function locked (t: TapTest, settings: Record<string, unknown> = {}): Promise<Awaited<ReturnType<typeof buildApp>> & { clock: ReturnType<typeof testClock> }> {
  const clock = testClock()
  const built = await buildApp({ ...ON, ...settings }, { clock })
  t.teardown(() => built.app.close())
  return { ...built, clock }
}

t.test('a lock ends the live tokens on the next request and refuses the password sign-in alike for a right and a wrong password', async (t) => {
  const { app } = await locked(t)
  const endedEvents = collect(app, 'session.ended')
  const lockedEvents = collect(app, 'user.locked')
  const live = (await login(app)).json().data as { jwt: string, refresh_token: string }
  t.equal((await post(app, '/auth/validate', { JWT: live.jwt })).statusCode, 200, 'live before')
  t.equal(await app.jwtLogin.isLocked(ALICE_ID), false)

  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'support ticket 42' })
  t.equal(await app.jwtLogin.isLocked(ALICE_ID), true)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: live.jwt })), [401, 55], 'the access token is revoked')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: live.refresh_token })), [403, 251], 'its refresh token is a refused sign-in')
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: `${live.refresh_token.slice(0, -4)}AAAA` })), [401, 51], 'a made-up secret under the session learns nothing of the lock')

  const right = await login(app)
  const wrong = await login(app, WRONG)
  t.same(errorOf(right), [403, 251])
  t.equal(wrong.statusCode, right.statusCode)
  t.same(wrong.json(), right.json(), 'the same body, right or wrong')
  t.same(errorOf(await login(app, { email: 'nobody@example.com', password: 'whatever it is' })), [401, 48], 'an unknown user answers as always')
  t.same(errorOf(await login(app, { username: ALICE.login, password: ALICE.password })), [403, 251], 'by login name too')

  t.same(lockedEvents, [{ userId: ALICE_ID, reason: 'support ticket 42', until: null }])
  t.same(endedEvents, [{ userId: ALICE_ID, sessionId: null, reason: 'locked' }], 'every session ended, told once')
})

t.test('a locked user\'s attempts check no password and do not count on the account', async (t) => {
  const { app, users } = await locked(t, { limits: { loginPerAccount: { max: 3, window: '15m' } } })
  const failed = collect(app, 'login.failed')
  let verified = 0
  const verify = users.verifyPassword.bind(users)
  users.verifyPassword = async (user, password) => { verified++; return await verify(user, password) }
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'abuse' })
  for (let i = 0; i < 6; i++) t.same(errorOf(await login(app, WRONG)), [403, 251])
  t.equal(verified, 0, 'no password was verified')
  t.same(failed.map(f => [f.reason, f.errorCode]), Array(6).fill(['locked', 251]))
  t.equal(await app.jwtLogin.unlockUser(ALICE_ID), true)
  t.equal((await login(app)).statusCode, 200, 'the owner is not shut out by the attempts made during the lock')
})

t.test('the password_hash sign-in is refused alike', async (t) => {
  const { app } = await locked(t, { login: { allowPasswordHash: true } })
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'abuse' })
  const right = await login(app, { email: ALICE.email, password_hash: ALICE.password })
  const wrong = await login(app, { email: ALICE.email, password_hash: 'not the hash' })
  t.same(errorOf(right), [403, 251])
  t.same(wrong.json(), right.json())
})

t.test('unlock: sign-in works again, the tokens from before stay dead', async (t) => {
  const { app, clock } = await locked(t)
  const unlocked = collect(app, 'user.unlocked')
  const before = (await login(app)).json().data as { jwt: string, refresh_token: string }
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'abuse' })
  clock.advance(1000)
  t.equal(await app.jwtLogin.unlockUser(ALICE_ID, { reason: 'cleared' }), true)
  t.equal(await app.jwtLogin.isLocked(ALICE_ID), false)
  t.equal(await app.jwtLogin.unlockUser(ALICE_ID), false, 'nothing held any more')
  t.same(unlocked, [{ userId: ALICE_ID, reason: 'cleared' }], 'told once, with the reason')
  t.same(errorOf(await post(app, '/auth/validate', { JWT: before.jwt })), [401, 55])
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: before.refresh_token })), [401, 51], 'an ended session, no lock any more')
  const after = (await login(app)).json().data as { jwt: string, refresh_token: string }
  t.equal((await post(app, '/auth/validate', { JWT: after.jwt })).statusCode, 200)
  t.equal((await post(app, '/auth/refresh', { refresh_token: after.refresh_token })).statusCode, 200)
  t.equal(await app.jwtLogin.unlockUser(ALICE_ID, {}), false, 'an unlock of an unlocked user tells nothing')
  t.equal(unlocked.length, 1)
})

t.test('a lock with `until` lifts by itself; the tokens from before stay dead', async (t) => {
  const { app, clock } = await locked(t)
  const lockedEvents = collect(app, 'user.locked')
  const before = (await login(app)).json().data as { jwt: string, refresh_token: string }
  // shorter than the access token's lifetime, so the token from before is refused for its session, not for its age
  const until = new Date(clock.now + 300_000)
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'cool-off', until })
  t.same(lockedEvents, [{ userId: ALICE_ID, reason: 'cool-off', until: until.toISOString() }])
  clock.advance(300_000 - 1)
  t.same(errorOf(await login(app)), [403, 251], 'held up to its end')
  t.equal(await app.jwtLogin.isLocked(ALICE_ID), true)
  clock.advance(1)
  t.equal(await app.jwtLogin.isLocked(ALICE_ID), false)
  t.equal(await app.jwtLogin.unlockUser(ALICE_ID), false, 'passed: nothing to lift')
  const after = await login(app)
  t.equal(after.statusCode, 200)
  t.equal((await post(app, '/auth/validate', { JWT: after.json().data.jwt })).statusCode, 200)
  t.same(errorOf(await post(app, '/auth/validate', { JWT: before.jwt })), [401, 55])
  t.same(errorOf(await post(app, '/auth/refresh', { refresh_token: before.refresh_token })), [401, 51])
})

t.test('a lock on a locked user replaces it', async (t) => {
  const { app, clock } = await locked(t)
  const lockedEvents = collect(app, 'user.locked')
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'first' })
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'second', until: clock.now + 60_000 })
  t.same(lockedEvents.map(e => e.reason), ['first', 'second'])
  t.same(errorOf(await login(app)), [403, 251])
  clock.advance(60_000)
  t.equal((await login(app)).statusCode, 200, 'the second lock\'s end holds')
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'third', until: clock.now + 60_000 })
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'fourth' })
  clock.advance(120_000)
  t.same(errorOf(await login(app)), [403, 251], 'an indefinite lock replaces a timed one')
})

t.test('bad options are refused with JwtLoginSettingsError and change nothing', async (t) => {
  const { app, clock } = await locked(t)
  const lockedEvents = collect(app, 'user.locked')
  const live = (await login(app)).json().data as { jwt: string }
  const api = app.jwtLogin as unknown as { lockUser: (id: unknown, options: unknown) => Promise<void>, unlockUser: (id: unknown, options?: unknown) => Promise<boolean>, isLocked: (id: unknown) => Promise<boolean> }
  const refusals: Array<[string, () => Promise<unknown>, RegExp]> = [
    ['no options', async () => await api.lockUser(ALICE_ID, undefined), /lockUser\/reason/],
    ['no reason', async () => await api.lockUser(ALICE_ID, {}), /lockUser\/reason/],
    ['an empty reason', async () => await api.lockUser(ALICE_ID, { reason: '  ' }), /lockUser\/reason/],
    ['a reason too long', async () => await api.lockUser(ALICE_ID, { reason: 'x'.repeat(501) }), /lockUser\/reason/],
    ['until in the past', async () => await api.lockUser(ALICE_ID, { reason: 'r', until: clock.now - 1 }), /lockUser\/until/],
    ['until now', async () => await api.lockUser(ALICE_ID, { reason: 'r', until: new Date(clock.now) }), /lockUser\/until/],
    ['an invalid date', async () => await api.lockUser(ALICE_ID, { reason: 'r', until: new Date('nope') }), /lockUser\/until/],
    ['until as text', async () => await api.lockUser(ALICE_ID, { reason: 'r', until: '2099-01-01' }), /lockUser\/until/],
    ['a user id of 0', async () => await api.lockUser(0, { reason: 'r' }), /lockUser\/userId/],
    ['a user id as text', async () => await api.lockUser('1', { reason: 'r' }), /lockUser\/userId/],
    ['a user the adapter does not find', async () => await api.lockUser(999, { reason: 'r' }), /lockUser\/userId/],
    ['unlock: a user id of 1.5', async () => await api.unlockUser(1.5), /unlockUser\/userId/],
    ['unlock: an empty reason', async () => await api.unlockUser(ALICE_ID, { reason: '' }), /unlockUser\/reason/],
    ['isLocked: a user id of -1', async () => await api.isLocked(-1), /isLocked\/userId/]
  ]
  for (const [what, call, path] of refusals) {
    const error = await call().then(() => null, (e: unknown) => e)
    t.ok(error instanceof JwtLoginSettingsError, `${what}: JwtLoginSettingsError`)
    t.match((error as Error).message, path, what)
  }
  t.equal(await app.jwtLogin.isLocked(ALICE_ID), false, 'no lock')
  t.equal((await post(app, '/auth/validate', { JWT: live.jwt })).statusCode, 200, 'the session lives on')
  t.equal((await login(app)).statusCode, 200)
  t.same(lockedEvents, [])
})

t.test('a locked account whose own limit is full answers 403 / 251; a client over its own limit gets 429 as for any account', async (t) => {
  const { app } = await locked(t, { limits: { loginPerAccount: { max: 2, window: '15m' }, loginPerIp: { max: 4, window: '15m' } } })
  for (let i = 0; i < 2; i++) t.same(errorOf(await login(app, WRONG, '10.0.0.1')), [401, 48])
  t.same(errorOf(await login(app, WRONG, '10.0.0.2')), [429, 200], 'the account is at its limit')
  await app.jwtLogin.lockUser(ALICE_ID, { reason: 'abuse' })
  t.same(errorOf(await login(app, WRONG, '10.0.0.2')), [403, 251], 'refused by the account\'s limit: the lock is the answer')
  // 10.0.0.3 fills its own limit on names nobody has, then asks for alice
  for (let i = 0; i < 4; i++) t.same(errorOf(await login(app, { email: `nobody${i}@example.com`, password: 'whatever it is' }, '10.0.0.3')), [401, 48])
  t.same(errorOf(await login(app, { email: 'nobody4@example.com', password: 'whatever it is' }, '10.0.0.3')), [429, 200], 'the client is over its limit')
  t.same(errorOf(await login(app, WRONG, '10.0.0.3')), [429, 200], 'refused by the client\'s own limit: 429, the lock untold')
})
