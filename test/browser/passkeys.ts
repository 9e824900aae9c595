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
 * The page calls the plugin through its client (fastify-jwt-login/client)
 * and its passkey helpers. Clicked through, each answer read from the
 * page's list of answers: the
 * demo user signs in with the password, enrols a passkey, signs out and
 * signs in with the passkey alone; the two-factor user signs in with the
 * password and a TOTP code, enrols a passkey, signs out, signs in with the
 * password and answers the second factor with the passkey, then steps up
 * with it. One `ok - …` line per step; the first failure ends the run non-zero.
 */
import { createServer, type AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { generate } from 'otplib'
import type { Page } from 'playwright-core'
import { DEMO_2FA_USER, DEMO_USER, demoTotp, main } from '../../examples/demo.js'
import { amrText, CHROMIUM, type Claims, claimsOf, click, expect, inChromium, passwordSignIn, PREFIX, shown, signOut, step, steps, succeeded } from './kit.js'

/** A port nobody listens on now (the demo must know its port before it starts: it is part of the passkey origin). */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(0, '127.0.0.1', resolve) })
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
  return port
}

/** The two-factor user's current TOTP code, typed in and submitted. */
async function totpSecondFactor (page: Page): Promise<Claims> {
  await page.locator('#code').fill(await generate({ secret: demoTotp.secret }))
  return claimsOf(await click(page, 'submit-code'))
}

/** Enrols a passkey on the virtual authenticator for whoever is signed in; answers the new passkey's id. */
async function enrol (page: Page): Promise<string> {
  const answer = succeeded(await click(page, 'enrol'))
  // the client's enrolPasskey: the options, the browser's prompt, the credential
  const requests = [`POST ${PREFIX}/passkeys/register/options → 200`, `POST ${PREFIX}/passkeys/register → 200`]
  expect(shown(answer.requests) === shown(requests), `expected the requests ${shown(requests)}:\n${shown(answer)}`)
  const passkey = answer.body?.data?.passkey as { id: string, device_type: string } | undefined
  expect(passkey !== undefined, `no passkey in the answer:\n${shown(answer)}`)
  return `passkey ${(passkey as { id: string }).id.slice(0, 12)}… (${(passkey as { device_type: string }).device_type})`
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
    expect(first.body?.data?.two_factor_required === true, `expected two_factor_required:\n${shown(first)}`)
    const claims = await totpSecondFactor(page)
    expect(claims.amr.includes('mfa'), `expected mfa in ${amrText(claims)}`)
    return `sub ${claims.sub}, ${amrText(claims)}`
  })
  await step('enrol a passkey for the two-factor user', async () => await enrol(page))
  await signOut(page)

  let signedIn: Claims | undefined
  await step('password, then the passkey as the second factor (2fa/passkey/options → startAuthentication → auth/2fa)', async () => {
    const first = await passwordSignIn(page)
    expect(first.body?.data?.two_factor_required === true, `expected two_factor_required:\n${shown(first)}`)
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
  const port = await freePort()
  const url = `http://localhost:${port}/passkeys`
  return await inChromium(async () => await main({ PORT: String(port) }, () => {}), async (page, _app, context) => {
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
    })
    await page.goto(url)
    console.log(`demo at ${url} in ${CHROMIUM}, a virtual authenticator (ctap2, internal, resident keys, user verification)`)
    return await steps(async () => { await clickThrough(page) })
  })
}

process.exitCode = await run()
