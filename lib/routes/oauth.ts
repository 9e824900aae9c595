import type { Static } from '@sinclair/typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { MessageReply } from '../../schemas/auth.js'
import { ID_TOKEN_MAX_LENGTH, OAuthNonceReply, OAuthTokenFields, OAuthTokenReply, type OAuthTokenInput } from '../../schemas/oauth.js'
import { LOGOUT_TOKEN_MAX_LENGTH, LogoutFields, LogoutParams, LogoutRefusedReply } from '../../schemas/oauth-logout.js'
import type { JwtLoginContext } from '../context/context.js'
import { errorDefinitions } from '../core/errors.js'
import { deliver } from '../http/browser.js'
import { succeed, toJwtLoginError } from '../http/error-handler.js'
import { present } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { auditOAuthGate, oauthSignIn, type OAuthInput } from '../oauth/flow.js'
import { backchannelLogout, LogoutRefused } from '../oauth/logout.js'
import { oauthNonce } from '../oauth/nonce.js'
import { said } from './caller.js'

/** What the provider gave the client, as the flows take it. */
export function inputOf (fields: OAuthTokenInput): OAuthInput {
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
  'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED', 'ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH', 'ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED', 'ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED', 'ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII', 'ERR_JWT_LOGIN_USER_EXISTS',
  'ERR_JWT_LOGIN_IDENTITY_TAKEN', 'ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED', 'ERR_JWT_LOGIN_USER_LOCKED'
] as const

const gate = (authCodeFrom: 'query' | 'body'): RouteGate => ({ authCode: 'oauth', authCodeFrom, audit: auditOAuthGate, refreshCookie: 'issues', errors: ERRORS })

const doc = (method: 'GET' | 'POST'): RouteDoc => ({
  tags: ['openid'],
  operationId: method === 'GET' ? 'jwtLoginOAuthTokenGet' : 'jwtLoginOAuthToken',
  summary: method === 'GET' ? 'Sign in with a provider (query form; prefer POST)' : 'Sign in with a provider',
  description: 'The `provider` (OpenID Connect or plain OAuth 2.0) and its authorization `code` (with `code_verifier` and `redirect_uri` when used) or an `id_token` (with its `nonce`). ' +
    'The provider account signs in the user it is linked to; without a link, the provider\'s verified email finds the user (then linked), who is created when the provider allows it (an email in plain ASCII only, else 400 / 230). ' +
    'Of concurrent first sign-ins for one email, one creates the user and the others sign it in. ' +
    (method === 'GET' ? 'A code in a URL ends up in logs and history: use POST.' : 'Answers a JWT and the user.')
})

/**
 * Back-channel logout: no auth code (the provider calls it, not a client)
 * and not behind `authentication.enabled` (ending sessions is always
 * allowed); the per-IP limit stays.
 */
const LOGOUT_GATE: RouteGate = { authentication: false, errors: ['ERR_JWT_LOGIN_PROVIDER_TIMEOUT', 'ERR_JWT_LOGIN_PROVIDER_ERROR'] }

const LOGOUT_DOC: RouteDoc = {
  tags: ['openid'],
  operationId: 'jwtLoginOAuthBackchannelLogout',
  summary: 'Back-channel logout from an OpenID provider',
  description: 'Called by the provider, not by a client (OpenID Connect Back-Channel Logout 1.0): register ' +
    '`https://<host><prefix>/oauth/<provider>/backchannel-logout` as its `backchannel_logout_uri`. Its signed `logout_token` ' +
    '(form-encoded) ends the sessions its sign-ins started: those of its `sid`, or of its `sub` alone. ' +
    'Only for providers with `backchannelLogout` on. 200 also when no session matched; a refused token answers 400 and ends nothing.'
}

/** The spec's refusal (§2.8): 400 `invalid_request`, not the plugin's envelope. */
const refuse = (reply: FastifyReply, description: string): FastifyReply =>
  reply.code(400).send({ error: 'invalid_request', error_description: description })

/** `POST /oauth/{provider}/backchannel-logout`, for the provider's back channel. */
function logoutRoute (app: TypedScope, ctx: JwtLoginContext): void {
  const malformed = errorDefinitions.ERR_JWT_LOGIN_BAD_REQUEST
  app.post('/oauth/:provider/backchannel-logout', {
    config: { jwtLogin: LOGOUT_GATE },
    schema: {
      ...LOGOUT_DOC,
      params: LogoutParams,
      body: LogoutFields,
      response: { 200: MessageReply, 400: LogoutRefusedReply(malformed.errorCode, `- \`${malformed.errorCode}\` ERR_JWT_LOGIN_BAD_REQUEST: ${malformed.message}`) }
    },
    // a refused token and a malformed request (a body, a field or a parameter refused) answer as the spec says;
    // the rest (the per-IP limit, the provider, the store) as every route of the plugin does
    errorHandler: (error: FastifyError | LogoutRefused, request, reply) => {
      if (error instanceof LogoutRefused) return refuse(reply, error.description)
      const mapped = toJwtLoginError(error)
      if (mapped.statusCode === 400) return refuse(reply, mapped.message)
      app.errorHandler(error, request, reply)
    }
  }, async (request) => {
    const { call } = stateOf(request)
    await backchannelLogout(ctx, call, request.params.provider, present(request.body.logout_token, LOGOUT_TOKEN_MAX_LENGTH))
    return succeed({ message: said(ctx, request, 'loggedOut') })
  })
}

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

  logoutRoute(app, ctx)
}
