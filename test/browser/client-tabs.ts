/**
 * `npm run test:browser` (not part of `npm test`), after account.ts: the
 * client (`fastify-jwt-login/client`, lib/client.ts bundled with esbuild for
 * a page) across the tabs of one origin in the system Chromium through
 * playwright-core (`CHROMIUM_PATH`, default /usr/bin/chromium).
 *
 * Two servers of the plugin listen on port 0 (memory users, refresh on, the
 * access token living 5 minutes, `refresh.reuseInterval` its default 30 s):
 * one in cookie mode, one in bearer mode. Each serves `/me` behind
 * `fastify.jwtLogin.authenticate`, the bundled client at `/client.js` and a
 * page, `/tabs.html`, whose `window.tab` drives a client made with
 * `createClient({ baseUrl: location.origin, mode, storage })` (bearer mode
 * keeps its tokens in `localStorage`, cookie mode its CSRF token), a lock
 * wait of 2 s and a clock of `Date.now() + window.__offset`. The server's
 * clock (the plugin's `clock` option) is `Date.now()` plus the same offset:
 * moving both by the token's lifetime expires it without waiting.
 *
 * The server counts every `POST …/auth/refresh`, every `refresh.reused` and
 * every `session.ended` (by reason). In each mode, on a fresh profile each:
 * two and then five tabs, signed in in one (the others pick the session
 * up), the access token expired, every tab calling `/me` several times at
 * once; a tab whose refresh hangs while it holds the Web Lock, closed; one
 * that hangs and stays open; and five tabs without Web Locks. Every tab must
 * end with a working token (every call 200, another call after it too), the
 * server must see no reuse and no session ended, and no tab may have lost
 * its session. Refresh requests wait a random 0–100 ms at the server and
 * the tabs start 10 ms apart (`TABS_JITTER`, `TABS_STAGGER`): in lockstep
 * the races of cookie mode do not show. `TABS_ONLY=cookie` (or
 * `bearer-killed`, `cookie-nolocks`…) runs a part, `TABS_DEBUG=1` prints
 * each refresh with the token it presented and its tab. One `ok - …` line
 * per step; the first failure ends the run non-zero.
 */
import { rm } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { BrowserContext, Page, Route } from 'playwright-core'
import { bundleClient } from '../../examples/demo.js'
import { ALICE, buildHost, HS_SECRET } from '../helpers/app.js'
import { CHROMIUM, chromiumFound, expect, launchChromium, newProfile, shown, step, steps, TIMEOUT } from './kit.js'

type Mode = 'cookie' | 'bearer'

/** The access token's lifetime (seconds): expired by moving the clocks, never waited for. */
const LIFETIME_S = 300
/** The page's `lockWait` (ms): how long a tab waits for another's refresh. */
const LOCK_WAIT_MS = 2000
/** Calls of `/me` each tab makes at once. */
const CALLS = 4
/**
 * The network's disorder: each refresh request waits up to `TABS_JITTER` ms
 * (random) before the server handles it, and tab n starts its calls
 * n × `TABS_STAGGER` ms after the first. Without them the tabs' requests
 * leave and land in lockstep, which hides the races of cookie mode.
 */
const JITTER_MS = 100
const STAGGER_MS = 10

/** What the server saw: refresh requests, rotations, reuses, sessions ended (by reason). */
interface Counts { refreshes: number, inflight: number, refreshed: number, reused: number, ended: Record<string, number>, presented: Map<string, number> }

interface Server { mode: Mode, url: string, counts: Counts, offset: () => number, advance: (ms: number) => void, close: () => Promise<unknown> }

/** The page: a client of this origin on `window.tab`; `__offset` moves its clock. */
function tabsPage (mode: Mode): string {
  return `<!doctype html>
<meta charset="utf-8">
<title>jwt-login client, ${mode} mode</title>
<script type="module">
import { createClient } from '/client.js'
const mode = ${JSON.stringify(mode)}
window.__offset = 0
const client = createClient({ baseUrl: location.origin, mode, storage: mode === 'bearer' ? localStorage : undefined, lockWait: ${LOCK_WAIT_MS}, now: () => Date.now() + window.__offset })
const events = []
client.onSession((event) => { events.push(event.type + (event.fromOtherTab ? ' (other tab)' : '')) })
const call = async () => {
  try { return (await client.fetch('/me')).status } catch (error) { return String(error) }
}
window.tab = {
  locks: typeof navigator.locks,
  signIn: async (email, password) => typeof (await client.signIn({ email, password })).jwt === 'string',
  callMe: async (n) => await Promise.all(Array.from({ length: n }, call)),
  jwt: () => client.jwt,
  secondsLeft: () => {
    if (client.jwt === undefined) return -1
    const { exp } = JSON.parse(atob(client.jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')))
    return exp - (Date.now() + window.__offset) / 1000
  },
  events: () => events,
  setOffset: (ms) => { window.__offset = ms }
}
</script>
`
}

/** A server of the plugin in `mode`, counting what the scenarios must not cause. */
async function startServer (mode: Mode, client: string): Promise<Server> {
  let offset = 0
  const counts: Counts = { refreshes: 0, inflight: 0, refreshed: 0, reused: 0, ended: {}, presented: new Map() }
  const { app } = await buildHost((host: FastifyInstance) => {
    host.addHook('preHandler', async (request) => {
      if (request.method !== 'POST' || !request.url.endsWith('/auth/refresh')) return
      counts.refreshes++
      counts.inflight++
      request.raw.once('close', () => { counts.inflight-- })
      const token = (request.body as { refresh_token?: string } | undefined)?.refresh_token ?? /__Host-jwt-login-refresh=([^;]+)/.exec(request.headers.cookie ?? '')?.[1] ?? 'none'
      counts.presented.set(token, (counts.presented.get(token) ?? 0) + 1)
      const jitter = Number(process.env.TABS_JITTER ?? JITTER_MS)
      if (jitter > 0) await new Promise(resolve => setTimeout(resolve, Math.random() * jitter))
      if (process.env.TABS_DEBUG !== undefined) console.log(`  refresh with …${token.slice(-20, -2)} (${counts.presented.get(token)}), from ${request.headers.referer}`)
    })
    host.get('/me', { onRequest: host.jwtLogin.authenticate }, async (request) => ({ me: request.jwtLogin?.user }))
    host.get('/tabs.html', async (_request, reply) => await reply.type('text/html; charset=utf-8').send(tabsPage(mode)))
    host.get('/client.js', async (_request, reply) => await reply.type('text/javascript; charset=utf-8').send(client))
  }, {
    tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }], lifetime: LIFETIME_S },
    refresh: { enabled: true, cookie: { enabled: mode === 'cookie' } }
  }, { clock: () => Date.now() + offset })
  app.jwtLogin.events.on('token.refreshed', () => { counts.refreshed++ })
  app.jwtLogin.events.on('refresh.reused', () => { counts.reused++ })
  app.jwtLogin.events.on('session.ended', ({ reason }) => { counts.ended[reason] = (counts.ended[reason] ?? 0) + 1 })
  const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))
  return { mode, url: `http://localhost:${address.port}/tabs.html`, counts, offset: () => offset, advance: (ms) => { offset += ms }, close: async () => await app.close() }
}

/** The page's helpers, as `window.tab`. */
interface Tab {
  locks: string
  signIn: (email: string, password: string) => Promise<boolean>
  callMe: (n: number) => Promise<Array<number | string>>
  jwt: () => string | undefined
  secondsLeft: () => number
  events: () => string[]
  setOffset: (ms: number) => void
}
/** One scenario's browser: a fresh profile, its tabs of the page, the offset of their clocks. */
class Tabs {
  readonly pages: Page[] = []
  /** The pages' clocks run with the server's: its offset when they open. */
  #offset: number

  private constructor (readonly server: Server, readonly context: BrowserContext, readonly profile: string) {
    this.#offset = server.offset()
  }

  static async open (server: Server, count: number, { locks = true } = {}): Promise<Tabs> {
    const profile = await newProfile()
    const tabs = new Tabs(server, await launchChromium(profile), profile)
    if (!locks) await tabs.context.addInitScript(() => { Object.defineProperty(Object.getPrototypeOf((globalThis as unknown as { navigator: object }).navigator), 'locks', { value: undefined, configurable: true }) })
    for (let i = 0; i < count; i++) {
      const page = i === 0 ? tabs.context.pages()[0] ?? await tabs.context.newPage() : await tabs.context.newPage()
      page.setDefaultTimeout(TIMEOUT)
      page.on('pageerror', (error) => { console.error(`page error (tab ${i + 1}): ${error.message}`) })
      await page.goto(`${server.url}?tab=${i + 1}`)
      await page.waitForFunction(() => (globalThis as unknown as { tab?: Tab }).tab !== undefined)
      await page.evaluate((offset) => { (globalThis as unknown as { tab: Tab }).tab.setOffset(offset) }, tabs.#offset)
      tabs.pages.push(page)
    }
    return tabs
  }

  async close (): Promise<void> {
    await this.context.close()
    await rm(this.profile, { recursive: true, force: true })
  }

  /** Signs in in the first tab; answers once every tab holds an access token (the others got it from the first). */
  async signIn (): Promise<void> {
    expect(await this.pages[0]!.evaluate(([email, password]) => (globalThis as unknown as { tab: Tab }).tab.signIn(email, password), [ALICE.email, ALICE.password] as const), 'the sign-in answered no JWT')
    await Promise.all(this.pages.map(async (page) => await page.waitForFunction(() => (globalThis as unknown as { tab: Tab }).tab.jwt() !== undefined)))
  }

  /** Moves the server's clock and every open tab's past the access token's expiry. */
  async expire (): Promise<void> {
    const ms = (LIFETIME_S + 10) * 1000
    this.#offset += ms
    this.server.advance(ms)
    await Promise.all(this.pages.filter(page => !page.isClosed()).map(async (page) => { await page.evaluate((offset) => { (globalThis as unknown as { tab: Tab }).tab.setOffset(offset) }, this.#offset) }))
  }

  /** Every tab of `pages` calling `/me` `CALLS` times at once: the statuses, tab by tab. */
  static async callAll (pages: Page[], calls = CALLS): Promise<Array<Array<number | string>>> {
    const stagger = Number(process.env.TABS_STAGGER ?? STAGGER_MS)
    return await Promise.all(pages.map(async (page, i) => await page.evaluate(async ([n, wait]) => {
      await new Promise(resolve => setTimeout(resolve, wait))
      return await (globalThis as unknown as { tab: Tab }).tab.callMe(n)
    }, [calls, stagger * i] as const)))
  }

  /** Fails unless every tab of `pages` holds a fresh token, answers one more call 200 and never saw its session end. */
  static async allSignedIn (pages: Page[]): Promise<void> {
    const again = await Tabs.callAll(pages, 1)
    expect(again.flat().every(status => status === 200), `a later call failed in some tab: ${shown(again)}`)
    for (const [i, page] of pages.entries()) {
      const { left, events } = await page.evaluate(() => ({ left: (globalThis as unknown as { tab: Tab }).tab.secondsLeft(), events: (globalThis as unknown as { tab: Tab }).tab.events() }))
      expect(left > 0, `tab ${i + 1} holds no fresh token (${left} s left)`)
      expect(!events.some(type => type.startsWith('ended') || type.startsWith('signed-out')), `tab ${i + 1} lost its session: ${shown(events)}`)
    }
  }
}

/** The counts since `before`. */
function since (server: Server, before: Counts): { refreshes: number, refreshed: number, reused: number, ended: number, reasons: string } {
  const { counts } = server
  const ended = Object.entries(counts.ended).map(([reason, n]) => [reason, n - (before.ended[reason] ?? 0)] as const).filter(([, n]) => n > 0)
  return {
    refreshes: counts.refreshes - before.refreshes,
    refreshed: counts.refreshed - before.refreshed,
    reused: counts.reused - before.reused,
    ended: ended.reduce((sum, [, n]) => sum + n, 0),
    reasons: ended.map(([reason, n]) => `${reason} ×${n}`).join(', ')
  }
}

const snapshot = (server: Server): Counts => structuredClone(server.counts)

/** Fails when the server saw a reuse or ended a session since `before` (once no refresh is in flight); answers the counts' excerpt. */
async function noReuse (server: Server, before: Counts): Promise<string> {
  for (let waited = 0; server.counts.inflight > 0 && waited < TIMEOUT; waited += 20) await sleep(20)
  await sleep(50)
  const seen = since(server, before)
  expect(seen.reused === 0, `the server saw ${seen.reused} refresh reuse(s); sessions ended: ${seen.reasons}`)
  expect(seen.ended === 0, `the server ended ${seen.ended} session(s): ${seen.reasons}`)
  return `${seen.refreshes} refresh request(s), ${seen.refreshed} answer(s), 0 reuse events, 0 sessions ended`
}

/** Fails unless every status is 200. */
function all200 (statuses: Array<Array<number | string>>, what: string, server: Server, before: Counts): number {
  const seen = since(server, before)
  expect(statuses.flat().every(status => status === 200), `${what}: not every call answered 200: ${JSON.stringify(statuses)}; the server saw ${seen.refreshes} refresh request(s), ${seen.reused} reuse(s), sessions ended: ${seen.reasons || 'none'}`)
  return statuses.flat().length
}

/** N tabs, signed in in one, racing on an expired token. */
async function race (server: Server, count: number, { locks = true } = {}): Promise<void> {
  const label = `${server.mode} mode, ${count} tabs${locks ? '' : ', no Web Locks'}`
  const tabs = await Tabs.open(server, count, { locks })
  try {
    if (!locks) {
      await step(`${label}: Web Locks switched off in the page`, async () => {
        const kinds = await Promise.all(tabs.pages.map(async (page) => await page.evaluate(() => (globalThis as unknown as { tab: Tab }).tab.locks)))
        expect(kinds.every(kind => kind === 'undefined'), `navigator.locks is ${shown(kinds)}`)
        return 'navigator.locks is undefined in every tab'
      })
    }
    await step(`${label}: sign in in one tab, the others pick up the session`, async () => {
      await tabs.signIn()
      return `${count} tabs hold an access token`
    })
    const before = snapshot(server)
    await step(`${label}: the access token expires, every tab calls /me ${CALLS} times at once`, async () => {
      await tabs.expire()
      const calls = all200(await Tabs.callAll(tabs.pages), label, server, before)
      await Tabs.allSignedIn(tabs.pages)
      const seen = since(server, before)
      expect(seen.refreshes >= 1, 'no refresh request reached the server')
      return `${calls} calls answered 200, every tab signed in; ${await noReuse(server, before)}`
    })
  } finally {
    await tabs.close()
  }
}

/**
 * A tab whose refresh never answers while it holds the Web Lock: closed
 * (`close`), the lock goes with it; left open, the others wait `lockWait`
 * and refresh without it (the server's retry window), then the hung tab's
 * request goes through and it is signed in too.
 */
async function stuckTab (server: Server, count: number, close: boolean): Promise<void> {
  const label = `${server.mode} mode, ${count} tabs, one ${close ? 'killed' : 'hung'} while holding the lock`
  const tabs = await Tabs.open(server, count)
  try {
    await step(`${label}: sign in in one tab, the others pick up the session`, async () => {
      await tabs.signIn()
      return `${count} tabs hold an access token`
    })
    const stuck = tabs.pages.at(-1)!
    const others = tabs.pages.slice(0, -1)
    let held: (route: Route) => void = () => {}
    const hung = new Promise<Route>((resolve) => { held = resolve })
    await stuck.route('**/auth/refresh', (route) => { held(route) })
    const before = snapshot(server)
    await tabs.expire()
    const stuckCalls = stuck.evaluate(() => (globalThis as unknown as { tab: Tab }).tab.callMe(1)).catch((error: unknown) => [String(error)])
    const route = await hung
    if (close) {
      await step(`${label}: the tab is closed mid-refresh, the ${count - 1} others call /me ${CALLS} times at once`, async () => {
        await stuck.close()
        const started = Date.now()
        const calls = all200(await Tabs.callAll(others), label, server, before)
        const took = Date.now() - started
        expect(took < LOCK_WAIT_MS + 1000, `the others took ${took} ms (lockWait ${LOCK_WAIT_MS} ms)`)
        await Tabs.allSignedIn(others)
        return `${calls} calls answered 200 in ${took} ms; ${await noReuse(server, before)}`
      })
    } else {
      await step(`${label}: the ${count - 1} others call /me ${CALLS} times at once`, async () => {
        const started = Date.now()
        const calls = all200(await Tabs.callAll(others), label, server, before)
        const took = Date.now() - started
        expect(took < LOCK_WAIT_MS + 2000, `the others took ${took} ms (lockWait ${LOCK_WAIT_MS} ms)`)
        await Tabs.allSignedIn(others)
        return `${calls} calls answered 200 in ${took} ms (lockWait ${LOCK_WAIT_MS} ms); ${await noReuse(server, before)}`
      })
      await step(`${label}: the hung refresh goes through late, every tab still signed in`, async () => {
        await route.continue()
        await stuck.unroute('**/auth/refresh')
        const statuses = await stuckCalls
        all200([statuses], 'the hung tab', server, before)
        await Tabs.allSignedIn(tabs.pages)
        return `the hung tab's call answered ${shown(statuses)}; ${await noReuse(server, before)}`
      })
    }
  } finally {
    await tabs.close()
  }
}

async function run (): Promise<number> {
  if (!chromiumFound()) return 1
  const client = await bundleClient()
  const servers = [await startServer('cookie', client), await startServer('bearer', client)]
  try {
    console.log(`client bundled (${client.length} bytes); cookie mode at ${servers[0]!.url}, bearer mode at ${servers[1]!.url}; ${CHROMIUM}`)
    return await steps(async () => {
      const only = process.env.TABS_ONLY
      for (const server of servers) {
        if (only !== undefined && !only.startsWith(server.mode)) continue
        const wanted = (what: string): boolean => only === undefined || !only.includes('-') || only.endsWith(what)
        if (wanted('race')) await race(server, 2)
        if (wanted('race')) await race(server, 5)
        if (wanted('killed')) await stuckTab(server, 3, true)
        if (wanted('hung')) await stuckTab(server, 3, false)
        if (wanted('nolocks')) await race(server, 5, { locks: false })
      }
    })
  } finally {
    for (const server of servers) await server.close()
  }
}

process.exitCode = await run()
