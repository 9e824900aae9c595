import t from 'tap'
import { JwtLoginSettingsError as Exported } from '../../lib/index.js'
import { JwtLoginSettingsError } from '../../lib/core/errors.js'
import { durationAt } from '../../lib/config/duration.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { DEFAULT_RESET_TEMPLATES as RENDERED_DEFAULTS } from '../../lib/mail/templates.js'
import { DEFAULT_RESET_TEMPLATES } from '../../schemas/mail-templates.js'
import { en } from '../../lib/i18n/catalogues/en.js'
import { HS_SECRET } from '../helpers/fixtures.js'
import { settingsError } from '../helpers/settings.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }

t.test('every setting given: each lands in its resolved field, durations in ms, the mail templates gathered', async (t) => {
  const settings = resolveSettings({
    authentication: { enabled: false, requireVerifiedEmail: true },
    authCodes: { codes: [{ code: 'a', expiresAt: '2026-12-01T00:00:00Z' }, { code: 'b', role: 'author' }], parameter: 'P', oauthParameter: 'Q', requireFor: { auth: true, validate: true, refresh: true, revoke: true } },
    login: { allowPasswordHash: true },
    bearer: { enabled: false, allowBareToken: true },
    refresh: { enabled: true, lifetime: '2h', reuseInterval: 0, cookie: { enabled: true, sameSite: 'lax' } },
    validate: { enabled: false, jwtAsObject: true },
    revoke: { enabled: false },
    tokens: { algorithm: 'HS512', keys: [{ kid: 'a', secret: HS_SECRET }, { kid: 'b', secret: HS_SECRET }], issuer: 'i', audience: 'a', lifetime: 60, leeway: 1.5, claims: { email: false, login: false, displayName: true, roles: false } },
    limits: { loginPerAccount: { max: 3, window: '2m' }, loginPerIp: { window: '500ms' }, requestsPerIp: { max: 9 }, signInsPerAccount: { max: 2, window: 7 } },
    passwordHashing: { concurrency: 3, maxQueue: 20, maxRegistrationQueue: 30 },
    sessions: { enabled: true, maxPerUser: 3, clockSkew: '2s', checkPasswordOnValidate: true },
    resetPassword: {
      enabled: true,
      requireAuthCode: true,
      code: { length: 10, alphabet: 'ABCDEFGHJK', lifetime: '5m', maxTries: 3 },
      password: { minLength: 10, maxLength: 20 },
      limits: { perEmail: { max: 1, window: '1m' }, perIp: { max: 2 } },
      mail: { siteName: 'S', subject: 'sub', text: 'txt', html: 'htm', retries: 0, retryDelay: 1 }
    },
    twoFactor: { enabled: false, interimLifetime: '5m', attemptsPerChallenge: 2, perAccount: { max: 1, window: '1h' }, emailCodeLifetime: '1m', rememberDevice: { enabled: true, lifetime: '7d', maxPerUser: 3 } },
    oauth: { providers: { g: { enabled: true, preset: 'google', clientId: 'g', acceptIdToken: true } } },
    passkeys: {
      enabled: true,
      rpId: 'example.com',
      rpName: 'E',
      origins: ['https://app.example.com', 'android:apk-key-hash:abc-_1'],
      userVerification: 'required',
      attestation: 'direct',
      aaguids: ['adce0002-35bc-c60a-648b-0b25f1f05503'],
      challengeLifetime: '10m',
      recentAuth: 60,
      maxPerUser: 2,
      refuseCounterRegression: true
    },
    users: { register: { enabled: true, requireAuthCode: true, allowedDomains: ['example.com'], defaultRole: 'author', signIn: true, perIp: { max: 3, window: '2m' }, verifyEmail: true }, delete: { enabled: true, requireAuthCode: true, recentAuth: '5m' } },
    account: {
      enabled: true,
      recentAuth: '2m',
      code: { length: 10, lifetime: '10m', maxTries: 3 },
      limits: { perAccount: { max: 2, window: '1m' }, perIp: { max: 4 } },
      password: { enabled: false, notify: false },
      email: { enabled: false, revertLifetime: '3d' },
      identities: { enabled: false },
      twoFactor: { enabled: false }
    },
    emailSignIn: {
      enabled: true,
      code: { length: 8, lifetime: '1h', maxTries: 3 },
      limits: { perAddress: { max: 2, window: '2m' }, perAccount: { max: 3 }, perIp: { window: '1m' } },
      linkUrl: 'https://app.example.com/sign-in/email',
      register: true
    },
    telemetry: { userIds: true },
    apiKeys: {
      enabled: true,
      selfService: false,
      header: 'X-Acme-Key',
      prefix: 'acme',
      scopes: ['orders:read', 'reports.export'],
      lifetime: { default: '30d', min: '1d', max: '1y' },
      maxPerUser: 3,
      limits: { perKey: { max: 60, window: '1m' }, wrongKeysPerIp: { max: 5 } }
    },
    cors: { enabled: true, origins: ['https://app.example.com'], credentials: true, maxAge: 30 },
    locale: { default: 'de', allowed: ['de', 'en'] },
    bodyLimit: 2048
  })
  const { oauth, ...rest } = settings
  t.same(rest, {
    authentication: { enabled: false, requireVerifiedEmail: true },
    authCodes: {
      codes: [{ code: 'a', expiresAt: Date.UTC(2026, 11, 1), role: null }, { code: 'b', expiresAt: null, role: 'author' }],
      parameter: 'P',
      oauthParameter: 'Q',
      requireFor: { auth: true, validate: true, refresh: true, revoke: true, oauth: true }
    },
    login: { allowPasswordHash: true },
    bearer: { enabled: false, allowBareToken: true },
    refresh: { enabled: true, lifetimeMs: 7_200_000, reuseIntervalMs: 0, cookie: { enabled: true, sameSite: 'lax' } },
    validate: { enabled: false, jwtAsObject: true },
    revoke: { enabled: false },
    tokens: {
      algorithm: 'HS512',
      keys: [{ kid: 'a', secret: HS_SECRET }, { kid: 'b', secret: HS_SECRET }],
      issuer: 'i',
      audience: 'a',
      lifetimeMs: 60_000,
      leewayMs: 1_500,
      claims: { email: false, login: false, displayName: true, roles: false }
    },
    limits: {
      loginPerAccount: { max: 3, windowMs: 120_000 },
      loginPerIp: { max: 50, windowMs: 500 },
      requestsPerIp: { max: 9, windowMs: 60_000 },
      signInsPerAccount: { max: 2, windowMs: 7_000 }
    },
    passwordHashing: { concurrency: 3, maxQueue: 20, maxRegistrationQueue: 30 },
    sessions: { enabled: true, maxPerUser: 3, clockSkewMs: 2_000, checkPasswordOnValidate: true },
    resetPassword: {
      enabled: true,
      requireAuthCode: true,
      code: { length: 10, alphabet: 'ABCDEFGHJK', lifetimeMs: 300_000, maxTries: 3 },
      password: { minLength: 10, maxLength: 20 },
      limits: { perEmail: { max: 1, windowMs: 60_000 }, perIp: { max: 2, windowMs: 3_600_000 } },
      mail: { siteName: 'S', templates: { subject: 'sub', text: 'txt', html: 'htm' }, retries: 0, retryDelayMs: 1_000 }
    },
    twoFactor: { enabled: false, interimLifetimeMs: 300_000, attemptsPerChallenge: 2, perAccount: { max: 1, windowMs: 3_600_000 }, emailCodeLifetimeMs: 60_000, rememberDevice: { enabled: true, lifetimeMs: 604_800_000, maxPerUser: 3 } },
    passkeys: {
      enabled: true,
      rpId: 'example.com',
      rpName: 'E',
      origins: ['https://app.example.com', 'android:apk-key-hash:abc-_1'],
      userVerification: 'required',
      attestation: 'direct',
      aaguids: ['adce0002-35bc-c60a-648b-0b25f1f05503'],
      challengeLifetimeMs: 600_000,
      recentAuthMs: 60_000,
      maxPerUser: 2,
      refuseCounterRegression: true
    },
    users: { register: { enabled: true, requireAuthCode: true, allowedDomains: ['example.com'], defaultRole: 'author', signIn: true, perIp: { max: 3, windowMs: 120_000 }, verifyEmail: true }, delete: { enabled: true, requireAuthCode: true, recentAuthMs: 300_000 } },
    account: {
      enabled: true,
      recentAuthMs: 120_000,
      code: { length: 10, lifetimeMs: 600_000, maxTries: 3 },
      limits: { perAccount: { max: 2, windowMs: 60_000 }, perIp: { max: 4, windowMs: 3_600_000 } },
      password: { enabled: false, notify: false },
      email: { enabled: false, revertLifetimeMs: 259_200_000 },
      identities: { enabled: false },
      twoFactor: { enabled: false }
    },
    emailSignIn: {
      enabled: true,
      code: { length: 8, lifetimeMs: 3_600_000, maxTries: 3 },
      limits: { perAddress: { max: 2, windowMs: 120_000 }, perAccount: { max: 3, windowMs: 3_600_000 }, perIp: { max: 20, windowMs: 60_000 } },
      linkUrl: 'https://app.example.com/sign-in/email',
      register: true
    },
    telemetry: { userIds: true },
    apiKeys: {
      enabled: true,
      selfService: false,
      header: 'X-Acme-Key',
      prefix: 'acme',
      scopes: ['orders:read', 'reports.export'],
      lifetime: { defaultMs: 2_592_000_000, minMs: 86_400_000, maxMs: 31_557_600_000 },
      maxPerUser: 3,
      limits: { perKey: { max: 60, windowMs: 60_000 }, wrongKeysPerIp: { max: 5, windowMs: 900_000 } }
    },
    cors: { enabled: true, origins: ['https://app.example.com'], credentials: true, maxAgeMs: 30_000 },
    locale: { default: 'de', allowed: ['de', 'en'] },
    bodyLimit: 2048
  })
  t.same(Object.keys(oauth.providers), ['g'])
  t.match(oauth.providers.g, { name: 'g', enabled: true, preset: 'google', issuer: 'https://accounts.google.com', timeoutMs: 5_000 })
})

t.test('the defaults of the groups not covered elsewhere: reset password and two-factor', async (t) => {
  const settings = resolveSettings({ tokens: TOKENS })
  t.same(settings.resetPassword, {
    enabled: false,
    requireAuthCode: false,
    code: { length: 8, alphabet: 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789', lifetimeMs: 900_000, maxTries: 5 },
    password: { minLength: 8, maxLength: 1024 },
    limits: { perEmail: { max: 5, windowMs: 3_600_000 }, perIp: { max: 20, windowMs: 3_600_000 } },
    mail: { siteName: 'jwt-login', templates: {}, retries: 2, retryDelayMs: 2_000 }
  })
  t.same(settings.locale, { default: 'en', allowed: [] })
  t.same(settings.passwordHashing, { concurrency: 0, maxQueue: 0, maxRegistrationQueue: 0 }, '0: all sized from the machine')
  t.same(settings.twoFactor, { enabled: true, interimLifetimeMs: 300_000, attemptsPerChallenge: 5, perAccount: { max: 10, windowMs: 900_000 }, emailCodeLifetimeMs: 600_000, rememberDevice: { enabled: false, lifetimeMs: 2_592_000_000, maxPerUser: 10 } })
  t.equal(RENDERED_DEFAULTS, DEFAULT_RESET_TEMPLATES, 'lib/mail/templates.ts hands on the English texts of schemas/')
  t.equal(en.mails.reset, DEFAULT_RESET_TEMPLATES, 'which are the English catalogue\'s reset mail')
  t.same(settings.passkeys, {
    enabled: false,
    rpId: 'localhost',
    rpName: 'jwt-login',
    origins: [],
    userVerification: 'preferred',
    attestation: 'none',
    aaguids: [],
    challengeLifetimeMs: 300_000,
    recentAuthMs: 600_000,
    maxPerUser: 20,
    refuseCounterRegression: false
  })
})

t.test('passkeys: an origin as browsers send it, one at least when on, a challenge of at most 10 minutes, values the schema knows', async (t) => {
  const refused = (passkeys: Record<string, unknown>): string => settingsError({ tokens: TOKENS, passkeys }).message
  t.match(refused({ enabled: true }), /passkeys\/origins: passkeys need at least one origin/)
  t.match(refused({ origins: ['https://app.example.com/'] }), /passkeys\/origins\/0/, 'a path: refused by the schema')
  t.match(refused({ origins: ['https://App.example.com'] }), /passkeys\/origins\/0: must be an origin as browsers send it \(https:\/\/app\.example\.com\)/)
  t.match(refused({ challengeLifetime: '11m' }), /passkeys\/challengeLifetime: must be at most 10 minutes/)
  t.match(refused({ rpId: 'https://example.com' }), /passkeys\/rpId/)
  t.match(refused({ userVerification: 'always' }), /passkeys\/userVerification/)
  t.match(refused({ attestation: 'enterprise' }), /passkeys\/attestation/)
  t.match(refused({ aaguids: ['not-a-uuid'] }), /passkeys\/aaguids\/0/)
  t.match(refused({ maxPerUser: 0 }), /passkeys\/maxPerUser/)
  t.equal(resolveSettings({ tokens: TOKENS, passkeys: { enabled: true, origins: ['android:apk-key-hash:xyz'] } }).passkeys.origins[0], 'android:apk-key-hash:xyz', 'an Android app\'s origin is taken as it is')
  for (const rpId of ['127.0.0.1', 'com', 'example..com']) t.match(refused({ rpId }), /passkeys\/rpId: must be a domain name/, rpId)
  t.match(refused({ rpId: 'example.com', origins: ['https://evil.org'] }), /passkeys\/origins\/0: must be on passkeys.rpId \(example.com\) or a subdomain of it/)
  t.match(refused({ rpId: 'example.com', origins: ['https://notexample.com'] }), /passkeys\/origins\/0: must be on passkeys.rpId/, 'a suffix is no subdomain')
  t.match(refused({ origins: ['https://app.example.com'] }), /passkeys\/origins\/0: must be on passkeys.rpId \(localhost\)/, 'the default rpId with a production origin')
  t.match(refused({ rpId: 'example.com', origins: ['http://app.example.com'] }), /passkeys\/origins\/0: must be https/)
  t.match(refused({ recentAuth: '2d' }), /passkeys\/recentAuth: must be at most 1 day/)
  t.same(resolveSettings({ tokens: TOKENS, passkeys: { rpId: 'example.com', origins: ['https://example.com', 'https://a.b.example.com'] } }).passkeys.origins, ['https://example.com', 'https://a.b.example.com'], 'the domain itself and its subdomains')
  t.same(resolveSettings({ tokens: TOKENS, passkeys: { origins: ['http://localhost:3000'] } }).passkeys.origins, ['http://localhost:3000'], 'http on localhost')
})

t.test('users: a deletion\'s recent sign-in is at most a day ago; a domain is a host name', async (t) => {
  t.match(settingsError({ tokens: TOKENS, users: { delete: { recentAuth: '2d' } } }).message, /users\/delete\/recentAuth: must be at most 1 day/)
  t.match(settingsError({ tokens: TOKENS, users: { register: { allowedDomains: ['@example.com'] } } }).message, /users\/register\/allowedDomains\/0/)
  t.equal(resolveSettings({ tokens: TOKENS, users: { delete: { recentAuth: '1d' } } }).users.delete.recentAuthMs, 86_400_000)
})

t.test('passwordHashing: whole numbers, 0 for the automatic size', async (t) => {
  t.match(settingsError({ tokens: TOKENS, passwordHashing: { concurrency: -1 } }).message, /passwordHashing\/concurrency/)
  t.match(settingsError({ tokens: TOKENS, passwordHashing: { concurrency: 1.5 } }).message, /passwordHashing\/concurrency/)
  t.match(settingsError({ tokens: TOKENS, passwordHashing: { maxQueue: -1 } }).message, /passwordHashing\/maxQueue/)
  t.match(settingsError({ tokens: TOKENS, passwordHashing: { maxRegistrationQueue: 0.5 } }).message, /passwordHashing\/maxRegistrationQueue/)
  t.match(settingsError({ tokens: TOKENS, passwordHashing: { queue: 3 } }).message, /passwordHashing/, 'an unknown field')
})

t.test('requireFor.oauth: absent it follows auth, given it stands apart', async (t) => {
  t.equal(resolveSettings({ tokens: TOKENS, authCodes: { requireFor: { auth: true } } }).authCodes.requireFor.oauth, true)
  t.equal(resolveSettings({ tokens: TOKENS, authCodes: { requireFor: { auth: true, oauth: false } } }).authCodes.requireFor.oauth, false)
  t.equal(resolveSettings({ tokens: TOKENS, authCodes: { requireFor: { oauth: true } } }).authCodes.requireFor.oauth, true)
})

t.test('a zero duration that the schema admits is refused at its own path', async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['refresh/lifetime', { refresh: { lifetime: '0s' } }],
    ['refresh/reuseInterval', { refresh: { reuseInterval: '0s' } }],
    ['tokens/lifetime', { tokens: { ...TOKENS, lifetime: '0s' } }],
    ['tokens/leeway', { tokens: { ...TOKENS, leeway: '0s' } }],
    ['limits/loginPerAccount/window', { limits: { loginPerAccount: { window: '0s' } } }],
    ['limits/loginPerIp/window', { limits: { loginPerIp: { window: '0s' } } }],
    ['limits/requestsPerIp/window', { limits: { requestsPerIp: { window: '0s' } } }],
    ['limits/signInsPerAccount/window', { limits: { signInsPerAccount: { window: '0s' } } }],
    ['sessions/clockSkew', { sessions: { clockSkew: '0s' } }],
    ['resetPassword/code/lifetime', { resetPassword: { code: { lifetime: '0s' } } }],
    ['resetPassword/limits/perEmail/window', { resetPassword: { limits: { perEmail: { window: '0s' } } } }],
    ['resetPassword/limits/perIp/window', { resetPassword: { limits: { perIp: { window: '0s' } } } }],
    ['resetPassword/mail/retryDelay', { resetPassword: { mail: { retryDelay: '0s' } } }],
    ['twoFactor/interimLifetime', { twoFactor: { interimLifetime: '0s' } }],
    ['twoFactor/perAccount/window', { twoFactor: { perAccount: { window: '0s' } } }],
    ['twoFactor/emailCodeLifetime', { twoFactor: { emailCodeLifetime: '0s' } }],
    ['cors/maxAge', { cors: { maxAge: '0s' } }]
  ]
  for (const [path, settings] of cases) {
    const error = settingsError({ tokens: TOKENS, ...settings })
    t.match(error.message, `jwt-login: invalid setting ${path}: "0s" is zero: a duration is seconds as a number above 0`, path)
    t.equal(error.path, path, path)
  }
})

t.test('a number of seconds that rounds to 0 ms is refused at its own path; the number 0 itself is not', async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['limits/loginPerAccount/window', { limits: { loginPerAccount: { window: 0.0004 } } }],
    ['twoFactor/interimLifetime', { twoFactor: { interimLifetime: 0.0004 } }],
    ['refresh/reuseInterval', { refresh: { reuseInterval: 0.0004 } }]
  ]
  for (const [path, settings] of cases) {
    const error = settingsError({ tokens: TOKENS, ...settings })
    t.equal(error.message, `jwt-login: invalid setting ${path}: invalid duration: 0.0004 rounds to 0 ms`, path)
    t.equal(error.path, path, path)
  }
  t.equal(resolveSettings({ tokens: TOKENS, limits: { loginPerAccount: { window: 0.0005 } } }).limits.loginPerAccount.windowMs, 1, 'half a millisecond rounds to 1 ms')
  t.equal(resolveSettings({ tokens: TOKENS, refresh: { reuseInterval: 0 } }).refresh.reuseIntervalMs, 0, 'reuseInterval: 0 still means none')
  t.equal(resolveSettings({ tokens: TOKENS, sessions: { clockSkew: 0 } }).sessions.clockSkewMs, 0, 'clockSkew: 0 still means none')
  t.throws(() => durationAt(0.0004, 'userCache/ttl', 'option'), { name: 'JwtLoginSettingsError', path: 'userCache/ttl', message: 'jwt-login: invalid option userCache/ttl: invalid duration: 0.0004 rounds to 0 ms' })
})

t.test('the refusals the schema cannot say, with their reasons', async (t) => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ twoFactor: { interimLifetime: '301s' } }, 'twoFactor/interimLifetime', 'must be at most 5 minutes'],
    [{ refresh: { reuseInterval: 301 } }, 'refresh/reuseInterval', 'must be at most 5 minutes'],
    [{ resetPassword: { code: { alphabet: 'ABCDEFGHIA' } } }, 'resetPassword/code/alphabet', 'the characters must be distinct'],
    [{ resetPassword: { password: { minLength: 21, maxLength: 20 } } }, 'resetPassword/password/minLength', 'must not exceed maxLength'],
    [{ cors: { origins: ['https://a.example', 'https://B.example'] } }, 'cors/origins/1', 'must be an origin as browsers send it (https://b.example): scheme, host and port, no path and no trailing slash'],
    [{ cors: { origins: ['http://a b'] } }, 'cors/origins/0', 'must be an origin as browsers send it: scheme, host and port, no path and no trailing slash'],
    [
      { refresh: { enabled: true, cookie: { enabled: true } }, cors: { enabled: true, origins: ['https://a.example'] } },
      'cors/credentials',
      'cookie mode (refresh.cookie.enabled) across origins needs cors.credentials: true, or the browsers send no cookie'
    ]
  ]
  for (const [settings, path, reason] of cases) {
    t.equal(settingsError({ tokens: TOKENS, ...settings }).message, `jwt-login: invalid setting ${path}: ${reason}`, path)
  }
  t.equal(resolveSettings({ tokens: TOKENS, twoFactor: { interimLifetime: '5m' }, refresh: { reuseInterval: 300 } }).refresh.reuseIntervalMs, 300_000, 'the ceilings themselves are allowed')
})

t.test('the settings error: one class, in the error table, for settings and options', async (t) => {
  t.equal(Exported, JwtLoginSettingsError, 'the package exports the class of lib/core/errors.ts')
  const error = new JwtLoginSettingsError('userCache/ttl', 'too long', 'option')
  t.equal(error.message, 'jwt-login: invalid option userCache/ttl: too long')
  t.equal(error.code, 'ERR_JWT_LOGIN_INVALID_SETTINGS')
  t.equal(new JwtLoginSettingsError('', 'settings must be an object').message, 'jwt-login: invalid setting (root): settings must be an object')
  t.equal(durationAt('1m', 'userCache/ttl', 'option'), 60_000)
  t.throws(() => durationAt('0s', 'userCache/ttl', 'option'), { name: 'JwtLoginSettingsError', path: 'userCache/ttl', message: 'jwt-login: invalid option userCache/ttl: "0s" is zero: a duration is seconds as a number above 0, or a string such as \'30s\', \'15m\', \'14d\'' })
})

t.test('apiKeys: off by default; a prefix and scopes of a strict form; lifetimes within one another and 5 years', async (t) => {
  t.same(resolveSettings({ tokens: TOKENS }).apiKeys, {
    enabled: false,
    selfService: true,
    header: 'X-API-Key',
    prefix: 'jwtl',
    scopes: [],
    lifetime: { defaultMs: 90 * 86_400_000, minMs: 3_600_000, maxMs: 365 * 86_400_000 },
    maxPerUser: 10,
    limits: { perKey: { max: 600, windowMs: 60_000 }, wrongKeysPerIp: { max: 20, windowMs: 900_000 } }
  })
  const refused = (apiKeys: Record<string, unknown>): string => settingsError({ tokens: TOKENS, apiKeys }).message
  for (const prefix of ['j', 'JWTL', 'jw_t', 'a-b', '1abc', 'abcdefghijklmnopq']) t.match(refused({ prefix }), /apiKeys\/prefix/, prefix)
  for (const header of ['Authorization', 'authorization', 'X Key', '-x', 'X_Key', '', 'x'.repeat(65)]) t.match(refused({ header }), /apiKeys\/header/, JSON.stringify(header))
  for (const header of ['User-Agent', 'cookie', 'Host', 'Content-Type', 'X-Forwarded-For', 'Sec-Fetch-Mode', 'Proxy-Authorization']) {
    t.match(refused({ header }), /apiKeys\/header: must not be a standard request header/, header)
  }
  t.equal(resolveSettings({ tokens: TOKENS, apiKeys: { header: 'X-Acme-Key' } }).apiKeys.header, 'X-Acme-Key', 'a header of the host\'s own')
  for (const scope of ['Orders', 'a b', '', ':x', 'x'.repeat(65)]) t.match(refused({ scopes: [scope] }), /apiKeys\/scopes\/0/, JSON.stringify(scope))
  t.match(refused({ scopes: ['a', 'a'] }), /apiKeys\/scopes/, 'each once')
  t.match(refused({ maxPerUser: 0 }), /apiKeys\/maxPerUser/)
  t.match(refused({ maxPerUser: 101 }), /apiKeys\/maxPerUser/)
  t.match(refused({ lifetime: { max: '6y' } }), /apiKeys\/lifetime\/max: must be at most 5 years/)
  t.match(refused({ lifetime: { min: '2d', max: '1d', default: '1d' } }), /apiKeys\/lifetime\/min: must not exceed apiKeys.lifetime.max/)
  t.match(refused({ lifetime: { default: '400d' } }), /apiKeys\/lifetime\/default: must be between/)
  t.match(refused({ lifetime: { default: '30m' } }), /apiKeys\/lifetime\/default: must be between/, 'under the minimum')
  t.match(refused({ limits: { perKey: { max: 0 } } }), /apiKeys\/limits\/perKey\/max/)
  t.equal(resolveSettings({ tokens: TOKENS, apiKeys: { lifetime: { default: '5y', max: '5y' } } }).apiKeys.lifetime.maxMs, 157_788_000_000, '\'5y\' itself')
})
