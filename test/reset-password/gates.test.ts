import Fastify from 'fastify'
import t from 'tap'
import jwtLogin, { JwtLoginSettingsError, type PublicUser, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, buildApp, HS_SECRET } from '../helpers/app.js'
import { buildResetApp, codeIn, errorOf, NEW_PASSWORD, RESET_URL, smtpMailer } from '../helpers/reset.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import type { FastifyInstance } from 'fastify'

let smtp: SmtpPeer
t.before(async () => { smtp = await startSmtp() })
t.teardown(() => smtp.close())

const AUTH_CODES = { codes: [{ code: 'let-me-reset' }, { code: 'stale', expiresAt: '2020-01-01T00:00:00Z' }] }

async function requestCode (app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  if (res.statusCode !== 200) throw new Error(`POST answered ${res.statusCode}`)
  return codeIn((await smtp.nextMessage()).text)
}

t.test('reset is off by default: 403 / 56 on both methods', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const post = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  t.same(errorOf(post), { status: 403, errorCode: 56 })
  const put = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code: 'X', new_password: NEW_PASSWORD } })
  t.same(errorOf(put), { status: 403, errorCode: 56 })
})

t.test('switched off in settings: 403 / 56 before any other check', async (t) => {
  const { app } = await buildResetApp(smtp.port, { enabled: false, requireAuthCode: true })
  t.teardown(() => app.close())
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: {} })), { status: 403, errorCode: 56 })
  t.same(errorOf(await app.inject({ method: 'PUT', url: RESET_URL, payload: {} })), { status: 403, errorCode: 56 })
})

t.test('registration refuses reset without setPassword or without a mailer', async (t) => {
  const settings: SettingsInput = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, resetPassword: { enabled: true } }
  const noMailer = Fastify()
  await t.rejects(async () => { await noMailer.register(jwtLogin, { users: new MemoryUserAdapter(), settings }).ready() }, { name: 'JwtLoginSettingsError', path: 'resetPassword/enabled', message: /mailer/ })

  const users = new MemoryUserAdapter()
  const withoutSetPassword = {
    findByEmail: users.findByEmail.bind(users),
    findByLogin: users.findByLogin.bind(users),
    findById: users.findById.bind(users),
    verifyPassword: users.verifyPassword.bind(users),
    toPublicUser: users.toPublicUser.bind(users)
  }
  const noSetter = Fastify()
  await t.rejects(async () => { await noSetter.register(jwtLogin, { users: withoutSetPassword, settings, mailer: smtpMailer(smtp.port) }).ready() }, { name: 'JwtLoginSettingsError', path: 'resetPassword/enabled', message: /setPassword/ })

  const off = Fastify()
  await off.register(jwtLogin, { users: withoutSetPassword, settings: { ...settings, resetPassword: { enabled: false } } })
  await off.ready()
  // an adapter without setPassword is fine while reset is off: the plugin serves, reset answers 56
  const reset = await off.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  t.equal(reset.statusCode, 403)
  t.equal(reset.json().data.errorCode, 56)
  await off.close()
})

t.test('a settings reload that switches reset on without a mailer is refused', async (t) => {
  let enabled = false
  const source = async (): Promise<SettingsInput> => ({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, resetPassword: { enabled } })
  const users = new MemoryUserAdapter()
  const app = Fastify({ logger: false })
  await app.register(jwtLogin, { users, settings: source })
  await app.ready()
  t.teardown(() => app.close())
  enabled = true
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', path: 'resetPassword/enabled', message: /mailer/ })
  t.equal(app.jwtLogin.settings.resetPassword.enabled, false, 'the last good settings stay')
})

t.test('reset settings are validated', async (t) => {
  const base = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }
  const register = async (resetPassword: SettingsInput['resetPassword']): Promise<void> => {
    const app = Fastify()
    await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { ...base, resetPassword } }).ready()
  }
  await t.rejects(register({ code: { alphabet: 'AABCDEFGHIJ' } }), new JwtLoginSettingsError('resetPassword/code/alphabet', 'the characters must be distinct'))
  await t.rejects(register({ password: { minLength: 20, maxLength: 10 } }), { name: 'JwtLoginSettingsError', path: 'resetPassword/password/minLength' })
  await t.rejects(register({ code: { length: 4 } }), { name: 'JwtLoginSettingsError', path: 'resetPassword/code/length' })
  await t.rejects(register({ code: { alphabet: 'ABC' } }), { name: 'JwtLoginSettingsError', path: 'resetPassword/code/alphabet' })
})

t.test('with the auth-code setting on, both methods need AUTH_KEY', async (t) => {
  const { app } = await buildResetApp(smtp.port, { requireAuthCode: true }, { authCodes: AUTH_CODES })
  t.teardown(() => app.close())
  const failures: unknown[] = []
  app.jwtLogin.events.on('reset.failed', (payload) => { failures.push(payload) })

  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })), { status: 400, errorCode: 94 })
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email, AUTH_KEY: 'wrong' } })), { status: 401, errorCode: 27 })
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email, AUTH_KEY: 'stale' } })), { status: 401, errorCode: 27 }, 'an expired auth code')
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: {} })), { status: 400, errorCode: 94 }, 'the gate comes before the email check')
  const post = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email, AUTH_KEY: 'let-me-reset' } })
  t.equal(post.statusCode, 200)
  const code = codeIn((await smtp.nextMessage()).text)

  const body = { email: ALICE.email, code, new_password: NEW_PASSWORD }
  t.same(errorOf(await app.inject({ method: 'PUT', url: RESET_URL, payload: body })), { status: 400, errorCode: 94 })
  t.same(errorOf(await app.inject({ method: 'PUT', url: RESET_URL, payload: { ...body, AUTH_KEY: 'wrong' } })), { status: 401, errorCode: 27 })
  const put = await app.inject({ method: 'PUT', url: `${RESET_URL}?AUTH_KEY=let-me-reset`, payload: body })
  t.equal(put.statusCode, 200, 'AUTH_KEY also in the query')
  t.same(failures.map(f => (f as { step: string, reason: string }).step + ':' + (f as { reason: string }).reason), [
    'request:auth_code', 'request:auth_code', 'request:auth_code', 'request:auth_code', 'complete:auth_code', 'complete:auth_code'
  ])
})

t.test('the auth-code parameter name is a setting; without the reset setting no code is needed', async (t) => {
  const { app } = await buildResetApp(smtp.port, { requireAuthCode: true }, { authCodes: { ...AUTH_CODES, parameter: 'RESET_KEY' } })
  t.teardown(() => app.close())
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email, AUTH_KEY: 'let-me-reset' } })), { status: 400, errorCode: 94 })
  t.equal((await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email, RESET_KEY: 'let-me-reset' } })).statusCode, 200)
  await smtp.nextMessage()

  const { app: open } = await buildResetApp(smtp.port, { requireAuthCode: false }, { authCodes: { ...AUTH_CODES, requireFor: { auth: true } } })
  t.teardown(() => open.close())
  t.equal((await open.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })).statusCode, 200, 'the login gate does not apply to reset')
  const code = codeIn((await smtp.nextMessage()).text)
  t.equal((await open.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })).statusCode, 200)
})

t.test('POST checks its email: 400 / 96', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: {} })), { status: 400, errorCode: 96 })
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: '' } })), { status: 400, errorCode: 96 })
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: 'not-an-email' } })), { status: 400, errorCode: 96 })
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ['a@b.co'] } })), { status: 400, errorCode: 203 })
  t.same(errorOf(await app.inject({ method: 'POST', url: RESET_URL })), { status: 400, errorCode: 96 }, 'no body at all')
})

t.test('PUT names the first missing field: 59, 60, 61, then 95', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const put = async (payload: Record<string, unknown>) => errorOf(await app.inject({ method: 'PUT', url: RESET_URL, payload }))
  t.same(await put({}), { status: 400, errorCode: 59 })
  t.same(await put({ code: 'ABC', new_password: NEW_PASSWORD }), { status: 400, errorCode: 59 })
  t.same(await put({ email: ALICE.email }), { status: 400, errorCode: 60 })
  t.same(await put({ email: ALICE.email, code: '', new_password: NEW_PASSWORD }), { status: 400, errorCode: 60 })
  t.same(await put({ email: ALICE.email, code: 'ABC' }), { status: 400, errorCode: 61 })
  t.same(await put({ email: 'alice', code: 'ABC' }), { status: 400, errorCode: 61 }, 'missing fields before a malformed email')
  t.same(await put({ email: 'alice', code: 'ABC', new_password: NEW_PASSWORD }), { status: 400, errorCode: 95 })
  t.same(await put({ email: ALICE.email, code: 42, new_password: NEW_PASSWORD }), { status: 400, errorCode: 203 })
  t.same(await put({ email: ALICE.email, code: 'ABC', new_password: 'x'.repeat(5000) }), { status: 400, errorCode: 203 }, 'a field beyond 4096 characters never reaches the hasher')
})

t.test('the length policy answers 204 and leaves the code usable', async (t) => {
  const { app } = await buildResetApp(smtp.port, { password: { minLength: 12, maxLength: 20 } })
  t.teardown(() => app.close())
  const failures: unknown[] = []
  app.jwtLogin.events.on('reset.failed', (payload) => { failures.push(payload) })
  const code = await requestCode(app)
  const put = async (newPassword: string) => await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: newPassword } })
  t.same(errorOf(await put('elevenchars')), { status: 400, errorCode: 204 }, 'too short')
  t.same(errorOf(await put('x'.repeat(21))), { status: 400, errorCode: 204 }, 'too long')
  t.same(errorOf(await put('ééééééééééé')), { status: 400, errorCode: 204 }, 'characters, not bytes, count')
  t.same(errorOf(await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: 'nobody@example.com', code, new_password: 'short' } })), { status: 400, errorCode: 204 }, 'the same for an unknown email')
  t.same(failures[0], { step: 'complete', userId: null, ip: '127.0.0.1', reason: 'password_policy', errorCode: 204 })
  t.equal((await put('twelve chars')).statusCode, 200, 'the code was not spent')
})

t.test('the default policy wants 8 characters', async (t) => {
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const code = await requestCode(app)
  const put = async (newPassword: string) => await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: newPassword } })
  t.same(errorOf(await put('1234567')), { status: 400, errorCode: 204 })
  t.equal((await put('12345678')).statusCode, 200)
})

t.test('the host validator rejects after a valid code, without spending it', async (t) => {
  const seen: PublicUser[] = []
  const { app } = await buildResetApp(smtp.port, {}, {}, {
    passwordPolicy: async (password, user) => {
      seen.push(user)
      return !password.toLowerCase().includes(user.user_login)
    }
  })
  t.teardown(() => app.close())
  const failures: unknown[] = []
  app.jwtLogin.events.on('reset.failed', (payload) => { failures.push(payload) })
  const code = await requestCode(app)
  const put = async (newPassword: string, withCode = code) => await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code: withCode, new_password: newPassword } })

  t.same(errorOf(await put('Alice-forever-and-ever', 'WRONGCODE')), { status: 400, errorCode: 62 }, 'a wrong code is 62 whatever the password')
  t.equal(seen.length, 0, 'the validator is not asked before the code is right')
  t.same(errorOf(await put('Alice-forever-and-ever')), { status: 400, errorCode: 204 })
  t.equal(seen[0]?.user_email, ALICE.email, 'the validator gets the public user')
  t.same(failures[1], { step: 'complete', userId: 1, ip: '127.0.0.1', reason: 'password_policy', errorCode: 204 })
  t.equal((await put(NEW_PASSWORD)).statusCode, 200, 'the code still works')
})

t.test('a failing host validator or adapter answers 503 / 201 or 205 and keeps the code', async (t) => {
  let validatorFails = true
  let setterFails = true
  class FlakyUsers extends MemoryUserAdapter {
    override async setPassword (...args: Parameters<MemoryUserAdapter['setPassword']>): Promise<void> {
      if (setterFails) throw new Error('user store is down')
      await super.setPassword(...args)
    }
  }
  const users = new FlakyUsers()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    mailer: smtpMailer(smtp.port),
    passwordPolicy: async () => { if (validatorFails) throw new Error('policy service is down'); return true },
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, resetPassword: { enabled: true } }
  })
  t.teardown(() => app.close())
  const code = await requestCode(app)
  const put = async () => await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })

  const earlier = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.same(errorOf(await put()), { status: 503, errorCode: 201 }, 'the validator failed')
  validatorFails = false
  const failed = await put()
  t.same(errorOf(failed), { status: 503, errorCode: 205 }, 'setPassword failed')
  t.match(failed.json().data.message, /not changed.*sessions may have ended/)
  const validated = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: earlier.json().data.jwt } })
  t.same(errorOf(validated), { status: 401, errorCode: 55 }, 'failing safe: sessions from before the attempt ended')
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(login.statusCode, 200, 'the old password still works')
  const fresh = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth/validate', payload: { JWT: login.json().data.jwt } })
  t.equal(fresh.statusCode, 200, 'and a new sign-in is not held by the provisional cutoff')
  setterFails = false
  t.equal((await put()).statusCode, 200, 'the code came back and works')
})

t.test('code requests are limited per email and per IP: 429 / 200 with Retry-After', async (t) => {
  const { app } = await buildResetApp(smtp.port, { limits: { perEmail: { max: 2, window: '10m' }, perIp: { max: 4, window: '1h' } } })
  t.teardown(() => app.close())
  const failures: unknown[] = []
  app.jwtLogin.events.on('reset.failed', (payload) => { failures.push(payload) })
  const post = async (email: string, ip = '127.0.0.1') => await app.inject({ method: 'POST', url: RESET_URL, payload: { email }, remoteAddress: ip })

  t.equal((await post('nobody@example.com')).statusCode, 200)
  t.equal((await post('NOBODY@example.com')).statusCode, 200)
  const limited = await post('nobody@example.com', '10.0.0.9')
  t.same(errorOf(limited), { status: 429, errorCode: 200 }, 'per email, known or not, from any IP')
  t.equal(limited.headers['retry-after'], '600')

  t.equal((await post(ALICE.email)).statusCode, 200)
  t.equal((await post('carol@example.com')).statusCode, 200)
  const perIp = await post('dave@example.com')
  t.same(errorOf(perIp), { status: 429, errorCode: 200 }, 'the fifth request from one IP')
  t.equal(perIp.headers['retry-after'], '3600')
  t.equal((await post('dave@example.com', '10.0.0.10')).statusCode, 200, 'another IP is not limited')
  t.same(failures[0], { step: 'request', userId: null, ip: '10.0.0.9', reason: 'rate_limited', errorCode: 200 })
  await smtp.nextMessage()
})
