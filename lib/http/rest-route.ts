import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
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

/**
 * One namespace the query form answers: `rest_route` values starting with
 * `route` reach the plugin's routes under `target` (the prefix).
 */
export interface RestNamespace {
  route: string
  target: string
}

/** WordPress serves its REST API under `/wp-json`, and the query form names the route without it. */
const WP_JSON = '/wp-json'

/**
 * The namespaces of the query form: the prefix itself, and each alias, an
 * alias under `/wp-json/` by its route without `/wp-json` (as WordPress
 * names it: `/?rest_route=/simple-jwt-login/v1/auth`).
 */
export function restNamespaces (prefix: string, aliases: readonly string[] = []): RestNamespace[] {
  const target = trimPrefix(prefix)
  const routeOf = (alias: string): string => alias.startsWith(`${WP_JSON}/`) ? alias.slice(WP_JSON.length) : alias
  return [{ route: target, target }, ...aliases.map(alias => ({ route: routeOf(alias), target }))]
}

/** The plugin path a WordPress-style `/?rest_route=<namespace>/…` URL names, or `null` for any other URL. */
function rewriteRestRoute (url: string, namespaces: readonly RestNamespace[]): string | null {
  const queryAt = url.indexOf('?')
  if (queryAt === -1 || (url.slice(0, queryAt) !== '/' && url.slice(0, queryAt) !== '')) return null
  const params = new URLSearchParams(url.slice(queryAt + 1))
  const route = params.get('rest_route')
  if (route === null) return null
  const namespace = namespaces.find(({ route: name }) => route === name || route.startsWith(`${name}/`))
  if (namespace === undefined) return null
  params.delete('rest_route')
  const path = namespace.target + route.slice(namespace.route.length)
  const rest = params.toString()
  return rest === '' ? path : `${path}?${rest}`
}

/**
 * For hosts that own `/`: pass to `Fastify({ rewriteUrl })` so
 * `/?rest_route=/jwt-login/v1/auth` reaches `/jwt-login/v1/auth` (and, with
 * `aliases`, `/?rest_route=/simple-jwt-login/v1/auth` too).
 */
export function restRouteRewrite (prefix: string = DEFAULT_PREFIX, aliases: readonly string[] = []): (req: { url?: string }) => string {
  const namespaces = restNamespaces(prefix, aliases)
  return (req) => rewriteRestRoute(req.url ?? '/', namespaces) ?? req.url ?? '/'
}

/** The handler of a route that only passes requests on: what it does not pass on is not found. */
const notFound = (_request: FastifyRequest, reply: FastifyReply): void => { reply.callNotFound() }

/** The methods of the routes `/?rest_route=` reaches. */
const REST_ROUTE_METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** And the browsers' preflights of those routes (the `cors` settings answer them inside the plugin). */
const PREFLIGHT: HTTPMethods = 'OPTIONS'

/**
 * A route that is a second way to the plugin's routes, not a route of its
 * own: the path `targetOf` names (or `null`: not found) is routed again, so
 * every hook, gate, limit and answer of the plugin applies unchanged. Kept
 * out of the OpenAPI document, without HEAD (the host keeps HEAD; nothing
 * needs it), its log lines redacting the query.
 */
function forwardingRoute (fastify: FastifyInstance, url: string, methods: HTTPMethods[], targetOf: (url: string) => string | null): void {
  fastify.route({
    method: methods,
    url,
    exposeHeadRoute: false,
    schema: { hide: true } as object,
    logSerializers: { req: redactedRequest },
    onRequest: (request, reply, done) => {
      const target = targetOf(request.url)
      if (target === null) {
        done()
        return
      }
      request.raw.url = target
      reply.hijack()
      fastify.routing(request.raw, reply.raw)
    },
    handler: notFound
  })
}

/**
 * Serves `/?rest_route=<prefix>/…` on the host's `/`. Only requests to `/`
 * pay for it; the plugin's own paths never do.
 */
function registerRestRoute (fastify: FastifyInstance, namespaces: readonly RestNamespace[], methods: HTTPMethods[]): void {
  forwardingRoute(fastify, '/', methods, (url) => rewriteRestRoute(url, namespaces))
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
export function serveRestRoute (fastify: FastifyInstance, namespaces: readonly RestNamespace[], preflight: boolean): void {
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
  registerRestRoute(fastify, namespaces, served)
  fastify.addHook('onRoute', (route) => {
    if (!urls.includes(route.url)) return
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const taken = methods.find(method => served.includes(method))
    if (taken !== undefined) throw restRouteConflict(taken, route.url, 'jwt-login')
  })
}

/**
 * The `aliases` option: each alias path answers as the prefix does (a
 * forwarding route to the prefix's path).
 */
export function serveAliases (fastify: FastifyInstance, prefix: string, aliases: readonly string[], preflight: boolean): void {
  const target = trimPrefix(prefix)
  const methods = preflight ? [...REST_ROUTE_METHODS, PREFLIGHT] : REST_ROUTE_METHODS
  for (const alias of aliases) {
    // the alias and the prefix sit in the same scope: under the host's prefix, when it registered jwt-login under one
    forwardingRoute(fastify, `${alias}/*`, methods, (url) => fastify.prefix + target + url.slice(fastify.prefix.length + alias.length))
  }
}

/** An alias: a path of its own (not the prefix, not `/`), without a trailing slash, a query or route syntax. */
export function checkAliases (aliases: unknown, prefix: string): string[] {
  if (aliases === undefined) return []
  if (!Array.isArray(aliases)) throw new JwtLoginSettingsError('aliases', "must be an array of paths, such as ['/wp-json/simple-jwt-login/v1']", 'option')
  const seen = new Set<string>([trimPrefix(prefix)])
  return aliases.map((alias: unknown, index) => {
    if (typeof alias !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(alias)) {
      throw new JwtLoginSettingsError(`aliases/${index}`, 'must be a path such as /wp-json/simple-jwt-login/v1: segments of letters, digits, ".", "_", "~" or "-", no trailing slash, query or route parameter', 'option')
    }
    if (seen.has(alias)) throw new JwtLoginSettingsError(`aliases/${index}`, 'is the prefix or another alias', 'option')
    seen.add(alias)
    return alias
  })
}
