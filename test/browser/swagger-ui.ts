/**
 * `npm run test:browser` (not part of `npm test`): the demo on a free port,
 * the system Chromium through playwright-core, Swagger UI at /docs, clicked
 * as a user would (issue 24). "Try it out" on `POST /auth` with the demo
 * user must show a JWT; then that JWT goes into "Authorize" (the Bearer
 * dialog) and every operation of the document that names the Bearer scheme
 * is tried out with the body Swagger UI prefills (changed only where a value
 * must be real: a TOTP code, a password, a passkey's credential) and must
 * answer 2xx. Where an operation needs state, the run makes it first
 * through the API: a second session to end, a passkey (a software
 * authenticator, test/helpers/authenticator.ts) to rename, delete, step up
 * with and answer the second factor with, and the interim token of the
 * two-factor user, pasted into "Authorize" in place of the JWT; the account
 * routes run as a user registered for them (so the demo users stay as they
 * are), with the codes the demo's console mailer prints. The demo
 * turns every feature on: an operation it answers 4xx (a switch turned off)
 * fails. Operations that end the token's session come last, each after a new sign-in.
 * One `ok - <METHOD> <path> <status>` line per operation, a summary, and a
 * non-zero exit on any failure. Chromium is the system's (`CHROMIUM_PATH`,
 * default /usr/bin/chromium): playwright's own browser downloads are not used.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { FastifyInstance } from 'fastify'
import { generate } from 'otplib'
import type { Locator, Page } from 'playwright-core'
import { DEMO_2FA_USER, DEMO_USER, demoTotp, main } from '../../examples/demo.js'
import { BEARER_SCHEME } from '../../lib/index.js'
import { SoftAuthenticator } from '../helpers/authenticator.js'
import { REDIRECT_URI, startOAuth2Provider, type TestOAuth2Provider } from '../helpers/oauth2-providers.js'
import { CHROMIUM, inChromium, Mailbox, PREFIX, StepFailed, TIMEOUT } from './kit.js'

const JWT = /"jwt":\s*"([\w-]+\.[\w-]+\.[\w-]+)"/
/** The user the account operations change: registered by the run, so that the demo users keep their password, address and second factor. */
const ACCOUNT_USER = { email: 'swagger-ui@example.com', password: 'the account user password 1' }

/** The demo's console (its banner and the console mailer's mails), read as a mailbox. */
const mailbox = new Mailbox()

/** Swagger UI's "Try it out" on the login operation (tag `tokens`, operationId `jwtLoginAuth`); answers the response body shown. */
async function tryLogin (page: Page, base: string): Promise<string> {
  await page.goto(`${base}/docs`)
  const operation = page.locator('#operations-tokens-jwtLoginAuth')
  await operation.locator('.opblock-summary').first().click()
  await operation.locator('button.try-out__btn').click()
  await operation.locator('textarea.body-param__text').fill(JSON.stringify({ email: DEMO_USER.email, password: DEMO_USER.password }))
  await operation.locator('button.execute').click()
  const body = operation.locator('.live-responses-table .response-col_description .highlight-code').first()
  await body.waitFor({ timeout: TIMEOUT })
  return await body.innerText()
}

/** What one "Execute" showed: the status, the response body, the curl command Swagger UI sent, and the body it had prefilled. */
interface Shown { status: number, body: string, curl: string, prefilled: string | undefined }

/** The Swagger UI page with its Bearer token, as a user sets it: "Authorize", (Logout,) paste, Authorize, Close. */
class SwaggerUi {
  #token: string | undefined

  constructor (readonly page: Page) {}

  async authorize (token: string): Promise<void> {
    if (token === this.#token) return
    await this.page.locator('.scheme-container button.authorize').click()
    const modal = this.page.locator('.modal-ux')
    const logout = modal.locator('button[aria-label="Remove authorization"]')
    if (await logout.count() > 0) await logout.click()
    await modal.locator('#auth-bearer-value').fill(token)
    await modal.locator('.auth-btn-wrapper button.authorize').click()
    await modal.locator('.auth-btn-wrapper button.btn-done').click()
    this.#token = token
  }

  operation (method: string, path: string): Locator {
    return this.page.locator(`.opblock.opblock-${method}`).filter({ has: this.page.locator(`.opblock-summary-path[data-path="${path}"]`) })
  }

  /** "Try it out", the path parameters filled, the body replaced when given, "Execute". */
  async execute (method: string, path: string, input: { params?: Record<string, string>, body?: unknown }): Promise<Shown> {
    const operation = this.operation(method, path)
    await operation.locator('.opblock-summary').first().click()
    await operation.locator('button.try-out__btn').click()
    for (const [name, value] of Object.entries(input.params ?? {})) {
      await operation.locator(`tr[data-param-name="${name}"][data-param-in="path"] input`).fill(value)
    }
    const textarea = operation.locator('textarea.body-param__text')
    const prefilled = await textarea.count() > 0 ? await textarea.inputValue() : undefined
    if (input.body !== undefined) await textarea.fill(JSON.stringify(input.body))
    await operation.locator('button.execute').click()
    const status = operation.locator('.live-responses-table tbody .response-col_status').first()
    await status.waitFor({ timeout: TIMEOUT })
    return {
      status: Number(await status.innerText()),
      body: await operation.locator('.live-responses-table tbody .response-col_description .highlight-code pre').first().innerText(),
      curl: await operation.locator('.curl-command').innerText(),
      prefilled
    }
  }
}

/** The demo's API, called directly (not through the page) to prepare what an operation needs. */
class Api {
  constructor (readonly base: string) {}

  async call (method: string, path: string, token?: string, body?: unknown): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${this.base}${PREFIX}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const answer = await res.json() as { data: Record<string, unknown> }
    if (!res.ok) throw new StepFailed(`setup: ${method} ${path} answered ${res.status} ${JSON.stringify(answer)}`)
    return answer.data
  }

  /** A password sign-in's `jwt` (the interim one for the two-factor user). */
  async signIn (user: { email: string, password: string }): Promise<string> {
    return (await this.call('POST', '/auth', undefined, { email: user.email, password: user.password })).jwt as string
  }

  /** Enrols a passkey of `authenticator` for the token's user; answers its id. */
  async enrol (token: string, authenticator: SoftAuthenticator): Promise<string> {
    const options = await this.call('POST', '/passkeys/register/options', token) as unknown as PublicKeyCredentialCreationOptionsJSON
    const answer = await this.call('POST', '/passkeys/register', token, { credential: authenticator.register(options), name: 'enrolled by the test' })
    return (answer.passkey as { id: string }).id
  }
}

/** The `data` of a response body the page shows. */
function dataOf (shown: Shown): Record<string, unknown> {
  return (JSON.parse(shown.body) as { data: Record<string, unknown> }).data
}

/** The claims of a JWT (not verified: the server did). */
function claimsOf (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
}

/**
 * How to try out one operation: the token to authorize with, the path
 * parameters and body (omitted: Swagger UI's own), and what it answers.
 */
interface Plan {
  run: () => Promise<{ token: string, params?: Record<string, string>, body?: unknown, after?: (shown: Shown) => void }>
}

/** Every operation with the Bearer scheme, in an order that keeps the tokens alive: what ends sessions comes last. */
function plans (app: FastifyInstance, api: Api, start: string, github: TestOAuth2Provider<'github'>): Array<[string, Plan]> {
  const settings = app.jwtLogin.settings
  const authenticator = new SoftAuthenticator({ origin: settings.passkeys.origins[0] as string, rpId: settings.passkeys.rpId })
  const demo = { token: start }
  const state: { apiKey?: string, passkey?: string, twoFactorJwt?: string, accountJwt?: string, totpSecret?: string, backupCodes?: string[], newEmail?: string } = {}
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new StepFailed(`needs ${what}, which an earlier operation did not give`)
    return value
  }
  return [
    ['GET /me', { run: async () => demo }],
    [`GET ${PREFIX}/auth/validate`, { run: async () => demo }],
    [`POST ${PREFIX}/auth/validate`, { run: async () => demo }],
    [`GET ${PREFIX}/sessions`, { run: async () => demo }],
    [`DELETE ${PREFIX}/sessions/{id}`, {
      // another sign-in of the demo user: its session is the one ended
      run: async () => ({ ...demo, params: { id: claimsOf(await api.signIn(DEMO_USER)).sid as string } })
    }],
    [`POST ${PREFIX}/passkeys/register/options`, {
      run: async () => ({
        ...demo,
        // the page's answer is what a browser would hand to navigator.credentials.create()
        after: (shown) => { state.passkey = JSON.stringify(authenticator.register(dataOf(shown) as unknown as PublicKeyCredentialCreationOptionsJSON)) }
      })
    }],
    [`POST ${PREFIX}/passkeys/register`, {
      run: async () => ({
        ...demo,
        body: { credential: JSON.parse(need(state.passkey, 'the options of /passkeys/register/options')), name: 'Swagger UI' },
        after: (shown) => { state.passkey = (dataOf(shown).passkey as { id: string }).id }
      })
    }],
    [`GET ${PREFIX}/passkeys`, { run: async () => demo }],
    [`PATCH ${PREFIX}/passkeys/{id}`, { run: async () => ({ ...demo, params: { id: need(state.passkey, 'a passkey') } }) }],
    [`POST ${PREFIX}/auth/step-up/options`, { run: async () => demo }],
    [`POST ${PREFIX}/auth/step-up`, { run: async () => ({ ...demo, body: { password: DEMO_USER.password } }) }],
    [`DELETE ${PREFIX}/passkeys/{id}`, { run: async () => ({ ...demo, params: { id: need(state.passkey, 'a passkey') } }) }],
    [`POST ${PREFIX}/auth/2fa`, {
      run: async () => ({
        token: await api.signIn(DEMO_2FA_USER),
        body: { code: await generate({ secret: demoTotp.secret }) },
        after: (shown) => { state.twoFactorJwt = dataOf(shown).jwt as string }
      })
    }],
    [`POST ${PREFIX}/auth/2fa/passkey/options`, {
      // the two-factor user enrols a passkey, then signs in again: the interim token asks for its options
      run: async () => {
        await api.enrol(need(state.twoFactorJwt, 'the two-factor user\'s JWT'), authenticator)
        return { token: await api.signIn(DEMO_2FA_USER) }
      }
    }],
    [`DELETE ${PREFIX}/devices/{id}`, {
      // a sign-in whose second factor (the passkey) trusts the device
      run: async () => {
        const interim = await api.signIn(DEMO_2FA_USER)
        const options = await api.call('POST', '/auth/2fa/passkey/options', interim) as unknown as PublicKeyCredentialRequestOptionsJSON
        const signedIn = await api.call('POST', '/auth/2fa', interim, { passkey: authenticator.authenticate(options), remember_device: true })
        const token = signedIn.jwt as string
        const { devices } = await api.call('GET', '/sessions', token) as { devices: Array<{ id: string }> }
        return { token, params: { id: need(devices[0]?.id, 'a trusted device') } }
      }
    }],
    [`GET ${PREFIX}/account`, { run: async () => demo }],
    [`POST ${PREFIX}/account/api-keys`, {
      // no scope: the example's is not one the demo declares
      run: async () => ({ ...demo, body: { name: 'Swagger UI', expires_in: 86400 }, after: (shown) => { state.apiKey = dataOf(shown).id as string } })
    }],
    [`GET ${PREFIX}/account/api-keys`, { run: async () => demo }],
    [`DELETE ${PREFIX}/account/api-keys/{id}`, { run: async () => ({ ...demo, params: { id: need(state.apiKey, 'an API key') } }) }],
    [`POST ${PREFIX}/account/identities`, {
      // the demo user links a GitHub account of the local GitHub Enterprise server, by its code and PKCE verifier
      run: async () => {
        const { code, codeVerifier } = github.code(GITHUB_ACCOUNT, { pkce: true })
        return { ...demo, body: { provider: 'github', code, code_verifier: codeVerifier } }
      }
    }],
    [`GET ${PREFIX}/account/identities`, { run: async () => demo }],
    [`DELETE ${PREFIX}/account/identities/{provider}`, { run: async () => ({ ...demo, params: { provider: 'github' } }) }],
    [`POST ${PREFIX}/account/2fa/totp`, {
      // a user of its own, registered (and signed in) for the account operations
      run: async () => {
        state.accountJwt = (await api.call('POST', '/users', undefined, ACCOUNT_USER)).jwt as string
        return { token: state.accountJwt, after: (shown) => { state.totpSecret = dataOf(shown).secret as string } }
      }
    }],
    [`POST ${PREFIX}/account/2fa/totp/confirm`, {
      run: async () => ({
        token: need(state.accountJwt, 'the account user\'s JWT'),
        body: { code: await generate({ secret: need(state.totpSecret, 'a pending TOTP secret') }) },
        after: (shown) => { state.backupCodes = dataOf(shown).backup_codes as string[] }
      })
    }],
    [`POST ${PREFIX}/account/2fa/backup-codes`, {
      // with the second factor on, a sign-in that included it: the password and a backup code
      run: async () => {
        const interim = await api.signIn(ACCOUNT_USER)
        const code = need(state.backupCodes?.[0], 'the backup codes of the TOTP enrolment')
        state.accountJwt = (await api.call('POST', '/auth/2fa', interim, { code })).jwt as string
        return { token: state.accountJwt }
      }
    }],
    [`PUT ${PREFIX}/account/2fa`, { run: async () => ({ token: need(state.accountJwt, 'the account user\'s JWT') }) }],
    [`POST ${PREFIX}/account/email`, {
      run: async () => ({
        token: need(state.accountJwt, 'the account user\'s JWT'),
        after: (shown) => { state.newEmail = (JSON.parse(need(shown.prefilled, 'a prefilled body')) as { new_email: string }).new_email }
      })
    }],
    [`POST ${PREFIX}/account/email/confirm`, {
      run: async () => ({
        token: need(state.accountJwt, 'the account user\'s JWT'),
        body: { code: await mailbox.codeFor(need(state.newEmail, 'the new address'), /confirmation code is (\S+)\./) }
      })
    }],
    [`PUT ${PREFIX}/account/password`, {
      run: async () => ({ token: need(state.accountJwt, 'the account user\'s JWT'), body: { current_password: ACCOUNT_USER.password, new_password: 'a new account user password' } })
    }],
    [`DELETE ${PREFIX}/account/2fa`, { run: async () => ({ token: need(state.accountJwt, 'the account user\'s JWT') }) }],
    [`POST ${PREFIX}/auth/revoke`, { run: async () => ({ token: await api.signIn(DEMO_USER) }) }],
    [`DELETE ${PREFIX}/sessions`, { run: async () => ({ token: await api.signIn(DEMO_USER) }) }],
    [`DELETE ${PREFIX}/users`, {
      run: async () => {
        // a sign-in in the second of the sign-out everywhere would count as ended by it
        await sleep(1100)
        return { token: await api.signIn(DEMO_USER) }
      }
    }]
  ]
}

/** The operations of the document at /docs/json that name the Bearer scheme, as `METHOD path`. */
async function bearerOperations (base: string): Promise<string[]> {
  interface Operation { security?: Array<Record<string, unknown>> }
  const doc = await (await fetch(`${base}/docs/json`)).json() as { paths: Record<string, Record<string, Operation>> }
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods)
    .filter(([, op]) => op.security?.some(requirement => Object.hasOwn(requirement, BEARER_SCHEME)) === true)
    .map(([method]) => `${method.toUpperCase()} ${path}`))
}

/** One operation clicked through; throws `StepFailed` with what went wrong. */
async function tryOut (ui: SwaggerUi, name: string, plan: Plan): Promise<number> {
  const [method, path] = name.split(' ') as [string, string]
  const { token, params, body, after } = await plan.run()
  await ui.authorize(token)
  const shown = await ui.execute(method.toLowerCase(), path, { params, body })
  if (shown.prefilled?.includes('"JWT"') === true) throw new StepFailed(`Swagger UI prefilled a JWT field: ${shown.prefilled}`)
  if (!shown.curl.includes(`Authorization: Bearer ${token}`)) throw new StepFailed(`the request carried no Bearer header:\n${shown.curl}`)
  if (!Number.isInteger(shown.status) || shown.status >= 400) throw new StepFailed(`answered ${shown.status}:\n${shown.body}\n${shown.curl}`)
  after?.(shown)
  return shown.status
}

/** The GitHub account the demo user links (its email is nobody's: linking from the account needs no matching email). */
const GITHUB_ACCOUNT = { id: 4242, login: 'octo-demo', name: 'Octo Demo', email: null, emails: [{ email: 'octo@elsewhere.example', primary: true, verified: true, visibility: null }] }

async function run (): Promise<number> {
  const github = await startOAuth2Provider('github', { redirectUris: [REDIRECT_URI] })
  const env = {
    PORT: '0',
    OAUTH_PRESET: 'github',
    OAUTH_ENTERPRISE_URL: github.origin,
    OAUTH_CLIENT_ID: github.clientId,
    OAUTH_CLIENT_SECRET: github.clientSecret,
    OAUTH_REDIRECT_URI: REDIRECT_URI
  }
  try {
    return await runWith(env, github)
  } finally {
    await github.close()
  }
}

async function runWith (env: NodeJS.ProcessEnv, github: TestOAuth2Provider<'github'>): Promise<number> {
  return await inChromium(async () => await main(env, mailbox.print), async (page, app) => {
    const address = app.server.address() as { port: number }
    const base = `http://127.0.0.1:${address.port}`
    console.log(`demo at ${base}; Swagger UI at ${base}/docs in ${CHROMIUM}`)
    const shown = await tryLogin(page, base)
    const jwt = JWT.exec(shown)?.[1]
    if (jwt === undefined) {
      console.error(`not ok - the response shown on the page holds no JWT:\n${shown}`)
      return 1
    }
    console.log(`ok - Swagger UI "Try it out" on POST ${PREFIX}/auth answered a JWT: ${jwt.slice(0, 24)}…`)

    const documented = await bearerOperations(base)
    const planned = plans(app, new Api(base), jwt, github)
    const names = new Set(planned.map(([name]) => name))
    const unplanned = documented.filter(name => !names.has(name))
    const undocumented = [...names].filter(name => !documented.includes(name))
    const counts = { ok: 0, failed: 0 }
    for (const name of unplanned) {
      console.log(`not ok - ${name}: in the document with the Bearer scheme, but this run has no plan for it`)
      counts.failed++
    }
    for (const name of undocumented) {
      console.log(`not ok - ${name}: planned, but the document has no such operation with the Bearer scheme`)
      counts.failed++
    }
    const ui = new SwaggerUi(page)
    for (const [name, plan] of planned.filter(([planName]) => documented.includes(planName))) {
      try {
        console.log(`ok - ${name} ${await tryOut(ui, name, plan)}`)
        counts.ok++
      } catch (error) {
        console.log(`not ok - ${name}: ${error instanceof StepFailed ? error.message : String(error)}`)
        counts.failed++
      }
    }
    console.log(`# ${documented.length} operations with the Bearer scheme: ${counts.ok} answered 2xx, ${counts.failed} failed`)
    return counts.failed === 0 ? 0 : 1
  })
}

process.exitCode = await run()
