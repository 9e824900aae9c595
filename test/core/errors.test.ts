import t from 'tap'
import { envelope, errorDefinitions, isJwtLoginError, JwtLoginError, type ErrorDefinition, type JwtLoginErrorCode } from '../../lib/core/errors.js'
import * as entry from '../../lib/index.js'

// The error table of docs/errors.md is generated from errorDefinitions and checked by test/docs/docs-tables.test.ts.

t.test('errorDefinitions: well-formed and consistent', async (t) => {
  const byNumber = new Map<number, Set<number>>()
  for (const [code, definition] of Object.entries(errorDefinitions)) {
    t.match(code, /^ERR_JWT_LOGIN_[A-Z_]+$/, code)
    t.ok(Number.isInteger(definition.errorCode) && definition.errorCode > 0, `${code}: errorCode`)
    t.ok(definition.statusCode >= 400 && definition.statusCode < 600, `${code}: status`)
    t.match(definition.message, /^[A-Z].*\.$/, `${code}: a sentence`)
    const statuses = byNumber.get(definition.errorCode) ?? new Set<number>()
    statuses.add(definition.statusCode)
    byNumber.set(definition.errorCode, statuses)
  }
  // numbers of 200 and up are jwt-login's own; one number may have two statuses only where the spec says so
  t.same([...byNumber.keys()].filter(n => n >= 200).sort((a, b) => a - b), [200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260])
  t.same([...(byNumber.get(51) ?? [])].sort(), [400, 401])
  // 53 is 400 on the plugin's routes and 401 on a protected host route (RFC 6750 §3.1)
  t.same([...(byNumber.get(53) ?? [])].sort(), [400, 401])
  t.same([...(byNumber.get(109) ?? [])].sort(), [400, 401])
  t.same([...(byNumber.get(202) ?? [])].sort(), [502, 504])
  t.same([...(byNumber.get(11) ?? [])], [401])
  t.same([...(byNumber.get(2) ?? [])], [401])
  t.same([...(byNumber.get(24) ?? [])], [401])
  t.equal(errorDefinitions.ERR_JWT_LOGIN_ID_TOKEN_REPLAYED.statusCode, 401)
  t.equal(errorDefinitions.ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH.statusCode, 403)
  t.equal(errorDefinitions.ERR_JWT_LOGIN_RATE_LIMITED.statusCode, 429)
  t.equal(errorDefinitions.ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE.statusCode, 503)
  // a sign-in refused while password checks are queued: the server is busy (503), not the client over its own limit (429)
  t.equal(errorDefinitions.ERR_JWT_LOGIN_BUSY.statusCode, 503)
  t.equal(errorDefinitions.ERR_JWT_LOGIN_BAD_REQUEST.statusCode, 400)
})

t.test('JwtLoginError carries code, errorCode, statusCode, retryAfter and cause', async (t) => {
  const cause = new Error('redis down')
  const error = new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause })
  t.ok(error instanceof Error)
  t.equal(error.name, 'JwtLoginError')
  t.equal(error.code, 'ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE')
  t.equal(error.errorCode, 201)
  t.equal(error.statusCode, 503)
  t.equal(error.message, 'A dependency is unavailable; nothing was changed.')
  t.equal(error.cause, cause)
  t.equal(error.retryAfter, undefined)
  t.equal(error.wwwAuthenticate, undefined)
  t.type(error.stack, 'string')

  const limited = new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: 42 })
  t.equal(limited.retryAfter, 42)
  t.equal(limited.statusCode, 429)
  t.equal(limited.errorCode, 200)
  t.notOk('cause' in limited, 'no cause property without a cause')

  const busy = new JwtLoginError('ERR_JWT_LOGIN_BUSY', { retryAfter: 3 })
  t.same([busy.errorCode, busy.statusCode, busy.retryAfter], [228, 503, 3], 'a busy refusal carries its Retry-After as a 429 does')

  const plain = new JwtLoginError('ERR_JWT_LOGIN_TOKEN_EXPIRED')
  t.equal(plain.errorCode, 14)
  t.equal(plain.statusCode, 401)
  t.equal(plain.wwwAuthenticate, 'Bearer error="invalid_token"', 'the challenge of a token error')
  t.notOk('cause' in plain)
})

t.test('every code builds an error that matches its definition', async (t) => {
  for (const [code, definition] of Object.entries(errorDefinitions)) {
    const error = new JwtLoginError(code as JwtLoginErrorCode)
    t.same([error.errorCode, error.statusCode, error.message], [definition.errorCode, definition.statusCode, definition.message], code)
    const challenge = (definition as ErrorDefinition).wwwAuthenticate
    t.equal(error.wwwAuthenticate, challenge, `${code}: WWW-Authenticate`)
    // RFC 6750 §3: a challenge goes with a 401, and is the Bearer scheme (RFC 9470's insufficient_user_authentication for a step-up);
    // §3.1's insufficient_scope goes with a 403 (an API key without a scope the route asks for)
    if (challenge !== undefined) {
      const scope = challenge === 'Bearer error="insufficient_scope"'
      t.equal(definition.statusCode, scope ? 403 : 401, `${code}: a challenge on a 401, or insufficient_scope on a 403`)
      t.match(challenge, /^Bearer( error="(invalid_token|invalid_request|insufficient_user_authentication|insufficient_scope)")?$/, `${code}: an RFC 6750 challenge`)
    }
  }
})

t.test('isJwtLoginError', async (t) => {
  t.equal(isJwtLoginError(new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')), true)
  t.equal(isJwtLoginError(new Error('The request is malformed.')), false)
  t.equal(isJwtLoginError({ code: 'ERR_JWT_LOGIN_BAD_REQUEST', errorCode: 203, statusCode: 400 }), false, 'a look-alike object is not one')
  t.equal(isJwtLoginError(null), false)
  t.equal(isJwtLoginError(undefined), false)
  t.equal(isJwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST'), false)
})

t.test('envelope: the answer body, message and number only', async (t) => {
  const body = envelope(new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter: 5, cause: new Error('secret detail') }))
  t.same(body, { success: false, data: { message: 'Too many requests; retry later.', errorCode: 200, error_code: 200 } })
  t.notMatch(JSON.stringify(body), /secret detail|retryAfter|ERR_JWT_LOGIN/)
})

t.test('the package entry exports the error API', async (t) => {
  t.equal(entry.JwtLoginError, JwtLoginError)
  t.equal(entry.errorDefinitions, errorDefinitions)
  t.equal(entry.isJwtLoginError, isJwtLoginError)
})
