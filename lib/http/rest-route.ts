import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify'
import { JwtLoginSettingsError } from '../core/errors.js'

export const DEFAULT_PREFIX = '/jwt-login/v1'

/** The prefix without trailing slashes: `''` when the routes sit at the host's root. */
export function trimPrefix (prefix: string): string {
  return prefix.replace(/\/+$/, '')
}

const SECRET_QUERY = /([?&])([^=&]*)=[^&]*/g

/** Request log lines keep the path and the parameter names, never their values (a JWT may be there). */
export function redactedRequest (req: FastifyRequest): { method: string, url: string, remoteAddress: string } {
  return { method: req.method, url: req.url.replace(SECRET_QUERY, '$1$2=[redacted]'), remoteAddress: req.ip }
}

/** The plugin path a WordPress-style `/?rest_route=<prefix>/…` URL names, or `null` for any other URL. */
function rewriteRestRoute (url: string, prefix: string): string | null {
  const queryAt = url.indexOf('?')
  if (queryAt === -1 || (url.slice(0, queryAt) !== '/' && url.slice(0, queryAt) !== '')) return null
  const params = new URLSearchParams(url.slice(queryAt + 1))
  const route = params.get('rest_route')
  if (route === null || !(route === prefix || route.startsWith(`${prefix}/`))) return null
  params.delete('rest_route')
  const rest = params.toString()
  return rest === '' ? route : `${route}?${rest}`
}

/**
 * For hosts that own `/`: pass to `Fastify({ rewriteUrl })` so
 * `/?rest_route=/jwt-login/v1/auth` reaches `/jwt-login/v1/auth`.
 */
export function restRouteRewrite (prefix: string = DEFAULT_PREFIX): (req: { url?: string }) => string {
  return (req) => rewriteRestRoute(req.url ?? '/', prefix) ?? req.url ?? '/'
}

/** The methods of the routes `/?rest_route=` reaches. */
const REST_ROUTE_METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** And the browsers' preflights of those routes (the `cors` settings answer them inside the plugin). */
const PREFLIGHT: HTTPMethods = 'OPTIONS'

/**
 * Serves `/?rest_route=<prefix>/…` on the host's `/`: the request is routed
 * again to the plugin's path. Only requests to `/` pay for it; the plugin's
 * own paths never do.
 */
function registerRestRoute (fastify: FastifyInstance, prefix: string, methods: HTTPMethods[]): void {
  fastify.route({
    method: methods,
    url: '/',
    // the host keeps HEAD /: nothing needs HEAD /?rest_route=
    exposeHeadRoute: false,
    // a second way to the documented routes, not a route of its own: kept out of the OpenAPI document
    schema: { hide: true } as object,
    logSerializers: { req: redactedRequest },
    onRequest: (request, reply, done) => {
      const target = rewriteRestRoute(request.url, prefix)
      if (target === null) {
        done()
        return
      }
      request.raw.url = target
      reply.hijack()
      fastify.routing(request.raw, reply.raw)
    },
    handler: (_request, reply) => {
      reply.callNotFound()
    }
  })
}

const TURN_OFF = 'to keep your own /, register jwt-login with restRoute: false and pass restRouteRewrite() to Fastify({ rewriteUrl }), which still answers /?rest_route='

const OWN_CORS = 'the cors settings answer the preflights of /?rest_route= on OPTIONS /: to answer them with your own CORS (@fastify/cors), register it before jwt-login and leave cors.enabled off'

function restRouteConflict (method: string, url: string, owner: string): JwtLoginSettingsError {
  const what = url.endsWith('*') ? `${method} ${url} (a wildcard that also answers /)` : `${method} ${url}`
  const why = method === PREFLIGHT ? OWN_CORS : `restRoute (on by default) serves /?rest_route= on /: ${TURN_OFF}`
  return new JwtLoginSettingsError('restRoute', `${what} is already declared by ${owner}, and ${why}`, 'option')
}

/**
 * The `restRoute` option: `/?rest_route=` on the host's `/`, refused with a
 * named error when the host has `/` too. A host route declared before the
 * plugin is found by `hasRoute`; one declared after it meets the onRoute hook,
 * which throws from the host's own `fastify.get('/')` (Fastify would otherwise
 * throw its bare duplicate-route error there). With `preflight` (the plugin's
 * CORS is on) `OPTIONS /` is served too, unless the host already answers it.
 */
export function serveRestRoute (fastify: FastifyInstance, prefix: string, preflight: boolean): void {
  // the route lands on the host's `/`, or on the scope's prefix when the host registered jwt-login in a prefixed scope
  const root = fastify.prefix === '' ? '/' : fastify.prefix
  // a wildcard at the root (a single-page-app fallback, @fastify/static) answers `/` too, and would lose it to this route
  const urls = root === '/' ? ['/', '/*', '*'] : [root]
  for (const url of urls) {
    for (const method of REST_ROUTE_METHODS) {
      if (fastify.hasRoute({ method, url })) throw restRouteConflict(method, url, 'the host (or another jwt-login instance: give it restRoute: false)')
    }
  }
  // a host that answers OPTIONS on `/` itself (its own CORS) keeps doing so, for the query form too
  const served = preflight && !urls.some(url => fastify.hasRoute({ method: PREFLIGHT, url })) ? [...REST_ROUTE_METHODS, PREFLIGHT] : REST_ROUTE_METHODS
  registerRestRoute(fastify, prefix, served)
  fastify.addHook('onRoute', (route) => {
    if (!urls.includes(route.url)) return
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const taken = methods.find(method => served.includes(method))
    if (taken !== undefined) throw restRouteConflict(taken, route.url, 'jwt-login')
  })
}
