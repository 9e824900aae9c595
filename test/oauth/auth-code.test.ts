import t from 'tap'
import { resolveSettings } from '../../lib/config/settings.js'
import { HS_SECRET } from '../helpers/app.js'
import { login } from '../helpers/http.js'
import { buildOAuthApp, errorOf, postToken } from '../helpers/oauth.js'

const keys = [{ kid: 'k1', secret: HS_SECRET }]
const codes = [{ code: 'gate-code' }]
// no provider is ever asked: without `code` or `id_token` a passed gate answers 400 / 71
const provider = { on: { enabled: true, issuer: 'https://idp.invalid', clientId: 'c', acceptIdToken: true } }

function requireFor (input: Record<string, boolean>): Record<string, boolean> {
  return resolveSettings({ tokens: { keys }, authCodes: { requireFor: input } }).authCodes.requireFor
}

t.test('requireFor.oauth takes the value of requireFor.auth unless it is given', async (t) => {
  t.same(requireFor({}), { auth: false, validate: false, refresh: false, revoke: false, oauth: false })
  t.equal(requireFor({ auth: true }).oauth, true, 'auth on, oauth unset: oauth on')
  t.equal(requireFor({ auth: true, oauth: false }).oauth, false, 'auth on, oauth off: off')
  t.equal(requireFor({ auth: false, oauth: true }).oauth, true, 'auth off, oauth on: on')
  t.equal(requireFor({ oauth: true }).auth, false, 'oauth never turns auth on')
})

t.test('"Authentication Requires Auth Code" gates /auth and /oauth/token', async (t) => {
  const { app } = await buildOAuthApp(provider, { authCodes: { codes, requireFor: { auth: true } } })
  t.teardown(() => app.close())
  t.same(errorOf(await login(app)), [400, 94], '/auth needs AUTH_KEY')
  t.same(errorOf(await postToken(app, { provider: 'on' })), [400, 94], '/oauth/token needs AUTH_CODE')
  t.same(errorOf(await postToken(app, { provider: 'on', AUTH_CODE: 'wrong' })), [401, 27])
  t.same(errorOf(await postToken(app, { provider: 'on', AUTH_KEY: 'gate-code' })), [400, 94], 'AUTH_KEY is not the parameter of /oauth/token')
  t.same(errorOf(await postToken(app, { provider: 'on', AUTH_CODE: 'gate-code' })), [400, 71], 'the right code passes the gate')
})

t.test('GET /oauth/token takes AUTH_CODE from its query; POST from its body only', async (t) => {
  const { app } = await buildOAuthApp(provider, { authCodes: { codes, requireFor: { auth: true } } })
  t.teardown(() => app.close())
  const get = async (query: string): Promise<[number, number | undefined]> => errorOf(await app.inject({ method: 'GET', url: `/jwt-login/v1/oauth/token?${query}` }))
  t.same(await get('provider=on'), [400, 94])
  t.same(await get('provider=on&AUTH_CODE=wrong'), [401, 27])
  t.same(await get('provider=on&AUTH_CODE=gate-code'), [400, 71], 'the code in the query passes the gate of GET')
  const post = await app.inject({ method: 'POST', url: '/jwt-login/v1/oauth/token?AUTH_CODE=gate-code', payload: { provider: 'on' } })
  t.same(errorOf(post), [400, 94], 'POST does not read it from the URL')
})

t.test('requireFor.oauth set to false keeps /oauth/token open while /auth is gated', async (t) => {
  const { app } = await buildOAuthApp(provider, { authCodes: { codes, requireFor: { auth: true, oauth: false } } })
  t.teardown(() => app.close())
  t.same(errorOf(await login(app)), [400, 94])
  t.same(errorOf(await postToken(app, { provider: 'on' })), [400, 71], 'not gated')
})

t.test('requireFor.oauth alone gates /oauth/token and leaves /auth open', async (t) => {
  const { app } = await buildOAuthApp(provider, { authCodes: { codes, requireFor: { oauth: true } } })
  t.teardown(() => app.close())
  t.equal((await login(app)).statusCode, 200)
  t.same(errorOf(await postToken(app, { provider: 'on' })), [400, 94], 'gated')
  t.same(errorOf(await postToken(app, { provider: 'on', AUTH_CODE: 'gate-code' })), [400, 71])
})

t.test('the gate follows a live settings change of requireFor.auth', async (t) => {
  let input = { tokens: { keys }, oauth: { providers: provider }, authCodes: { codes, requireFor: { auth: false } } }
  const { app } = await buildOAuthApp(provider, {}, { settings: async () => input })
  t.teardown(() => app.close())
  t.same(errorOf(await postToken(app, { provider: 'on' })), [400, 71])
  input = { ...input, authCodes: { codes, requireFor: { auth: true } } }
  await app.jwtLogin.reloadSettings()
  t.same(errorOf(await postToken(app, { provider: 'on' })), [400, 94])
})

t.test('an auth code that is no string is a malformed request on both gated routes; null or empty is a missing one', async (t) => {
  const { app } = await buildOAuthApp(provider, { authCodes: { codes: [{ code: 'live-code' }], requireFor: { auth: true } } })
  t.teardown(() => app.close())
  const routes = [['/auth', 'AUTH_KEY', { email: 'alice@example.com', password: 'pw' }], ['/oauth/token', 'AUTH_CODE', { provider: 'on' }]] as const
  for (const [route, parameter, body] of routes) {
    const send = async (code: unknown): Promise<[number, number | undefined]> =>
      errorOf(await app.inject({ method: 'POST', url: `/jwt-login/v1${route}`, payload: { ...body, [parameter]: code } }))
    for (const other of [123, ['live-code'], { code: 'live-code' }, true]) {
      t.same(await send(other), [400, 203], `${route} ${JSON.stringify(other)}`)
    }
    for (const missing of [null, '']) {
      t.same(await send(missing), [400, 94], `${route} ${JSON.stringify(missing)}`)
    }
  }
})
