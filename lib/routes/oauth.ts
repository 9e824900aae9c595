import type { FastifyInstance, FastifyRequest } from 'fastify'
import { OAuthTokenFields, OAuthTokenReply } from '../../schemas/oauth.js'
import type { JwtLoginContext } from '../context.js'
import { stateOf, type RouteGate } from '../gates.js'
import { auditOAuthGate, oauthSignIn, type OAuthInput } from '../oauth/flow.js'
import { OAuthRegistry } from '../oauth/registry.js'
import { stringField, type Fields } from '../params.js'

function inputOf (fields: Fields): OAuthInput {
  return {
    provider: stringField(fields, 'provider'),
    code: stringField(fields, 'code'),
    idToken: stringField(fields, 'id_token'),
    nonce: stringField(fields, 'nonce'),
    codeVerifier: stringField(fields, 'code_verifier'),
    redirectUri: stringField(fields, 'redirect_uri')
  }
}

/** `GET` and `POST /oauth/token`. POST is the one to use: a code in a URL ends up in logs. */
export function oauthRoutes (instance: FastifyInstance, ctx: JwtLoginContext): void {
  const registry = new OAuthRegistry(ctx.clock)
  const response = { 200: OAuthTokenReply }
  const signIn = async (request: FastifyRequest, fields: Fields): Promise<unknown> =>
    ({ success: true, data: await oauthSignIn(ctx, stateOf(request).call, registry, inputOf(fields)) })

  instance.get('/oauth/token', {
    config: { jwtLogin: { authCode: 'oauth', authCodeFrom: 'query', audit: auditOAuthGate } satisfies RouteGate },
    schema: { response, querystring: OAuthTokenFields }
  }, async (request) => await signIn(request, request.query as Fields))
  instance.post('/oauth/token', {
    config: { jwtLogin: { authCode: 'oauth', authCodeFrom: 'body', audit: auditOAuthGate } satisfies RouteGate },
    schema: { response, body: OAuthTokenFields }
  }, async (request) => await signIn(request, request.body as Fields))
}
