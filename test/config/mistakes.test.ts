// Issue 34: mistakes a new user makes in the settings and options are refused (or warned of) with a sentence
// that names the setting and its fix, at registration and on a reload from a settings source.
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET, registrationRefusal, registrationThrew } from '../helpers/app.js'
import { settingsError } from '../helpers/settings.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }

/** The refusal of registering with these settings (over memory users). */
async function refusedSettings (settings: unknown, options: Record<string, unknown> = {}): Promise<{ path: string, message: string }> {
  return await registrationRefusal({ settings: { tokens: TOKENS, ...settings as object }, ...options })
}

t.test('a gate by auth codes with no code is refused: no request it gates could ever pass', async (t) => {
  for (const name of ['auth', 'validate', 'refresh', 'revoke', 'oauth']) {
    const error = await refusedSettings({ authCodes: { requireFor: { [name]: true } } })
    t.equal(error.path, `authCodes/requireFor/${name}`, name)
    t.match(error.message, `authCodes/requireFor/${name}: needs at least one code in authCodes.codes: with none, every request it gates is refused. Give codes, or turn off authCodes.requireFor.${name}`, name)
  }
  const both = await refusedSettings({ authCodes: { requireFor: { auth: true } } })
  t.match(both.message, 'turn off authCodes.requireFor.auth, authCodes.requireFor.oauth', 'requireFor.oauth follows auth: both named')
  const users = new MemoryUserAdapter()
  const cases: Array<[object, string]> = [
    [{ resetPassword: { enabled: true, requireAuthCode: true } }, 'resetPassword/requireAuthCode'],
    [{ users: { register: { enabled: true, requireAuthCode: true } } }, 'users/register/requireAuthCode'],
    [{ users: { delete: { enabled: true, requireAuthCode: true } } }, 'users/delete/requireAuthCode']
  ]
  for (const [settings, path] of cases) {
    const error = await refusedSettings(settings, { users, mailer: { send: async () => {} } })
    t.equal(error.path, path)
  }
  t.equal(await registrationThrew({ settings: { tokens: TOKENS, authCodes: { codes: [{ code: 'c' }], requireFor: { auth: true } } } }), null, 'with a code it starts')
  t.equal(await registrationThrew({ settings: { tokens: TOKENS, resetPassword: { requireAuthCode: true }, users: { register: { requireAuthCode: true }, delete: { requireAuthCode: true } } } }), null,
    'a gate of a feature that is off is no mistake')
})

t.test('tokens.lifetime is at most 1 day: 900000 (meant as ms) is refused with the reading of a number', async (t) => {
  const error = settingsError({ tokens: { ...TOKENS, lifetime: 900000 } })
  t.equal(error.path, 'tokens/lifetime')
  t.match(error.message, 'must be at most 1 day (a number is seconds: 900 is 15 minutes, 900000 is 10.4 days)')
  t.equal(settingsError({ tokens: { ...TOKENS, lifetime: '25h' } }).path, 'tokens/lifetime')
  t.doesNotThrow(() => settingsError({ tokens: { ...TOKENS, lifetime: '1d' }, extra: 1 }), 'one day is accepted (the refusal is of the extra key)')
  t.equal(settingsError({ tokens: { ...TOKENS, lifetime: '1d' }, extra: 1 }).path, 'extra')
})

t.test('a prefix without its leading slash is refused, saying how to write it', async (t) => {
  const error = await registrationRefusal({ prefix: 'jwt-login/v1' })
  t.equal(error.path, 'prefix')
  t.match(error.message, "invalid option prefix: must be a path that starts with a slash, such as '/jwt-login/v1' (or '' for the host's root): write '/jwt-login/v1'; without it the /?rest_route= form answers 404")
  const notString = await registrationRefusal({ prefix: 42 })
  t.notMatch(notString.message, 'write')
  t.equal(await registrationThrew({ prefix: '/auth/v2' }), null)
})

t.test('trusted devices without the twoFactor option are refused', async (t) => {
  const error = await refusedSettings({ twoFactor: { rememberDevice: { enabled: true } } })
  t.equal(error.path, 'twoFactor/rememberDevice/enabled')
  t.match(error.message, 'trusted devices skip a second factor, which needs the `twoFactor` option ({ port }, docs/two-factor.md): pass it, or turn rememberDevice off')
  const twoFactor = { port: new MemoryTwoFactorStore() }
  t.equal(await registrationThrew({ twoFactor, settings: { tokens: TOKENS, twoFactor: { rememberDevice: { enabled: true } } } }), null)
})

t.test('a misspelt setting gets "did you mean"; an unknown one is named', async (t) => {
  t.equal(settingsError({ tokens: TOKENS, refresh: { enabeld: true } }).message,
    'jwt-login: invalid setting refresh/enabeld: is not a setting; did you mean `enabled`? (the settings are listed in docs/settings.md)')
  t.match(settingsError({ tokens: TOKENS, refersh: {} }).message, 'invalid setting refersh: is not a setting; did you mean `refresh`?')
  t.match(settingsError({ tokens: { ...TOKENS, lifetme: '1h' } }).message, 'did you mean `lifetime`?')
  t.equal(settingsError({ tokens: TOKENS, database: 'x' }).message, 'jwt-login: invalid setting database: is not a setting (the settings are listed in docs/settings.md)')
})

t.test('an empty tokens.keys, an origin with a path or trailing slash, and a zero duration get a sentence', async (t) => {
  t.equal(settingsError({ tokens: { keys: [] } }).message,
    "jwt-login: invalid setting tokens/keys: needs at least one signing key, such as [{ kid: 'k1', secret: <32 or more random bytes> }] (docs/settings.md#tokens)")
  t.equal(settingsError({ tokens: TOKENS, cors: { origins: ['https://app.example.com/'] } }).message,
    'jwt-login: invalid setting cors/origins/0: must be an origin as browsers send it (https://app.example.com): scheme, host and port, no path and no trailing slash')
  t.match(settingsError({ tokens: TOKENS, cors: { origins: ['https://app.example.com/login'] } }).message, 'cors/origins/0: must be an origin as browsers send it (https://app.example.com)')
  t.match(settingsError({ tokens: TOKENS, cors: { origins: ['app.example.com'] } }).message, 'cors/origins/0: must be an origin as browsers send it: scheme')
  t.match(settingsError({ tokens: TOKENS, passkeys: { origins: ['https://app.example.com/'] } }).message, 'passkeys/origins/0: must be an origin as browsers send it (https://app.example.com)')
  t.match(settingsError({ tokens: TOKENS, cors: { origins: ['javascript:alert(1)'] } }).message, 'cors/origins/0: must be an origin as browsers send it: scheme', 'no origin to suggest')
  t.equal(settingsError({ tokens: { ...TOKENS, lifetime: '0s' } }).message,
    "jwt-login: invalid setting tokens/lifetime: \"0s\" is zero: a duration is seconds as a number above 0, or a string such as '30s', '15m', '14d'")
  t.match(settingsError({ tokens: TOKENS, refresh: { reuseInterval: '0s' } }).message, '"0s" is zero: a duration is seconds as a number above 0, or a string such as \'30s\', \'15m\', \'14d\' (the number 0 turns it off)')
})

interface Host { app: FastifyInstance, lines: Array<{ level: number, msg: string, err?: { message: string } }>, source: { next: unknown } }

/** A host with a captured warn log and an async settings source the test changes. */
async function sourceHost (t: Test, initial: unknown, options: Partial<JwtLoginOptions> = {}): Promise<Host> {
  const lines: Host['lines'] = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    }
  })
  const source = { next: initial }
  const app = Fastify({ logger: { level: 'warn', stream } })
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users: new MemoryUserAdapter(), settingsTtl: '1h', settings: async () => structuredClone(source.next) as SettingsInput, ...options })
  await app.ready()
  return { app, lines, source }
}

const CORS_WARNING = 'jwt-login: cors.origins is set but cors.enabled is off, so the plugin answers no preflight and sends no CORS header to those origins: ' +
  "turn cors.enabled on, unless the host's own CORS reads these origins (docs/browser-apps.md)"

t.test('cors.origins with CORS off is warned of, at registration and when a reload brings it', async (t) => {
  const at = await sourceHost(t, { tokens: TOKENS, cors: { origins: ['https://app.example.com'] } })
  t.same(at.lines.map(line => line.msg), [CORS_WARNING], 'warned at registration')
  const on = await sourceHost(t, { tokens: TOKENS, cors: { enabled: true, origins: ['https://app.example.com'] } })
  t.same(on.lines, [], 'no warning when CORS is on')
  const reload = await sourceHost(t, { tokens: TOKENS })
  t.same(reload.lines, [])
  reload.source.next = { tokens: TOKENS, cors: { origins: ['https://app.example.com'] } }
  await reload.app.jwtLogin.reloadSettings()
  t.same(reload.lines.map(line => line.msg), [CORS_WARNING], 'warned when a reload brings it')
  reload.source.next = { tokens: TOKENS, cors: { origins: ['https://app.example.com', 'https://b.example.com'] } }
  await reload.app.jwtLogin.reloadSettings()
  t.equal(reload.lines.length, 1, 'not again while it stays')
})

t.test('a reload from a settings source meets the same refusals, and the last good settings stay', async (t) => {
  const host = await sourceHost(t, { tokens: TOKENS })
  const mistakes: Array<[unknown, string]> = [
    [{ tokens: TOKENS, authCodes: { requireFor: { auth: true } } }, 'authCodes/requireFor/auth'],
    [{ tokens: { ...TOKENS, lifetime: 900000 } }, 'tokens/lifetime'],
    [{ tokens: TOKENS, twoFactor: { rememberDevice: { enabled: true } } }, 'twoFactor/rememberDevice/enabled'],
    [{ tokens: TOKENS, refresh: { enabeld: true } }, 'refresh/enabeld'],
    [{ tokens: TOKENS, cors: { origins: ['https://app.example.com/'] } }, 'cors/origins/0']
  ]
  for (const [next, path] of mistakes) {
    host.source.next = next
    await t.rejects(host.app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path }, path)
    t.equal(host.app.jwtLogin.settings.tokens.lifetimeMs, 15 * 60_000)
    t.equal(host.app.jwtLogin.settings.authCodes.requireFor.auth, false)
  }
})
