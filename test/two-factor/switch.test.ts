import t from 'tap'
import type { SettingsInput } from '../../lib/index.js'
import { HS_SECRET } from '../helpers/app.js'
import { collect, errorOf, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { ALICE, BOB, buildTwoFactorApp, totpAt } from '../helpers/two-factor.js'

const idp = await startIdp()
t.teardown(() => idp.close())

const keys = [{ kid: 'k1', secret: HS_SECRET }]

/** An async settings source whose `twoFactor.enabled` a test flips, then reloads. */
function switchable (enabled: boolean): { source: () => Promise<SettingsInput>, set: (on: boolean) => void } {
  let on = enabled
  return {
    source: async () => ({ tokens: { keys }, twoFactor: { enabled: on }, oauth: { providers: providers(idp) } }),
    set: (value) => { on = value }
  }
}

t.test('twoFactor.enabled defaults to true', async (t) => {
  const { app, login } = await buildTwoFactorApp()
  t.teardown(() => app.close())
  t.equal(app.jwtLogin.settings.twoFactor.enabled, true)
  t.equal((await login()).json().data.two_factor_required, true)
})

t.test('switched off: a user with a second factor is refused after the password, others sign in as usual', async (t) => {
  const { app, login, submit } = await buildTwoFactorApp({ settings: { twoFactor: { enabled: false } } })
  t.teardown(() => app.close())
  const issued = collect(app, 'two_factor.challenge_issued')

  const wrong = await login({ email: BOB.email, password: 'not the password' })
  t.same(errorOf(wrong), [401, 48], 'without the password nothing tells that the account has a second factor')

  const refused = await login()
  t.same(errorOf(refused), [403, 206])
  t.same(refused.json(), { success: false, data: { message: 'Two-factor sign-in is switched off; this account needs it.', errorCode: 206, error_code: 206 } })
  t.notOk(refused.body.includes('jwt'), 'no token of any kind')

  const alice = await login(ALICE)
  t.equal(alice.statusCode, 200)
  t.type(alice.json().data.jwt, 'string')
  t.notOk('two_factor_required' in alice.json().data, 'a final token for a user without a second factor')

  t.same(errorOf(await submit({ JWT: 'x.y.z', code: '123456' })), [403, 105], '/auth/2fa is unavailable')
  t.same(issued, [], 'no challenge was issued')
})

t.test('the switch is live: a pending challenge waits while it is off and completes once it is on again', async (t) => {
  const settings = switchable(true)
  const { app, login, submit, secret, clock } = await buildTwoFactorApp({ plugin: { settings: settings.source } })
  t.teardown(() => app.close())
  const interim = (await login()).json().data.jwt as string

  settings.set(false)
  await app.jwtLogin.reloadSettings()
  t.equal(app.jwtLogin.settings.twoFactor.enabled, false)
  t.same(errorOf(await submit({ JWT: interim, code: await totpAt(secret, clock.now) })), [403, 105])
  t.same(errorOf(await login()), [403, 206])

  settings.set(true)
  await app.jwtLogin.reloadSettings()
  const done = await submit({ JWT: interim, code: await totpAt(secret, clock.now) })
  t.equal(done.statusCode, 200, 'the challenge was not spent while the switch was off')
  t.type(done.json().data.jwt, 'string')
})

t.test('/oauth/token refuses a user with a second factor while the switch is off', async (t) => {
  const settings = switchable(false)
  const { app } = await buildTwoFactorApp({ plugin: { settings: settings.source } })
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')

  const refused = await postToken(app, { provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.bob })).code })
  t.same(errorOf(refused), [403, 206])
  t.notOk(refused.body.includes('jwt'))
  t.same(failed, [{ ip: '127.0.0.1', provider: 'idp1', reason: 'ERR_JWT_LOGIN_TWO_FACTOR_DISABLED', errorCode: 206 }])
  t.equal((await postToken(app, { provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.alice })).code })).statusCode, 200, 'alice has no second factor')

  settings.set(true)
  await app.jwtLogin.reloadSettings()
  const challenged = await postToken(app, { provider: 'idp1', code: (await idp.code({ account: ACCOUNTS.bob })).code })
  t.equal(challenged.json().data.two_factor_required, true)
})
