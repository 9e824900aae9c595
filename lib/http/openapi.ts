import { Type, type TSchema } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import { ErrorEnvelope } from '../../schemas/common.js'
import { CSRF_FIELD, CSRF_HEADER, REFRESH_COOKIE } from './browser.js'
import { errorDefinitions, type JwtLoginErrorCode } from '../core/errors.js'
import { authCodeSetting, gateErrors, type RouteGate } from './gates.js'

/** The name of the security scheme of the routes that take a Bearer token. */
export const BEARER_SCHEME = 'jwtLoginBearer'

/**
 * The document-level parts of jwt-login's OpenAPI description: its tags and
 * its security scheme. The plugin's routes add both to the document
 * themselves (with `@fastify/swagger`); a host spreads them into its own
 * `openapi` options only when its own routes name the scheme too.
 */
export const jwtLoginOpenApi = {
  tags: [
    { name: 'tokens', description: 'Password login, and the validation, refresh and revocation of the tokens it issues.' },
    { name: 'auth', description: 'Sign-in without a password: a one-time code mailed to the address, or the link that carries it.' },
    { name: 'two-factor', description: 'The second step of a sign-in, for users with two-factor authentication on.' },
    { name: 'password-reset', description: 'Two-step password reset by a code sent by email.' },
    { name: 'openid', description: 'Sign-in with the code of a provider (OpenID Connect or plain OAuth 2.0) or the ID token of an OpenID provider.' },
    { name: 'sessions', description: 'A user\'s own sessions and trusted devices: list them, end one, sign out everywhere.' },
    { name: 'passkeys', description: 'A user\'s own passkeys (WebAuthn): enrol one, list, rename and delete them.' },
    { name: 'users', description: 'Registration and deleting one\'s own user, as Simple JWT Login offers them (both off by default).' },
    { name: 'account', description: 'A user\'s own account: verify the email, change the password and the email, enrol and remove the second factor, link and unlink provider accounts.' },
    { name: 'keys', description: 'The public keys that verify the tokens (asymmetric keys only).' }
  ],
  components: {
    securitySchemes: {
      [BEARER_SCHEME]: {
        type: 'http' as const,
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'A token of jwt-login in `Authorization: Bearer <token>` (when `bearer.enabled`); the `JWT` field is the alternative.'
      }
    }
  }
}

/** The texts of one route in the document; spread into its schema. */
export interface RouteDoc {
  tags: string[]
  operationId: string
  summary: string
  description?: string
}

/** What the document needs from the plugin: the body readers and the auth-code parameter names of the current settings. */
export interface DocOptions {
  multipart: boolean
  authCodeNames: () => { parameter: string, oauthParameter: string }
}

/** The errors every route of the plugin may answer: a malformed request, a failed dependency. */
const ALWAYS: JwtLoginErrorCode[] = ['ERR_JWT_LOGIN_BAD_REQUEST', 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE']

/** The error envelope of one status: its `errorCode` values as an enum, each listed with its code and message. */
function errorEnvelope (codes: JwtLoginErrorCode[]): TSchema {
  const sorted = [...codes].sort((a, b) => errorDefinitions[a].errorCode - errorDefinitions[b].errorCode)
  const numbers = [...new Set(sorted.map(code => errorDefinitions[code].errorCode))]
  const lines = sorted.map(code => `- \`${errorDefinitions[code].errorCode}\` ${code}: ${errorDefinitions[code].message}`)
  return ErrorEnvelope(numbers, lines.join('\n'))
}

/** One response schema per status the codes answer with, from the one error table. */
function errorResponses (codes: Iterable<JwtLoginErrorCode>): Record<number, TSchema> {
  const byStatus = new Map<number, JwtLoginErrorCode[]>()
  for (const code of new Set(codes)) {
    const status = errorDefinitions[code].statusCode
    byStatus.set(status, [...byStatus.get(status) ?? [], code])
  }
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, errorEnvelope(list)]))
}

/**
 * A route's errors: its gate's, its flow's, the per-IP limit's unless it
 * skips it, and the ones every route has. A route without a gate (`/jwks`:
 * no input, no store) answers none.
 */
function routeErrors (gate: RouteGate | undefined, rateLimited: boolean): JwtLoginErrorCode[] {
  if (gate === undefined) return []
  const limit: JwtLoginErrorCode[] = rateLimited ? ['ERR_JWT_LOGIN_RATE_LIMITED'] : []
  return [...ALWAYS, ...limit, ...gateErrors(gate), ...gate.errors ?? []]
}

const FORM_TYPES = ['application/json', 'application/x-www-form-urlencoded']

type Properties = Record<string, TSchema>
type Schema = Record<string, unknown>

/** `base` (an object schema, or nothing) with `extra` properties added; only for the document, never validated. */
function withProperties (base: unknown, extra: Properties): Schema {
  const schema = (base ?? { type: 'object' }) as Schema
  return { ...schema, properties: { ...schema.properties as Properties, ...extra } }
}

/** The fields a gate reads that the route's own schema does not name: the auth code, a token in the query. */
function addGateFields (schema: Schema, gate: RouteGate, docs: DocOptions): void {
  const body: Properties = {}
  const query: Properties = {}
  if (gate.authCode !== undefined) {
    const names = docs.authCodeNames()
    const name = gate.authCode === 'oauth' ? names.oauthParameter : names.parameter
    const field = Type.String({ maxLength: 4096, description: `The auth code; required when \`${authCodeSetting(gate.authCode)}\` is on.` })
    if (gate.authCodeFrom !== 'query') body[name] = field
    if (gate.authCodeFrom !== 'body') query[name] = field
  }
  if (gate.token !== undefined) {
    query.JWT = Type.String({ maxLength: 4096, description: 'The token, when neither the body nor the Authorization header carries it. Avoid: a URL ends up in logs.' })
  }
  if (gate.refreshCookie === 'reads' || gate.refreshCookie === 'ends') {
    // the X-CSRF-Token header is described with the field: @fastify/swagger documents header parameters only from a headers schema, which would also validate them
    body[CSRF_FIELD] = Type.String({ maxLength: 4096, description: `Cookie mode (\`refresh.cookie.enabled\`): the session's CSRF token, here or in the \`${CSRF_HEADER}\` header, when the \`${REFRESH_COOKIE}\` cookie is the credential.` })
  }
  if (schema.body !== undefined) schema.body = withProperties(schema.body, body)
  if (Object.keys(query).length > 0) schema.querystring = withProperties(schema.querystring, query)
}

interface OpenApiDocument {
  tags?: Array<{ name: string }>
  components: { securitySchemes?: Record<string, unknown> }
  paths: Record<string, Record<string, Operation>>
}
interface Operation { operationId?: string, requestBody?: { required?: boolean } }

/**
 * A route that takes a token takes it from the Bearer header too, and the
 * scope reads a missing body as `{}`: the body is optional unless its schema
 * requires a field of its own (a passkey's `credential` or `name`).
 */
function bodyOptional (body: Schema): boolean {
  return !Array.isArray(body.required) || body.required.length === 0
}

/**
 * The body Swagger UI prefills, never a token: without an example it would
 * build one from the properties, `"JWT": "string"` included, which sent beside
 * the header is two different tokens (400 / 203). The schema's own example, or
 * `{}`; Swagger 2 names it `example`, OpenAPI 3 takes JSON Schema's `examples`.
 */
function withExample (body: Schema, openapi: boolean): Schema {
  const { examples, ...rest } = body
  const example = Array.isArray(examples) ? examples[0] as unknown : {}
  return openapi ? { ...rest, examples: [example] } : { ...rest, example }
}

/** Per document being built, the operationIds whose body is still to be marked optional. */
const pendingBodies = new WeakMap<OpenApiDocument, Set<string>>()

/** Marks the pending operations of `paths` optional; answers whether some are still missing. */
function relaxBodies (paths: OpenApiDocument['paths'], pending: Set<string>): boolean {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const body = operation.requestBody
      if (body !== undefined && pending.delete(String(operation.operationId))) body.required = false
    }
  }
  return pending.size > 0
}

/**
 * Marks the operation's request body optional. @fastify/swagger 9 writes
 * `requestBody.required: true` for every route with a body schema and lets a
 * route say nothing else; and the operation only joins the document after
 * this transform returns. So `paths` becomes, while operations are pending,
 * an accessor that marks them whenever it is read: the next route's
 * transform, and whoever reads the finished document (its JSON, its YAML, a
 * host's `transformObject`) all read it. Once none is pending it is a plain
 * property again.
 */
function markBodyOptional (document: OpenApiDocument, operationId: string): void {
  const known = pendingBodies.get(document)
  if (known !== undefined) {
    known.add(operationId)
    return
  }
  const pending = new Set([operationId])
  pendingBodies.set(document, pending)
  let paths = document.paths
  const settle = (): void => {
    pendingBodies.delete(document)
    Object.defineProperty(document, 'paths', { value: paths, writable: true, enumerable: true, configurable: true })
  }
  Object.defineProperty(document, 'paths', {
    enumerable: true,
    configurable: true,
    get: () => {
      if (!relaxBodies(paths, pending)) settle()
      return paths
    },
    set: (value: OpenApiDocument['paths']) => { paths = value }
  })
}

/** Adds the plugin's tags and security scheme to the document, keeping what the host declared. */
function addDocumentParts (document: OpenApiDocument): void {
  const schemes = document.components.securitySchemes ?? {}
  if (!Object.hasOwn(schemes, BEARER_SCHEME)) {
    document.components.securitySchemes = { ...schemes, ...jwtLoginOpenApi.components.securitySchemes }
  }
  const tags = document.tags ?? []
  const missing = jwtLoginOpenApi.tags.filter(tag => !tags.some(known => known.name === tag.name))
  if (missing.length > 0) document.tags = [...tags, ...missing]
}

/**
 * The route's schema as the document shows it: content types, the gate's
 * fields, and on a route that takes a token the Bearer scheme, a body
 * example without the token and the body optional when the header suffices.
 */
function documented (input: { schema: Schema, openapiObject?: OpenApiDocument }, gate: RouteGate | undefined, docs: DocOptions): { schema: Schema } {
  const schema = { ...input.schema }
  const document = input.openapiObject
  if (schema.body !== undefined) schema.consumes = docs.multipart ? [...FORM_TYPES, 'multipart/form-data'] : FORM_TYPES
  if (gate !== undefined) addGateFields(schema, gate, docs)
  const body = schema.body as Schema | undefined
  // a body that gives its own example has it in the form of the document (Swagger 2 or OpenAPI 3)
  if (body !== undefined && (gate?.token !== undefined || Array.isArray(body.examples))) schema.body = withExample(body, document !== undefined)
  // only an OpenAPI 3 document gets the scheme (Swagger 2 names it elsewhere) and
  // needs the body marked optional (a Swagger 2 body parameter is optional already)
  if (document !== undefined) {
    addDocumentParts(document)
    if (gate?.token !== undefined) {
      schema.security = [{ [BEARER_SCHEME]: [] }, {}]
      if (body !== undefined && bodyOptional(body)) markBodyOptional(document, schema.operationId as string)
    }
  }
  return { schema }
}

/**
 * Called for each route of the plugin's scope: its error responses (one per
 * status, serialised by their schema like the answers) join its schema, and
 * a `swaggerTransform` of its config (read by `@fastify/swagger` only)
 * describes what its gate reads. Without `@fastify/swagger` the transform is
 * never called.
 */
export function describeRoute (route: RouteOptions, docs: DocOptions): void {
  const gate = route.config?.jwtLogin
  const errors = errorResponses(routeErrors(gate, route.config?.rateLimit !== false))
  route.schema = { ...route.schema, response: { ...errors, ...route.schema?.response as object } }
  const swaggerTransform = (input: { schema: Schema, openapiObject?: OpenApiDocument }): { schema: Schema } => documented(input, gate, docs)
  route.config = { ...route.config, swaggerTransform } as unknown as RouteOptions['config']
}
