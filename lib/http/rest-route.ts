import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, onRequestHookHandler } from 'fastify'
import { JwtLoginSettingsError } from '../core/errors.js'
import { aliasRest, aliasRoute, anyCasePaths, INDEX_PHP, routeCase, routerKey, skipSegments, untrailed, type RouteShapes } from './alias-forms.js'

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
 * `route` reach the plugin's routes under `target` (the prefix). The
 * prefix's own namespace matches exactly; an alias's (`alias` set) in any
 * letter case and with trailing slashes, as WordPress matches a REST route.
 */
export interface RestNamespace {
  route: string
  target: string
  alias?: string
}

/**
 * The namespaces of the query form: the prefix itself, and each alias, an
 * alias under `/wp-json/` by its route without `/wp-json` (as WordPress
 * names it: `/?rest_route=/simple-jwt-login/v1/auth`).
 */
export function restNamespaces (prefix: string, aliases: readonly string[] = []): RestNamespace[] {
  const target = trimPrefix(prefix)
  return [{ route: target, target }, ...aliases.map(alias => ({ route: aliasRoute(alias), target, alias }))]
}

/** Whether the `rest_route` value names a route of the namespace: under the prefix exactly, under an alias in any case. */
function names ({ route: name, alias }: RestNamespace, route: string): boolean {
  const [own, sent] = alias === undefined ? [name, route] : [name.toLowerCase(), route.toLowerCase()]
  return sent === own || sent.startsWith(`${own}/`)
}

/**
 * The path a WordPress-style `<door>?rest_route=<namespace>/…` URL names
 * (`toPath` makes it from the namespace and the rest of the route), the
 * other parameters after it; `null` for any other URL.
 */
function rewriteRestRoute (url: string, doors: readonly string[], namespaces: readonly RestNamespace[], toPath: (namespace: RestNamespace, rest: string) => string): string | null {
  const queryAt = url.indexOf('?')
  if (queryAt === -1 || !doors.includes(url.slice(0, queryAt))) return null
  const params = new URLSearchParams(url.slice(queryAt + 1))
  const route = params.get('rest_route')
  if (route === null) return null
  const namespace = namespaces.find(namespace => names(namespace, route))
  if (namespace === undefined) return null
  params.delete('rest_route')
  const path = toPath(namespace, route.slice(namespace.route.length))
  const rest = params.toString()
  return rest === '' ? path : `${path}?${rest}`
}

/**
 * For hosts that own `/`: pass to `Fastify({ rewriteUrl })` so
 * `/?rest_route=/jwt-login/v1/auth` and `/index.php?rest_route=/jwt-login/v1/auth`
 * reach `/jwt-login/v1/auth`. With `aliases` (the same as the plugin's), an
 * alias's query form answers too, in any letter case and with trailing
 * slashes: a route with an uppercase letter or a trailing slash reaches the
 * alias's path, which finds the route's case.
 */
export function restRouteRewrite (prefix: string = DEFAULT_PREFIX, aliases: readonly string[] = []): (req: { url?: string }) => string {
  const namespaces = restNamespaces(prefix, aliases)
  // a route in the plugin's case reaches the prefix; another the alias's path, which finds the route's case
  const toPath = ({ target, alias }: RestNamespace, rest: string): string => alias === undefined || rest === untrailed(rest).toLowerCase() ? target + rest : alias + rest
  return (req) => rewriteRestRoute(req.url ?? '/', ['/', '', INDEX_PHP], namespaces, toPath) ?? req.url ?? '/'
}

/**
 * Every request of the scope logs with the routes' request serializer, the
 * query's values redacted. The routes take it from the scope's
 * `logSerializers`, but Fastify builds the not-found handler's context
 * without them: its `incoming request` line (a wrong method, a trailing
 * slash, a typo, under the prefix or through `?rest_route=`) would log the
 * URL as sent, `?password=` and all. The child logger factory is the one
 * setting that context takes from the scope; the host's own factory still
 * makes the logger. The plugin's routes, which have the serializer, keep
 * the host's factory.
 */
export function redactRequestLogs (instance: FastifyInstance): void {
  const inherited = instance.childLoggerFactory
  const factory: FastifyInstance['childLoggerFactory'] = function (logger, bindings, childOptions, rawRequest) {
    // only requests without the plugin's serializer come here (its routes keep the host's factory)
    const redacting = { ...childOptions, serializers: { ...childOptions.serializers, req: redactedRequest } }
    return inherited.call(this, logger, bindings, redacting, rawRequest)
  }
  instance.setChildLoggerFactory(factory)
  // a route that has the serializer already (the plugin's, from the scope's
  // logSerializers) keeps the host's factory: without a logger Fastify then
  // makes no child logger for its requests at all
  instance.addHook('onRoute', (route) => {
    if ((route.logSerializers as Record<string, unknown> | undefined)?.req === redactedRequest) route.childLoggerFactory ??= inherited
  })
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

/** What a host route on a door of the query form (`/`, `/index.php`) meets, by the kind of method: one the query form serves, the preflight with the plugin's CORS, or another. */
const WHY = {
  served: (door: string) => `restRoute (on by default) serves ${door}?rest_route= on ${door}: to keep your own ${door}, register jwt-login with restRoute: false and pass restRouteRewrite() to Fastify({ rewriteUrl }), which still answers ${door}?rest_route=`,
  preflight: (door: string) => `the cors settings answer the preflights of ${door}?rest_route= on OPTIONS ${door}: to answer them with your own CORS (@fastify/cors), register it before jwt-login and leave cors.enabled off`,
  other: (door: string) => `restRoute (on by default) takes every method on ${door} that the host did not declare before it, so that no request to ${door} reaches a 404 that logs its query: declare it before registering jwt-login to keep it`
}

function restRouteConflict (door: string, method: string, url: string, owner: string, kind: keyof typeof WHY = method === PREFLIGHT ? 'preflight' : 'served'): JwtLoginSettingsError {
  const what = url.endsWith('*') ? `${method} ${url} (a wildcard that also answers /)` : `${method} ${url}`
  return new JwtLoginSettingsError('restRoute', `${what} is already declared by ${owner}, and ${WHY[kind](door)}`, 'option')
}

/** One door of the query form: the route's `url` in the scope (what its messages call it), and the host URLs that would answer it too. */
interface Door {
  url: string
  urls: string[]
}

/**
 * A door of the query form on the host: refused with a named error when the
 * host has its URL too (see serveRestRoute), then served for every method.
 */
function serveDoor (fastify: FastifyInstance, door: Door, preflight: boolean, targetOf: (url: string) => string | null): void {
  const { url: name, urls } = door
  const hostHas = (method: string): boolean => urls.some(url => fastify.hasRoute({ method, url }))
  for (const url of urls) {
    for (const method of REST_ROUTE_METHODS) {
      if (fastify.hasRoute({ method, url })) throw restRouteConflict(name, method, url, 'the host (or another jwt-login instance: give it restRoute: false)')
    }
  }
  // a host that answers OPTIONS on the door itself (its own CORS) keeps doing so, for the query form too
  const refused = preflight && !hostHas(PREFLIGHT) ? [...REST_ROUTE_METHODS, PREFLIGHT] : REST_ROUTE_METHODS
  const others = (fastify.supportedMethods as HTTPMethods[]).filter(method => !refused.includes(method) && !hostHas(method))
  forwardingRoute(fastify, name, [...refused, ...others], targetOf)
  const own = urls[0]
  fastify.addHook('onRoute', (route) => {
    if (!urls.includes(route.url)) return
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const taken = methods.find(method => refused.includes(method))
    if (taken !== undefined) throw restRouteConflict(name, taken, route.url, 'jwt-login')
    // another method on the door itself (a wildcard of the host's keeps its other paths, and loses `/` quietly, as it would to any route)
    const other = methods.find(method => others.includes(method))
    if (route.url === own && other !== undefined) throw restRouteConflict(name, other, route.url, 'jwt-login', 'other')
  })
}

/**
 * The `restRoute` option: `/?rest_route=` on the host's `/`, and
 * `/index.php?rest_route=` on `/index.php` (what WordPress's `rest_url()`
 * gives on a site without pretty permalinks), each refused with a named error
 * when the host has that path too. A host route declared before the
 * plugin is found by `hasRoute`; one declared after it meets the onRoute hook,
 * which throws from the host's own `fastify.get('/')` (Fastify would otherwise
 * throw its bare duplicate-route error there). With `preflight` (the plugin's
 * CORS is on) `OPTIONS` is refused to the host the same way. Every other
 * method Fastify routes (HEAD, TRACE, OPTIONS with CORS off...) is served too
 * when the host has not declared it on the path before, so that no request to
 * it reaches the host's 404 with its query values: the plugin's own
 * namespaces answer the envelope (an alias's in any letter case, with
 * trailing slashes, reaching the route `shapes` names), and any other request
 * goes to the host's 404 with its query redacted.
 */
export function serveRestRoute (fastify: FastifyInstance, namespaces: readonly RestNamespace[], preflight: boolean, shapes: RouteShapes): void {
  // the routes land on the host's `/`, or on the scope's prefix when the host registered jwt-login in a prefixed scope
  const scope = fastify.prefix
  const root = scope === '' ? '/' : scope
  const index = `${scope}${INDEX_PHP}`
  const doors = root === '/' ? ['/', index] : [root, `${root}/`, index]
  const toPath = ({ target, alias }: RestNamespace, rest: string): string => scope + target + (alias === undefined ? rest : routeCase(untrailed(rest), shapes))
  const targetOf = (url: string): string | null => rewriteRestRoute(url, doors, namespaces, toPath)
  // a wildcard at the root (a single-page-app fallback, @fastify/static) answers `/` too, and would lose it to this route
  serveDoor(fastify, { url: '/', urls: root === '/' ? ['/', '/*', '*'] : [root] }, preflight, targetOf)
  serveDoor(fastify, { url: INDEX_PHP, urls: [index] }, preflight, targetOf)
}

/**
 * The `aliases` option: each alias path answers as the prefix does, as
 * WordPress answers its REST routes: the alias's route in any letter case,
 * with trailing slashes, and an alias under `/wp-json/` under
 * `/index.php/wp-json/` too (`/wp-json` itself exact, as WordPress's rewrite
 * rules match it). An encapsulated scope under each form passes every request
 * on to the prefix's path, in the case of the plugin's route (`shapes`), in
 * its `onRequest` hook: through a route for each method Fastify routes (more
 * specific than a host's wildcard), and through its not-found handler for the
 * methods it does not route (WebDAV's, PURGE...), which Fastify's 404 router
 * still sends to the alias's scope. Its log lines redact the query.
 */
export function serveAliases (fastify: FastifyInstance, prefix: string, aliases: readonly string[], shapes: RouteShapes): void {
  const target = fastify.prefix + trimPrefix(prefix)
  for (const alias of aliases) {
    for (const path of anyCasePaths(alias)) {
      // the alias and the prefix sit in the same scope: under the host's prefix, when it registered the plugin under one
      const skip = skipSegments((fastify.prefix + path).split('/').length - 1)
      fastify.register(async (scope) => {
        redactRequestLogs(scope)
        scope.addHook('onRequest', forwardHook(fastify, (url) => target + aliasRest(url, skip, shapes)))
        scope.route({ method: scope.supportedMethods as HTTPMethods[], url: '/*', exposeHeadRoute: false, schema: { hide: true } as object, handler: notFound })
        scope.setNotFoundHandler(notFound)
      }, { prefix: path })
    }
  }
}

/**
 * An alias: a path of its own (not the prefix, not `/`, not another alias,
 * letter case aside, since an alias answers in any case), without a trailing
 * slash, a query or route syntax. Two aliases whose letters alone differ,
 * where the other characters sit at the same places (`/wp-json/abc/v1`,
 * `/wp-json/xyz/v1`), are one route to Fastify's router in every case: refused too.
 */
export function checkAliases (aliases: unknown, prefix: string): string[] {
  if (aliases === undefined) return []
  if (!Array.isArray(aliases)) throw new JwtLoginSettingsError('aliases', "must be an array of paths, such as ['/wp-json/simple-jwt-login/v1']", 'option')
  const seen = new Set<string>([trimPrefix(prefix).toLowerCase()])
  const routes = new Map<string, number>()
  return aliases.map((alias: unknown, index) => {
    if (typeof alias !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(alias)) {
      throw new JwtLoginSettingsError(`aliases/${index}`, 'must be a path such as /wp-json/simple-jwt-login/v1: segments of letters, digits, ".", "_", "~" or "-", no trailing slash, query or route parameter', 'option')
    }
    const key = alias.toLowerCase()
    if (seen.has(key)) throw new JwtLoginSettingsError(`aliases/${index}`, 'is the prefix or another alias (in any letter case: an alias answers in every case)', 'option')
    seen.add(key)
    for (const path of anyCasePaths(alias)) {
      const route = routerKey(path)
      const other = routes.get(route)
      if (other !== undefined) {
        throw new JwtLoginSettingsError(`aliases/${index}`, `differs from aliases/${other} in its letters only: answering both in every letter case, Fastify's router cannot tell them apart (${route}, a run of letters as "()"); keep one of them`, 'option')
      }
      routes.set(route, index)
    }
    return alias
  })
}
