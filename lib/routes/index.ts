import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { JwksReply } from '../../schemas/common.js'
import type { JwtLoginContext } from '../context/context.js'
import type { RouteDoc } from '../http/openapi.js'
import { accountRoutes } from './account.js'
import { accountTwoFactorRoutes } from './account-two-factor.js'
import { authRoutes } from './auth.js'
import { oauthRoutes } from './oauth.js'
import { passkeyRoutes } from './passkeys.js'
import { resetPasswordRoutes } from './reset-password.js'
import { sessionRoutes } from './sessions.js'
import { twoFactorRoutes } from './two-factor.js'
import { userRoutes } from './users.js'

/** `/jwks` is public and changes only with a restart: caches may keep it this long. */
const JWKS_CACHE_CONTROL = 'public, max-age=300'

const JWKS_DOC: RouteDoc = {
  tags: ['keys'],
  operationId: 'jwtLoginJwks',
  summary: 'The public keys that verify the tokens (JWKS)',
  description: 'Served when the tokens are signed with an asymmetric key (RS*, PS*, ES*, EdDSA); cacheable for five minutes.'
}

/** Every route of the plugin, in its scope, typed from the schemas. */
export function registerRoutes (instance: FastifyInstance, ctx: JwtLoginContext): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  authRoutes(app, ctx)
  resetPasswordRoutes(app, ctx)
  twoFactorRoutes(app, ctx)
  oauthRoutes(app, ctx)
  sessionRoutes(app, ctx)
  passkeyRoutes(app, ctx)
  userRoutes(app, ctx)
  accountRoutes(app, ctx)
  accountTwoFactorRoutes(app, ctx)
  const jwks = ctx.tokens.jwks()
  if (jwks !== null) {
    // public keys: cacheable, and not counted by the per-IP limit (verifiers fetch them freely)
    instance.get('/jwks', { config: { rateLimit: false }, schema: { ...JWKS_DOC, response: { 200: JwksReply } } }, async (_request, reply) => {
      reply.header('cache-control', JWKS_CACHE_CONTROL).removeHeader('pragma')
      return jwks
    })
  }
}
