import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, onRequestHookHandler } from 'fastify'
import { JwtLoginSettingsError } from '../core/errors.js'

export const DEFAULT_PREFIX = '/jwt-login/v1'

/** The prefix without trailing slashes: `''` when the routes sit at the host's root. */
export function trimPrefix (prefix: string): string {
  return prefix.replace(/\/+$/, '')
}

const SECRET_QUERY = /([?&])([^=&]*)=[^&]*/g

/** Request log lines keep the path and the parameter names, never their values (a JWT may be there). */
export function redactedRequest (req: FastifyRequest): { method: string, url: string, remoteAddress: string } {
  return { method: req.method, url: redactedUrl(req.url), remoteAddress: req.ip }
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

/**
 * Every request of the scope logs with the routes' request serializer, the
 * query's values redacted. The routes take it from the scope's
 * `logSerializers`, but Fastify builds the not-found handler's context
 * without them: its `incoming request` line (a wrong method, a trailing
 * slash, a typo, under the prefix or through `?rest_route=`) would log the
 * URL as sent, `?password=` and all. The child logger factory is the one
 * setting that context takes from the scope; the host's own factory still
 * makes the logger.
 */
export function redactRequestLogs (instance: FastifyInstance): void {
  const inherited = instance.childLoggerFactory
  const factory: FastifyInstance['childLoggerFactory'] = function (logger, bindings, childOptions, rawRequest) {
    const redacting = childOptions.serializers?.req === redactedRequest
      ? childOptions
      : { ...childOptions, serializers: { ...childOptions.serializers, req: redactedRequest } }
    return inherited.call(this, logger, bindings, redacting, rawRequest)
  }
  instance.setChildLoggerFactory(factory)
}

/** The URL with every query value replaced by `[redacted]`. */
function redactedUrl (url: string): string {
  return url.replace(SECRET_QUERY, '$1$2=[redacted]')
}

/** The handler of a route that only passes requests on: what it does not pass on is not found. */
const notFound = (_request: FastifyRequest, reply: FastifyReply): void => { reply.callNotFound() }

/** The methods of the routes `/?rest_route=` reaches: taken from the host even when it declared them on `/` already. */
const REST_ROUTE_METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

/** And the browsers' preflights of those routes (the `cors` settings answer them inside the plugin). */
const PREFLIGHT: HTTPMethods = 'OPTIONS'

/**
 * The `onRequest` hook of a second way to the plugin's routes: the path
 * `targetOf` names is routed again, so every hook, gate, limit and answer of
 * the plugin applies unchanged. A request it does not pass on (`null`) goes
 * on to the host's 404 with its query values redacted: the host's 404 logs
 * the URL it is given (`Route GET:/?… not found`).
 */
function forwardHook (fastify: FastifyInstance, targetOf: (url: string) => string | null): onRequestHookHandler {
  return (request, reply, done) => {
    const target = targetOf(request.url)
    if (target === null) {
      request.raw.url = redactedUrl(request.url)
      done()
      return
    }
    request.raw.url = target
    reply.hijack()
    fastify.routing(request.raw, reply.raw)
  }
}

/**
 * A route that is a second way to the plugin's routes, not a route of its
 * own (see forwardHook). Kept out of the OpenAPI document, its log lines
 * redacting the query; HEAD among `methods` when the route takes it.
 */
function forwardingRoute (fastify: FastifyInstance, url: string, methods: HTTPMethods[], targetOf: (url: string) => string | null): void {
  fastify.route({
    method: methods,
    url,
    exposeHeadRoute: false,
    schema: { hide: true } as object,
    logSerializers: { req: redactedRequest },
    onRequest: forwardHook(fastify, targetOf),
    handler: notFound
  })
}

const TURN_OFF = 'to keep your own /, register jwt-login with restRoute: false and pass restRouteRewrite() to Fastify({ rewriteUrl }), which still answers /?rest_route='

const OWN_CORS = 'the cors settings answer the preflights of /?rest_route= on OPTIONS /: to answer them with your own CORS (@fastify/cors), register it before jwt-login and leave cors.enabled off'

/** What a host route on `/` meets, by the kind of method: one the query form serves, the preflight with the plugin's CORS, or another. */
const WHY = {
  served: `restRoute (on by default) serves /?rest_route= on /: ${TURN_OFF}`,
  preflight: OWN_CORS,
  other: 'restRoute (on by default) takes every method on / that the host did not declare before it, so that no request to / reaches a 404 that logs its query: declare it before registering jwt-login to keep it'
}

function restRouteConflict (method: string, url: string, owner: string, kind: keyof typeof WHY = method === PREFLIGHT ? 'preflight' : 'served'): JwtLoginSettingsError {
  const what = url.endsWith('*') ? `${method} ${url} (a wildcard that also answers /)` : `${method} ${url}`
  return new JwtLoginSettingsError('restRoute', `${what} is already declared by ${owner}, and ${WHY[kind]}`, 'option')
}

/**
 * The `restRoute` option: `/?rest_route=` on the host's `/`, refused with a
 * named error when the host has `/` too. A host route declared before the
 * plugin is found by `hasRoute`; one declared after it meets the onRoute hook,
 * which throws from the host's own `fastify.get('/')` (Fastify would otherwise
 * throw its bare duplicate-route error there). With `preflight` (the plugin's
 * CORS is on) `OPTIONS /` is refused to the host the same way. Every other
 * method Fastify routes (HEAD, TRACE, OPTIONS with CORS off...) is served too
 * when the host has not declared it on `/` before, so that no request to `/`
 * reaches the host's 404 with its query values: the plugin's
 * own namespaces answer the envelope, and any other request to `/` goes to the
 * host's 404 with its query redacted.
 */
export function serveRestRoute (fastify: FastifyInstance, namespaces: readonly RestNamespace[], preflight: boolean): void {
  // the route lands on the host's `/`, or on the scope's prefix when the host registered jwt-login in a prefixed scope
  const root = fastify.prefix === '' ? '/' : fastify.prefix
  // a wildcard at the root (a single-page-app fallback, @fastify/static) answers `/` too, and would lose it to this route
  const urls = root === '/' ? ['/', '/*', '*'] : [root]
  const hostHas = (method: string): boolean => urls.some(url => fastify.hasRoute({ method, url }))
  for (const url of urls) {
    for (const method of REST_ROUTE_METHODS) {
      if (fastify.hasRoute({ method, url })) throw restRouteConflict(method, url, 'the host (or another jwt-login instance: give it restRoute: false)')
    }
  }
  // a host that answers OPTIONS on `/` itself (its own CORS) keeps doing so, for the query form too
  const refused = preflight && !hostHas(PREFLIGHT) ? [...REST_ROUTE_METHODS, PREFLIGHT] : REST_ROUTE_METHODS
  const others = (fastify.supportedMethods as HTTPMethods[]).filter(method => !refused.includes(method) && !hostHas(method))
  forwardingRoute(fastify, '/', [...refused, ...others], (url) => rewriteRestRoute(url, namespaces))
  fastify.addHook('onRoute', (route) => {
    if (!urls.includes(route.url)) return
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const taken = methods.find(method => refused.includes(method))
    if (taken !== undefined) throw restRouteConflict(taken, route.url, 'jwt-login')
    // another method on `/` itself (a wildcard of the host's keeps its other paths, and loses `/` quietly, as it would to any route)
    const other = methods.find(method => others.includes(method))
    if (route.url === root && other !== undefined) throw restRouteConflict(other, route.url, 'jwt-login', 'other')
  })
}

/**
 * The `aliases` option: each alias path answers as the prefix does. An
 * encapsulated scope under the alias passes every request on to the prefix's
 * path in its `onRequest` hook: through a route for each method Fastify routes
 * (more specific than a host's wildcard), and through its not-found handler
 * for the methods it does not route (WebDAV's, PURGE...), which Fastify's
 * 404 router still sends to the alias's scope. Its log lines redact the query.
 */
export function serveAliases (fastify: FastifyInstance, prefix: string, aliases: readonly string[]): void {
  const target = trimPrefix(prefix)
  for (const alias of aliases) {
    // the alias and the prefix sit in the same scope: under the host's prefix, when it registered the plugin under one
    const under = fastify.prefix + alias
    fastify.register(async (scope) => {
      redactRequestLogs(scope)
      scope.addHook('onRequest', forwardHook(fastify, (url) => fastify.prefix + target + url.slice(under.length)))
      scope.route({ method: scope.supportedMethods as HTTPMethods[], url: '/*', exposeHeadRoute: false, schema: { hide: true } as object, handler: notFound })
      scope.setNotFoundHandler(notFound)
    }, { prefix: alias })
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
