// The settings of the plain OAuth 2.0 presets (github, facebook, discord, oauth2): their endpoints and defaults, and every refusal with its field named.
import t from 'tap'
import { JwtLoginSettingsError } from '../../lib/index.js'
import { FACEBOOK_GRAPH_VERSION } from '../../lib/config/oauth2-presets.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { HS_SECRET, registrationRefusal } from '../helpers/app.js'

const keys = [{ kid: 'k1', secret: HS_SECRET }]
const base = { clientId: 'client-1', clientSecret: 'secret-1', redirectUris: ['https://app.example/cb'] }
const generic = { ...base, preset: 'oauth2', api: { token: 'https://op.example/oauth/token', user: 'https://op.example/api/me' } }

type Resolved = ReturnType<typeof resolveSettings>['oauth']['providers'][string]

function resolve (provider: Record<string, unknown>): Resolved {
  return resolveSettings({ tokens: { keys }, oauth: { providers: { p: provider } } }).oauth.providers.p as Resolved
}

t.test('github: github.com and api.github.com, the secret in the body', async (t) => {
  const p = resolve({ ...base, preset: 'github' })
  t.match(p, {
    kind: 'oauth2',
    preset: 'github',
    issuer: 'https://github.com',
    endpoints: null,
    profile: null,
    clientAuthMethod: 'client_secret_post',
    allowHttp: false
  })
  t.same(p.api, {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    user: 'https://api.github.com/user',
    emails: 'https://api.github.com/user/emails'
  })
})

t.test('github with enterpriseUrl: the server\'s OAuth paths and its /api/v3, with or without a trailing slash or a path', async (t) => {
  const enterprise = {
    authorization: 'https://ghe.example/login/oauth/authorize',
    token: 'https://ghe.example/login/oauth/access_token',
    user: 'https://ghe.example/api/v3/user',
    emails: 'https://ghe.example/api/v3/user/emails'
  }
  t.same(resolve({ ...base, preset: 'github', enterpriseUrl: 'https://ghe.example' }).api, enterprise)
  t.same(resolve({ ...base, preset: 'github', enterpriseUrl: 'https://ghe.example//' }).api, enterprise, 'trailing slashes are dropped')
  const below = resolve({ ...base, preset: 'github', enterpriseUrl: 'https://example.com/ghe/' })
  t.equal(below.api?.user, 'https://example.com/ghe/api/v3/user')
  t.equal(below.issuer, 'https://example.com')
  const local = resolve({ ...base, preset: 'github', enterpriseUrl: 'http://127.0.0.1:8080' })
  t.equal(local.allowHttp, true, 'http on loopback')
  t.equal(local.api?.token, 'http://127.0.0.1:8080/login/oauth/access_token')
})

t.test('api overrides one endpoint and keeps the preset\'s others', async (t) => {
  const p = resolve({ ...base, preset: 'github', api: { emails: 'https://proxy.example/emails' } })
  t.same(p.api, {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    user: 'https://api.github.com/user',
    emails: 'https://proxy.example/emails'
  })
  const fb = resolve({ ...base, preset: 'facebook', api: { user: 'https://graph.facebook.com/v99.0/me?fields=id,email' } })
  t.equal(fb.api?.user, 'https://graph.facebook.com/v99.0/me?fields=id,email')
  t.equal(fb.api?.token, `https://graph.facebook.com/${FACEBOOK_GRAPH_VERSION}/oauth/access_token`)
})

t.test('facebook: one Graph API version, the secret in the body, no email list', async (t) => {
  t.equal(FACEBOOK_GRAPH_VERSION, 'v21.0')
  const p = resolve({ ...base, preset: 'facebook' })
  t.match(p, { kind: 'oauth2', issuer: 'https://graph.facebook.com', profile: null, clientAuthMethod: 'client_secret_post' })
  t.same(p.api, {
    authorization: 'https://www.facebook.com/v21.0/dialog/oauth',
    token: 'https://graph.facebook.com/v21.0/oauth/access_token',
    user: 'https://graph.facebook.com/v21.0/me?fields=id,name,email',
    emails: null
  })
})

t.test('discord: its API, HTTP Basic', async (t) => {
  const p = resolve({ ...base, preset: 'discord' })
  t.match(p, { kind: 'oauth2', issuer: 'https://discord.com', profile: null, clientAuthMethod: 'client_secret_basic' })
  t.same(p.api, {
    authorization: 'https://discord.com/oauth2/authorize',
    token: 'https://discord.com/api/oauth2/token',
    user: 'https://discord.com/api/users/@me',
    emails: null
  })
})

t.test('oauth2: the endpoints given, the profile\'s defaults under the paths given', async (t) => {
  const p = resolve(generic)
  t.match(p, { kind: 'oauth2', issuer: 'https://op.example', clientAuthMethod: 'client_secret_basic' })
  t.same(p.api, { authorization: null, token: 'https://op.example/oauth/token', user: 'https://op.example/api/me', emails: null })
  t.same(p.profile, { subject: 'id', email: 'email', emailVerified: 'email_verified', name: 'name', display: 'login' })
  const paths = resolve({ ...generic, api: { ...generic.api, authorization: 'https://op.example/oauth/authorize' }, profile: { subject: 'data.id', emailVerified: true } })
  t.equal(paths.api?.authorization, 'https://op.example/oauth/authorize')
  t.same(paths.profile, { subject: 'data.id', email: 'email', emailVerified: true, name: 'name', display: 'login' })
  t.equal(resolve({ ...generic, api: { token: 'http://localhost:9000/token', user: 'https://op.example/me' } }).allowHttp, true, 'any api URL on loopback allows http')
})

t.test('a client authentication the host wrote is kept, whatever the preset\'s default', async (t) => {
  t.equal(resolve({ ...base, preset: 'github', clientAuthMethod: 'client_secret_basic' }).clientAuthMethod, 'client_secret_basic')
  t.equal(resolve({ ...base, preset: 'facebook', clientAuthMethod: 'client_secret_basic' }).clientAuthMethod, 'client_secret_basic')
  t.equal(resolve({ ...base, preset: 'discord', clientAuthMethod: 'client_secret_post' }).clientAuthMethod, 'client_secret_post')
  const pub = resolve({ ...generic, clientSecret: undefined, clientAuthMethod: 'none' })
  t.match(pub, { clientAuthMethod: 'none', clientSecret: null }, 'a public client needs no secret')
})

t.test('an OpenID provider has no api and no profile', async (t) => {
  t.match(resolve({ ...base, issuer: 'https://idp.example' }), { kind: 'openid', api: null, profile: null, issuer: 'https://idp.example' })
  t.match(resolve({ ...base, preset: 'google' }), { kind: 'openid', api: null, profile: null, clientAuthMethod: 'client_secret_basic' })
})

t.test('refusals, each with its field named', async (t) => {
  const endpoints = { issuer: 'https://x.example', token: 'https://x.example/t', jwks: 'https://x.example/k' }
  const cases: Array<[string, Record<string, unknown>, string]> = [
    // the settings only OpenID providers take
    ['github with an issuer', { ...base, preset: 'github', issuer: 'https://github.com' }, 'issuer'],
    ['facebook with endpoints', { ...base, preset: 'facebook', endpoints }, 'endpoints'],
    ['discord with a domain', { ...base, preset: 'discord', domain: 'discord.com' }, 'domain'],
    ['oauth2 with a tenant', { ...generic, tenant: 'contoso' }, 'tenant'],
    ['github accepting ID tokens', { ...base, preset: 'github', acceptIdToken: true }, 'acceptIdToken'],
    ['discord requiring a nonce', { ...base, preset: 'discord', requireNonce: true }, 'requireNonce'],
    ['facebook with back-channel logout', { ...base, preset: 'facebook', backchannelLogout: true }, 'backchannelLogout'],
    // the settings only OAuth 2.0 providers take, on an OpenID one
    ['generic with enterpriseUrl', { ...base, issuer: 'https://idp.example', enterpriseUrl: 'https://ghe.example' }, 'enterpriseUrl'],
    ['google with api', { ...base, preset: 'google', api: { user: 'https://x.example/me' } }, 'api'],
    ['auth0 with a profile', { ...base, preset: 'auth0', domain: 'x.eu.auth0.com', profile: { subject: 'sub' } }, 'profile'],
    ['enterpriseUrl named before api and profile', { ...base, preset: 'apple', enterpriseUrl: 'https://ghe.example', api: {}, profile: {} }, 'enterpriseUrl'],
    ['api named before profile', { ...base, preset: 'microsoft', tenant: 't', api: {}, profile: {} }, 'api'],
    // one OAuth 2.0 preset's settings on another
    ['facebook with enterpriseUrl', { ...base, preset: 'facebook', enterpriseUrl: 'https://ghe.example' }, 'enterpriseUrl'],
    ['oauth2 with enterpriseUrl', { ...generic, enterpriseUrl: 'https://ghe.example' }, 'enterpriseUrl'],
    ['github with a profile', { ...base, preset: 'github', profile: { subject: 'id' } }, 'profile'],
    ['discord with an email list', { ...base, preset: 'discord', api: { emails: 'https://discord.com/emails' } }, 'api/emails'],
    ['oauth2 with an email list', { ...generic, api: { ...generic.api, emails: 'https://op.example/emails' } }, 'api/emails'],
    // what oauth2 needs
    ['oauth2 without api', { ...base, preset: 'oauth2' }, 'api/token'],
    ['oauth2 without a token endpoint', { ...base, preset: 'oauth2', api: { user: 'https://op.example/me' } }, 'api/token'],
    ['oauth2 without a user endpoint', { ...base, preset: 'oauth2', api: { token: 'https://op.example/token' } }, 'api/user'],
    // the URLs
    ['an http token endpoint', { ...generic, api: { ...generic.api, token: 'http://op.example/token' } }, 'api/token'],
    ['an http user endpoint', { ...base, preset: 'discord', api: { user: 'http://discord.example/me' } }, 'api/user'],
    ['an http authorization endpoint', { ...base, preset: 'facebook', api: { authorization: 'http://fb.example/dialog' } }, 'api/authorization'],
    ['an http email list', { ...base, preset: 'github', api: { emails: 'http://gh.example/emails' } }, 'api/emails'],
    ['a token endpoint that is no URL', { ...generic, api: { ...generic.api, token: 'https://' } }, 'api/token'],
    ['a user endpoint that is no URL', { ...generic, api: { ...generic.api, user: 'https://a b' } }, 'api/user'],
    ['an http enterpriseUrl', { ...base, preset: 'github', enterpriseUrl: 'http://ghe.example' }, 'enterpriseUrl'],
    ['an enterpriseUrl that is no URL', { ...base, preset: 'github', enterpriseUrl: 'https://' }, 'enterpriseUrl'],
    ['an enterpriseUrl with a query', { ...base, preset: 'github', enterpriseUrl: 'https://ghe.example/?org=1' }, 'enterpriseUrl'],
    ['an enterpriseUrl with a fragment', { ...base, preset: 'github', enterpriseUrl: 'https://ghe.example#x' }, 'enterpriseUrl'],
    // the code flow is the only flow
    ['no redirect URIs', { clientId: 'c', clientSecret: 's', preset: 'discord' }, 'redirectUris'],
    ['github\'s client_secret_post without a secret', { clientId: 'c', redirectUris: ['https://app.example/cb'], preset: 'github' }, 'clientSecret'],
    ['discord\'s client_secret_basic without a secret', { clientId: 'c', redirectUris: ['https://app.example/cb'], preset: 'discord' }, 'clientSecret'],
    ['an unknown api field', { ...generic, api: { ...generic.api, userinfo: 'https://op.example/userinfo' } }, 'api/userinfo'],
    ['an unknown profile field', { ...generic, profile: { mail: 'mail' } }, 'profile/mail'],
    ['emailVerified false', { ...generic, profile: { emailVerified: false } }, 'profile/emailVerified']
  ]
  for (const [name, provider, field] of cases) {
    const error = t.throws(() => resolve(provider), JwtLoginSettingsError, name) as JwtLoginSettingsError
    t.equal(error.path, `oauth/providers/p/${field}`, `${name}: ${error.message}`)
  }
})

t.test('a URL holding a user name or a password is refused, and the refusal does not repeat it', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an enterpriseUrl with both', { ...base, preset: 'github', enterpriseUrl: 'https://octo:hunter2@ghe.example' }, 'enterpriseUrl'],
    ['an enterpriseUrl with a user name alone', { ...base, preset: 'github', enterpriseUrl: 'https://octo@ghe.example' }, 'enterpriseUrl'],
    ['a loopback enterpriseUrl with a password alone', { ...base, preset: 'github', enterpriseUrl: 'http://:hunter2@127.0.0.1:8080' }, 'enterpriseUrl'],
    ['a token endpoint', { ...generic, api: { ...generic.api, token: 'https://client-1:hunter2@op.example/oauth/token' } }, 'api/token'],
    ['a user endpoint', { ...base, preset: 'discord', api: { user: 'https://bot:hunter2@discord.example/me' } }, 'api/user'],
    ['an email list', { ...base, preset: 'github', api: { emails: 'https://octo:hunter2@proxy.example/emails' } }, 'api/emails'],
    ['a redirect URI', { ...generic, redirectUris: ['https://me:hunter2@app.example/cb'] }, 'redirectUris/0']
  ]
  for (const [name, provider, field] of cases) {
    const error = t.throws(() => resolve(provider), JwtLoginSettingsError, name) as JwtLoginSettingsError
    t.equal(error.path, `oauth/providers/p/${field}`, name)
    t.match(error.message, /must not hold a user name or password/, name)
    t.notMatch(error.message, /hunter2/, `${name}: the password is not in the message`)
  }
  t.equal(resolve({ ...generic, api: { ...generic.api, token: 'https://op.example/oauth/token?user=a:b@c' } }).api?.token, 'https://op.example/oauth/token?user=a:b@c', 'an @ in the query is no credential')
})

t.test('the refusals say why', async (t) => {
  const reason = (provider: Record<string, unknown>): string => (t.throws(() => resolve(provider)) as Error).message
  t.match(reason({ ...base, preset: 'github', issuer: 'https://github.com' }), /github preset is plain OAuth 2\.0: give api instead/)
  t.match(reason({ ...base, preset: 'github', acceptIdToken: true }), /without ID tokens/)
  t.match(reason({ ...base, preset: 'google', api: {} }), /google preset is OpenID Connect/)
  t.match(reason({ ...base, preset: 'facebook', enterpriseUrl: 'https://ghe.example' }), /only the github preset takes enterpriseUrl/)
  t.match(reason({ ...base, preset: 'github', profile: {} }), /only the oauth2 preset takes profile/)
  t.match(reason({ ...base, preset: 'discord', api: { emails: 'https://x.example' } }), /only the github preset reads an email list/)
  t.match(reason({ ...base, preset: 'oauth2' }), /needs the token endpoint/)
  t.match(reason({ clientId: 'c', clientSecret: 's', preset: 'facebook' }), /facebook preset signs in by the code flow only/)
  t.notMatch(reason({ clientId: 'c', clientSecret: 's', preset: 'facebook' }), /acceptIdToken/, 'no ID token offered where none is taken')
})

t.test('registration refuses them too', async (t) => {
  const error = await registrationRefusal({ settings: { tokens: { keys }, oauth: { providers: { gh: { ...base, preset: 'github', enterpriseUrl: 'http://ghe.example' } } } } })
  t.equal(error.path, 'oauth/providers/gh/enterpriseUrl')
})
