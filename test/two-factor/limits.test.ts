import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { JwtLoginSettingsError, MemoryStore } from '../../lib/index.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { stateKeys } from '../../lib/tokens/revocation.js'
import { buildApp, HS_SECRET } from '../helpers/app.js'
import { redisStore } from '../helpers/redis-store.js'
import { buildTwoFactorApp, PREFIX, totpAt, wrongCode } from '../helpers/two-factor.js'

t.test('missing pieces and switched-off features answer in the interface\'s order', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const token = await interim()

  const noJwt = await submit({ code: '123456' })
  t.equal(noJwt.statusCode, 400)
  t.equal(noJwt.json().data.errorCode, 23)
  const noCode = await submit({ JWT: token })
  t.equal(noCode.statusCode, 400)
  t.equal(noCode.json().data.errorCode, 109)
  const emptyCode = await submit({ JWT: token, code: '' })
  t.equal(emptyCode.json().data.errorCode, 109)

  const { app: off } = await buildApp({ authentication: { enabled: false } }, { twoFactor: { port: new MemoryTwoFactorStore() } })
  t.teardown(() => off.close())
  const disabled = await off.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: token, code: '123456' } })
  t.equal(disabled.statusCode, 403)
  t.equal(disabled.json().data.errorCode, 45)

  const { app: without } = await buildApp()
  t.teardown(() => without.close())
  t.equal(without.jwtLogin.twoFactor, null)
  const unavailable = await without.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: token, code: '123456' } })
  t.equal(unavailable.statusCode, 403)
  t.equal(unavailable.json().data.errorCode, 105)

  t.equal((await submit({ JWT: token, code: await totpAt(secret, clock.now) })).statusCode, 200, 'none of that spent the challenge')
})

t.test('five wrong codes close the challenge', async (t) => {
  const { app, interim, submit, secret, clock, bobId } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const seen: Array<[string, unknown]> = []
  app.jwtLogin.events.on('two_factor.code_rejected', (e) => seen.push(['rejected', e]))
  app.jwtLogin.events.on('two_factor.challenge_closed', (e) => seen.push(['closed', e]))
  const token = await interim()
  const wrong = await wrongCode(secret, clock.now)
  for (let i = 1; i <= 4; i++) {
    const res = await submit({ JWT: token, code: wrong })
    t.equal(res.statusCode, 401)
    t.equal(res.json().data.errorCode, 109, `wrong code ${i}`)
  }
  const fifth = await submit({ JWT: token, code: wrong })
  t.equal(fifth.statusCode, 401)
  t.equal(fifth.json().data.errorCode, 107, 'the fifth closes it')
  const right = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.equal(right.statusCode, 401)
  t.equal(right.json().data.errorCode, 107, 'a closed challenge takes no right code either')
  t.same(seen.map(([name]) => name), ['rejected', 'rejected', 'rejected', 'rejected', 'rejected', 'closed'])
  t.same(seen[4], ['rejected', { userId: bobId, ip: '127.0.0.1', attempt: 5 }])
  t.notOk(JSON.stringify(seen).includes(wrong), 'no code in the events')
})

t.test('the attempts per challenge are a setting', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ settings: { twoFactor: { attemptsPerChallenge: 2 } } })
  t.teardown(() => app.close())
  const token = await interim()
  const wrong = await wrongCode(secret, clock.now)
  t.equal((await submit({ JWT: token, code: wrong })).json().data.errorCode, 109)
  t.equal((await submit({ JWT: token, code: wrong })).json().data.errorCode, 107)
})

/** A store whose reads of challenges are slow, so concurrent requests all find the challenge open. */
class SlowChallengeStore extends MemoryStore {
  override async get (key: string): Promise<string | null> {
    const value = await super.get(key)
    if (key.startsWith('2fa:challenge:')) await sleep(50)
    return value
  }

  override async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    const values = await super.getMany(keys)
    if (keys.some(key => key.startsWith('2fa:challenge:'))) await sleep(50)
    return values
  }

  // the limiter's read and counts in one call: its answer as slow as the read's, so every guess is counted before any is refused
  override async readAndIncrement (...args: Parameters<MemoryStore['readAndIncrement']>): ReturnType<MemoryStore['readAndIncrement']> {
    const answer = await super.readAndIncrement(...args)
    if (args[0].some(key => key.startsWith('2fa:challenge:'))) await sleep(50)
    return answer
  }
}

t.test('concurrent guesses never get more than the allowed attempts', async (t) => {
  const store = new SlowChallengeStore()
  t.teardown(() => store.close())
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ plugin: { store } })
  t.teardown(() => app.close())
  const token = await interim()
  const wrong = await wrongCode(secret, clock.now)
  const results = await Promise.all(Array.from({ length: 12 }, async () => await submit({ JWT: token, code: wrong })))
  const codes = results.map(r => r.json().data.errorCode)
  t.equal(codes.filter(c => c === 109).length, 4, 'four answered as wrong codes')
  t.equal(codes.filter(c => c === 108).length, 2, 'two are over the per-account limit (10) before the code is looked at')
  t.equal(codes.filter(c => c === 107).length, 6, 'the rest find the challenge closed')
})

t.test('failures count per account across challenges: 429 / 108 with Retry-After', async (t) => {
  const { app, interim, submit, secret, clock, bobId } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  const locked: unknown[] = []
  app.jwtLogin.events.on('two_factor.account_locked', (e) => locked.push(e))
  const wrong = await wrongCode(secret, clock.now)
  for (let challenge = 0; challenge < 2; challenge++) {
    const token = await interim()
    for (let i = 0; i < 5; i++) await submit({ JWT: token, code: wrong })
  }
  t.same(locked, [{ userId: bobId, ip: '127.0.0.1' }], 'the tenth failure locks')

  const fresh = await interim()
  const res = await submit({ JWT: fresh, code: await totpAt(secret, clock.now) })
  t.equal(res.statusCode, 429)
  t.equal(res.json().data.errorCode, 108)
  t.equal(res.headers['retry-after'], '900')

  clock.advance(15 * 60_000 + 1000)
  const later = await submit({ JWT: await interim(), code: await totpAt(secret, clock.now) })
  t.equal(later.statusCode, 200, 'the lock ends with its window')
})

t.test('the per-account limit is a setting, and a success forgets the failures', async (t) => {
  const { app, interim, submit, secret, clock } = await buildTwoFactorApp({ settings: { twoFactor: { perAccount: { max: 3, window: '1m' } } } })
  t.teardown(() => app.close())
  const wrong = await wrongCode(secret, clock.now)
  const first = await interim()
  await submit({ JWT: first, code: wrong })
  await submit({ JWT: first, code: wrong })
  t.equal((await submit({ JWT: first, code: await totpAt(secret, clock.now) })).statusCode, 200)

  const second = await interim()
  await submit({ JWT: second, code: wrong })
  await submit({ JWT: second, code: wrong })
  clock.advance(30_000)
  t.equal((await submit({ JWT: second, code: await totpAt(secret, clock.now) })).statusCode, 200, 'two failures after a success do not lock')

  const third = await interim()
  for (let i = 0; i < 3; i++) await submit({ JWT: third, code: wrong })
  const res = await submit({ JWT: third, code: wrong })
  t.equal(res.statusCode, 429)
  t.equal(res.headers['retry-after'], '30', 'the window runs from the first counted attempt, 30 s ago')
})

t.test('a user removed or cut off while the challenge is pending', async (t) => {
  const store = new MemoryStore()
  t.teardown(() => store.close())
  const { app, users, interim, submit, secret, clock, bobId } = await buildTwoFactorApp({ plugin: { store } })
  t.teardown(() => app.close())

  const token = await interim()
  // what a password reset does: every session of the user started before now ends, pending challenges too
  clock.advance(1)
  await store.set(stateKeys.userCutoff(bobId), String(clock.now), 60_000)
  const cut = await submit({ JWT: token, code: await totpAt(secret, clock.now) })
  t.equal(cut.statusCode, 401)
  t.equal(cut.json().data.errorCode, 55)
  await store.delete(stateKeys.userCutoff(bobId))

  const pending = await interim()
  await users.removeUser(bobId)
  const gone = await submit({ JWT: pending, code: await totpAt(secret, clock.now) })
  t.equal(gone.statusCode, 401)
  t.equal(gone.json().data.errorCode, 24)
})

t.test('settings: defaults, and an interim lifetime of at most 5 minutes', async (t) => {
  const keys = [{ kid: 'k', secret: HS_SECRET }]
  t.same(resolveSettings({ tokens: { keys } }).twoFactor, {
    enabled: true,
    interimLifetimeMs: 300_000,
    attemptsPerChallenge: 5,
    perAccount: { max: 10, windowMs: 900_000 },
    emailCodeLifetimeMs: 600_000,
    rememberDevice: { enabled: false, lifetimeMs: 2_592_000_000, maxPerUser: 10 }
  })
  t.equal(resolveSettings({ tokens: { keys }, twoFactor: { interimLifetime: 120 } }).twoFactor.interimLifetimeMs, 120_000)
  t.throws(() => resolveSettings({ tokens: { keys }, twoFactor: { interimLifetime: '6m' } }), JwtLoginSettingsError)
  try {
    resolveSettings({ tokens: { keys }, twoFactor: { interimLifetime: '301s' } })
    t.fail('refused')
  } catch (error) {
    t.equal((error as JwtLoginSettingsError).path, 'twoFactor/interimLifetime')
  }
  t.throws(() => resolveSettings({ tokens: { keys }, twoFactor: { attemptsPerChallenge: 0 } }), JwtLoginSettingsError)
})

for (const backend of ['memory', 'redis'] as const) {
  t.test(`a burst of wrong codes over many challenges is evaluated at most perAccount.max times (${backend})`, async (t) => {
    const store = backend === 'redis' ? redisStore(t, '2fa-burst').store : undefined
    const { app, interim, submit, secret, clock } = await buildTwoFactorApp({
      settings: { twoFactor: { perAccount: { max: 3, window: '15m' } } },
      plugin: store === undefined ? {} : { store }
    })
    t.teardown(() => app.close())
    const tokens: string[] = []
    for (let i = 0; i < 20; i++) tokens.push(await interim())
    const wrong = await wrongCode(secret, clock.now)
    const answers = await Promise.all(tokens.map(async (token) => await submit({ JWT: token, code: wrong })))
    const codes = answers.map(a => a.json().data.errorCode)
    t.equal(codes.filter(c => c === 109).length, 3, 'three codes were looked at')
    t.equal(codes.filter(c => c === 108).length, 17, 'the rest were refused before their code was looked at')
  })
}
