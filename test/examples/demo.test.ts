import { execFile } from 'node:child_process'
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import { generate } from 'otplib'
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { banner, buildDemo, bundleClient, DEFAULT_PORT, DEMO_2FA_USER, DEMO_USER, demoTotp, EMAIL_SIGN_IN_PATH, emailSignInPageUrl, main, oauthFromEnv, passkeyOrigin } from '../../examples/demo.js'
import { SoftAuthenticator } from '../helpers/authenticator.js'
import { errorCode } from '../helpers/http.js'
import { REDIS_URL } from '../helpers/redis-store.js'

const PREFIX = '/jwt-login/v1'
const execFileAsync = promisify(execFile)

t.test('the demo host: login with the demo user, validate, /me, refresh, revoke', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })
  t.equal(login.statusCode, 200, login.body)
  const { jwt, refresh_token: refreshToken } = login.json().data
  t.type(refreshToken, 'string', 'refresh tokens are on in the demo')

  const validate = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(validate.statusCode, 200)
  t.same(validate.json().data.user, { ID: 1, user_login: DEMO_USER.login, user_email: DEMO_USER.email, display_name: DEMO_USER.displayName, roles: DEMO_USER.roles, email_verified: true }, 'the seeded user\'s address is verified')

  const me = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(me.statusCode, 200)
  t.same(me.json(), { user: validate.json().data.user })
  const anonymous = await app.inject({ method: 'GET', url: '/me' })
  t.equal(anonymous.statusCode, 401)

  const refreshed = await app.inject({ method: 'POST', url: `${PREFIX}/auth/refresh`, payload: { refresh_token: refreshToken } })
  t.equal(refreshed.statusCode, 200)
  const revoke = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke`, headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(revoke.statusCode, 200)
  const after = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${jwt as string}` } })
  t.equal(errorCode(after), 55)
})

t.test('the banner names the credentials, Swagger UI and a curl command per route, each value kept in a variable', async (t) => {
  const text = banner('http://127.0.0.1:3000')
  t.match(text, 'jwt-login demo listening on http://127.0.0.1:3000')
  t.ok(text.split('\n').includes('Swagger UI: http://127.0.0.1:3000/docs (the OpenAPI document: http://127.0.0.1:3000/docs/json)'))
  t.ok(text.split('\n').includes(`  email: ${DEMO_USER.email}`))
  t.ok(text.split('\n').includes(`  password: ${DEMO_USER.password}`))
  t.match(text, /^Passkeys: http:\/\/localhost:3000\/passkeys \(/m, 'the passkey page, named by localhost')
  t.match(text, /^Your account: http:\/\/127\.0\.0\.1:3000\/account \(/m, 'the account page')
  t.match(text, /^Sign in by email: http:\/\/localhost:3000\/email-sign-in \(/m, 'the sign-in by email page, on localhost as the mail links it')
  for (const route of ['/jwt-login/v1/auth ', '/jwt-login/v1/auth/email ', '/jwt-login/v1/auth/email/verify', '/jwt-login/v1/auth/validate', '/jwt-login/v1/auth/refresh', '/jwt-login/v1/auth/revoke', '/?rest_route=/jwt-login/v1/auth/validate', '/me', '/jwt-login/v1/sessions', '/jwt-login/v1/account']) {
    t.match(text, new RegExp(`curl -s[^\\n]*http://127\\.0\\.0\\.1:3000${route.replace(/[?/.]/g, (c) => `\\${c}`)}`), `a curl command for ${route}`)
  }
  for (const variable of ['LOGIN', 'JWT', 'REFRESH', 'REFRESHED', 'INTERIM', 'CODE']) {
    t.match(text, new RegExp(`(^|[ ;])${variable}=`, 'm'), `${variable} is set by a command`)
  }
  t.notMatch(text, /"(JWT|REFRESH|INTERIM|CODE)"/, 'no bare placeholder in a body')
  t.notMatch(text, /\bjq\b/, 'no jq needed')
})

/** The banner's command lines from the one starting with `first` to the next empty line. */
function commands (text: string, first: string): string[] {
  const lines = text.split('\n')
  const start = lines.findIndex(line => line.startsWith(first))
  const end = lines.indexOf('', start)
  return lines.slice(start + 1, end).map(line => line.slice(2))
}

async function sh (script: string): Promise<string> {
  const { stdout } = await execFileAsync('sh', ['-e', '-c', script])
  return stdout
}

t.test('the banner\'s commands run in order in a plain sh against the demo (curl, sed)', async (t) => {
  const printed: string[] = []
  const app = await main({ PORT: '0' }, (text) => printed.push(text))
  t.teardown(() => app.close())
  const text = printed[0] as string

  // curl prints no newline after an answer: one echo after each command keeps the answers apart
  const tokens = (await sh(commands(text, 'Try (paste in order').join('\necho\n'))).split('\n').filter(line => line !== '')
  t.equal(tokens.length, 8, 'login, validate, validate by rest_route, /me, sessions, account, refresh, revoke')
  t.match(JSON.parse(tokens[0] as string), { success: true, data: { jwt: String, refresh_token: String } })
  t.match(JSON.parse(tokens[1] as string), { success: true, data: { user: { user_email: DEMO_USER.email } } })
  t.match(JSON.parse(tokens[2] as string), { success: true, data: { user: { user_email: DEMO_USER.email } } })
  t.match(JSON.parse(tokens[3] as string), { user: { user_email: DEMO_USER.email } })
  t.match(JSON.parse(tokens[4] as string), { success: true, data: { sessions: [{ current: true, method: 'password' }], devices: [] } }, 'the session just started, listed')
  t.match(JSON.parse(tokens[5] as string), { success: true, data: { user: { user_email: DEMO_USER.email, email_verified: true }, two_factor: { enabled: false }, sessions: 1 } }, 'the account')
  t.match(JSON.parse(tokens[6] as string), { success: true, data: { jwt: String, refresh_token: String } })
  t.match(JSON.parse(tokens[7] as string), { success: true, message: 'Token was revoked.', data: { message: 'Token was revoked.', jwt: [String] } }, 'the refreshed JWT was revoked')

  const [ask, , complete] = commands(text, 'Password reset')
  t.same(JSON.parse(await sh(ask as string)).success, true)
  const code = /reset code is: (\S+)/.exec(printed.slice(1).join('\n'))?.[1]
  t.type(code, 'string', 'the mail with the code was printed')
  t.match(JSON.parse(await sh(`CODE=${code as string}\n${complete as string}`)), { success: true, data: { message: 'User Password has been changed.' } })

  const [askEmail, , verifyEmail] = commands(text, 'Sign-in by email')
  const mark = printed.length
  t.match(JSON.parse(await sh(askEmail as string)), { success: true, data: { message: String } })
  const signInCode = (await mailTo(printed, DEMO_USER.email, mark)).match(/sign-in code is (\d+)\./)?.[1]
  t.type(signInCode, 'string', 'the mail with the sign-in code was printed')
  t.match(JSON.parse(await sh(`CODE=${signInCode as string}\n${verifyEmail as string}`)), { success: true, data: { jwt: String, refresh_token: String } }, 'the code signs in')

  const [interim, , submit] = commands(text, 'Try (INTERIM')
  const totp = await generate({ secret: demoTotp.secret })
  const answer = JSON.parse(await sh(`${interim as string}\nCODE=${totp}\n${submit as string}`))
  t.match(answer, { success: true, data: { jwt: String } }, 'the two-factor sign-in completes')
})

/** The newest mail to `to` the demo printed after `mark` (mails go out after the answer: waits a little for it). */
async function mailTo (printed: string[], to: string, mark = 0): Promise<string> {
  for (let waited = 0; waited < 5000; waited += 10) {
    const mail = printed.slice(mark).filter(text => text.includes(`--- mail to ${to} ---`)).at(-1)
    if (mail !== undefined) return mail
    await sleep(10)
  }
  throw new Error(`no mail to ${to} was printed`)
}

/** The claims of a JWT (not verified: the demo made it). */
const claimsOf = (jwt: string): { sub: number, amr: string[] } => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString())

t.test('sign-in by email on the demo: the mail holds the code and the link to the demo\'s page with the code in the fragment; a GET of that page spends nothing', async (t) => {
  t.equal(emailSignInPageUrl(DEFAULT_PORT), 'http://localhost:3000/email-sign-in', 'npm start\'s link page')
  t.equal(emailSignInPageUrl(0), '', 'no link when the port is not known beforehand: the mail carries the code only')
  const printed: string[] = []
  const app = await buildDemo({ port: 4321, print: (text) => printed.push(text) })
  t.teardown(() => app.close())
  const post = async (path: string, payload: Record<string, unknown>): Promise<LightMyRequestResponse> => await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload })

  const asked = await post('/auth/email', { email: DEMO_USER.email })
  t.equal(asked.statusCode, 200, asked.body)
  t.same(asked.json(), { success: true, data: { message: 'If the address may sign in, a code has been sent to it.' } })
  const mail = await mailTo(printed, DEMO_USER.email)
  t.match(mail, 'Subject: Your jwt-login demo sign-in code')
  const code = /sign-in code is (\d+)\./.exec(mail)?.[1] as string
  t.match(code, /^\d{8}$/, 'the code, eight digits')
  const link = new URL(/^(http:\/\/\S+)$/m.exec(mail)?.[1] as string)
  t.equal(`${link.origin}${link.pathname}${link.search}`, `http://localhost:4321${EMAIL_SIGN_IN_PATH}`, 'the link leads to the demo\'s page, on its port')
  t.same(Object.fromEntries(new URLSearchParams(link.hash.slice(1))), { code, email: DEMO_USER.email }, 'the code and the address in the fragment only')

  // what a mail scanner fetches: the page's URL; the fragment is never sent
  for (let scan = 0; scan < 3; scan++) {
    const page = await app.inject({ method: 'GET', url: `${link.pathname}${link.search}` })
    t.equal(page.statusCode, 200)
    t.match(page.headers['content-type'], /^text\/html/)
    t.match(page.body, '/auth/email/verify', 'the link page, whose script posts the code')
  }
  const signedIn = await post('/auth/email/verify', { email: DEMO_USER.email, code })
  t.equal(signedIn.statusCode, 200, `the code still signs in after the scans: ${signedIn.body}`)
  const { jwt, refresh_token: refreshToken } = signedIn.json().data
  t.type(refreshToken, 'string')
  t.same(claimsOf(jwt).amr, ['otp'], 'the mailbox: one factor')
  const sessions = await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${jwt as string}` } })
  t.match(sessions.json().data.sessions, [{ current: true, method: 'email' }], 'the session\'s method')
  t.equal(errorCode(await post('/auth/email/verify', { email: DEMO_USER.email, code })), 246, 'the code works once')
})

t.test('sign-in by email on the demo: the two-factor user answers the second factor; a new address registers (emailSignIn.register)', async (t) => {
  const printed: string[] = []
  const app = await buildDemo({ port: 4321, print: (text) => printed.push(text) })
  t.teardown(() => app.close())
  const post = async (path: string, payload: Record<string, unknown>): Promise<LightMyRequestResponse> => await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload })
  const signIn = async (email: string): Promise<LightMyRequestResponse> => {
    const mark = printed.length
    t.equal((await post('/auth/email', { email })).statusCode, 200)
    const code = /sign-in code is (\d+)\./.exec(await mailTo(printed, email, mark))?.[1] as string
    return await post('/auth/email/verify', { email, code })
  }

  const interim = (await signIn(DEMO_2FA_USER.email)).json().data
  t.match(interim, { jwt: String, two_factor_required: true }, 'an interim token: the code is one factor')
  const final = await post('/auth/2fa', { JWT: interim.jwt, code: await generate({ secret: demoTotp.secret }) })
  t.equal(final.statusCode, 200, final.body)
  t.same(claimsOf(final.json().data.jwt).amr, ['otp', 'mfa'])

  const newcomer = 'newcomer@example.com'
  const registered = await signIn(newcomer)
  t.equal(registered.statusCode, 200, registered.body)
  const validate = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: { authorization: `Bearer ${registered.json().data.jwt as string}` } })
  t.match(validate.json().data.user, { user_email: newcomer, email_verified: true }, 'the new address\'s user, created verified')
})

t.test('JWT_SECRET signs the demo\'s tokens, so another program can verify them; without it the secret is random', async (t) => {
  const secret = 'an independent client shares this secret, 32+ bytes'
  const verifies = async (env: NodeJS.ProcessEnv): Promise<boolean> => {
    const app = await main({ PORT: '0', ...env }, () => {})
    try {
      const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })
      const [header, payload, signature] = (login.json().data.jwt as string).split('.') as [string, string, string]
      t.equal(JSON.parse(Buffer.from(header, 'base64url').toString()).alg, 'HS256')
      const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest()
      return timingSafeEqual(expected, Buffer.from(signature, 'base64url'))
    } finally {
      await app.close()
    }
  }
  t.equal(await verifies({ JWT_SECRET: secret }), true, 'the HMAC of JWT_SECRET verifies the token')
  t.equal(await verifies({}), false, 'a random secret otherwise')
})

t.test('Swagger UI at /docs, and /docs/json is the OpenAPI document with the plugin\'s routes and /me', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const ui = await app.inject({ method: 'GET', url: '/docs' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /text\/html/)
  t.match(ui.body, /swagger/i)
  const json = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(json.statusCode, 200)
  const doc = json.json()
  t.same(doc, JSON.parse(JSON.stringify(app.swagger())))
  t.ok(doc.paths[`${PREFIX}/auth`].post, 'the login')
  t.same(doc.paths['/me'].get.security, [{ jwtLoginBearer: [] }], 'the host route names the plugin\'s scheme')
  t.ok(doc.components.securitySchemes.jwtLoginBearer)
  t.notOk(Object.keys(doc.paths).some((path: string) => path.startsWith('/docs')), 'Swagger UI\'s own routes are not in it')
  const result = await new Validator().validate(doc)
  t.ok(result.valid, JSON.stringify(result.errors))
})

t.test('the passkey page at /passkeys, its browser library and the script the pages share, host routes outside the plugin\'s prefix and the OpenAPI document', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const page = await app.inject({ method: 'GET', url: '/passkeys' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  for (const id of ['password-form', 'email', 'password', 'use-two-factor-user', 'second-factor', 'code', 'submit-code', 'second-factor-passkey', 'enrol', 'list', 'step-up', 'sign-out', 'passkey-sign-in', 'answers']) {
    t.match(page.body, new RegExp(`id="${id}"`), `#${id} is on the page`)
  }
  t.match(page.body, 'data-api="/jwt-login/v1"')
  t.match(page.body, `value="${DEMO_USER.email}"`, 'the demo user is prefilled')
  t.match(page.body, `data-email="${DEMO_2FA_USER.email}"`, 'the two-factor user is a click away')
  t.notMatch(page.body, /\{\{\w+\}\}/, 'every placeholder filled')
  t.match(page.body, '<script src="/passkeys/simplewebauthn-browser.js"></script>')
  t.match(page.body, '<script type="module">', 'the page\'s own script is a module')
  t.same([...page.body.matchAll(/^\s*import .* from '([^']+)'$/gm)].map(match => match[1]), ['/client.js', '/page-kit.js'], 'it imports the client\'s passkey helpers and the module the pages share')

  const library = await app.inject({ method: 'GET', url: '/passkeys/simplewebauthn-browser.js' })
  t.equal(library.statusCode, 200)
  t.match(library.headers['content-type'], /^text\/javascript/)
  t.match(library.body, 'SimpleWebAuthnBrowser', 'the UMD bundle of @simplewebauthn/browser')
  const kit = await app.inject({ method: 'GET', url: '/page-kit.js' })
  t.equal(kit.statusCode, 200)
  t.match(kit.headers['content-type'], /^text\/javascript/)
  t.match(kit.body, 'export function pageKit (', 'examples/page-kit.js, which exports pageKit')
  t.match(kit.body, 'import { createClient, JwtLoginClientError } from \'/client.js\'', 'and calls the plugin through the client')

  const paths = Object.keys((await app.inject({ method: 'GET', url: '/docs/json' })).json().paths)
  t.notOk(paths.some(path => path.startsWith('/passkeys') || path === '/page-kit.js' || path === '/client.js'), 'the host\'s page routes are not in the OpenAPI document')
  t.ok(paths.includes('/jwt-login/v1/passkeys'), 'the plugin\'s own passkey routes are')
})

t.test('the client at /client.js: fastify-jwt-login/client bundled from lib/client.ts into one ES module a page can import', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const served = await app.inject({ method: 'GET', url: '/client.js' })
  t.equal(served.statusCode, 200)
  t.match(served.headers['content-type'], /^text\/javascript/)
  t.equal(served.body, await bundleClient(), 'the bundle of the current source')
  t.same([...served.body.matchAll(/^import\b.*$/gm)], [], 'no static import left: nothing for a page to resolve')
  t.match(served.body, /await import\([^)]*\bPEER\s*\)/, 'the passkey helpers import their optional peer by a name no bundler follows: the passkey page passes its own copy')
  // esbuild names each module it bundles in a comment: the client's own, nothing of the server or node_modules
  t.same([...served.body.matchAll(/^\/\/ (\S+)$/gm)].map(match => match[1]).sort(), ['lib/client/client.ts', 'lib/client/error-names.ts', 'lib/client/errors.ts', 'lib/client/passkeys.ts', 'lib/client/session.ts', 'lib/client/tokens.ts', 'lib/client/transport.ts'])
  const client = await import(`data:text/javascript,${encodeURIComponent(served.body)}`) as typeof import('../../lib/client.js')
  t.same(Object.keys(client).sort(), ['JwtLoginClientError', 'createClient', 'enrolPasskey', 'memoryStorage', 'signInWithPasskey', 'stepUpWithPasskey', 'twoFactorWithPasskey'])
  t.equal(new client.JwtLoginClientError(401, 'Wrong user credentials.', 48).code, 'ERR_JWT_LOGIN_WRONG_CREDENTIALS', 'the error names came along')

  // the bundle signs in against the demo, as a page would
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const api = client.createClient({ baseUrl: `http://127.0.0.1:${port}` })
  t.teardown(() => { api.close() })
  const answer = await api.signIn({ email: DEMO_USER.email, password: DEMO_USER.password })
  t.equal(answer.jwt, api.jwt, 'signed in')
  t.match(await api.account(), { user: { user_email: DEMO_USER.email } })
})

t.test('the account page at /account, a host route outside the plugin\'s prefix and the OpenAPI document', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const page = await app.inject({ method: 'GET', url: '/account' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  const ids = [
    'password-form', 'email', 'password', 'password-sign-in', 'use-two-factor-user', 'second-factor', 'code-form', 'code', 'submit-code', 'signed-in', 'sign-out',
    'register-form', 'register-email', 'register-password', 'register',
    'show-account', 'account-email', 'account-email-verified', 'account-two-factor', 'account-backup-codes-left',
    'send-verification', 'verify-form', 'verification-code', 'verify-email',
    'change-password-form', 'current-password', 'new-password', 'change-password',
    'start-totp', 'totp-enrolment', 'totp-qr', 'totp-secret', 'totp-uri', 'totp-confirm-form', 'totp-code', 'confirm-totp',
    'regenerate-backup-codes', 'disable-two-factor', 'backup-codes',
    'email-change-form', 'new-email', 'request-email-change', 'email-confirm-form', 'email-change-code', 'confirm-email-change',
    'answers'
  ]
  for (const id of ids) t.match(page.body, new RegExp(`id="${id}"`), `#${id} is on the page`)
  t.equal(new Set([...page.body.matchAll(/\bid="([^"]+)"/g)].map(match => match[1])).size, [...page.body.matchAll(/\bid="/g)].length, 'no id twice')
  for (const input of page.body.match(/<input\b[^>]*>/g) ?? []) t.match(page.body, new RegExp(`<label>[^<]*${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</label>`), `${input} has its label`)
  t.match(page.body, 'data-api="/jwt-login/v1"')
  t.match(page.body, `value="${DEMO_USER.email}"`, 'the demo user is prefilled')
  t.match(page.body, `value="${DEMO_USER.password}"`)
  t.match(page.body, `data-email="${DEMO_2FA_USER.email}"`, 'the two-factor user is a click away')
  t.notMatch(page.body, /\{\{\w+\}\}/, 'every placeholder filled')
  t.same([...page.body.matchAll(/<script src="([^"]+)"/g)], [], 'no script but its own')
  t.same([...page.body.matchAll(/^\s*import .* from '([^']+)'$/gm)].map(match => match[1]), ['/page-kit.js'], 'a module importing the one the pages share')

  const paths = Object.keys((await app.inject({ method: 'GET', url: '/docs/json' })).json().paths)
  t.notOk(paths.includes('/account'), 'the host\'s page is not in the OpenAPI document')
  t.ok(paths.includes('/jwt-login/v1/account'), 'the plugin\'s account route is')
  const jwt: string = (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })).json().data.jwt
  const account = await app.inject({ method: 'GET', url: `${PREFIX}/account`, headers: { authorization: `Bearer ${jwt}` } })
  t.equal(account.statusCode, 200, 'the plugin\'s account routes are on')
  t.match(account.json().data, { user: { user_email: DEMO_USER.email, email_verified: true }, two_factor: { enabled: false, methods: ['email'] }, passkeys: 0, sessions: 1 })
})

t.test('the sign-in by email page at /email-sign-in, a host route outside the plugin\'s prefix and the OpenAPI document', async (t) => {
  const app = await buildDemo()
  t.teardown(() => app.close())
  const page = await app.inject({ method: 'GET', url: EMAIL_SIGN_IN_PATH })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  const ids = ['link-form', 'link-sign-in', 'link-email', 'request-form', 'email', 'request-code', 'verify-form', 'code', 'verify', 'second-factor-form', 'second-factor-code', 'submit-second-factor', 'signed-in', 'status']
  for (const id of ids) t.match(page.body, new RegExp(`id="${id}"`), `#${id} is on the page`)
  t.equal(new Set([...page.body.matchAll(/\bid="([^"]+)"/g)].map(match => match[1])).size, [...page.body.matchAll(/\bid="/g)].length, 'no id twice')
  for (const input of page.body.match(/<input\b[^>]*>/g) ?? []) t.match(page.body, new RegExp(`<label>[^<]*${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</label>`), `${input} has its label`)
  t.match(page.body, 'data-api="/jwt-login/v1"')
  t.match(page.body, `value="${DEMO_USER.email}"`, 'the demo user is prefilled')
  t.notMatch(page.body, /\{\{\w+\}\}/, 'every placeholder filled')
  t.same([...page.body.matchAll(/<script src="([^"]+)"/g)], [], 'no script but its own')
  t.match(page.body, "import { createClient } from '/client.js'", 'it calls the plugin through the client the demo serves')
  for (const method of ['requestEmailSignIn', 'signInWithEmail', 'completeTwoFactor', 'validate']) t.match(page.body, `client.${method}(`, `it calls client.${method}`)
  t.match(page.body, /<form id="link-form" hidden>/, 'the link\'s button is hidden until a link opens the page')
  t.match(page.body, "history.replaceState(null, '', location.pathname + location.search)", 'the fragment leaves the address bar on load')
  t.match(page.body, "$('link-email').textContent = email", 'the link\'s address is shown as text')
  t.same([...page.body.matchAll(/client\.signInWithEmailLink\(([^)]*)\)/g)].map(match => match[1]), ['link'], 'it posts the link it kept, once, from the button\'s handler (never on load)')
  t.match(page.body, /on\('link-form', async \(\) => \{[^]*client\.signInWithEmailLink\(link\)/, 'signInWithEmailLink is called in the click\'s handler')
  const paths = Object.keys((await app.inject({ method: 'GET', url: '/docs/json' })).json().paths)
  t.notOk(paths.includes(EMAIL_SIGN_IN_PATH), 'the host\'s page is not in the OpenAPI document')
  t.ok(paths.includes('/jwt-login/v1/auth/email/verify'), 'the plugin\'s route is')
})

t.test('passkeys on the demo: relying party localhost, accepted from http://localhost on the demo\'s port only', async (t) => {
  t.equal(passkeyOrigin(DEFAULT_PORT), 'http://localhost:3000', 'npm start\'s origin')
  const port = 4321
  const app = await buildDemo({ port })
  t.teardown(() => app.close())
  const post = async (path: string, payload: unknown, token?: string): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload: payload as Record<string, unknown>, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  const jwt: string = (await post('/auth', { email: DEMO_USER.email, password: DEMO_USER.password })).json().data.jwt
  const enrol = async (origin: string): Promise<LightMyRequestResponse> => {
    const options = (await post('/passkeys/register/options', {}, jwt)).json().data
    t.equal(options.rp.id, 'localhost')
    return await post('/passkeys/register', { credential: new SoftAuthenticator({ origin }).register(options) }, jwt)
  }
  t.equal(errorCode(await enrol('http://localhost:3000')), 217, 'another port is another origin: refused')
  t.equal(errorCode(await enrol(`http://127.0.0.1:${port}`)), 217, '127.0.0.1 is refused')

  const device = new SoftAuthenticator({ origin: `http://localhost:${port}` })
  const options = (await post('/passkeys/register/options', {}, jwt)).json().data
  const enrolled = await post('/passkeys/register', { credential: device.register(options) }, jwt)
  t.equal(enrolled.statusCode, 200, enrolled.body)
  const signInOptions = (await post('/auth/passkey/options', {})).json().data
  const signedIn = await post('/auth/passkey', { credential: device.authenticate(signInOptions) })
  t.equal(signedIn.statusCode, 200, signedIn.body)
  const claims = JSON.parse(Buffer.from((signedIn.json().data.jwt as string).split('.')[1] as string, 'base64url').toString())
  t.same(claims.amr, ['hwk', 'user', 'mfa'], 'a passkey verified with the user\'s PIN or biometrics: two factors')
})

t.test('main() prints to console.log by default', async (t) => {
  const logged: unknown[] = []
  const original = console.log
  console.log = (...args: unknown[]) => { logged.push(args) }
  try {
    const app = await main({ PORT: '0' })
    await app.close()
  } finally {
    console.log = original
  }
  t.equal(logged.length, 1, 'the banner went to console.log')
  t.match(String((logged[0] as unknown[])[0]), /email: demo@example\.com/)
})

t.test('buildDemo with redisUrl keeps its state in Redis', async (t) => {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  t.teardown(() => client.quit())
  const before = new Set(await client.keys('jwt-login-demo:*'))
  t.teardown(async () => {
    const created = (await client.keys('jwt-login-demo:*')).filter(k => !before.has(k))
    if (created.length > 0) await client.del(...created)
  })

  const app = await buildDemo({ redisUrl: REDIS_URL })
  const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: DEMO_USER.email, password: DEMO_USER.password } })
  t.equal(login.statusCode, 200)
  const { jwt, refresh_token: refreshToken } = login.json().data
  const created = (await client.keys('jwt-login-demo:*')).filter(k => !before.has(k))
  t.ok(created.some(k => k.startsWith('jwt-login-demo:session:')), 'the session record (refresh token hash) is in Redis')
  t.notOk(created.some(k => k.includes(refreshToken as string)), 'never the refresh token itself')

  const revoke = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke`, payload: { JWT: jwt } })
  t.equal(revoke.statusCode, 200)
  const sessionKey = `jwt-login-demo:session:${JSON.parse(Buffer.from((jwt as string).split('.')[1] as string, 'base64url').toString()).sid as string}`
  t.equal(await client.get(sessionKey), 'revoked', 'the revocation is in Redis')
  await app.close()
  t.equal(await client.ping(), 'PONG')
})

t.test('the demo reads a provider from the environment', async (t) => {
  t.equal(oauthFromEnv({}), undefined, 'no provider without OAUTH_ISSUER and OAUTH_CLIENT_ID')
  t.same(oauthFromEnv({ OAUTH_ISSUER: 'https://idp.example.com', OAUTH_CLIENT_ID: 'demo' }), {
    provider: 'idp1', issuer: 'https://idp.example.com', clientId: 'demo', clientSecret: undefined, redirectUri: undefined, autoRegister: false
  })
  const full = oauthFromEnv({
    OAUTH_ISSUER: 'https://idp.example.com',
    OAUTH_CLIENT_ID: 'demo',
    OAUTH_CLIENT_SECRET: 'secret',
    OAUTH_REDIRECT_URI: 'https://app.example.com/callback',
    OAUTH_PROVIDER: 'corp',
    OAUTH_AUTO_REGISTER: '1'
  })
  t.same(full, {
    provider: 'corp', issuer: 'https://idp.example.com', clientId: 'demo', clientSecret: 'secret', redirectUri: 'https://app.example.com/callback', autoRegister: true
  })
  const github = oauthFromEnv({ OAUTH_PRESET: 'github', OAUTH_CLIENT_ID: 'gh', OAUTH_CLIENT_SECRET: 'gh-secret', OAUTH_REDIRECT_URI: 'https://app.example.com/callback' })
  t.same(github, { provider: 'github', preset: 'github', clientId: 'gh', clientSecret: 'gh-secret', redirectUri: 'https://app.example.com/callback', autoRegister: false })
  t.match(oauthFromEnv({ OAUTH_PRESET: 'github', OAUTH_CLIENT_ID: 'gh', OAUTH_CLIENT_SECRET: 's', OAUTH_REDIRECT_URI: 'https://app.example.com/cb', OAUTH_ENTERPRISE_URL: 'https://ghe.example.com' }), { enterpriseUrl: 'https://ghe.example.com' })
  t.notOk('enterpriseUrl' in (oauthFromEnv({ OAUTH_PRESET: 'discord', OAUTH_CLIENT_ID: 'd', OAUTH_CLIENT_SECRET: 's', OAUTH_REDIRECT_URI: 'https://app.example.com/cb', OAUTH_ENTERPRISE_URL: 'https://ghe.example.com' }) ?? {}), 'only GitHub takes an Enterprise Server')
  t.equal(oauthFromEnv({ OAUTH_PRESET: 'github', OAUTH_CLIENT_ID: 'gh' }), undefined, 'a plain OAuth 2.0 preset takes codes only: it needs the secret and the redirect URI')
  const enterprise = oauthFromEnv({ OAUTH_PRESET: 'github', OAUTH_CLIENT_ID: 'gh', OAUTH_CLIENT_SECRET: 's', OAUTH_REDIRECT_URI: 'https://app.example.com/cb', OAUTH_ENTERPRISE_URL: 'https://ghe.example.com' })
  for (const oauth of [full, github, enterprise, oauthFromEnv({ OAUTH_ISSUER: 'https://idp.example.com', OAUTH_CLIENT_ID: 'demo' })]) {
    const app = await buildDemo({ oauth })
    const unknown = await app.inject({ method: 'POST', url: `${PREFIX}/oauth/token`, payload: { provider: 'nope', code: 'x' } })
    t.equal(errorCode(unknown), 69, 'the provider map is in place; an unknown provider is refused')
    await app.close()
  }
})
