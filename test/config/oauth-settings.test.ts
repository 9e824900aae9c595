import t from 'tap'
import { JwtLoginSettingsError } from '../../lib/index.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { HS_SECRET } from '../helpers/app.js'
import { buildOAuthApp, collect, errorOf, postToken } from '../helpers/oauth.js'

const keys = [{ kid: 'k1', secret: HS_SECRET }]
const base = { clientId: 'client-1', clientSecret: 'secret-1', redirectUris: ['https://app.example/cb'] }

function resolve (provider: Record<string, unknown>, name = 'p'): ReturnType<typeof resolveSettings>['oauth']['providers'][string] {
  const settings = resolveSettings({ tokens: { keys }, oauth: { providers: { [name]: provider } } })
  return settings.oauth.providers[name] as ReturnType<typeof resolveSettings>['oauth']['providers'][string]
}

t.test('defaults and the absent group', async (t) => {
  t.same(resolveSettings({ tokens: { keys } }).oauth.providers, {})
  t.equal(resolveSettings({ tokens: { keys } }).authCodes.requireFor.oauth, false)
  const p = resolve({ ...base, issuer: 'https://idp.example' })
  t.match(p, {
    name: 'p',
    enabled: false,
    preset: 'generic',
    issuer: 'https://idp.example',
    acceptedIssuers: ['https://idp.example'],
    endpoints: null,
    clientAuthMethod: 'client_secret_basic',
    acceptIdToken: false,
    allowUnverifiedEmail: false,
    autoRegister: false,
    defaultRole: 'subscriber',
    timeoutMs: 5000,
    allowHttp: false
  })
})

t.test('presets resolve to their issuers', async (t) => {
  const google = resolve({ preset: 'google', clientId: 'g', acceptIdToken: true })
  t.equal(google.issuer, 'https://accounts.google.com')
  t.same(google.acceptedIssuers, ['https://accounts.google.com', 'accounts.google.com'])
  t.equal(google.clientSecret, null)
  t.equal(resolve({ ...base, preset: 'apple', clientAuthMethod: 'client_secret_post' }).issuer, 'https://appleid.apple.com')
  t.equal(resolve({ ...base, preset: 'auth0', domain: 'example.eu.auth0.com' }).issuer, 'https://example.eu.auth0.com/')
  t.equal(resolve({ ...base, preset: 'microsoft', tenant: '9188040d-6c67-4c5b-b112-36a304b66dad' }).issuer, 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0')
  const endpoints = resolve({ ...base, endpoints: { issuer: 'https://idp.example', token: 'https://idp.example/t', jwks: 'https://idp.example/k' } })
  t.same(endpoints.endpoints, { token: 'https://idp.example/t', jwks: 'https://idp.example/k', userinfo: null, authorization: null })
  t.equal(resolve({ ...base, issuer: 'http://localhost:4000' }).allowHttp, true, 'http on loopback')
  t.equal(resolve({ redirectUris: ['https://app.example/cb'], clientId: 'public', clientAuthMethod: 'none', issuer: 'https://idp.example' }).clientSecret, null, 'a public client needs no secret')
})

t.test('invalid providers are refused with the field named', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string, string?]> = [
    ['a preset with an issuer', { ...base, preset: 'google', issuer: 'https://x.example' }, 'oauth/providers/p/issuer'],
    ['a preset with endpoints', { ...base, preset: 'apple', endpoints: { issuer: 'https://x', token: 'https://x/t', jwks: 'https://x/k' } }, 'oauth/providers/p/issuer'],
    ['auth0 without a domain', { ...base, preset: 'auth0' }, 'oauth/providers/p/domain'],
    ['microsoft without a tenant', { ...base, preset: 'microsoft' }, 'oauth/providers/p/tenant'],
    ['microsoft multi-tenant', { ...base, preset: 'microsoft', tenant: 'Common' }, 'oauth/providers/p/tenant'],
    ['generic without an issuer', { ...base }, 'oauth/providers/p/issuer'],
    ['generic with issuer and endpoints', { ...base, issuer: 'https://x', endpoints: { issuer: 'https://x', token: 'https://x/t', jwks: 'https://x/k' } }, 'oauth/providers/p/issuer'],
    ['an issuer that is no URL', { ...base, issuer: 'https://' }, 'oauth/providers/p/issuer'],
    ['http off loopback', { ...base, issuer: 'http://idp.example' }, 'oauth/providers/p/issuer'],
    ['an issuer with a user name and password', { ...base, issuer: 'https://client-1:secret-1@idp.example' }, 'oauth/providers/p/issuer'],
    ['a loopback issuer with a user name', { ...base, issuer: 'http://client-1@localhost:4000' }, 'oauth/providers/p/issuer'],
    ['a token endpoint with a password', { ...base, endpoints: { issuer: 'https://x', token: 'https://:pw@x/t', jwks: 'https://x/k' } }, 'oauth/providers/p/endpoints/token'],
    ['an http userinfo endpoint', { ...base, endpoints: { issuer: 'https://x', token: 'https://x/t', jwks: 'https://x/k', userinfo: 'http://x/u' } }, 'oauth/providers/p/endpoints/userinfo'],
    ['an http redirect URI', { ...base, issuer: 'https://x', redirectUris: ['http://app.example/cb'] }, 'oauth/providers/p/redirectUris/0'],
    ['a code flow without a secret', { clientId: 'c', redirectUris: ['https://a/cb'], issuer: 'https://x' }, 'oauth/providers/p/clientSecret'],
    ['neither code nor ID token', { clientId: 'c', issuer: 'https://x' }, 'oauth/providers/p/redirectUris'],
    ['a timeout over 60 s', { ...base, issuer: 'https://x', timeout: '2m' }, 'oauth/providers/p/timeout'],
    ['a zero timeout', { ...base, issuer: 'https://x', timeout: '0s' }, 'oauth/providers/p/timeout'],
    ['an unknown field', { ...base, issuer: 'https://x', secret: 'typo' }, 'oauth/providers/p/secret'],
    ['an unknown preset', { ...base, preset: 'gitlab' }, 'oauth/providers/p/preset'],
    ['a bad provider name', { ...base, issuer: 'https://x' }, 'oauth/providers/bad name', 'bad name']
  ]
  for (const [name, provider, path, providerName] of cases) {
    const error = t.throws(() => resolve(provider, providerName), JwtLoginSettingsError, name) as JwtLoginSettingsError
    t.equal(error.path, path, `${name}: ${error.message}`)
  }
})

t.test('request errors before any provider is asked', async (t) => {
  const providers = {
    on: { enabled: true, issuer: 'https://idp.invalid', ...base, acceptIdToken: true },
    off: { enabled: false, issuer: 'https://idp.invalid', ...base },
    codeOnly: { enabled: true, issuer: 'https://idp.invalid', ...base }
  }
  const { app } = await buildOAuthApp(providers)
  t.teardown(() => app.close())
  const failed = collect(app, 'oauth.failed')
  t.same(errorOf(await postToken(app, {})), [400, 69], 'no provider')
  t.same(errorOf(await postToken(app, { provider: 'nope', code: 'c' })), [400, 69], 'unknown provider')
  t.same(errorOf(await postToken(app, { provider: '__proto__', code: 'c' })), [400, 69], 'not a prototype key')
  t.same(errorOf(await postToken(app, { provider: 'constructor', code: 'c' })), [400, 69])
  t.same(errorOf(await postToken(app, { provider: 'off', code: 'c' })), [403, 70], 'disabled')
  t.same(errorOf(await postToken(app, { provider: 'on' })), [400, 71], 'neither code nor id_token')
  t.same(errorOf(await postToken(app, { provider: 'codeOnly', id_token: 'x.y.z' })), [400, 71], 'an ID token where only codes are taken')
  t.same(errorOf(await app.inject({ method: 'GET', url: '/jwt-login/v1/oauth/token?provider=on' })), [400, 71], 'GET too')
  t.same(errorOf(await app.inject({ method: 'POST', url: '/jwt-login/v1/oauth/token', payload: { provider: 'on', code: 'x'.repeat(5000) } })), [400, 203], 'an oversized code')
  t.same(failed.map(f => [f.provider, f.errorCode]), [[null, 69], [null, 69], [null, 69], [null, 69], ['off', 70], ['on', 71], ['codeOnly', 71], ['on', 71]])
})

t.test('authentication off answers 403 / 45', async (t) => {
  const { app } = await buildOAuthApp({ on: { enabled: true, issuer: 'https://idp.invalid', ...base } }, { authentication: { enabled: false } })
  t.teardown(() => app.close())
  t.same(errorOf(await postToken(app, { provider: 'on', code: 'c' })), [403, 45])
})
