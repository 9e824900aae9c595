import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { JwksReply } from '../../schemas/common.js'
import type { JwtLoginContext } from '../context/context.js'
import { registerCookies } from '../http/browser.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { accountRoutes } from './account.js'
import { accountTwoFactorRoutes } from './account-two-factor.js'
import { accountIdentityRoutes } from './account-identities.js'
import { apiKeyRoutes } from './api-keys.js'
import { authRoutes, validateRoutes } from './auth.js'
import { emailSignInRoutes } from './email-sign-in.js'
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

/**
 * Every route of the plugin, in its scope, typed from the schemas, in the
 * order of the documentation. The routes that set or read a cookie (sign-in by password or email,
 * refresh, revoke, the second factor, provider and passkey sign-in,
 * registration and deletion) sit in child scopes with @fastify/cookie, so
 * its `onSend` hook runs on none of the others; each child inherits the
 * scope's hooks, gates, handlers and limits.
 */
export async function registerRoutes (instance: FastifyInstance, ctx: JwtLoginContext): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>()
  const withCookies = async (routes: (scope: TypedScope) => void): Promise<void> => {
    await instance.register(async (scope) => {
      await registerCookies(scope)
      routes(scope.withTypeProvider<TypeBoxTypeProvider>())
    })
  }
  await withCookies((scope) => {
    authRoutes(scope, ctx)
    emailSignInRoutes(scope, ctx)
  })
  validateRoutes(app, ctx)
  resetPasswordRoutes(app, ctx)
  await withCookies((scope) => {
    twoFactorRoutes(scope, ctx)
    oauthRoutes(scope, ctx)
  })
  sessionRoutes(app, ctx)
  await withCookies((scope) => {
    passkeyRoutes(scope, ctx)
    userRoutes(scope, ctx)
  })
  accountRoutes(app, ctx)
  accountTwoFactorRoutes(app, ctx)
  accountIdentityRoutes(app, ctx)
  apiKeyRoutes(app, ctx)
  const jwks = ctx.tokens.jwks()
  if (jwks !== null) {
    // public keys: cacheable, and not counted by the per-IP limit (verifiers fetch them freely)
    instance.get('/jwks', { config: { rateLimit: false }, schema: { ...JWKS_DOC, response: { 200: JwksReply } } }, async (_request, reply) => {
      reply.header('cache-control', JWKS_CACHE_CONTROL).removeHeader('pragma')
      return jwks
    })
  }
}
