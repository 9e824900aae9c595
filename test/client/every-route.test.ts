// The client has a method for every route of the plugin: each method is called against a fetch that records the route and answers
// success, and the routes called are the OpenAPI document's, but for the few named here as no client's. A route added to the plugin
// without a method, or a method that calls a route the plugin does not have, fails here.
import t from 'tap'
import { createClient } from '../../lib/client.js'
import { buildDocumentedHost } from '../helpers/openapi.js'

const PREFIX = '/jwt-login/v1'

/** The routes a client does not call: the GET twins of POST routes (for forms and links), and the provider's back-channel logout (server to server). */
const NOT_THE_CLIENTS = ['GET /auth/validate', 'GET /oauth/token', 'POST /oauth/{provider}/backchannel-logout']

/** What a method is called with when `{}` does not do: a path parameter (`{id}`, to read back as the document writes it), a link. */
const ARGUMENTS: Record<string, unknown[]> = {
  endSession: ['{id}'],
  forgetDevice: ['{id}'],
  renamePasskey: ['{id}', 'Laptop'],
  deletePasskey: ['{id}'],
  unlinkIdentity: ['{provider}'],
  createApiKey: [{ name: 'ci' }],
  deleteApiKey: ['{id}'],
  signInWithEmailLink: ['https://app.example.com/sign-in/email#code=123456&email=ada%40example.com']
}

/** The client's own parts, which call no route of their own. */
const NOT_ROUTES = new Set(['onSession', 'token', 'fetch', 'close'])

t.test('every route of the plugin is called by a method of the client', async (t) => {
  const app = await buildDocumentedHost({ openapi: { openapi: '3.0.3', info: { title: 'host', version: '1.0.0' } } })
  t.teardown(async () => { await app.close() })
  const { paths } = app.swagger() as unknown as { paths: Record<string, Record<string, unknown>> }
  const routes = Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map(method => `${method.toUpperCase()} ${path.slice(PREFIX.length)}`))

  const called = new Set<string>()
  const client = createClient({
    baseUrl: 'https://api.example.com',
    fetch: async (input, init) => {
      called.add(`${init?.method ?? 'GET'} ${decodeURIComponent(new URL(String(input)).pathname).slice(PREFIX.length)}`)
      // a token with no claims: enough for a sign-in's answer and a refresh's to be taken
      return Response.json({ success: true, data: { jwt: 'e30.e30.e30', message: '' } })
    }
  })
  t.teardown(() => { client.close() })
  const methods = Object.entries(client).filter(([name, value]) => typeof value === 'function' && !NOT_ROUTES.has(name))
  t.ok(methods.length >= 40, `${methods.length} methods`)
  for (const [name, method] of methods) await (method as (...args: unknown[]) => Promise<unknown>)(...(ARGUMENTS[name] ?? [{}]))

  t.same(NOT_THE_CLIENTS.filter(route => !routes.includes(route)), [], 'the routes named as no client\'s are the plugin\'s')
  t.same([...called].sort(), routes.filter(route => !NOT_THE_CLIENTS.includes(route)).sort(), 'each of the others has a method, and no method calls a route the plugin lacks')
})
