import fastifyFormbody from '@fastify/formbody'
import fastifyMultipart from '@fastify/multipart'
import fastifyRateLimit from '@fastify/rate-limit'
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyRequest, HTTPMethods, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault, RouteOptions } from 'fastify'
import { registerBrowserSupport } from './browser.js'
import { clientKey } from '../core/client-key.js'
import { setErrorHandling } from './error-handler.js'
import { JwtLoginError } from '../core/errors.js'
import { stateOf } from './gates.js'
import { bodyOf, queryOf, stringField } from './fields.js'
import { inEventScope } from '../services/events.js'
import { mayCarryActor } from '../tokens/jwt.js'
import { describeRoute, type DocOptions } from './openapi.js'
import { storeRateLimitFor } from './rate-limit-store.js'
import { redactRequestLogs } from './rest-route.js'
import type { Settings } from '../config/settings.js'
import type { Messages } from '../i18n/messages.js'
import type { StateStore } from '../store/types.js'

/** The plugin's scope as its routes see it: bodies and queries typed from their TypeBox schemas. */
export type TypedScope = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

export interface ScopeOptions {
  bodyLimit: number
  multipart: boolean
  store: StateStore
  /** Whether unknown paths under the prefix answer the envelope (not with an empty prefix: the host's 404s stay the host's). */
  ownNotFound: boolean
  /** The auth-code parameter names the OpenAPI document shows (the current settings'). */
  authCodeNames: DocOptions['authCodeNames']
  /** The settings at registration (the cors hook reads each request's own). */
  initial: Settings
  /** The instance's texts, and its current settings (whose `locale` a request without the gate's snapshot is answered in). */
  messages: Messages
  settings: () => Settings
}

/**
 * The body readers: JSON (Fastify's), form-encoded, and multipart when the
 * host turns it on. Answers whether a failure came from reading a multipart
 * body: busboy's errors (no boundary, wrong boundary, truncated body) carry
 * no status, so the two hooks around its reader mark the requests inside it.
 */
async function registerBodyReaders (instance: FastifyInstance, options: ScopeOptions): Promise<(request: FastifyRequest) => boolean> {
  await instance.register(fastifyFormbody, { bodyLimit: options.bodyLimit })
  if (!options.multipart) return () => false
  const reading = new WeakSet<FastifyRequest>()
  instance.addHook('preValidation', (request, _reply, done) => { reading.add(request); done() })
  await instance.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { files: 0, fields: 32, fieldSize: options.bodyLimit, fileSize: 0, parts: 32 }
  })
  instance.addHook('preValidation', (request, _reply, done) => { reading.delete(request); done() })
  return (request) => reading.has(request)
}

/**
 * The per-IP request limit, counted in the state store. Every route pays for
 * it unless it says `rateLimit: false` (validate and revoke, which need a
 * signed token, and `/jwks`); the numbers come from the request's settings.
 */
async function registerRequestLimit (instance: FastifyInstance, store: StateStore): Promise<void> {
  await instance.register(fastifyRateLimit, {
    global: true,
    store: storeRateLimitFor(store),
    keyGenerator: (request) => clientKey(request.ip),
    max: (request) => stateOf(request).call.settings.limits.requestsPerIp.max,
    timeWindow: (request) => stateOf(request).call.settings.limits.requestsPerIp.windowMs,
    errorResponseBuilder: (_request, context) => new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)) })
  })
}

/** Deletes the top-level fields of an object body that are `null` or `''`. */
function dropEmptyFields (body: unknown): void {
  if (typeof body !== 'object' || Array.isArray(body)) return
  const fields = body as Record<string, unknown>
  for (const name in fields) {
    if (fields[name] === null || fields[name] === '') Reflect.deleteProperty(fields, name)
  }
}

/** Whether a request may present an impersonation token: the one its gate read, or any the request carries (a route without a token gate may read one itself). */
function mayAct (request: FastifyRequest): boolean {
  const { token } = stateOf(request)
  if (token !== undefined) return mayCarryActor(token)
  return mayCarryActor(request.headers.authorization) || mayCarryActor(stringField(bodyOf(request), 'JWT')) || mayCarryActor(stringField(queryOf(request), 'JWT'))
}

/**
 * Runs a route's handler in its request's event scope (the request's
 * `Call`) when it may present an impersonation token: once that token is
 * admitted, every event the handler emits, after its awaits too, carries the
 * actor. Other requests skip the scope, and pay nothing for it. The gate's
 * `onRequest` hook has set the call on every request of the scope.
 */
function inRequestScope (route: RouteOptions): void {
  const handler = route.handler
  route.handler = function (this: FastifyInstance, request, reply) {
    if (!mayAct(request)) return handler.call(this, request, reply)
    return inEventScope(stateOf(request).call, () => handler.call(this, request, reply))
  }
}

/** Everything of the plugin's encapsulated scope but its routes and gates. */
export async function setUpScope (instance: FastifyInstance, options: ScopeOptions): Promise<void> {
  redactRequestLogs(instance)
  const bodyFault = await registerBodyReaders(instance, options)
  await registerRequestLimit(instance, options.store)
  await registerBrowserSupport(instance, instance.prefix, (request) => stateOf(request).call.settings, options.initial, instance.log)

  instance.addHook('onRoute', (route) => {
    // a bodyLimit in register options is ignored by Fastify: set it on each route
    route.bodyLimit ??= options.bodyLimit
    // each error status is serialised by its schema too, like the answers, and documented
    describeRoute(route, { multipart: options.multipart, authCodeNames: options.authCodeNames })
    inRequestScope(route)
  })
  // no coercion: an array or a number where a string belongs is a 400, not a string
  instance.setValidatorCompiler(TypeBoxValidatorCompiler)
  // a POST without a body (the token in a header) validates as an empty object, and a
  // top-level null or empty string reads as absent, as Simple JWT Login reads it (its
  // SDK types optional fields `string | null` and sends them)
  instance.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined || request.body === null) request.body = {}
    else dropEmptyFields(request.body)
    done()
  })
  setErrorHandling(instance, bodyFault, options.messages, options.settings)

  // unknown paths and methods under the prefix answer the envelope, counted by the per-IP limit
  if (options.ownNotFound) {
    instance.setNotFoundHandler({ preHandler: instance.rateLimit() }, notFound)
    // a path parameter longer than the host's `maxParamLength` would make the router answer
    // Fastify's own 414 outside the envelope; it tries a wildcard instead when there is one,
    // and this one hands the request to the not-found handler (which counts it), as if unrouted
    instance.route({
      method: PARAMETER_METHODS,
      url: '/*',
      schema: { hide: true } as object,
      config: { rateLimit: false },
      handler: (_request, reply) => { reply.callNotFound() },
      // the not-found handler reads no body of an unknown type: nor does this route
      errorHandler: (error: FastifyError, _request, reply) => {
        if (error.code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw error
        reply.callNotFound()
      }
    })
  }
}

async function notFound (): Promise<never> {
  throw new JwtLoginError('ERR_JWT_LOGIN_NOT_FOUND')
}

/** The methods of the plugin's routes with a path parameter (`/sessions/:id`, `/oauth/:provider/…`): those the router could refuse with a 414. */
export const PARAMETER_METHODS: HTTPMethods[] = ['DELETE', 'PATCH', 'POST']
