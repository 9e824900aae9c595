// What the client's tests share: a listening host of the plugin (never `inject`), the requests it saw, and a cookie jar for Node's fetch.
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { ClientStorage } from '../../lib/client.js'
import type { JwtLoginOptions, SettingsInput } from '../../lib/index.js'
import { buildHost, testClock } from './app.js'

export { ALICE } from './app.js'
export const PREFIX = '/jwt-login/v1'

export interface Served {
  app: FastifyInstance
  /** `http://127.0.0.1:<port>` */
  base: string
  clock: ReturnType<typeof testClock>
  /** `METHOD path` of every request the host saw, in order. */
  seen: string[]
  /** How many `POST /auth/refresh` the host saw. */
  refreshes: () => number
}

/** Listens on a loopback port; closed when `t` ends. */
export async function listen (t: Test, app: FastifyInstance): Promise<string> {
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => { await app.close() })
  return base
}

/** Records the requests `app` sees (before it is ready). */
export function record (app: FastifyInstance, seen: string[]): void {
  app.addHook('onRequest', async (request) => { seen.push(`${request.method} ${request.url}`) })
}

/**
 * A listening host with refresh on, alice, the plugin's clock `clock`, and
 * `GET /me` (the token's user id; 401 without a valid token) and
 * `POST /echo` (the body it was sent) behind `authenticate`.
 */
export async function serve (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}, routes: (app: FastifyInstance) => void = () => {}): Promise<Served> {
  const clock = testClock(Date.now())
  const seen: string[] = []
  const { app } = await buildHost((app) => {
    record(app, seen)
    app.get('/me', { onRequest: app.jwtLogin.authenticate }, async (request) => ({ me: request.jwtLogin?.user.user_login }))
    app.post('/echo', { onRequest: app.jwtLogin.authenticate }, async (request) => ({ body: request.body }))
    routes(app)
  }, { refresh: { enabled: true }, ...settings }, { clock, ...options })
  const base = await listen(t, app)
  return { app, base, clock, seen, refreshes: () => seen.filter(line => line === `POST ${PREFIX}/auth/refresh`).length }
}

/** A `fetch` that keeps the cookies answers set (Node's keeps none), and the requests it sent. */
export function cookieJar (): { fetch: typeof fetch, cookies: Map<string, string>, sent: Request[] } {
  const cookies = new Map<string, string>()
  const sent: Request[] = []
  const jarFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init)
    if (cookies.size > 0) request.headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '))
    sent.push(request.clone())
    const response = await fetch(request)
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map(part => part.trim())
      const at = pair.indexOf('=')
      const gone = attributes.some(attribute => /^max-age=0$/i.test(attribute) || (/^expires=/i.test(attribute) && Date.parse(attribute.slice(8)) < Date.now()))
      if (gone) cookies.delete(pair.slice(0, at))
      else cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
    return response
  }
  return { fetch: jarFetch, cookies, sent }
}

/** The next session event of `client` of type `type`. */
export async function nextEvent (client: { onSession: (listener: (event: { type: string, fromOtherTab: boolean }) => void) => () => void }, type: string): Promise<{ type: string, fromOtherTab: boolean }> {
  return await new Promise((resolve) => {
    const stop = client.onSession((event) => {
      if (event.type !== type) return
      stop()
      resolve(event)
    })
  })
}

/** A storage shaped like `localStorage` (sync), with its items to look at: as a page's tabs share one. */
export function webStorage (): ClientStorage & { items: Map<string, string> } {
  const items = new Map<string, string>()
  return { items, getItem: (key) => items.get(key) ?? null, setItem: (key, value) => { items.set(key, value) }, removeItem: (key) => { items.delete(key) } }
}
