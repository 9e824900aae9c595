import type { FastifyInstance } from 'fastify'
import { OAuthTokenFields, OAuthTokenReply } from '../../schemas/oauth.js'
import type { JwtLoginContext } from '../context.js'
import { oauthSignIn } from '../oauth/flow.js'
import { OAuthRegistry } from '../oauth/registry.js'
import { bodyOf, queryOf } from '../params.js'

/** `GET` and `POST /oauth/token`. POST is the one to use: a code in a URL ends up in logs. */
export function oauthRoutes (instance: FastifyInstance, ctx: JwtLoginContext): void {
  const registry = new OAuthRegistry(ctx.clock)
  const schema = { response: { 200: OAuthTokenReply } }

  instance.get('/oauth/token', { schema: { ...schema, querystring: OAuthTokenFields } }, async (request) => {
    return { success: true, data: await oauthSignIn(ctx, registry, queryOf(request), request.ip) }
  })
  instance.post('/oauth/token', { schema: { ...schema, body: OAuthTokenFields } }, async (request) => {
    return { success: true, data: await oauthSignIn(ctx, registry, bodyOf(request), request.ip) }
  })
}
