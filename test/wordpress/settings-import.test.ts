import { generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { resolveSettings } from '../../lib/config/settings.js'
import { JwtLoginSettingsError } from '../../lib/core/errors.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { fromSimpleJwtLoginSettings, type ImportedSettings } from '../../lib/wordpress/settings-import.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { HS_SECRET } from '../helpers/fixtures.js'
import { errorOf, PREFIX } from '../helpers/http.js'

type Export = Record<string, unknown>

const V1_TEXT = readFileSync(new URL('../fixtures/sjl-settings-v1.json', import.meta.url), 'utf8')
const V2_TEXT = readFileSync(new URL('../fixtures/sjl-settings-v2.json', import.meta.url), 'utf8')
/** An export of Simple JWT Login 3.6.6, with the keys its settings screens save. */
const V3X_TEXT = readFileSync(new URL('../fixtures/sjl-settings-3.6.6.json', import.meta.url), 'utf8')

/** The secrets of the fixtures: none may appear in a reason or a setting name. */
const SECRETS = [
  'Wq7mZp2Lx9Rb', 'Rf5Tk8Qz1Mv4Hx7Pn2Lc', '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3',
  'mobile-app-4d9e2b7c', 'editors-8f3a6c1d', 'spring-campaign-2b5e9f0a',
  'SHE0WnQ4TG0yVng2UGM5UmIzTmY3V2QxS3M1SmcwWWU4VWEyVGlRbw==', 'Hq4Zt8Lm2Vx6Pc9Rb3Nf7Wd1Ks5Jg0Ye8Ua2TiQo',
  'Zx3Cv6Bn9Ma2Sd5Fg8Hj', '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e', 'pos-terminal-7c2e9a4f', 'black-friday-3e8d1b6a',
  'Lk3Vb8Nq2Wz7Rt5Yp1Mc9Xs4Hd6Fg0Ja', 'ios-app-5b8d2e7f', 'beta-editors-1c4f9a3e'
]

/** A v1 export with a usable key and no JWT in URLs: small tests list only what they add. */
function v1 (fields: Export): ImportedSettings {
  return fromSimpleJwtLoginSettings({ request_jwt_url: 0, decryption_key: HS_SECRET, ...fields })
}

/** The v2 counterpart of `v1`. */
function v2 (sections: Export, general: Export = {}): ImportedSettings {
  return fromSimpleJwtLoginSettings({ _schema_version: 2, general: { request_jwt_url: 0, decryption_key: HS_SECRET, ...general }, ...sections })
}

/** The names of what was left behind, sorted. */
function names (result: ImportedSettings): string[] {
  return result.leftBehind.map(item => item.setting).sort()
}

function reasonOf (result: ImportedSettings, setting: string): string {
  return result.leftBehind.find(item => item.setting === setting)?.reason ?? ''
}

/**
 * The settings resolve (with a test key added when none came over), each
 * reason is one line of text, and a carried key passes the checks the
 * plugin runs at start.
 */
function accepted (t: Test, result: ImportedSettings): void {
  const { settings } = result
  const carried = settings.tokens.keys !== undefined
  const tokens = carried ? settings.tokens : { ...settings.tokens, algorithm: 'HS256' as const, keys: [{ kid: 'test', secret: HS_SECRET }] }
  const resolved = resolveSettings({ ...settings, tokens })
  if (carried) t.equal(buildKeyMaterial(resolved.tokens).length, 1, 'the carried key is usable')
  for (const { setting, reason } of result.leftBehind) {
    t.ok(/^\S[^\n]*$/.test(reason) && setting !== '', `${setting}: a reason`)
  }
}

const rsa = (modulusLength: number): { privateKey: string, publicKey: string } =>
  generateKeyPairSync('rsa', { modulusLength, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
const base64 = (text: string): string => Buffer.from(text).toString('base64')

t.test('the v1 fixture: a flat export that has the switches of 4.x beside its 3.x keys reads them', async (t) => {
  const result = fromSimpleJwtLoginSettings(V1_TEXT)
  t.same(result.settings, {
    authentication: { enabled: true },
    authCodes: {
      codes: [
        { code: 'mobile-app-4d9e2b7c' },
        { code: 'editors-8f3a6c1d', role: 'editor' },
        { code: 'spring-campaign-2b5e9f0a', expiresAt: '2027-03-31T23:59:59Z' }
      ],
      parameter: 'AUTH_KEY',
      requireFor: { auth: true, validate: false, refresh: false, revoke: true }
    },
    login: { allowPasswordHash: false },
    bearer: { enabled: true, allowBareToken: true },
    refresh: { enabled: true, lifetime: '20160m' },
    validate: { enabled: true },
    revoke: { enabled: true },
    tokens: { algorithm: 'HS256', lifetime: '60m', issuer: 'https://blog.example.org', claims: { email: true, login: true } },
    resetPassword: { enabled: true, requireAuthCode: false },
    users: {
      register: { enabled: true, requireAuthCode: true, signIn: true, defaultRole: 'subscriber', allowedDomains: ['example.org', 'staff.example.org'] },
      delete: { enabled: true, requireAuthCode: true }
    },
    oauth: {
      providers: {
        google: {
          enabled: true,
          preset: 'google',
          clientId: '204817593366-q1w2e3r4t5y6u7i8o9p0.apps.googleusercontent.com',
          clientSecret: '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3',
          redirectUris: ['https://app.example.org/oauth/callback'],
          acceptIdToken: true,
          autoRegister: true
        }
      }
    },
    cors: { enabled: true, origins: ['https://app.example.org'] },
    apiKeys: { enabled: false }
  })
  t.same(names(result), [
    'api_middleware.enabled', 'auth_ip', 'cors.allow_origin', 'decryption_key', 'delete_user_by', 'enabled_hooks',
    'google.enable_oauth', 'jwt_email_subject', 'jwt_payload', 'jwt_reset_password_email_body',
    'protect_endpoints.enabled', 'register_ip', 'request_jwt_cookie', 'request_jwt_session', 'request_jwt_url',
    'route_namespace', 'tokens.keys'
  ])
  t.match(reasonOf(result, 'decryption_key'), /shorter than the 32 bytes jwt-login needs for HS256: generate a new secret/)
  t.match(reasonOf(result, 'tokens.keys'), /supply tokens\.keys/)
  t.match(reasonOf(result, 'route_namespace'), /aliases: \['\/wp-json\/simple-jwt-login\/v1'\]/)
  t.match(reasonOf(result, 'cors.allow_origin'), /\(\*\)/)
  t.match(reasonOf(result, 'jwt_payload'), /id and site/)
  t.match(reasonOf(result, 'request_jwt_url'), /on every request; jwt-login's own routes that take a JWT \(validate, revoke, DELETE \/users, .*\) read it from the Authorization header or a JWT field in the body or the query string, and the host's routes \(the authenticate hook\) read the Authorization header only/)
  t.match(reasonOf(result, 'request_jwt_cookie'), /Authorization header or a JWT field \(body or query string\) on its own routes/)
  t.equal(result.settings.tokens.keys, undefined, 'no key: the settings are not complete')
  accepted(t, result)
})

t.test('the v2 fixture: a sectioned export', async (t) => {
  const result = fromSimpleJwtLoginSettings(V2_TEXT)
  t.same(result.settings, {
    authentication: { enabled: true },
    authCodes: {
      codes: [
        { code: 'pos-terminal-7c2e9a4f', role: 'customer' },
        { code: 'black-friday-3e8d1b6a', expiresAt: '2026-11-30T23:59:59Z' }
      ],
      parameter: 'X_AUTH_CODE',
      requireFor: { auth: false, validate: false, refresh: false, revoke: false }
    },
    login: { allowPasswordHash: false },
    bearer: { enabled: true, allowBareToken: false },
    refresh: { enabled: true, lifetime: '10080m' },
    validate: { enabled: true, jwtAsObject: true },
    revoke: { enabled: false },
    tokens: {
      algorithm: 'HS256',
      lifetime: '30m',
      issuer: 'https://shop.example.com',
      claims: { email: true, login: true },
      keys: [{ kid: 'imported', secret: 'Hq4Zt8Lm2Vx6Pc9Rb3Nf7Wd1Ks5Jg0Ye8Ua2TiQo' }]
    },
    resetPassword: { enabled: true, requireAuthCode: true },
    users: {
      register: { enabled: true, requireAuthCode: false, signIn: false, defaultRole: 'subscriber', allowedDomains: ['shop.example.com'] },
      delete: { enabled: true, requireAuthCode: true }
    },
    oauth: {
      providers: {
        google: {
          enabled: true,
          preset: 'google',
          clientId: '771234509876-a9s8d7f6g5h4j3k2l1.apps.googleusercontent.com',
          clientSecret: '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e',
          acceptIdToken: true,
          autoRegister: false
        }
      }
    },
    cors: { enabled: true, origins: ['https://app.example.com'] },
    apiKeys: { enabled: false }
  })
  t.same(names(result), [
    'authorization.custom_claims', 'authorization.ip_whitelist', 'authorization.password_hash_enabled',
    'cors.allow_headers', 'cors.allow_origin', 'delete_user.ip_whitelist', 'general.route_namespace',
    'hooks.enabled_hooks', 'integrations.3rdparty.wpgraphql.enabled', 'integrations.oauth.google.allow_on_all_endpoints',
    'login.enabled', 'protect_endpoint.enabled', 'register.allowed_user_meta', 'register.new_user_profile',
    'reset_password.flow', 'webhooks.items'
  ])
  t.match(reasonOf(result, 'authorization.password_hash_enabled'), /pass-the-hash.*login\.allowPasswordHash stays off/)
  t.match(reasonOf(result, 'reset_password.flow'), /reset link/)
  t.match(reasonOf(result, 'cors.allow_origin'), /https:\/\/admin\.example\.com\/dashboard/)
  t.match(reasonOf(result, 'register.new_user_profile'), /they get subscriber only/)
  t.match(reasonOf(result, 'register.allowed_user_meta'), /the email, login, display name and password only/)
  accepted(t, result)
})

t.test('the 3.6.6 fixture: refresh, validate and revoke stay on, and auth_requires_auth_code gates /auth, refresh and revoke, as in 3.x', async (t) => {
  const result = fromSimpleJwtLoginSettings(V3X_TEXT)
  t.same(result.settings, {
    authentication: { enabled: true },
    authCodes: {
      codes: [
        { code: 'ios-app-5b8d2e7f' },
        { code: 'beta-editors-1c4f9a3e', role: 'editor', expiresAt: '2025-12-31T23:59:59Z' }
      ],
      parameter: 'AUTH_KEY',
      requireFor: { auth: true, validate: false, refresh: true, revoke: true }
    },
    login: { allowPasswordHash: false },
    bearer: { enabled: true, allowBareToken: true },
    refresh: { enabled: true, lifetime: '10080m' },
    validate: { enabled: true },
    revoke: { enabled: true },
    tokens: {
      algorithm: 'HS256',
      lifetime: '60m',
      issuer: 'https://www.example.net',
      claims: { email: true, login: true },
      keys: [{ kid: 'imported', secret: 'Lk3Vb8Nq2Wz7Rt5Yp1Mc9Xs4Hd6Fg0Ja' }]
    },
    resetPassword: { enabled: true, requireAuthCode: true },
    users: {
      register: { enabled: true, requireAuthCode: true, signIn: false, defaultRole: 'subscriber', allowedDomains: ['example.net'] },
      delete: { enabled: true, requireAuthCode: true }
    },
    oauth: { providers: {} },
    cors: { enabled: false, origins: [] },
    apiKeys: { enabled: false }
  })
  t.same(names(result), ['jwt_auth_refresh_ttl', 'route_namespace'])
  t.match(reasonOf(result, 'jwt_auth_refresh_ttl'), /refresh\.lifetime.*refreshes with the refresh_token its sign-in answers, not with the JWT/)
  accepted(t, result)
})

t.test('the 3.6.6 fixture\'s settings in the plugin: the auth code on /auth, refresh and revoke, a bare Authorization header, a stale code refused at registration', async (t) => {
  const { settings } = fromSimpleJwtLoginSettings(V3X_TEXT)
  // password reset needs a mailer, which is not what this test is about
  const { app } = await buildApp({ ...settings, resetPassword: { enabled: false } })
  t.teardown(() => app.close())
  const post = async (path: string, payload: Record<string, unknown>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload, headers })
  const credentials = { email: ALICE.email, password: ALICE.password }
  t.same(errorOf(await post('/auth', credentials)), [400, 94], '/auth needs the code')
  const signedIn = await post('/auth', { ...credentials, AUTH_KEY: 'ios-app-5b8d2e7f' })
  t.equal(signedIn.statusCode, 200, signedIn.body)
  const { refresh_token: refreshToken } = signedIn.json().data
  t.type(refreshToken, 'string', 'refresh is on: the sign-in answers a refresh token')
  t.same(errorOf(await post('/auth/refresh', { refresh_token: refreshToken })), [400, 94], 'refresh needs the code')
  const refreshed = await post('/auth/refresh', { refresh_token: refreshToken, AUTH_KEY: 'ios-app-5b8d2e7f' })
  t.equal(refreshed.statusCode, 200, refreshed.body)
  const fresh = refreshed.json().data.jwt as string
  const validated = await app.inject({ method: 'GET', url: `${PREFIX}/auth/validate`, headers: { authorization: fresh } })
  t.equal(validated.statusCode, 200, 'validate takes no code, and a JWT without Bearer')
  t.same(errorOf(await post('/auth/revoke', {}, { authorization: fresh })), [400, 94], 'revoke needs the code')
  t.equal((await post('/auth/revoke', { AUTH_KEY: 'ios-app-5b8d2e7f' }, { authorization: fresh })).statusCode, 200)
  t.same(errorOf(await post('/users', { email: 'new@example.net', password: 'a long enough new password', AUTH_KEY: 'beta-editors-1c4f9a3e' })), [401, 27], 'an expired code is refused at registration')
})

t.test('a 3.x export: refresh follows authentication; its one auth-code rule covers refresh and revoke, not validate', async (t) => {
  const off = v1({ allow_authentication: '0', auth_requires_auth_code: true })
  t.same(off.settings.refresh, { enabled: false }, 'authentication off: refresh off too')
  t.same(names(off), [], 'nothing to say when refresh is off')
  t.same(off.settings.authCodes?.requireFor, { auth: true, validate: false, refresh: true, revoke: true })

  const open = v1({ allow_authentication: 1, jwt_auth_refresh_ttl: 'often' })
  t.same(open.settings.refresh, { enabled: true }, 'on, with the default lifetime when the window is no number')
  t.same(open.settings.authCodes?.requireFor, { auth: false, validate: false, refresh: false, revoke: false })
  t.same(names(open), ['jwt_auth_refresh_ttl', 'jwt_auth_refresh_ttl'], 'the window (not minutes) and the way clients refresh')
  t.same({ validate: open.settings.validate, revoke: open.settings.revoke }, { validate: { enabled: true }, revoke: { enabled: true } })

  const switched = v1({ allow_authentication: 1, auth_requires_auth_code: 1, allow_refresh_token: '0', refresh_requires_auth_code: false, revoke_requires_auth_code: '0', allow_validate_token: '0', allow_revoke_token: 0 })
  t.same(switched.settings.refresh, { enabled: false }, 'a flat switch that is there is read')
  t.same(switched.settings.authCodes?.requireFor, { auth: true, validate: false, refresh: false, revoke: false })
  t.same({ validate: switched.settings.validate, revoke: switched.settings.revoke }, { validate: { enabled: false }, revoke: { enabled: false } })
  t.same(names(switched), [])
  for (const result of [off, open, switched]) accepted(t, result)
})

t.test('a 4.x export: a switch or an auth-code rule that is absent is off', async (t) => {
  const result = v2({ authorization: { enabled: '1', auth_code: true } })
  t.same(result.settings.refresh, { enabled: false })
  t.same({ validate: result.settings.validate, revoke: result.settings.revoke }, { validate: { enabled: false, jwtAsObject: true }, revoke: { enabled: false } })
  t.same(result.settings.authCodes?.requireFor, { auth: true, validate: false, refresh: false, revoke: false })
  t.same(names(result), [])
  accepted(t, result)
})

t.test('Authorization without Bearer: carried as bearer.allowBareToken where Simple JWT Login took it', async (t) => {
  const bearer = (result: ImportedSettings): unknown => result.settings.bearer
  t.same(bearer(v1({})), { enabled: true, allowBareToken: true }, '3.x takes it always')
  t.same(bearer(v1({ request_jwt_header: 0 })), { enabled: false, allowBareToken: false }, 'no header read, nothing to take')
  t.same(bearer(v1({ request_jwt_header_require_bearer: true })), { enabled: true, allowBareToken: false })
  t.same(bearer(v2({}, { request_jwt_header_require_bearer: false })), { enabled: true, allowBareToken: true }, '4.x: off unless Bearer is required')
  t.same(bearer(v2({}, { request_jwt_header_require_bearer: '1' })), { enabled: true, allowBareToken: false })
  t.same(names(v2({}, { request_jwt_header: 0, request_jwt_header_require_bearer: true })), [], 'read, never unknown')
})

t.test('no reason and no setting name quotes a secret', async (t) => {
  for (const text of [V1_TEXT, V2_TEXT, V3X_TEXT]) {
    for (const { setting, reason } of fromSimpleJwtLoginSettings(text).leftBehind) {
      const quoted = SECRETS.filter(secret => reason.includes(secret) || setting.includes(secret))
      t.same(quoted, [], setting)
    }
  }
})

t.test('the JSON string, the parsed object and the wp-cli output give one result', async (t) => {
  for (const text of [V1_TEXT, V2_TEXT, V3X_TEXT]) {
    const parsed = JSON.parse(text) as Export
    const result = fromSimpleJwtLoginSettings(text)
    t.same(fromSimpleJwtLoginSettings(parsed), result)
    t.same(parsed, JSON.parse(text), 'the input object is not changed')
    // `wp option get … --format=json` prints the option (a JSON string) as a JSON string
    t.same(fromSimpleJwtLoginSettings(JSON.stringify(text)), result)
  }
})

t.test('input that is not a JSON object throws, quoting nothing of it', async (t) => {
  const inputs: unknown[] = ['{"decryption_key": "hunter2-secret', '[1, 2]', 'null', '42', '"not json either"',
    JSON.stringify(JSON.stringify([1])), [], null]
  for (const input of inputs) {
    let thrown: unknown
    try {
      fromSimpleJwtLoginSettings(input as Export)
    } catch (error) {
      thrown = error
    }
    t.ok(thrown instanceof JwtLoginSettingsError && thrown.path === '' && !thrown.message.includes('hunter2'), JSON.stringify(input))
  }
})

t.test('unknown keys are listed, never dropped', async (t) => {
  const flat = v1({ future_option: 'x', cors: { enabled: 0, allow_credentials: true }, google: { enabled: 0, scope: 'email' } })
  t.same(names(flat), ['cors.allow_credentials', 'future_option', 'google.scope'])
  t.match(reasonOf(flat, 'future_option'), /not a setting this import reads/)

  const sectioned = v2({
    analytics: { enabled: true },
    authorization: { enabled: '1', future_flag: true },
    applications: { oauth: { google: { enabled: 0 } } },
    integrations: { oauth: { google: { enabled: 0 } } }
  })
  t.same(names(sectioned), ['analytics', 'authorization.future_flag', 'integrations.oauth.google.enabled'], 'a section given twice keeps one')
  const versioned = fromSimpleJwtLoginSettings({ _schema_version: '2', register: { enabled: true }, allow_register: true, general: { request_jwt_url: 0, decryption_key: HS_SECRET } })
  t.equal(versioned.settings.users?.register?.enabled, true, 'a string schema version counts')
  t.same(names(versioned), ['allow_register'], 'a v1 key in a v2 export is unknown')
  accepted(t, flat)
  accepted(t, sectioned)
})

t.test('an empty export: Simple JWT Login defaults', async (t) => {
  const result = fromSimpleJwtLoginSettings({})
  t.same(names(result), ['request_jwt_url', 'tokens.keys'], 'the JWT comes from the URL unless turned off; no key')
  t.match(result.settings, {
    authentication: { enabled: false },
    bearer: { enabled: true, allowBareToken: true },
    validate: { enabled: true },
    revoke: { enabled: true },
    refresh: { enabled: false },
    tokens: { algorithm: 'HS256', claims: { email: false, login: false } },
    users: { register: { enabled: false, requireAuthCode: true }, delete: { enabled: false, requireAuthCode: true } },
    cors: { enabled: false, origins: [] },
    oauth: { providers: {} }
  })
  t.equal(result.settings.authCodes?.parameter, undefined)
  accepted(t, result)
})

t.test('general settings', async (t) => {
  const result = v1({ request_jwt_header: 0, request_keys: { url: 'JWT', header: 'X-Auth-Token' }, route_namespace: '/' })
  t.equal(result.settings.bearer?.enabled, false, 'no Bearer header when Simple JWT Login read none')
  t.same(names(result), ['request_keys.header', 'route_namespace'])
  t.match(reasonOf(result, 'route_namespace'), /aliases: \['\/wp-json'\]/, 'a namespace of / is the alias /wp-json')
  t.match(reasonOf(result, 'request_keys.header'), /X-Auth-Token header/)
  t.same(names(v1({ request_keys: { header: 'authorization' }, security: { safe_redirect: true } })), [], 'Authorization in any case')
})

t.test('HMAC secrets', async (t) => {
  const carried = (result: ImportedSettings): unknown => result.settings.tokens.keys
  const wrapped = base64('a-secret-of-forty-bytes-that-came-in-b64').replace(/(.{16})/g, '$1\n')
  t.same(carried(v1({ decryption_key: wrapped, decryption_key_base64: true })), [{ kid: 'imported', secret: 'a-secret-of-forty-bytes-that-came-in-b64' }], 'base64 across lines')

  const notBase64 = v1({ decryption_key: 'not base64 at all!', decryption_key_base64: 1 })
  t.same(names(notBase64), ['decryption_key', 'tokens.keys'])
  t.match(reasonOf(notBase64, 'decryption_key'), /not base64 text/)
  t.same(names(v1({ decryption_key: 'QUJDR', decryption_key_base64: '1' })), ['decryption_key', 'tokens.keys'], 'a length base64 never has')

  const binary = v1({ decryption_key: Buffer.alloc(48, 0xff).toString('base64'), decryption_key_base64: true })
  t.match(reasonOf(binary, 'decryption_key'), /not UTF-8 text, and jwt-login's secret is a string/)

  const hs512 = v1({ jwt_algorithm: 'HS512' })
  t.match(reasonOf(hs512, 'decryption_key'), /shorter than the 64 bytes jwt-login needs for HS512/)
  t.same(carried(v1({ jwt_algorithm: 'HS384', decryption_key: 'x'.repeat(48) })), [{ kid: 'imported', secret: 'x'.repeat(48) }])
  t.equal(v1({ jwt_algorithm: '' }).settings.tokens.algorithm, 'HS256')

  const inCode = v1({ decryption_source: '1' })
  t.same(names(inCode), ['decryption_source', 'tokens.keys'])
  t.match(reasonOf(inCode, 'decryption_source'), /wp-config\.php/)

  for (const algorithm of ['ES512', 5]) {
    const unknown = v1({ jwt_algorithm: algorithm })
    t.same(names(unknown), ['jwt_algorithm', 'tokens.keys'])
    t.equal(unknown.settings.tokens.algorithm, undefined)
    accepted(t, unknown)
  }
  for (const result of [notBase64, binary, hs512, inCode]) accepted(t, result)
})

t.test('key pairs', async (t) => {
  const pair = rsa(2048)
  const other = rsa(2048)
  const carried = v1({ jwt_algorithm: 'RS256', decryption_key_private: base64(pair.privateKey), decryption_key_public: base64(pair.publicKey) })
  t.same(carried.settings.tokens.keys, [{ kid: 'imported', privateKey: pair.privateKey, publicKey: pair.publicKey }], 'stored base64, as Simple JWT Login does')
  t.same(names(carried), [], 'the HS secret beside a key pair is not needed')
  accepted(t, carried)

  const mismatched = v1({ jwt_algorithm: 'RS384', decryption_key_private: pair.privateKey, decryption_key_public: other.publicKey })
  t.same(mismatched.settings.tokens.keys, [{ kid: 'imported', privateKey: pair.privateKey }], 'a plain PEM; the public key derived')
  t.same(names(mismatched), ['decryption_key_public'])
  accepted(t, mismatched)
  for (const publicKey of ['not-a-key', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----']) {
    t.same(names(v1({ jwt_algorithm: 'RS256', decryption_key_private: pair.privateKey, decryption_key_public: publicKey })), ['decryption_key_public'])
  }
  t.same(names(v1({ jwt_algorithm: 'RS256', decryption_key_private: pair.privateKey, decryption_key_public: '' })), [])

  const refused: Array<[Export, RegExp]> = [
    [{}, /missing or not a PEM key, and RS256 needs a private key/],
    [{ decryption_key_private: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' }, /not a readable PEM private key/],
    [{ decryption_key_private: rsa(1024).privateKey }, /RSA key of 1024 bits; jwt-login needs at least 2048/],
    [{ decryption_key_private: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) }, /ec:prime256v1 key, which does not sign RS256/]
  ]
  for (const [fields, reason] of refused) {
    const result = v1({ jwt_algorithm: 'RS256', ...fields })
    t.same(names(result), ['decryption_key_private', 'tokens.keys'])
    t.match(reasonOf(result, 'decryption_key_private'), reason)
    accepted(t, result)
  }

  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  const es256 = v2({}, { jwt_algorithm: 'ES256', decryption_key_private: base64(ec) })
  t.same(es256.settings.tokens.keys, [{ kid: 'imported', privateKey: ec }], 'any algorithm jwt-login signs with')
  accepted(t, es256)
})

t.test('auth codes', async (t) => {
  const result = v1({
    auth_codes: [
      'plain-code-from-an-old-export',
      '',
      { code: ' ', role: '', expiration_date: '' },
      42,
      { code: 'long-role', role: 'r'.repeat(65), expiration_date: '' },
      { code: 'relative-date', role: '', expiration_date: 'next monday' },
      { code: 'date-only', role: '', expiration_date: '2027-06-30' },
      { code: 'no-seconds', role: '', expiration_date: '2027-06-30T12:00' },
      { code: 'no-such-day', role: '', expiration_date: '2027-02-30 10:00:00' },
      { code: 'no-such-month', role: '', expiration_date: '2027-13-01 10:00:00' },
      { code: 'trimmed-role', role: ' author ', expiration_date: ' ' }
    ],
    auth_code_key: ' '
  })
  t.same(result.settings.authCodes?.codes, [
    { code: 'plain-code-from-an-old-export' },
    { code: 'date-only', expiresAt: '2027-06-30T00:00:00Z' },
    { code: 'no-seconds', expiresAt: '2027-06-30T12:00:00Z' },
    { code: 'trimmed-role', role: 'author' }
  ])
  t.equal(result.settings.authCodes?.parameter, undefined, 'a blank parameter keeps AUTH_KEY')
  t.same(names(result), ['auth_codes[3]', 'auth_codes[4]', 'auth_codes[5]', 'auth_codes[8]', 'auth_codes[9]'])
  t.match(reasonOf(result, 'auth_codes[5]'), /left out rather than carried without expiry/)
  t.match(reasonOf(result, 'auth_codes[4]'), /64 characters/)
  accepted(t, result)

  const many = v2({ auth_codes: { codes: Array.from({ length: 101 }, (_, i) => ({ code: `code-${i}`, role: '', expiration_date: '' })) } })
  t.equal(many.settings.authCodes?.codes?.length, 100)
  t.same(names(many), ['auth_codes.codes[100]'])
  accepted(t, many)

  const notList = v2({ auth_codes: { codes: 'one-code' } })
  t.same(names(notList), ['auth_codes.codes'])
  t.same(notList.settings.authCodes?.codes, [])
})

t.test('lifetimes are minutes', async (t) => {
  t.equal(v1({ jwt_auth_ttl: 45 }).settings.tokens.lifetime, '45m')
  const bad = v1({ jwt_auth_ttl: '0', jwt_auth_refresh_ttl: 'two weeks' })
  t.same(names(bad), ['jwt_auth_refresh_ttl', 'jwt_auth_ttl'])
  t.equal(bad.settings.tokens.lifetime, undefined)
  t.equal(bad.settings.refresh?.lifetime, undefined)
  t.same(names(v1({ jwt_auth_ttl: 1.5 })), ['jwt_auth_ttl'])
  accepted(t, bad)
})

t.test('registration', async (t) => {
  const plain = v1({ allow_register: true })
  t.same(plain.settings.users?.register, { enabled: true, requireAuthCode: true, signIn: false }, 'the auth code stays required unless turned off')
  t.same(names(plain), [])

  const longRole = v1({ allow_register: true, require_register_auth: false, new_user_profile: 'r'.repeat(65) })
  t.same(longRole.settings.users?.register, { enabled: true, requireAuthCode: false, signIn: false })
  t.match(reasonOf(longRole, 'new_user_profile'), /longer than the 64 characters/)

  const domains = v1({ allow_register: true, register_domain: '@Example.com, example.com; bad_domain!, -x.org' })
  t.same(domains.settings.users?.register?.allowedDomains, ['example.com'])
  t.match(reasonOf(domains, 'register_domain'), /\(bad_domain!, -x\.org\)/)

  const none = v1({ allow_register: true, register_domain: 'bad_domain!' })
  t.equal(none.settings.users?.register?.enabled, false, 'an emptied allow-list turns registration off')
  t.same(names(none), ['allow_register', 'register_domain'])
  t.same(names(v1({ allow_register: false, register_domain: '*.example.com' })), ['register_domain'])

  const many = v1({ allow_register: true, register_domain: Array.from({ length: 101 }, (_, i) => `d${i}.example`).join(',') })
  t.equal(many.settings.users?.register?.allowedDomains?.length, 100)
  t.match(reasonOf(many, 'register_domain'), /\(d100\.example\)/)

  const flags = v1({ allow_register: true, random_password: true, register_force_login: 1, register_send_welcome_email: '1', random_password_length: 12 })
  t.same(names(flags), ['random_password', 'register_force_login', 'register_send_welcome_email'])
  t.match(reasonOf(flags, 'register_send_welcome_email'), /user\.registered event/)
  for (const result of [plain, longRole, domains, none, many, flags]) accepted(t, result)
})

t.test('account deletion deletes the token\'s own user', async (t) => {
  t.same(names(v1({ allow_delete: true, delete_user_by: 1, jwt_delete_by_parameter: 'id' })), [], 'by ID: the same rule')
  const byLogin = v1({ allow_delete: true, delete_user_by: '2', jwt_delete_by_parameter: 'username', require_delete_auth: false })
  t.same(names(byLogin), ['delete_user_by'])
  t.same(byLogin.settings.users?.delete, { enabled: true, requireAuthCode: false })
  t.same(names(v1({ allow_delete: false, delete_user_by: 0 })), [], 'off: nothing to say')
  accepted(t, byLogin)
})

t.test('password reset flows', async (t) => {
  t.match(reasonOf(v2({ reset_password: { enabled: true } }), 'reset_password.flow'), /without mailing it/)
  t.match(reasonOf(v2({ reset_password: { enabled: true, flow: 7 } }), 'reset_password.flow'), /does not know/)
  t.same(names(v2({ reset_password: { enabled: true, flow: 2, email_subject: '', email_body: ' ' } })), [], 'no custom template')
  t.same(names(v2({ reset_password: { enabled: false, flow: 0, email_subject: 'Code {{CODE}}' } })), [], 'off')
  const flags = v2({ reset_password: { enabled: false, return_jwt: true, send_password_changed_email: true } })
  t.same(names(flags), ['reset_password.return_jwt', 'reset_password.send_password_changed_email'])
  t.match(reasonOf(flags, 'reset_password.return_jwt'), /emailed one-time code.*PUT \/account\/password/)
  t.match(reasonOf(flags, 'reset_password.send_password_changed_email'), /after a password reset.*reset\.completed/)
  accepted(t, flags)
})

t.test('CORS takes exact origins only', async (t) => {
  const off = v1({ cors: { enabled: 0, allow_origin_enabled: 1, allow_origin: '*', allow_methods_enabled: 1, allow_headers_enabled: 1 } })
  t.same(off.settings.cors, { enabled: false, origins: [] })
  t.same(names(off), [])
  t.same(v1({ cors: { enabled: 1, allow_origin_enabled: 0, allow_origin: 'https://a.example' } }).settings.cors, { enabled: false, origins: [] }, 'no header sent, nothing to carry')

  const wildcard = v1({ cors: { enabled: 1, allow_origin_enabled: 1, allow_methods_enabled: 1 } })
  t.same(wildcard.settings.cors, { enabled: false, origins: [] }, 'the default origin is *')
  t.same(names(wildcard), ['cors.allow_methods', 'cors.allow_origin'])
  t.match(reasonOf(wildcard, 'cors.allow_methods'), /Access-Control-Allow-Methods/)

  const origins = Array.from({ length: 51 }, (_, i) => `https://app${i}.example.com`)
  const many = v1({ cors: { enabled: 1, allow_origin_enabled: 1, allow_origin: [origins[0], ...origins, 'https://', 'https://a.example:443', 'ftp://files.example'].join(', ') } })
  t.same(many.settings.cors, { enabled: true, origins: origins.slice(0, 50) })
  t.match(reasonOf(many, 'cors.allow_origin'), /\(https:\/\/app50\.example\.com, https:\/\/, https:\/\/a\.example:443, ftp:\/\/files\.example\)/)
  for (const result of [off, wildcard, many]) accepted(t, result)
})

t.test('OpenID providers', async (t) => {
  const google = (fields: Export): ImportedSettings => v1({ google: { enabled: 1, client_id: 'client.apps.googleusercontent.com', ...fields } })
  t.same(v1({ google: { enabled: 0, client_id: '' } }).settings.oauth?.providers, {}, 'off')

  const noClient = google({ client_id: '', enable_exchange_id_token: true })
  t.same(names(noClient), ['google.client_id'])
  t.same(noClient.settings.oauth?.providers, {})

  const httpRedirect = google({ client_secret: 's', enable_exchange_code: true, redirect_uri_exchange_code: 'http://app.example.org/cb' })
  t.same(names(httpRedirect), ['google.enabled', 'google.redirect_uri_exchange_code'], 'nothing left to sign in with')
  t.same(names(google({ enable_exchange_code: true, redirect_uri_exchange_code: 'not a url', enable_exchange_id_token: 1 })), ['google.redirect_uri_exchange_code'])

  const loopback = google({ client_secret: 's', enable_exchange_code: true, redirect_uri_exchange_code: 'http://localhost:3000/cb' })
  t.same(loopback.settings.oauth?.providers?.google?.redirectUris, ['http://localhost:3000/cb'])

  const noSecret = google({ enable_exchange_code: true, redirect_uri_exchange_code: 'https://app.example.org/cb', enable_exchange_id_token: true })
  t.same(names(noSecret), ['google.client_secret'])
  t.same(noSecret.settings.oauth?.providers?.google, { enabled: true, preset: 'google', clientId: 'client.apps.googleusercontent.com', acceptIdToken: true, autoRegister: false })

  const buttonOnly = google({ enable_oauth: true })
  t.same(names(buttonOnly), ['google.enable_oauth', 'google.enabled'])

  const auth0 = v2({
    applications: {
      oauth: {
        auth0: {
          enabled: 1,
          client_id: 'tenant-client',
          client_secret: 'tenant-secret',
          domain: 'https://example.eu.auth0.com/',
          enable_exchange_code: true,
          redirect_uri_exchange_code: 'https://app.example.com/cb',
          enable_exchange_token: true
        },
        facebook: { enabled: 1, client_id: 'fb' },
        github: { enabled: 0 }
      }
    }
  })
  t.same(auth0.settings.oauth?.providers, {
    auth0: {
      enabled: true,
      preset: 'auth0',
      domain: 'example.eu.auth0.com',
      clientId: 'tenant-client',
      clientSecret: 'tenant-secret',
      redirectUris: ['https://app.example.com/cb'],
      acceptIdToken: false,
      autoRegister: false
    }
  })
  t.same(names(auth0), ['applications.oauth.auth0.enable_exchange_token', 'applications.oauth.facebook.enabled'], 'named as the export names them')
  for (const domain of [undefined, 'not a domain']) {
    const badDomain = v2({ integrations: { oauth: { auth0: { enabled: 1, client_id: 'c', domain, enable_exchange_id_token: 1 } } } })
    t.same(names(badDomain), ['integrations.oauth.auth0.domain'])
    t.same(badDomain.settings.oauth?.providers, {})
  }
  for (const result of [noClient, httpRedirect, loopback, noSecret, buttonOnly, auth0]) accepted(t, result)
})

t.test('GitHub and Facebook carry over to their OAuth 2.0 presets: the code flow, registration, GitHub\'s unverified emails', async (t) => {
  const code = { enable_exchange_code: 1, redirect_uri_exchange_code: 'https://app.example.com/cb', create_user_if_not_exists: 1 }
  const result = v2({
    integrations: {
      oauth: {
        github: { enabled: 1, client_id: 'gh-client', client_secret: 'gh-secret', allow_unverified_email: 1, enable_exchange_token: 1, ...code },
        facebook: { enabled: 1, client_id: 'fb-app', client_secret: 'fb-secret', ...code }
      }
    }
  })
  t.same(result.settings.oauth?.providers, {
    github: { enabled: true, preset: 'github', clientId: 'gh-client', clientSecret: 'gh-secret', redirectUris: ['https://app.example.com/cb'], acceptIdToken: false, autoRegister: true, allowUnverifiedEmail: true },
    facebook: { enabled: true, preset: 'facebook', clientId: 'fb-app', clientSecret: 'fb-secret', redirectUris: ['https://app.example.com/cb'], acceptIdToken: false, autoRegister: true }
  })
  t.same(names(result), ['integrations.oauth.github.enable_exchange_token'], 'a provider access token is not taken')
  accepted(t, result)
  const other = v2({ integrations: { oauth: { linkedin: { enabled: 1, client_id: 'li' }, gitlab: { enabled: 0, client_id: 'gl' } } } })
  t.same(other.settings.oauth?.providers, {}, 'a provider without a preset carries nothing over')
  t.same(names(other), ['integrations.oauth.linkedin.enabled'], 'and is listed only when on')
  t.match(reasonOf(other, 'integrations.oauth.linkedin.enabled'), /no preset for/)
  const codeOff = v2({ integrations: { oauth: { github: { enabled: 1, client_id: 'gh-client', client_secret: 'gh-secret', allow_unverified_email: 1 } } } })
  t.same(codeOff.settings.oauth?.providers, {}, 'without the code flow, nothing of GitHub signs in')
  t.same(names(codeOff), ['integrations.oauth.github.enabled'])
})

t.test('third-party integrations', async (t) => {
  const result = v2({ integrations: { '3rdparty': { two_factor: { enabled: true }, woocommerce: { enabled: 1, mode: 'x' }, wpgraphql: { enabled: false } } } })
  t.same(names(result), ['integrations.3rdparty.two_factor.enabled', 'integrations.3rdparty.woocommerce.enabled'])
  t.match(reasonOf(result, 'integrations.3rdparty.two_factor.enabled'), /twoFactor option/)
  t.match(reasonOf(result, 'integrations.3rdparty.woocommerce.enabled'), /woocommerce integration/)
  t.same(names(v1({ wp_graphql: { enabled: true } })), ['wp_graphql.enabled'])
})

t.test('claims', async (t) => {
  const result = v2({ authorization: { jwt_payload: ['id'], custom_claims: { payload: { key: [''], value: [''] } } } })
  t.same(result.settings.tokens.claims, { email: false, login: false })
  t.same(names(result), ['authorization.jwt_payload'], 'blank custom claims are none')
  t.match(reasonOf(result, 'authorization.jwt_payload'), /puts id in the payload/)
})

t.test('API keys: the switch, the four permissions as scopes, users\' own keys, the header', async (t) => {
  const on = v2({ api_keys: { enabled: 1, header_name: 'X-Site-Key', allow_user_api_keys: 1 } })
  t.same(on.settings.apiKeys, { enabled: true, selfService: true, prefix: 'sjl', scopes: ['read', 'create', 'update', 'delete'], header: 'X-Site-Key' })
  t.same(names(on), [], 'everything of the group is carried')
  accepted(t, on)
  const adminsOnly = v2({ api_keys: { enabled: true } })
  t.same(adminsOnly.settings.apiKeys, { enabled: true, selfService: false, prefix: 'sjl', scopes: ['read', 'create', 'update', 'delete'], header: 'X-API-Key' },
    'without allow_user_api_keys only the host mints keys; the default header')
  const badHeader = v1({ api_keys: { enabled: 1, header_name: 'Authorization' } })
  t.equal(badHeader.settings.apiKeys?.header, 'X-API-Key', 'Authorization is not a key header of its own: the default')
  t.same(names(badHeader), ['api_keys.header_name'])
  t.match(reasonOf(badHeader, 'api_keys.header_name'), /not a header name jwt-login takes/)
  t.same(names(v2({ api_keys: { enabled: 1, header_name: 'X Key' } })), ['api_keys.header_name'], 'a name with a space is listed')
  for (const standard of ['User-Agent', 'Cookie', 'host', 'Content-Type']) {
    const taken = v2({ api_keys: { enabled: 1, header_name: standard } })
    t.equal(taken.settings.apiKeys?.header, 'X-API-Key', `${standard}: a standard request header, the default instead`)
    t.match(reasonOf(taken, 'api_keys.header_name'), /not a standard request header/)
    accepted(t, taken)
  }
  const off = v2({ api_keys: { enabled: 0, header_name: 'Bad Header', allow_user_api_keys: 1 } })
  t.same(off.settings.apiKeys, { enabled: false }, 'off: nothing but the switch; a header that never took effect is not listed')
  t.same(names(off), [])
  t.same(fromSimpleJwtLoginSettings(V2_TEXT).settings.apiKeys, { enabled: false }, 'the v2 fixture has them off')
  t.same(names(v2({ api_keys: { enabled: 1, rate_limit: 5 } })), ['api_keys.rate_limit'], 'an unknown key of the group is listed')
})
