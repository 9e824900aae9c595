/**
 * What the scripts of `npm run test:browser` share: the system Chromium
 * (`CHROMIUM_PATH`, default /usr/bin/chromium; playwright's own browser
 * downloads are not used) launched through playwright-core with a profile of
 * its own, the steps and their `ok` / `not ok` lines, the demo's console as a
 * mailbox, and, for the demo's pages (/passkeys, /account, both built on
 * examples/page-kit.js, which calls the plugin through its client), clicking
 * a button and reading the entry it adds to the page's list of answers.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
/** How long a page, a click's answer or a mail may take. */
export const TIMEOUT = 30_000
/** The plugin's default prefix (the demo mounts it there). */
export const PREFIX = '/jwt-login/v1'

/** Whether the system Chromium is there; when it is not, says so on stderr and how to get it. */
export function chromiumFound (): boolean {
  if (existsSync(CHROMIUM)) return true
  console.error(`No Chromium at ${CHROMIUM}. Install it (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH.`)
  return false
}

/** A new folder for a Chromium profile: the caller removes it. */
export async function newProfile (): Promise<string> {
  return await mkdtemp(join(tmpdir(), 'jwt-login-chromium-'))
}

/** The system Chromium, headless, on the profile folder `profile`. */
export async function launchChromium (profile: string): Promise<BrowserContext> {
  return await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: TIMEOUT })
}

/**
 * Runs `work` on the first page of the system Chromium (a fresh profile,
 * removed after), with what `start` started (the demo, a server…), closed
 * after. Answers `work`'s exit code, or 1 when there is no Chromium.
 */
export async function inChromium<Started extends { close: () => Promise<unknown> }> (
  start: () => Promise<Started>,
  work: (page: Page, started: Started, context: BrowserContext) => Promise<number>
): Promise<number> {
  if (!chromiumFound()) return 1
  const started = await start()
  const profile = await newProfile()
  try {
    const context = await launchChromium(profile)
    try {
      const page = context.pages()[0] ?? await context.newPage()
      page.setDefaultTimeout(TIMEOUT)
      page.on('pageerror', (error) => { console.error(`page error: ${error.message}`) })
      return await work(page, started, context)
    } finally {
      await context.close()
    }
  } finally {
    await started.close()
    await rm(profile, { recursive: true, force: true })
  }
}

/** A step that did not go as it should: its message is the `not ok` line's. */
export class StepFailed extends Error {}

export function expect (condition: boolean, message: string): void {
  if (!condition) throw new StepFailed(message)
}

export const shown = (value: unknown): string => JSON.stringify(value, null, 2)

/** Runs one step and prints its `ok` line with the excerpt it answers. */
export async function step (name: string, work: () => Promise<string>): Promise<void> {
  const excerpt = await work().catch((error: unknown) => {
    throw new StepFailed(`${name}: ${error instanceof Error ? error.message : String(error)}`)
  })
  console.log(`ok - ${name}: ${excerpt}`)
}

/** Runs steps in order; the first that fails prints its `not ok` line and ends them. Answers the exit code. */
export async function steps (work: () => Promise<void>): Promise<number> {
  try {
    await work()
    return 0
  } catch (error) {
    if (!(error instanceof StepFailed)) throw error
    console.error(`not ok - ${error.message}`)
    return 1
  }
}

/**
 * The demo's console as a mailbox: the console mailer prints each mail as
 * `--- mail to <address> ---`, its subject and text, `--- end of mail ---`.
 */
export class Mailbox {
  readonly #printed: string[] = []

  /** The demo's `print`: everything it writes (the banner, the mails). */
  readonly print = (text: string): void => { this.#printed.push(text) }

  /** Where the next mail will be: `codeFor` reads only what came after. */
  mark (): number {
    return this.#printed.length
  }

  /** The code `pattern` finds in the newest mail to `to` since `mark` (mails go after the answer: waits for it). */
  async codeFor (to: string, pattern: RegExp, mark = 0): Promise<string> {
    const deadline = Date.now() + TIMEOUT
    for (;;) {
      const mails = this.#printed.slice(mark).filter(text => text.includes(`--- mail to ${to} ---`))
      const code = mails.map(text => pattern.exec(text)?.[1]).filter(found => found !== undefined).at(-1)
      if (code !== undefined) return code
      if (Date.now() > deadline) throw new StepFailed(`no mail to ${to} matching ${String(pattern)} on the demo's console; it printed:\n${this.#printed.slice(mark).join('\n')}`)
      await sleep(50)
    }
  }
}

/** The claims a demo page decodes from a JWT it was answered. */
export interface Claims { sub: string | number, sid: string, auth_time: number, amr: string[] }

/**
 * One entry of a demo page's list of answers (what page-kit.js's `show`
 * wrote): the client call's outcome, with the HTTP answer of its last route
 * (`route`, `status`, `body`), every request the call made (`requests`,
 * `METHOD /path → status`), and for a refusal the `JwtLoginClientError`'s
 * fields.
 */
export interface Answer {
  action: string
  ok: boolean
  route?: string
  status?: number
  body?: { success: boolean, data?: Record<string, unknown> }
  claims?: Claims
  requests?: string[]
  errorCode?: number
  code?: string
  error?: string
}

/** Clicks a button of the page and answers the entry it adds to the list of answers. */
export async function click (page: Page, id: string): Promise<Answer> {
  const answers = page.locator('#answers > li')
  const before = await answers.count()
  await page.locator(`#${id}`).click()
  const entry = answers.nth(before)
  await entry.waitFor({ timeout: TIMEOUT })
  return JSON.parse(await entry.locator('pre').innerText()) as Answer
}

/** Fails the step unless the answer succeeded. */
export function succeeded (answer: Answer): Answer {
  if (!answer.ok) throw new StepFailed(`the page shows a failure:\n${shown(answer)}`)
  return answer
}

/** The answer's claims when it succeeded with a final JWT; otherwise the step fails with the answer shown. */
export function claimsOf (answer: Answer): Claims {
  if (!answer.ok || answer.claims === undefined || answer.body?.data?.two_factor_required === true) throw new StepFailed(`the page shows no final JWT:\n${shown(answer)}`)
  return answer.claims
}

export const amrText = (claims: Claims): string => `amr [${claims.amr.join(', ')}]`

/** Types `value` into the page's field `id`. */
export async function fill (page: Page, id: string, value: string): Promise<void> {
  await page.locator(`#${id}`).fill(value)
}

/** A password sign-in with the page's form: as `user` when given, else as the form is filled. */
export async function passwordSignIn (page: Page, user?: { email: string, password: string }): Promise<Answer> {
  if (user !== undefined) {
    await fill(page, 'email', user.email)
    await fill(page, 'password', user.password)
  }
  return succeeded(await click(page, 'password-sign-in'))
}

/** Signs out on the page: the session revoked, the page's tokens dropped. */
export async function signOut (page: Page): Promise<void> {
  await step('sign out (auth/revoke)', async () => String(succeeded(await click(page, 'sign-out')).body?.data?.message))
}
