import fastifySwagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import Fastify, { type FastifyInstance, type HTTPMethods, type RouteOptions } from 'fastify'
import t from 'tap'
import jwtLogin, { BEARER_SCHEME, errorDefinitions, jwtLoginOpenApi, type JwtLoginErrorCode } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/app.js'
import { buildDocumentedHost } from '../helpers/openapi.js'
import { describeRoute } from '../../lib/http/openapi.js'
import { PARAMETER_METHODS } from '../../lib/http/scope.js'

type Spec = Parameters<Validator['validate']>[0]

const PREFIX = '/jwt-login/v1'
const OPENAPI = { openapi: { openapi: '3.0.3', info: { title: 'host', version: '1.0.0' } } }

interface Operation {
  operationId?: string
  tags?: string[]
  summary?: string
  security?: Array<Record<string, string[]>>
  parameters?: Array<{ in: string, name: string }>
  requestBody?: { required?: boolean, content: Record<string, { example?: unknown, schema: { properties?: Record<string, unknown> } }> }
  responses: Record<string, Response>
}
interface Response { description: string, content?: { 'application/json': { schema: ErrorSchema } } }
interface ErrorSchema { properties: { data: { properties: { errorCode?: { enum?: number[] } } } } }
interface Document {
  paths: Record<string, Record<string, Operation>>
  tags?: Array<{ name: string, description?: string }>
  components: { securitySchemes?: Record<string, unknown> }
}

/** The routes the plugin declares, seen through the host's own onRoute hook (HEAD routes left out). */
async function documentedHost (options: Parameters<typeof buildDocumentedHost>[1] = {}): Promise<{ app: FastifyInstance, doc: Document, routes: RouteOptions[] }> {
  const routes: RouteOptions[] = []
  const app = await buildDocumentedHost(OPENAPI, options, (host) => {
    host.addHook('onRoute', (route) => { if (route.method !== 'HEAD') routes.push(route) })
  })
  return { app, doc: app.swagger() as unknown as Document, routes }
}

function operation (doc: Document, route: RouteOptions): Operation | undefined {
  // the document writes a path parameter `{id}`, the router `:id`
  return doc.paths[route.url.replace(/:([A-Za-z]+)/g, '{$1}')]?.[String(route.method).toLowerCase()]
}

function errorEnum (op: Operation, status: string): number[] {
  return op.responses[status]?.content?.['application/json'].schema.properties.data.properties.errorCode?.enum ?? []
}

t.test('the document is valid OpenAPI 3 and has every route of the plugin, and not the ?rest_route= catch-all', async (t) => {
  const { app, doc, routes } = await documentedHost()
  t.teardown(() => app.close())
  const validator = new Validator()
  const result = await validator.validate(doc as unknown as Spec)
  t.same(result.errors, undefined, 'no schema errors')
  t.ok(result.valid)

  const hidden = (route: RouteOptions): boolean => (route.schema as { hide?: boolean } | undefined)?.hide === true
  const plugin = routes.filter(route => route.url.startsWith(PREFIX) && !hidden(route))
  // the routes of ids longer than the host's maxParamLength, and of the rest: the same answers, out of the document
  t.same(routes.filter(route => route.url.startsWith(PREFIX) && hidden(route)).map(r => `${String(r.method)} ${r.url}`).sort(), [
    'DELETE /jwt-login/v1/passkeys/*', 'DELETE,PATCH,POST /jwt-login/v1/*', 'PATCH /jwt-login/v1/passkeys/*'
  ])
  t.notOk(Object.keys(doc.paths).some(path => path.includes('*')), 'no wildcard in the document')
  // every route with a path parameter has a method the catch-all takes (so a too-long parameter answers the envelope, not a 414)
  t.ok(plugin.filter(route => route.url.includes(':')).every(route => PARAMETER_METHODS.includes(route.method as HTTPMethods)))
  t.same(plugin.map(r => `${String(r.method)} ${r.url}`).sort(), [
    'DELETE /jwt-login/v1/account/2fa', 'DELETE /jwt-login/v1/account/api-keys/:id', 'DELETE /jwt-login/v1/account/identities/:provider',
    'DELETE /jwt-login/v1/devices/:id', 'DELETE /jwt-login/v1/passkeys/:id', 'DELETE /jwt-login/v1/sessions', 'DELETE /jwt-login/v1/sessions/:id', 'DELETE /jwt-login/v1/users',
    'GET /jwt-login/v1/account', 'GET /jwt-login/v1/account/api-keys', 'GET /jwt-login/v1/account/identities',
    'GET /jwt-login/v1/auth/validate', 'GET /jwt-login/v1/jwks', 'GET /jwt-login/v1/oauth/nonce', 'GET /jwt-login/v1/oauth/token', 'GET /jwt-login/v1/passkeys', 'GET /jwt-login/v1/sessions',
    'PATCH /jwt-login/v1/passkeys/:id',
    'POST /jwt-login/v1/account/2fa/backup-codes', 'POST /jwt-login/v1/account/2fa/totp', 'POST /jwt-login/v1/account/2fa/totp/confirm',
    'POST /jwt-login/v1/account/api-keys', 'POST /jwt-login/v1/account/email', 'POST /jwt-login/v1/account/email/confirm', 'POST /jwt-login/v1/account/email/revert',
    'POST /jwt-login/v1/account/email/verification', 'POST /jwt-login/v1/account/email/verify', 'POST /jwt-login/v1/account/identities',
    'POST /jwt-login/v1/auth', 'POST /jwt-login/v1/auth/2fa', 'POST /jwt-login/v1/auth/2fa/passkey/options', 'POST /jwt-login/v1/auth/email', 'POST /jwt-login/v1/auth/email/verify', 'POST /jwt-login/v1/auth/passkey', 'POST /jwt-login/v1/auth/passkey/options',
    'POST /jwt-login/v1/auth/refresh', 'POST /jwt-login/v1/auth/revoke', 'POST /jwt-login/v1/auth/step-up', 'POST /jwt-login/v1/auth/step-up/options',
    'POST /jwt-login/v1/auth/validate', 'POST /jwt-login/v1/oauth/:provider/backchannel-logout', 'POST /jwt-login/v1/oauth/token',
    'POST /jwt-login/v1/passkeys/register', 'POST /jwt-login/v1/passkeys/register/options',
    'POST /jwt-login/v1/user/reset_password', 'POST /jwt-login/v1/users',
    'PUT /jwt-login/v1/account/2fa', 'PUT /jwt-login/v1/account/password', 'PUT /jwt-login/v1/user/reset_password'
  ])
  const operationIds = new Set<string>()
  for (const route of plugin) {
    const op = operation(doc, route)
    t.ok(op, `${String(route.method)} ${route.url} is documented`)
    if (op === undefined) continue
    t.equal(op.tags?.length, 1, 'one tag')
    t.ok(jwtLoginOpenApi.tags.some(tag => tag.name === op.tags?.[0]), 'a tag of the plugin')
    t.type(op.summary, 'string')
    t.type(op.operationId, 'string')
    operationIds.add(op.operationId as string)
    t.same(Object.keys(op.responses).sort(), Object.keys(route.schema?.response as object).sort(), 'every status the route answers, with its body')
  }
  t.equal(operationIds.size, plugin.length, 'operationIds are unique')
  t.ok(routes.some(route => route.url === '/'), 'the catch-all is a route of the host')
  t.notOk(Object.hasOwn(doc.paths, '/'), 'but not in the document')
  t.same(doc.tags?.map(tag => tag.name), jwtLoginOpenApi.tags.map(tag => tag.name), 'the tags with their descriptions')
})

t.test('every error the routes can answer is in the document, with its status and number from the one table', async (t) => {
  const { app, doc } = await documentedHost()
  t.teardown(() => app.close())
  const ops = Object.values(doc.paths).flatMap(methods => Object.values(methods))
  // answered by the host's authenticate hook and the not-found handler, not by a route of the plugin
  const notRoutes = new Set<JwtLoginErrorCode>([
    'ERR_JWT_LOGIN_BEARER_MISSING', 'ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED', 'ERR_JWT_LOGIN_NOT_FOUND',
    // an API key's refusals on the host's routes (`authenticateWith({ apiKey: true })`)
    'ERR_JWT_LOGIN_API_KEY_INVALID', 'ERR_JWT_LOGIN_API_KEY_SCOPE', 'ERR_JWT_LOGIN_API_KEY_RATE_LIMITED'
  ])
  for (const [code, { errorCode, statusCode }] of Object.entries(errorDefinitions) as Array<[JwtLoginErrorCode, { errorCode: number, statusCode: number }]>) {
    const answering = ops.filter(op => op.responses[String(statusCode)]?.description.includes(`- \`${errorCode}\` ${code}: `))
    t.equal(answering.length > 0, !notRoutes.has(code), `${code} (${statusCode} / ${errorCode})`)
    t.ok(answering.every(op => errorEnum(op, String(statusCode)).includes(errorCode)), 'its number is in the enum of its status')
  }
  const login = doc.paths[`${PREFIX}/auth`]?.post as Operation
  t.same(errorEnum(login, '401'), [27, 48], 'an auth code or the credentials')
  t.same(errorEnum(login, '403'), [45, 113, 206, 208, 231, 251], 'the switches, the email not verified, the user locked')
  t.match(JSON.stringify(login.responses['401']), /`48` ERR_JWT_LOGIN_WRONG_CREDENTIALS: Wrong user credentials\./, 'each code is described')
  t.notOk(Object.hasOwn(doc.paths[`${PREFIX}/auth/validate`]?.post?.responses ?? {}, '429'), 'validate skips the per-IP limit')
  t.same(Object.keys(doc.paths[`${PREFIX}/jwks`]?.get?.responses ?? {}), ['200'], '/jwks answers its keys only')
})

t.test('request bodies in each content type; the gate\'s fields in the body and the query; the Bearer scheme', async (t) => {
  const plain = await documentedHost()
  t.teardown(() => plain.app.close())
  const multipart = await documentedHost({ multipart: true })
  t.teardown(() => multipart.app.close())
  const form = ['application/json', 'application/x-www-form-urlencoded']
  t.same(Object.keys(plain.doc.paths[`${PREFIX}/auth`]?.post?.requestBody?.content ?? {}), form)
  t.same(Object.keys(multipart.doc.paths[`${PREFIX}/auth`]?.post?.requestBody?.content ?? {}), [...form, 'multipart/form-data'])
  t.notOk(plain.doc.paths[`${PREFIX}/auth/validate`]?.get?.requestBody, 'GET has no body')

  const names = (op: Operation | undefined): string[] => (op?.parameters ?? []).map(p => `${p.in}:${p.name}`).sort()
  const paths = plain.doc.paths
  t.same(names(paths[`${PREFIX}/auth`]?.post), [], 'the login\'s auth code travels in the body only')
  t.match(JSON.stringify(paths[`${PREFIX}/auth`]?.post?.requestBody), /"AUTH_KEY":\{[^}]*authCodes\.requireFor\.auth/)
  t.same(names(paths[`${PREFIX}/auth/validate`]?.get), ['query:AUTH_KEY', 'query:JWT'])
  t.same(names(paths[`${PREFIX}/auth/validate`]?.post), ['query:AUTH_KEY', 'query:JWT'])
  t.same(names(paths[`${PREFIX}/auth/2fa`]?.post), ['query:JWT'])
  t.same(names(paths[`${PREFIX}/user/reset_password`]?.put), ['query:AUTH_KEY'])
  t.match(names(paths[`${PREFIX}/oauth/token`]?.get), ['query:AUTH_CODE', 'query:code', 'query:code_verifier', 'query:id_token', 'query:nonce', 'query:provider', 'query:redirect_uri'])
  t.same(names(paths[`${PREFIX}/oauth/token`]?.post), [])
  t.match(JSON.stringify(paths[`${PREFIX}/oauth/token`]?.post?.requestBody), /"AUTH_CODE"/)

  t.same(plain.doc.components.securitySchemes, jwtLoginOpenApi.components.securitySchemes)
  const secured = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).filter(([, op]) => op.security !== undefined).map(([m]) => `${m} ${path}`))
  t.same(secured.sort(), [
    'delete /jwt-login/v1/account/2fa', 'delete /jwt-login/v1/account/api-keys/{id}', 'delete /jwt-login/v1/account/identities/{provider}',
    'delete /jwt-login/v1/devices/{id}', 'delete /jwt-login/v1/passkeys/{id}', 'delete /jwt-login/v1/sessions', 'delete /jwt-login/v1/sessions/{id}', 'delete /jwt-login/v1/users',
    'get /jwt-login/v1/account', 'get /jwt-login/v1/account/api-keys', 'get /jwt-login/v1/account/identities',
    'get /jwt-login/v1/auth/validate', 'get /jwt-login/v1/passkeys', 'get /jwt-login/v1/sessions', 'patch /jwt-login/v1/passkeys/{id}',
    'post /jwt-login/v1/account/2fa/backup-codes', 'post /jwt-login/v1/account/2fa/totp', 'post /jwt-login/v1/account/2fa/totp/confirm',
    'post /jwt-login/v1/account/api-keys', 'post /jwt-login/v1/account/email', 'post /jwt-login/v1/account/email/confirm', 'post /jwt-login/v1/account/identities',
    'post /jwt-login/v1/auth/2fa', 'post /jwt-login/v1/auth/2fa/passkey/options', 'post /jwt-login/v1/auth/revoke', 'post /jwt-login/v1/auth/step-up', 'post /jwt-login/v1/auth/step-up/options',
    'post /jwt-login/v1/auth/validate', 'post /jwt-login/v1/passkeys/register', 'post /jwt-login/v1/passkeys/register/options',
    'put /jwt-login/v1/account/2fa', 'put /jwt-login/v1/account/password'
  ])
  t.same(paths[`${PREFIX}/auth/revoke`]?.post?.security, [{ [BEARER_SCHEME]: [] }, {}], 'the header or the JWT field')
})

t.test('the auth-code parameter names come from the settings', async (t) => {
  const { app, doc } = await documentedHost({ settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, authCodes: { parameter: 'SITE_KEY', oauthParameter: 'SITE_CODE' } } })
  t.teardown(() => app.close())
  t.same((doc.paths[`${PREFIX}/auth/refresh`]?.post?.parameters ?? []).map(p => p.name), ['SITE_KEY'])
  t.ok((doc.paths[`${PREFIX}/oauth/token`]?.get?.parameters ?? []).some(p => p.name === 'SITE_CODE'))
  t.notOk(Object.hasOwn(doc.paths, `${PREFIX}/jwks`), 'no /jwks with a shared secret')
})

t.test('the host\'s own tags and security schemes stay; a scheme of the same name is the host\'s', async (t) => {
  const mine = { type: 'apiKey', in: 'header', name: 'x-api-key' }
  const app = await buildDocumentedHost({
    openapi: {
      info: { title: 'host', version: '1.0.0' },
      tags: [{ name: 'host' }, { name: 'tokens', description: 'the host says' }],
      components: { securitySchemes: { apiKey: mine } }
    }
  })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as Document
  t.same(doc.tags?.map(tag => tag.name), ['host', 'tokens', 'auth', 'two-factor', 'password-reset', 'openid', 'sessions', 'passkeys', 'users', 'account', 'keys'])
  t.equal(doc.tags?.[1]?.description, 'the host says')
  t.same(Object.keys(doc.components.securitySchemes ?? {}), ['apiKey', BEARER_SCHEME])

  const spread = await buildDocumentedHost({
    openapi: { info: { title: 'host', version: '1.0.0' }, components: { securitySchemes: { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer' } } } }
  })
  t.teardown(() => spread.close())
  t.same((spread.swagger() as unknown as Document).components.securitySchemes, { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer' } })
})

t.test('a Swagger 2 document is built too, without the OpenAPI 3 security scheme', async (t) => {
  const app = await buildDocumentedHost({ swagger: { info: { title: 'host', version: '1.0.0' } } })
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { swagger: string, paths: Record<string, Record<string, { security?: unknown }>> }
  t.equal(doc.swagger, '2.0')
  t.ok(doc.paths[`${PREFIX}/auth/validate`]?.post)
  t.equal(doc.paths[`${PREFIX}/auth/validate`]?.post?.security, undefined)
  const result = await new Validator().validate(doc as unknown as Spec)
  t.ok(result.valid, JSON.stringify(result.errors))
})

t.test('without @fastify/swagger nothing changes: the same routes, the same answers', async (t) => {
  const answers = async (app: FastifyInstance): Promise<unknown[]> => {
    const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
    const wrong = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: 'nope' } })
    const missing = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate` })
    const viaRest = await app.inject({ method: 'POST', url: `/?rest_route=${PREFIX}/auth/validate`, payload: { JWT: login.json().data.jwt } })
    return [login.statusCode, Object.keys(login.json().data), wrong.statusCode, wrong.json(), missing.statusCode, missing.json(), viaRest.statusCode, viaRest.json().data.user]
  }
  const withSwagger = await buildDocumentedHost(OPENAPI)
  t.teardown(() => withSwagger.close())
  const without = await buildDocumentedHost(null)
  t.teardown(() => without.close())
  t.notOk(without.hasDecorator('swagger'))
  t.equal(without.printRoutes(), withSwagger.printRoutes())
  t.same(await answers(without), await answers(withSwagger))
  t.same((await answers(without)).slice(2, 6), [401, { success: false, data: { message: 'Wrong user credentials.', errorCode: 48, error_code: 48 } }, 400, { success: false, data: { message: 'The JWT is missing.', errorCode: 53, error_code: 53 } }])
})

t.test('a host that registers @fastify/swagger after the plugin gets a document without the plugin\'s routes', async (t) => {
  const users = new MemoryUserAdapter()
  const app = Fastify()
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } } })
  await app.register(fastifySwagger, OPENAPI)
  await app.ready()
  t.teardown(() => app.close())
  t.same((app.swagger() as unknown as Document).paths, {})
})

t.test('a gate that names no errors of its own documents its gate\'s', async (t) => {
  const route = { method: 'POST', url: '/x', handler: () => {}, config: { jwtLogin: { authentication: false } } } as unknown as RouteOptions
  describeRoute(route, { multipart: false, authCodeNames: () => ({ parameter: 'AUTH_KEY', oauthParameter: 'AUTH_CODE' }) })
  t.same(Object.keys(route.schema?.response as object), ['400', '429', '503'])
})

/** The operations of the document, as `method path`, with the Bearer scheme among their security requirements. */
function tokenOperations (doc: Document): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods)
    .filter(([, op]) => op.security?.some(requirement => Object.hasOwn(requirement, BEARER_SCHEME)) === true)
    .map(([method, op]): [string, Operation] => [`${method} ${path}`, op]))
}

t.test('issue 24: where the header may carry the token, the body is optional and its example holds no token', async (t) => {
  const { app, doc } = await documentedHost()
  t.teardown(() => app.close())
  const withBody = tokenOperations(doc).filter(([, op]) => op.requestBody !== undefined)
  t.same(withBody.map(([name]) => name).sort(), [
    'patch /jwt-login/v1/passkeys/{id}',
    'post /jwt-login/v1/account/2fa/totp/confirm', 'post /jwt-login/v1/account/api-keys', 'post /jwt-login/v1/account/email', 'post /jwt-login/v1/account/email/confirm', 'post /jwt-login/v1/account/identities',
    'post /jwt-login/v1/auth/2fa', 'post /jwt-login/v1/auth/revoke', 'post /jwt-login/v1/auth/step-up',
    'post /jwt-login/v1/auth/validate', 'post /jwt-login/v1/passkeys/register',
    'put /jwt-login/v1/account/2fa', 'put /jwt-login/v1/account/password'
  ])
  // renaming and enrolling a passkey need a field of their own: their body stays required
  const ownFields = new Set(['patch /jwt-login/v1/passkeys/{id}', 'post /jwt-login/v1/passkeys/register'])
  for (const [name, op] of withBody) {
    const body = op.requestBody as NonNullable<Operation['requestBody']>
    t.equal(body.required, ownFields.has(name), `${name}: the body is ${ownFields.has(name) ? 'required' : 'optional'}`)
    t.same(Object.keys(body.content), ['application/json', 'application/x-www-form-urlencoded'])
    for (const [type, media] of Object.entries(body.content)) {
      t.type(media.example, 'object', `${name} ${type}: an example body, so Swagger UI builds none from the properties`)
      t.notOk(Object.hasOwn(media.example as object, 'JWT'), `${name} ${type}: no token in the example`)
      t.ok(Object.hasOwn(media.schema.properties ?? {}, 'JWT'), `${name} ${type}: the JWT field is still described`)
    }
  }
  const example = (path: string, method = 'post'): unknown => doc.paths[`${PREFIX}${path}`]?.[method]?.requestBody?.content['application/json']?.example
  t.same(example('/auth/revoke'), {}, 'validate and revoke: nothing but the header')
  t.same(example('/auth/validate'), {})
  t.same(example('/auth/2fa'), { code: '123456' }, 'the other fields, with values that look real')
  t.same(example('/auth/step-up'), { password: 'correct horse battery staple' })
  t.same(example('/passkeys/{id}', 'patch'), { name: 'Work laptop' })
  t.match(example('/passkeys/register'), { name: 'Work laptop', credential: { type: 'public-key', response: { clientDataJSON: String, attestationObject: String } } })

  t.equal(doc.paths[`${PREFIX}/auth`]?.post?.requestBody?.required, true, 'a route without a token keeps its body required')
  t.equal(doc.paths[`${PREFIX}/auth`]?.post?.requestBody?.content['application/json']?.example, undefined, 'and gets no example')
  t.ok(Object.getOwnPropertyDescriptor(doc, 'paths')?.writable, 'once read, the document is plain data again')
  t.same(structuredClone(doc), doc)

  const yaml = app.swagger({ yaml: true }) as unknown as string
  const bodies = [...yaml.matchAll(/requestBody:\s+required: (\w+)/g)].map(match => match[1])
  t.equal(bodies.filter(required => required === 'false').length, 11, 'the YAML form, built again, says the same')
  t.equal(bodies.length, Object.values(doc.paths).flatMap(methods => Object.values(methods)).filter(op => op.requestBody !== undefined).length)

  // the schemas validate as they did: the example is an annotation
  const { jwt } = (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })).json().data
  const bearer = { authorization: `Bearer ${jwt as string}` }
  t.equal((await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: bearer })).statusCode, 200, 'no body at all')
  t.equal((await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: bearer, payload: {} })).statusCode, 200, 'the example body')
  const wrongType = await app.inject({ method: 'POST', url: `${PREFIX}/auth/validate`, headers: bearer, payload: { JWT: 1 } })
  t.equal(wrongType.json().data.errorCode, 203, 'a field of the wrong type is still refused')
})

t.test('issue 24: a host\'s transformObject and a Swagger 2 document see the same bodies', async (t) => {
  const seen: boolean[] = []
  const app = await buildDocumentedHost({
    ...OPENAPI,
    transformObject: ({ openapiObject }: { openapiObject: Document }) => {
      seen.push(openapiObject.paths[`${PREFIX}/auth/revoke`]?.post?.requestBody?.required as boolean)
      return openapiObject
    }
  })
  t.teardown(() => app.close())
  app.swagger()
  t.same(seen, [false])

  const swagger2 = await buildDocumentedHost({ swagger: { info: { title: 'host', version: '1.0.0' } } })
  t.teardown(() => swagger2.close())
  const doc = swagger2.swagger() as unknown as { paths: Record<string, Record<string, { parameters: Array<{ in: string, required?: boolean, schema?: Record<string, unknown> }> }>> }
  const body = doc.paths[`${PREFIX}/auth/2fa`]?.post?.parameters.find(p => p.in === 'body')
  t.equal(body?.required, undefined, 'a Swagger 2 body parameter is optional unless it says so')
  t.same(body?.schema?.example, { code: '123456' }, 'Swagger 2 names the example `example`')
  t.notOk(Object.hasOwn(body?.schema ?? {}, 'examples'))
})

t.test('issue 24: the body is marked once the operation joins the document, whenever the document is read', async (t) => {
  const docs = { multipart: false, authCodeNames: () => ({ parameter: 'AUTH_KEY', oauthParameter: 'AUTH_CODE' }) }
  const route = (operationId: string): RouteOptions => {
    const options = { method: 'POST', url: `/${operationId}`, handler: () => {}, schema: { operationId, body: { type: 'object', properties: {} } }, config: { jwtLogin: { token: 'access' } } } as unknown as RouteOptions
    describeRoute(options, docs)
    return options
  }
  type Transform = (input: { schema: unknown, openapiObject: Document }) => unknown
  const transform = (options: RouteOptions, document: Document): unknown => (options.config as unknown as { swaggerTransform: Transform }).swaggerTransform({ schema: options.schema, openapiObject: document })
  const operation = (operationId: string): Record<string, Operation> => ({ post: { operationId, requestBody: { required: true, content: {} }, responses: {} } })

  const document: Document = { paths: {}, components: {} }
  transform(route('one'), document)
  transform(route('two'), document)
  t.notOk(Object.getOwnPropertyDescriptor(document, 'paths')?.writable, 'an accessor while operations are pending')
  document.paths['/one'] = operation('one')
  t.equal(document.paths['/one']?.post?.requestBody?.required, false, 'read: marked')
  document.paths = { ...document.paths, '/two': operation('two') }
  t.equal(document.paths['/two']?.post?.requestBody?.required, false, 'a replaced paths object is read too')
  t.ok(Object.getOwnPropertyDescriptor(document, 'paths')?.writable, 'nothing pending: a plain property')
})

t.test('every route that takes an access token and changes something is classified for impersonation: it declares 403 / 252, or is one of the few an actor may call', async (t) => {
  const { app, doc } = await documentedHost()
  t.teardown(() => app.close())
  const changing = tokenOperations(doc).filter(([name]) => !name.startsWith('get '))
  const refusing = changing.filter(([, op]) => errorEnum(op, '403').includes(252)).map(([name]) => name).sort()
  const allowed = changing.filter(([, op]) => !errorEnum(op, '403').includes(252)).map(([name]) => name).sort()
  // a new route lands in one list or the other, and a test of the change decides which: never by default
  t.same(allowed, [
    // ending the request's own session, and the validation that reads it
    `post ${PREFIX}/auth/revoke`,
    `post ${PREFIX}/auth/validate`,
    // a sign-in's second step: its interim token never carries an actor
    `post ${PREFIX}/auth/2fa`,
    `post ${PREFIX}/auth/2fa/passkey/options`
  ].sort(), 'what an actor may call')
  t.ok(refusing.length >= 20, `${refusing.length} routes refuse an actor`)
  t.ok(refusing.includes(`put ${PREFIX}/account/password`) && refusing.includes(`delete ${PREFIX}/users`))
})
