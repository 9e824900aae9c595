import type { Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ID_TOKEN_MAX_LENGTH, OAuthNonceReply, OAuthTokenFields, OAuthTokenReply, type OAuthTokenInput } from '../../schemas/oauth.js'
import type { JwtLoginContext } from '../context/context.js'
import { deliver } from '../http/browser.js'
import { succeed } from '../http/error-handler.js'
import { present } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { auditOAuthGate, oauthSignIn, type OAuthInput } from '../oauth/flow.js'
import { oauthNonce } from '../oauth/nonce.js'

function inputOf (fields: OAuthTokenInput): OAuthInput {
  return {
    provider: present(fields.provider),
    code: present(fields.code),
    idToken: present(fields.id_token, ID_TOKEN_MAX_LENGTH),
    nonce: present(fields.nonce),
    codeVerifier: present(fields.code_verifier),
    redirectUri: present(fields.redirect_uri)
  }
}

const ERRORS = [
  'ERR_JWT_LOGIN_PROVIDER_UNKNOWN', 'ERR_JWT_LOGIN_PROVIDER_DISABLED', 'ERR_JWT_LOGIN_PROVIDER_CODE_MISSING', 'ERR_JWT_LOGIN_PROVIDER_CODE_INVALID',
  'ERR_JWT_LOGIN_ID_TOKEN_INVALID', 'ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND', 'ERR_JWT_LOGIN_EMAIL_UNVERIFIED', 'ERR_JWT_LOGIN_USER_CREATE_FAILED',
  'ERR_JWT_LOGIN_PROVIDER_TIMEOUT', 'ERR_JWT_LOGIN_PROVIDER_ERROR', 'ERR_JWT_LOGIN_TWO_FACTOR_DISABLED',
  'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED', 'ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH'
] as const

const gate = (authCodeFrom: 'query' | 'body'): RouteGate => ({ authCode: 'oauth', authCodeFrom, audit: auditOAuthGate, refreshCookie: 'issues', errors: ERRORS })

const doc = (method: 'GET' | 'POST'): RouteDoc => ({
  tags: ['openid'],
  operationId: method === 'GET' ? 'jwtLoginOAuthTokenGet' : 'jwtLoginOAuthToken',
  summary: method === 'GET' ? 'Sign in with an OpenID provider (query form; prefer POST)' : 'Sign in with an OpenID provider',
  description: 'The `provider` and its authorization `code` (with `code_verifier` and `redirect_uri` when used) or an `id_token` (with its `nonce`). ' +
    'The provider\'s verified email is matched to a user, who is created when the provider allows it. ' +
    (method === 'GET' ? 'A code in a URL ends up in logs and history: use POST.' : 'Answers a JWT and the user.')
})

/** `GET` and `POST /oauth/token`. POST is the one to use: a code in a URL ends up in logs. */
export function oauthRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const response = { 200: OAuthTokenReply }
  const signIn = async (request: FastifyRequest, reply: FastifyReply, fields: OAuthTokenInput): Promise<Static<typeof OAuthTokenReply>> => {
    const { call } = stateOf(request)
    return succeed(deliver(reply, call.settings, await oauthSignIn(ctx, call, inputOf(fields))))
  }

  app.get('/oauth/token', {
    config: { jwtLogin: gate('query') },
    schema: { ...doc('GET'), response, querystring: OAuthTokenFields }
  }, async (request, reply) => await signIn(request, reply, request.query))
  app.post('/oauth/token', {
    config: { jwtLogin: gate('body') },
    schema: { ...doc('POST'), response, body: OAuthTokenFields }
  }, async (request, reply) => await signIn(request, reply, request.body))

  app.get('/oauth/nonce', {
    config: { jwtLogin: {} },
    schema: {
      tags: ['openid'],
      operationId: 'jwtLoginOAuthNonce',
      summary: 'A nonce for an ID-token sign-in',
      description: 'Give the provider `nonce_sha256` when asking for the ID token, keep `nonce`, and send it beside the `id_token` to `/oauth/token`: ' +
        'whoever holds only the token cannot. Required by providers with `requireNonce`; accepted for ten minutes; the ID token is spent once.',
      response: { 200: OAuthNonceReply }
    }
  }, async (request) => succeed(oauthNonce(ctx, stateOf(request).call)))
}
