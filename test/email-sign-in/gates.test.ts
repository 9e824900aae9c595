// What stands before both routes: the switch, the auth code of sign-in, the ?rest_route= form, and input that is missing, malformed or not a string (400 in the envelope, never 500).
import t from 'tap'
import { errorOf } from '../helpers/http.js'
import { ALICE, buildEmailSignInApp, PREFIX } from '../helpers/email-sign-in.js'

t.test('off: 403 / 243 on both routes, before anything is read; on after a reload', async (t) => {
  const kit = await buildEmailSignInApp(t, { emailSignIn: { enabled: false } })
  for (const res of [await kit.request(ALICE.email), await kit.verify(ALICE.email, '123456'), await kit.request(undefined), await kit.verify(undefined, undefined)]) {
    t.same(errorOf(res), [403, 243])
    t.equal(res.json().data.message, 'Sign-in by email is not enabled.')
  }
  t.same(kit.events.of('email_sign_in.requested'), [])
  await kit.reload({ emailSignIn: { enabled: true } })
  t.equal((await kit.signIn()).statusCode, 200, 'on once the settings say so')
})

t.test('authentication.enabled off: 403 / 45 on both routes, whatever emailSignIn says', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { authentication: { enabled: false } } })
  t.same(errorOf(await kit.request(ALICE.email)), [403, 45])
  t.same(errorOf(await kit.verify(ALICE.email, '123456')), [403, 45])
})

t.test('cookie mode: a sign-in from a foreign origin is refused (403 / 208) before the code is tried; the app\'s own origin signs in', async (t) => {
  const app = 'https://app.example.com'
  const kit = await buildEmailSignInApp(t, { settings: { refresh: { enabled: true, cookie: { enabled: true } }, cors: { enabled: true, origins: [app], credentials: true } } })
  const code = await kit.codeFor(ALICE.email)
  t.same(errorOf(await kit.verify(ALICE.email, code, { headers: { origin: 'https://evil.example.com' } })), [403, 208])
  t.same(kit.events.of('login.failed'), [], 'no try was counted')
  const res = await kit.verify(ALICE.email, code, { headers: { origin: app } })
  t.equal(res.statusCode, 200, res.body)
  t.type(res.json().data.csrf_token, 'string')
})

t.test('authCodes.requireFor.auth: both routes need the auth code in the body', async (t) => {
  const kit = await buildEmailSignInApp(t, { settings: { authCodes: { codes: [{ code: 'gate-code-1' }], requireFor: { auth: true } } } })
  t.same(errorOf(await kit.request(ALICE.email)), [400, 94], 'missing')
  t.same(errorOf(await kit.request(ALICE.email, { body: { AUTH_KEY: 'wrong' } })), [401, 27], 'wrong')
  t.same(errorOf(await kit.verify(ALICE.email, '123456')), [400, 94], 'verify too')
  const gated = { body: { AUTH_KEY: 'gate-code-1' } }
  const code = await kit.codeFor(ALICE.email, gated)
  t.same(errorOf(await kit.verify(ALICE.email, code, { body: { AUTH_KEY: 'wrong' } })), [401, 27], 'a wrong auth code spends no try')
  t.same(kit.events.of('login.failed').map(event => event.reason), ['auth_code', 'auth_code', 'auth_code', 'auth_code'], 'audited as a sign-in\'s auth code')
  t.equal((await kit.verify(ALICE.email, code, gated)).statusCode, 200)
})

t.test('the ?rest_route= form serves both routes', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const asked = await kit.request(ALICE.email, { url: `/?rest_route=${PREFIX}/auth/email` })
  t.equal(asked.statusCode, 200, asked.body)
  const code = /sign-in code is (\d+)/.exec((await kit.mailed()).text)?.[1]
  const res = await kit.verify(ALICE.email, code, { url: `/?rest_route=${PREFIX}/auth/email/verify` })
  t.equal(res.statusCode, 200, res.body)
  t.type(res.json().data.jwt, 'string')
})

t.test('missing or malformed input: 400 / 244 and 245, named before any code is looked at', async (t) => {
  const kit = await buildEmailSignInApp(t)
  t.same(errorOf(await kit.request(undefined)), [400, 244], 'no email')
  t.same(errorOf(await kit.request('')), [400, 244], 'an empty one')
  t.same(errorOf(await kit.request(null)), [400, 244], 'null')
  for (const email of ['not an address', 'alice@', '@example.com', 'alice@example', ' alice@example.com', `${'a'.repeat(250)}@example.com`]) {
    t.same(errorOf(await kit.request(email)), [400, 244], JSON.stringify(email))
    t.same(errorOf(await kit.verify(email, '123456')), [400, 244], `verify ${JSON.stringify(email)}`)
  }
  t.same(errorOf(await kit.verify(undefined, '123456')), [400, 244], 'verify without an email')
  t.same(errorOf(await kit.verify(ALICE.email, undefined)), [400, 245], 'no code')
  t.same(errorOf(await kit.verify(ALICE.email, '')), [400, 245], 'an empty code')
  t.same(errorOf(await kit.verify(undefined, undefined)), [400, 244], 'the email is named first')
  t.equal((await kit.verify(ALICE.email, undefined)).json().data.message, 'Give the code from the mail.')
  t.same(kit.events.of('login.failed'), [], 'nothing was tried')
})

t.test('a field that is not a string, an unreadable body: 400 in the envelope, never 500', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const bodies: Array<[string, Record<string, unknown>]> = [
    ['/auth/email', { email: 42 }],
    ['/auth/email', { email: ['alice@example.com'] }],
    ['/auth/email', { email: { $ne: '' } }],
    ['/auth/email', { email: true }],
    ['/auth/email/verify', { email: ALICE.email, code: 123456 }],
    ['/auth/email/verify', { email: ALICE.email, code: ['123456'] }],
    ['/auth/email/verify', { email: { toString: 'x' }, code: '123456' }],
    ['/auth/email/verify', { email: ALICE.email, code: 'x'.repeat(5000) }],
    ['/auth/email/verify', { email: ALICE.email, code: '12\u00003456' }]
  ]
  for (const [path, payload] of bodies) {
    const res = await kit.app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload })
    t.equal(res.statusCode, 400, `${path} ${JSON.stringify(payload)}: ${res.body}`)
    t.equal(res.json().success, false)
    t.type(res.json().data.errorCode, 'number')
  }
  for (const path of ['/auth/email', '/auth/email/verify']) {
    const res = await kit.app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload: '{"email":', headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 400, `${path}: broken JSON`)
    t.equal(res.json().success, false)
  }
  t.same(kit.events.of('login.failed'), [])
})

t.test('a form-encoded body works as JSON does', async (t) => {
  const kit = await buildEmailSignInApp(t)
  const asked = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/email`, payload: `email=${encodeURIComponent(ALICE.email)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(asked.statusCode, 200, asked.body)
  const code = /sign-in code is (\d+)/.exec((await kit.mailed()).text)?.[1] as string
  const res = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/email/verify`, payload: `email=${encodeURIComponent(ALICE.email)}&code=${code}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(res.statusCode, 200, res.body)
})
