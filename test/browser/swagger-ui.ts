/**
 * `npm run test:browser` (not part of `npm test`): the demo on a free port,
 * the system Chromium through playwright-core, Swagger UI at /docs, "Try it
 * out" on `POST /auth` with the demo user; the answer on the page must hold a
 * JWT. Chromium is the system's (`CHROMIUM_PATH`, default /usr/bin/chromium):
 * playwright's own browser downloads are not used.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'
import { DEMO_USER, main } from '../../examples/demo.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
const JWT = /"jwt":\s*"([\w-]+\.[\w-]+\.[\w-]+)"/
const TIMEOUT = 30_000

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

async function run (): Promise<number> {
  if (!existsSync(CHROMIUM)) {
    console.error(`No Chromium at ${CHROMIUM}. Install it (Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH.`)
    return 1
  }
  const app = await main({ PORT: '0' }, () => {})
  const address = app.server.address() as { port: number }
  const base = `http://127.0.0.1:${address.port}`
  const profile = await mkdtemp(join(tmpdir(), 'jwt-login-chromium-'))
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: TIMEOUT })
  try {
    const page = context.pages()[0] ?? await context.newPage()
    page.setDefaultTimeout(TIMEOUT)
    console.log(`demo at ${base}; Swagger UI at ${base}/docs in ${CHROMIUM}`)
    const shown = await tryLogin(page, base)
    const jwt = JWT.exec(shown)?.[1]
    if (jwt === undefined) {
      console.error(`not ok - the response shown on the page holds no JWT:\n${shown}`)
      return 1
    }
    console.log(`ok - Swagger UI "Try it out" on POST /jwt-login/v1/auth answered a JWT: ${jwt.slice(0, 24)}…`)
    return 0
  } finally {
    await context.close()
    await app.close()
    await rm(profile, { recursive: true, force: true })
  }
}

process.exitCode = await run()
