/**
 * `npm run test:browser` (not part of `npm test`), after sjl-sdk.ts: the
 * demo's passkey page (/passkeys) in the system Chromium through
 * playwright-core (`CHROMIUM_PATH`, default /usr/bin/chromium; playwright's
 * own browser downloads are not used), with a virtual authenticator of the
 * DevTools WebAuthn domain (a platform authenticator with resident keys and
 * user verification, answering without a prompt).
 *
 * The demo listens on a port found free beforehand, as its passkey origin is
 * http://localhost on the port it was given; the page is opened there
 * (`localhost` is the relying party id and a secure context over http).
 * Clicked through, each answer read from the page's list of answers: the
 * demo user signs in with the password, enrols a passkey, signs out and
 * signs in with the passkey alone; the two-factor user signs in with the
 * password and a TOTP code, enrols a passkey, signs out, signs in with the
 * password and answers the second factor with the passkey, then steps up
 * with it. One `ok - …` line per step; the first failure ends the run non-zero.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { generate } from 'otplib'
import { chromium, type Page } from 'playwright-core'
import { DEMO_2FA_USER, DEMO_USER, demoTotp, main } from '../../examples/demo.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const TIMEOUT = 30_000

/** The claims the page decodes from a JWT it was answered. */
interface Claims { sub: string | number, sid: string, auth_time: number, amr: string[] }

/** One entry of the page's list of answers (what its `show` wrote). */
interface Answer {
  action: string
  ok: boolean
  route?: string
  status?: number
  body?: { success: boolean, data?: Record<string, unknown> }
  claims?: Claims
  error?: string
}

/** A step that did not go as it should: its message is the `not ok` line's. */
class StepFailed extends Error {}

/** A port nobody listens on now (the demo must know its port before it starts: it is part of the passkey origin). */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(0, '127.0.0.1', resolve) })
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
  return port
}

/** Clicks a button of the page and answers the entry it adds to the list of answers. */
async function click (page: Page, id: string): Promise<Answer> {
  const answers = page.locator('#answers > li')
  const before = await answers.count()
  await page.locator(`#${id}`).click()
  const entry = answers.nth(before)
  await entry.waitFor({ timeout: TIMEOUT })
  return JSON.parse(await entry.locator('pre').innerText()) as Answer
}

/** The answer's claims when it succeeded with a JWT; otherwise the step fails with the answer shown. */
function claimsOf (answer: Answer): Claims {
  if (!answer.ok || answer.claims === undefined) throw new StepFailed(`the page shows no JWT:\n${JSON.stringify(answer, null, 2)}`)
  return answer.claims
}

/** Fails the step unless the answer succeeded. */
function succeeded (answer: Answer): Answer {
  if (!answer.ok) throw new StepFailed(`the page shows a failure:\n${JSON.stringify(answer, null, 2)}`)
  return answer
}

function expect (condition: boolean, message: string): void {
  if (!condition) throw new StepFailed(message)
}

const amrText = (claims: Claims): string => `amr [${claims.amr.join(', ')}]`

/** Runs one step and prints its `ok` line with the excerpt it answers. */
async function step (name: string, work: () => Promise<string>): Promise<void> {
  const excerpt = await work().catch((error: unknown) => {
    throw new StepFailed(`${name}: ${error instanceof Error ? error.message : String(error)}`)
  })
  console.log(`ok - ${name}: ${excerpt}`)
}

/** A password sign-in with the form as it is filled. */
async function passwordSignIn (page: Page): Promise<Answer> {
  return succeeded(await click(page, 'password-sign-in'))
}

/** The two-factor user's current TOTP code, typed in and submitted. */
async function totpSecondFactor (page: Page): Promise<Claims> {
  await page.locator('#code').fill(await generate({ secret: demoTotp.secret }))
  return claimsOf(await click(page, 'submit-code'))
}

/** Enrols a passkey on the virtual authenticator for whoever is signed in; answers the new passkey's id. */
async function enrol (page: Page): Promise<string> {
  const answer = succeeded(await click(page, 'enrol'))
  const passkey = answer.body?.data?.passkey as { id: string, device_type: string } | undefined
  expect(passkey !== undefined, `no passkey in the answer:\n${JSON.stringify(answer, null, 2)}`)
  return `passkey ${(passkey as { id: string }).id.slice(0, 12)}… (${(passkey as { device_type: string }).device_type})`
}

/** Signs out: the session revoked, the page's tokens dropped. */
async function signOut (page: Page): Promise<void> {
  await step('sign out (auth/revoke)', async () => String(succeeded(await click(page, 'sign-out')).body?.data?.message))
}

/** Every step of the page, in order; throws StepFailed at the first that fails. */
async function clickThrough (page: Page): Promise<void> {
  let demo: Claims | undefined
  await step(`password sign-in as ${DEMO_USER.email}`, async () => {
    demo = claimsOf(await passwordSignIn(page))
    expect(demo.amr.includes('pwd'), `expected pwd in ${amrText(demo)}`)
    return `sub ${demo.sub}, ${amrText(demo)}`
  })
  await step('enrol a passkey (register/options → startRegistration → register)', async () => await enrol(page))
  await signOut(page)
  await step('passwordless sign-in with the passkey (auth/passkey/options → startAuthentication → auth/passkey)', async () => {
    const claims = claimsOf(succeeded(await click(page, 'passkey-sign-in')))
    expect(claims.amr.includes('hwk'), `expected hwk in ${amrText(claims)}`)
    expect(claims.sub === demo?.sub, `signed in as ${claims.sub}, not the demo user (${String(demo?.sub)})`)
    return `sub ${claims.sub}, ${amrText(claims)}`
  })
  await signOut(page)

  await page.locator('#use-two-factor-user').click()
  await step(`password and TOTP code as ${DEMO_2FA_USER.email}`, async () => {
    const first = await passwordSignIn(page)
    expect(first.body?.data?.two_factor_required === true, `expected two_factor_required:\n${JSON.stringify(first, null, 2)}`)
    const claims = await totpSecondFactor(page)
    expect(claims.amr.includes('mfa'), `expected mfa in ${amrText(claims)}`)
    return `sub ${claims.sub}, ${amrText(claims)}`
  })
  await step('enrol a passkey for the two-factor user', async () => await enrol(page))
  await signOut(page)

  let signedIn: Claims | undefined
  await step('password, then the passkey as the second factor (2fa/passkey/options → startAuthentication → auth/2fa)', async () => {
    const first = await passwordSignIn(page)
    expect(first.body?.data?.two_factor_required === true, `expected two_factor_required:\n${JSON.stringify(first, null, 2)}`)
    signedIn = claimsOf(await click(page, 'second-factor-passkey'))
    expect(signedIn.amr.includes('mfa') && signedIn.amr.includes('hwk'), `expected hwk and mfa in ${amrText(signedIn)}`)
    return `sub ${signedIn.sub}, ${amrText(signedIn)}, auth_time ${signedIn.auth_time}`
  })
  // auth_time counts seconds: a step-up in the same second could not show it moved
  await sleep(1100)
  await step('step-up with the passkey (step-up/options → startAuthentication → auth/step-up)', async () => {
    const before = signedIn as Claims
    const claims = claimsOf(await click(page, 'step-up'))
    expect(claims.sid === before.sid, `the step-up's sid ${claims.sid} is not the session's ${before.sid}`)
    expect(claims.auth_time > before.auth_time, `auth_time did not move: ${before.auth_time} → ${claims.auth_time}`)
    expect(claims.amr.includes('hwk'), `expected hwk in ${amrText(claims)}`)
    return `same sid ${claims.sid.slice(0, 12)}…, auth_time ${before.auth_time} → ${claims.auth_time}, ${amrText(claims)}`
  })
}

async function run (): Promise<number> {
  if (!existsSync(CHROMIUM)) {
    console.error(`No Chromium at ${CHROMIUM}. Install it (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH.`)
    return 1
  }
  const port = await freePort()
  const app = await main({ PORT: String(port) }, () => {})
  const url = `http://localhost:${port}/passkeys`
  const profile = await mkdtemp(join(tmpdir(), 'jwt-login-chromium-'))
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: TIMEOUT })
  try {
    const page = context.pages()[0] ?? await context.newPage()
    page.setDefaultTimeout(TIMEOUT)
    page.on('pageerror', (error) => { console.error(`page error: ${error.message}`) })
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
    })
    await page.goto(url)
    console.log(`demo at ${url} in ${CHROMIUM}, a virtual authenticator (ctap2, internal, resident keys, user verification)`)
    await clickThrough(page)
    return 0
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error
    console.error(`not ok - ${error.message}`)
    return 1
  } finally {
    await context.close()
    await app.close()
    await rm(profile, { recursive: true, force: true })
  }
}

process.exitCode = await run()
