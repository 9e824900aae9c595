/**
 * `npm run test:browser` (not part of `npm test`), after client-tabs.ts: the
 * demo's sign-in by email in the system Chromium through playwright-core
 * (`CHROMIUM_PATH`, default /usr/bin/chromium; playwright's own browser
 * downloads are not used).
 *
 * The demo runs in this process on a port found free beforehand (the mail's
 * link names it: `emailSignIn.linkUrl` is http://localhost:<port>/email-sign-in),
 * its console output captured: the console mailer's mails are read from it,
 * as a user of `npm start` reads them on the console. A code is asked for
 * the demo user through the API, and the link taken from the printed mail.
 * A mail scanner fetches the link first (a plain GET: the fragment, which
 * holds the code, is never sent), which must spend nothing. Then a scanner
 * that runs the page's script: the link opened in a tab left alone for a
 * couple of seconds, which must post nothing. Then the user opens the link
 * in Chromium: the page clears the fragment from the address bar at once,
 * names the address and posts nothing until the "Sign in as …" button is
 * clicked; the click signs in, showing the user (the same code the scanners
 * had). The same link opened again in a new tab and clicked is refused (the
 * code works once). A forged link's address is shown as text, never as
 * markup. Last, the page without a fragment: the two-factor user asks for a
 * code with the form, types it in, and answers the second factor with a TOTP
 * code. One `ok - …` line per step; the first failure ends the run non-zero.
 */
import { createServer, type AddressInfo } from 'node:net'
import { generate } from 'otplib'
import type { BrowserContext, Page } from 'playwright-core'
import { DEMO_2FA_USER, DEMO_USER, demoTotp, EMAIL_SIGN_IN_PATH, main } from '../../examples/demo.js'
import { CHROMIUM, expect, fill, inChromium, Mailbox, PREFIX, shown, step, steps, TIMEOUT } from './kit.js'

/** A port nobody listens on now (the demo must know its port before it starts: the mail's link names it). */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(0, '127.0.0.1', resolve) })
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
  return port
}

/** The link of a sign-in mail: the page, the code and the address in its fragment. */
const LINK = /^(http:\/\/localhost:\d+\/email-sign-in#\S+)$/m
/** The code of a sign-in mail. */
const CODE = /sign-in code is (\d+)\./

/** What the page shows: who is signed in, the status line, and the address bar. */
async function shownOn (page: Page): Promise<{ signedIn: string, status: string, url: string }> {
  const text = async (id: string): Promise<string> => (await page.locator(`#${id}`).innerText()).trim()
  return { signedIn: await text('signed-in'), status: await text('status'), url: page.url() }
}

/** Waits for the page's status line to say something: the outcome of what the page is doing. */
async function settled (page: Page): Promise<{ signedIn: string, status: string, url: string }> {
  await page.locator('#status:not(:empty)').waitFor({ timeout: TIMEOUT })
  return await shownOn(page)
}

/** Clicks a button of the page's forms, its status line cleared first, and waits for its outcome. */
async function submit (page: Page, id: string): Promise<{ signedIn: string, status: string, url: string }> {
  await page.locator('#status').evaluate((status: { textContent: string | null }) => { status.textContent = '' })
  await page.locator(`#${id}`).click()
  return await settled(page)
}

/** The plugin's routes a page posted to (its `POST` requests), as `/path → status`. */
function recordPosts (page: Page): string[] {
  const posts: string[] = []
  page.on('response', (response) => {
    const request = response.request()
    if (request.method() === 'POST') posts.push(`${new URL(request.url()).pathname.slice(PREFIX.length)} → ${response.status()}`)
  })
  return posts
}

/** Every request a page makes to the plugin's routes, as `METHOD /path`, recorded as it is sent (answered or not). */
function recordRequests (page: Page): string[] {
  const requests: string[] = []
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname
    if (path.startsWith(PREFIX)) requests.push(`${request.method()} ${path.slice(PREFIX.length)}`)
  })
  return requests
}

/** What the page shows for a link: the "Sign in as …" button (visible or not) and its text. */
async function linkButton (page: Page): Promise<{ visible: boolean, text: string }> {
  const button = page.locator('#link-sign-in')
  return { visible: await button.isVisible(), text: (await button.innerText()).trim() }
}

/** The demo user follows the mailed link, after scanners fetched it and ran it; the link a second time is refused. */
async function followTheLink (page: Page, context: BrowserContext, api: string, mailbox: Mailbox): Promise<void> {
  let link = ''
  await step(`a sign-in code for ${DEMO_USER.email} through the API (POST auth/email), the link read from the printed mail`, async () => {
    const mark = mailbox.mark()
    const res = await fetch(`${api}/auth/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: DEMO_USER.email }) })
    expect(res.status === 200, `POST auth/email answered ${res.status}: ${await res.text()}`)
    link = await mailbox.codeFor(DEMO_USER.email, LINK, mark)
    const fragment = new URLSearchParams(new URL(link).hash.slice(1))
    expect(/^\d{8}$/.test(fragment.get('code') ?? '') && fragment.get('email') === DEMO_USER.email, `the link's fragment holds no code and address: ${link}`)
    return `${link.replace(/code=\d+/, 'code=…')}`
  })
  await step('a mail scanner fetches the link (a plain GET: the fragment is not sent) and spends nothing', async () => {
    const scans = []
    for (let scan = 0; scan < 3; scan++) {
      const res = await fetch(link)
      expect(res.status === 200 && (await res.text()).includes('/auth/email/verify'), `the link page answered ${res.status}`)
      scans.push(res.status)
    }
    return `3 GETs of ${new URL(link).pathname}, answered ${scans.join(', ')}; the browser's sign-in below uses the same code`
  })
  await step('a scanner that runs the page\'s script (a tab opened on the link, left alone for 2.5 s) posts nothing', async () => {
    const scanner = await context.newPage()
    try {
      const requests = recordRequests(scanner)
      await scanner.goto(link, { waitUntil: 'networkidle' })
      await scanner.waitForTimeout(2500)
      const seen = await shownOn(scanner)
      expect(requests.length === 0, `the page left alone called the plugin: ${requests.join(', ')}`)
      expect(seen.signedIn === 'nobody' && seen.status === '', `expected nobody signed in and no status: ${shown(seen)}`)
      expect(!seen.url.includes('#'), `the address bar still holds the fragment: ${seen.url}`)
      const button = await linkButton(scanner)
      expect(button.visible && button.text === `Sign in as ${DEMO_USER.email}`, `expected the button "Sign in as ${DEMO_USER.email}": ${shown(button)}`)
      return `no request to ${PREFIX} in 2.5 s; the page waits on "${button.text}"`
    } finally {
      await scanner.close()
    }
  })
  await step('the link opened in Chromium: the fragment leaves the address bar at once, the page names the address and posts nothing', async () => {
    const requests = recordRequests(page)
    await page.goto(link, { waitUntil: 'networkidle' })
    const button = await linkButton(page)
    const seen = await shownOn(page)
    expect(button.visible && button.text === `Sign in as ${DEMO_USER.email}`, `expected the button "Sign in as ${DEMO_USER.email}": ${shown(button)}`)
    expect(!requests.includes('POST /auth/email/verify') && requests.length === 0, `the page called the plugin on load: ${requests.join(', ')}`)
    // page.url() follows history.replaceState: it is the address bar
    expect(!seen.url.includes('#') && new URL(seen.url).pathname === EMAIL_SIGN_IN_PATH, `the address bar still holds the fragment: ${seen.url}`)
    expect(seen.signedIn === 'nobody', `signed in before the click: ${shown(seen)}`)
    expect(await page.locator('#email').inputValue() === DEMO_USER.email, 'the form is not prefilled with the link\'s address')
    return `"${button.text}"; address bar ${seen.url}; no request to ${PREFIX}`
  })
  await step('the click: the page posts the code the link held (the one the scanners had) and shows the user', async () => {
    const posts = recordPosts(page)
    const seen = await submit(page, 'link-sign-in')
    expect(seen.signedIn.startsWith(`${DEMO_USER.email} (amr otp)`), `expected ${DEMO_USER.email} signed in with amr otp: ${shown(seen)}`)
    expect(posts.join(', ') === '/auth/email/verify → 200, /auth/validate → 200', `the page posted: ${posts.join(', ')}`)
    expect(!seen.url.includes('#') && await page.locator('#link-form').isHidden(), `expected the address bar without a fragment and the button gone: ${seen.url}`)
    return `signed in: ${seen.signedIn}; posted ${posts.join(', ')}`
  })
  await step('the same link in a new tab, clicked: refused, the code works once', async () => {
    const again = await context.newPage()
    try {
      const requests = recordRequests(again)
      await again.goto(link, { waitUntil: 'networkidle' })
      expect(requests.length === 0, `the page called the plugin on load: ${requests.join(', ')}`)
      const seen = await submit(again, 'link-sign-in')
      expect(seen.status.startsWith('401 / 246') && seen.signedIn === 'nobody', `expected 401 / 246 and nobody signed in: ${shown(seen)}`)
      expect(!seen.url.includes('#'), `the address bar still holds the fragment: ${seen.url}`)
      return seen.status
    } finally {
      await again.close()
    }
  })
}

/** A forged link whose address is markup: shown as text, nothing run, nothing posted. */
async function forgedLink (context: BrowserContext, base: string): Promise<void> {
  await step('a forged link whose address is markup: the page shows it as text and posts nothing', async () => {
    const forged = await context.newPage()
    try {
      const requests = recordRequests(forged)
      const email = '<img id="injected" src="x" onerror="document.title=\'injected\'">@example.com'
      await forged.goto(`${base}${EMAIL_SIGN_IN_PATH}#code=123456&email=${encodeURIComponent(email)}`, { waitUntil: 'networkidle' })
      const button = await linkButton(forged)
      expect(button.text === `Sign in as ${email}`, `expected the address as text: ${shown(button)}`)
      expect(await forged.locator('#injected').count() === 0 && await forged.title() !== 'injected', 'the address was parsed as markup')
      expect(requests.length === 0 && !forged.url().includes('#'), `expected no request and no fragment: ${requests.join(', ')}; ${forged.url()}`)
      return `"${button.text}"`
    } finally {
      await forged.close()
    }
  })
}

/** The page without a fragment: the two-factor user asks for a code, types it in, and answers the second factor. */
async function useTheForm (page: Page, base: string, mailbox: Mailbox): Promise<void> {
  await page.goto(`${base}${EMAIL_SIGN_IN_PATH}`)
  let code = ''
  await step(`the page's form: a code for ${DEMO_2FA_USER.email}`, async () => {
    const mark = mailbox.mark()
    await fill(page, 'email', DEMO_2FA_USER.email)
    const seen = await submit(page, 'request-code')
    code = await mailbox.codeFor(DEMO_2FA_USER.email, CODE, mark)
    return `"${seen.status}"; code ${code.slice(0, 2)}… on the console`
  })
  await step('the code typed in: the second factor is asked for (the mailbox is one factor)', async () => {
    await fill(page, 'code', code)
    const seen = await submit(page, 'verify')
    expect(seen.signedIn === 'nobody' && await page.locator('#second-factor-form').isVisible(), `expected the second factor's form: ${shown(seen)}`)
    return `"${seen.status}"`
  })
  await step('the TOTP code: signed in with two factors', async () => {
    await fill(page, 'second-factor-code', await generate({ secret: demoTotp.secret }))
    const seen = await submit(page, 'submit-second-factor')
    expect(seen.signedIn === `${DEMO_2FA_USER.email} (amr otp mfa)`, `expected ${DEMO_2FA_USER.email} with amr otp mfa: ${shown(seen)}`)
    expect(await page.locator('#second-factor-form').isHidden(), 'the second factor\'s form is still shown')
    return `signed in: ${seen.signedIn}`
  })
}

async function run (): Promise<number> {
  const mailbox = new Mailbox()
  const port = await freePort()
  return await inChromium(async () => await main({ PORT: String(port) }, mailbox.print), async (page, _app, context) => {
    const base = `http://localhost:${port}`
    console.log(`demo at ${base}${EMAIL_SIGN_IN_PATH} in ${CHROMIUM}; the console mailer's mails read from the demo's output`)
    return await steps(async () => {
      await followTheLink(page, context, `http://127.0.0.1:${port}${PREFIX}`, mailbox)
      await forgedLink(context, base)
      await useTheForm(page, base, mailbox)
    })
  })
}

process.exitCode = await run()
