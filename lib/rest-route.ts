import type { FastifyInstance, FastifyRequest } from 'fastify'

export const DEFAULT_PREFIX = '/jwt-login/v1'

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

/**
 * Serves `/?rest_route=<prefix>/…` on the host's `/`: the request is routed
 * again to the plugin's path. Only requests to `/` pay for it; the plugin's
 * own paths never do.
 */
export function registerRestRoute (fastify: FastifyInstance, prefix: string): void {
  fastify.route({
    method: ['GET', 'POST', 'PUT'],
    url: '/',
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
