/**
 * `npm run test:browser` (not part of `npm test`), after passkeys.ts: the
 * demo's account page (/account) in the system Chromium through
 * playwright-core (`CHROMIUM_PATH`, default /usr/bin/chromium; playwright's
 * own browser downloads are not used).
 *
 * The demo runs in this process on a free port, fresh at every run (its
 * users, codes and sessions in memory), its console output captured: the
 * console mailer's mails are read from it, as a user of `npm start` reads
 * them on the console. The page calls the plugin through its client
 * (fastify-jwt-login/client). Clicked through, each answer read from the page's
 * list of answers: the demo user signs in with the password and sees the
 * account (verified, no second factor); enrols TOTP (the QR code shown, the
 * secret read from the page, its first code computed with otplib, the
 * backup codes shown), after which a password sign-in through the API
 * answers `two_factor_required`; signs in again with the password and the
 * app's next code; gets new backup codes; changes the password (the API
 * takes the new one and refuses the old) and back; changes the email with
 * the code mailed to the new address; turns the second factor off (a
 * password sign-in through the API then answers a final JWT) and signs
 * out. Then a user registered on the page (mailed a code, unverified) asks
 * for a new code and verifies the address with it. One `ok - …` line per
 * step; the first failure ends the run non-zero.
 */
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { generate } from 'otplib'
import type { Page } from 'playwright-core'
import { DEMO_USER, main } from '../../examples/demo.js'
import { type Answer, amrText, CHROMIUM, claimsOf, click, expect, fill, inChromium, Mailbox, passwordSignIn, PREFIX, shown, signOut, step, steps, succeeded } from './kit.js'

/** Seconds per TOTP step (the demo's, and otplib's default). */
const TOTP_PERIOD_MS = 30_000

/** The demo user's new password and address, and the user registered on the page. */
const NEW_PASSWORD = 'a changed demo password 789'
const NEW_EMAIL = 'demo.changed@example.com'
const NEW_USER = { email: 'new.user@example.com', password: 'a new user password 123' }

/** The demo's API, called directly (not through the page), to check what the page did. */
class Api {
  constructor (readonly base: string) {}

  async call (method: string, path: string, body?: unknown): Promise<{ status: number, body: { success: boolean, data: Record<string, unknown> } }> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' }
    const res = await fetch(`${this.base}${PREFIX}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: res.status, body: await res.json() as { success: boolean, data: Record<string, unknown> } }
  }

  /** A password sign-in's answer. */
  async signIn (email: string, password: string): Promise<{ status: number, body: { success: boolean, data: Record<string, unknown> } }> {
    return await this.call('POST', '/auth', { email, password })
  }
}

/** The account as the page shows it after "Show my account": the summary's texts. */
async function showAccount (page: Page): Promise<{ email: string, verified: string, twoFactor: string, backupCodesLeft: string }> {
  succeeded(await click(page, 'show-account'))
  const text = async (id: string): Promise<string> => (await page.locator(`#${id}`).innerText()).trim()
  return {
    email: await text('account-email'),
    verified: await text('account-email-verified'),
    twoFactor: await text('account-two-factor'),
    backupCodesLeft: await text('account-backup-codes-left')
  }
}

/** The backup codes of an answer, checked against the page's list of them. */
async function backupCodes (page: Page, answer: Answer): Promise<string[]> {
  const codes = answer.body?.data?.backup_codes as string[] | undefined
  expect(Array.isArray(codes) && codes.length === 10, `expected 10 backup codes:\n${shown(answer)}`)
  const listed = (await page.locator('#backup-codes li').allInnerTexts()).map(code => code.trim())
  expect(shown(listed) === shown(codes), `the page lists ${shown(listed)}, the answer ${shown(codes)}`)
  return codes as string[]
}

/** The current TOTP time step. */
const totpStep = (): number => Math.floor(Date.now() / TOTP_PERIOD_MS)

/** Waits for the step after `step`: its code is spent, and a code is accepted once. Answers the seconds waited. */
async function nextTotpStep (step: number): Promise<number> {
  const wait = Math.max(0, (step + 1) * TOTP_PERIOD_MS - Date.now() + 100)
  await sleep(wait)
  return Math.round(wait / 1000)
}

/** The demo user's part: TOTP, backup codes, the password, the email, the second factor off. */
async function demoUser (page: Page, api: Api, mailbox: Mailbox): Promise<void> {
  await step(`password sign-in as ${DEMO_USER.email}`, async () => {
    const claims = claimsOf(await passwordSignIn(page, DEMO_USER))
    expect(claims.amr.includes('pwd'), `expected pwd in ${amrText(claims)}`)
    return `sub ${claims.sub}, ${amrText(claims)}`
  })
  await step('show the account (GET /account)', async () => {
    const account = await showAccount(page)
    expect(account.email === DEMO_USER.email && account.verified === 'true', `expected ${DEMO_USER.email}, verified: ${shown(account)}`)
    expect(account.twoFactor.startsWith('off'), `expected the second factor off: ${shown(account)}`)
    return `${account.email}, email verified ${account.verified}, second factor ${account.twoFactor}`
  })

  let secret = ''
  let confirmedAt = 0
  let firstCodes: string[] = []
  await step('enrol TOTP (account/2fa/totp → the QR code and the secret → account/2fa/totp/confirm)', async () => {
    succeeded(await click(page, 'start-totp'))
    const qr = page.locator('#totp-qr > svg[role="img"]')
    expect(await qr.count() === 1, 'no QR code (an svg) in #totp-qr')
    expect(await qr.locator('path').count() > 0, 'the QR code\'s svg draws nothing')
    secret = (await page.locator('#totp-secret').innerText()).trim()
    expect(/^[A-Z2-7]{16,}$/.test(secret), `the secret shown is no base32 secret: ${secret}`)
    const uri = (await page.locator('#totp-uri').innerText()).trim()
    expect(uri.startsWith('otpauth://totp/') && uri.includes(`secret=${secret}`), `the URI shown does not hold the secret: ${uri}`)
    confirmedAt = totpStep()
    await fill(page, 'totp-code', await generate({ secret }))
    firstCodes = await backupCodes(page, succeeded(await click(page, 'confirm-totp')))
    return `secret ${secret.slice(0, 4)}…, a QR code, TOTP on, ${firstCodes.length} backup codes`
  })
  await step('a password sign-in through the API now asks for the second factor', async () => {
    const answer = await api.signIn(DEMO_USER.email, DEMO_USER.password)
    expect(answer.body.data.two_factor_required === true, `expected two_factor_required:\n${shown(answer)}`)
    return 'two_factor_required: true'
  })

  await step('sign in on the page with the password and the app\'s next code (auth, auth/2fa)', async () => {
    const first = await passwordSignIn(page, DEMO_USER)
    expect(first.body?.data?.two_factor_required === true, `expected two_factor_required:\n${shown(first)}`)
    expect(await page.locator('#second-factor').isVisible(), 'the second factor\'s form is not shown')
    // the enrolment spent its step's code: the app's next one signs in
    const waited = await nextTotpStep(confirmedAt)
    await fill(page, 'code', await generate({ secret }))
    const claims = claimsOf(await click(page, 'submit-code'))
    expect(claims.amr.includes('otp') && claims.amr.includes('mfa'), `expected otp and mfa in ${amrText(claims)}`)
    return `waited ${waited}s for the next code; sub ${claims.sub}, ${amrText(claims)}`
  })
  await step('new backup codes (account/2fa/backup-codes)', async () => {
    const codes = await backupCodes(page, succeeded(await click(page, 'regenerate-backup-codes')))
    expect(codes.every(code => !firstCodes.includes(code)), `the new codes repeat old ones: ${shown(codes)}`)
    const account = await showAccount(page)
    expect(account.twoFactor.startsWith('on (totp)') && account.backupCodesLeft === '10', `expected TOTP on, 10 backup codes left: ${shown(account)}`)
    return `10 new codes; second factor ${account.twoFactor}`
  })

  await step('change the password and back (PUT account/password)', async () => {
    await fill(page, 'current-password', DEMO_USER.password)
    await fill(page, 'new-password', NEW_PASSWORD)
    succeeded(await click(page, 'change-password'))
    const withNew = await api.signIn(DEMO_USER.email, NEW_PASSWORD)
    expect(withNew.body.success, `the new password is refused:\n${shown(withNew)}`)
    const withOld = await api.signIn(DEMO_USER.email, DEMO_USER.password)
    expect(!withOld.body.success, `the old password still signs in:\n${shown(withOld)}`)
    await fill(page, 'current-password', NEW_PASSWORD)
    await fill(page, 'new-password', DEMO_USER.password)
    succeeded(await click(page, 'change-password'))
    const back = await api.signIn(DEMO_USER.email, DEMO_USER.password)
    expect(back.body.success, `the password put back is refused:\n${shown(back)}`)
    return `the API took the new password (${withNew.status}) and refused the old (${withOld.status} / ${String(withOld.body.data.errorCode)}); changed back`
  })

  await step(`change the email to ${NEW_EMAIL} with the code mailed there (account/email, account/email/confirm)`, async () => {
    const mark = mailbox.mark()
    await fill(page, 'new-email', NEW_EMAIL)
    succeeded(await click(page, 'request-email-change'))
    const code = await mailbox.codeFor(NEW_EMAIL, /confirmation code is (\S+)\./, mark)
    await fill(page, 'email-change-code', code)
    succeeded(await click(page, 'confirm-email-change'))
    const revert = await mailbox.codeFor(DEMO_USER.email, /your revert code: (\S+)/, mark)
    const account = await showAccount(page)
    expect(account.email === NEW_EMAIL && account.verified === 'true', `expected ${NEW_EMAIL}, verified: ${shown(account)}`)
    return `code ${code} from the console; now ${account.email} (verified ${account.verified}); the old address was mailed a revert code (${revert.slice(0, 2)}…)`
  })

  await step('turn the second factor off (DELETE account/2fa)', async () => {
    succeeded(await click(page, 'disable-two-factor'))
    const account = await showAccount(page)
    expect(account.twoFactor.startsWith('off'), `expected the second factor off: ${shown(account)}`)
    const answer = await api.signIn(NEW_EMAIL, DEMO_USER.password)
    expect(answer.body.success && answer.body.data.two_factor_required === undefined && typeof answer.body.data.jwt === 'string', `expected a final JWT:\n${shown(answer)}`)
    return `second factor ${account.twoFactor}; a password sign-in through the API answers a final JWT`
  })
  await signOut(page)
}

/** A user registered on the page: unverified, mailed a code; a new code asked for, and the address verified with it. */
async function newUser (page: Page, mailbox: Mailbox): Promise<void> {
  await step(`register ${NEW_USER.email} on the page (POST /users, signed in)`, async () => {
    const mark = mailbox.mark()
    await fill(page, 'register-email', NEW_USER.email)
    await fill(page, 'register-password', NEW_USER.password)
    const claims = claimsOf(await click(page, 'register'))
    await mailbox.codeFor(NEW_USER.email, /verification code is (\S+)\./, mark)
    const account = await showAccount(page)
    expect(account.email === NEW_USER.email && account.verified === 'false', `expected ${NEW_USER.email}, not verified: ${shown(account)}`)
    return `sub ${claims.sub}; a verification code mailed; email verified ${account.verified}`
  })
  await step('send a new verification code and verify the email with it (account/email/verification, account/email/verify)', async () => {
    const mark = mailbox.mark()
    succeeded(await click(page, 'send-verification'))
    const code = await mailbox.codeFor(NEW_USER.email, /verification code is (\S+)\./, mark)
    // a wrong code first: the client's JwtLoginClientError, shown with its status, number and name
    await fill(page, 'verification-code', code === 'ZZZZZZZZ' ? 'YYYYYYYY' : 'ZZZZZZZZ')
    const wrong = await click(page, 'verify-email')
    expect(!wrong.ok && wrong.status === 400 && typeof wrong.errorCode === 'number' && /^ERR_JWT_LOGIN_\w+$/.test(wrong.code ?? '') && wrong.error?.startsWith('JwtLoginClientError: ') === true,
      `expected a JwtLoginClientError for a wrong code:\n${shown(wrong)}`)
    await fill(page, 'verification-code', code)
    succeeded(await click(page, 'verify-email'))
    const account = await showAccount(page)
    expect(account.verified === 'true', `expected the email verified: ${shown(account)}`)
    return `a wrong code refused (${String(wrong.status)} / ${String(wrong.errorCode)} ${String(wrong.code)}); code ${code} from the console; email verified ${account.verified}`
  })
}

async function run (): Promise<number> {
  const mailbox = new Mailbox()
  return await inChromium(async () => await main({ PORT: '0' }, mailbox.print), async (page, app) => {
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    await page.goto(`${base}/account`)
    console.log(`demo at ${base}/account in ${CHROMIUM}; the console mailer's mails read from the demo's output`)
    return await steps(async () => {
      await demoUser(page, new Api(base), mailbox)
      await newUser(page, mailbox)
    })
  })
}

process.exitCode = await run()
