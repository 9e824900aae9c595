import type { FastifyInstance, FastifyRequest } from 'fastify'
import { JwtFields, LoginBody, LoginReply, MessageReply, RefreshBody, RefreshReply, ValidateReply } from '../../schemas/auth.js'
import { checkAuthCode } from '../auth-codes.js'
import type { JwtLoginContext } from '../context.js'
import { JwtLoginError } from '../errors.js'
import { passwordLogin } from '../login.js'
import { bodyOf, presentedJwt, queryOf, stringField } from '../params.js'
import { authenticateToken, describe, refreshSession } from '../session.js'
import { refuseInterimToken } from '../two-factor/flow.js'

type Gate = 'validate' | 'refresh' | 'revoke'

/** Authentication on, the route's own switch on, the auth code when its setting says so. */
function gate (ctx: JwtLoginContext, request: FastifyRequest, route: Gate): void {
  const settings = ctx.settings.current
  if (!settings.authentication.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_AUTH_DISABLED')
  if (route === 'validate' && !settings.validate.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_VALIDATE_DISABLED')
  if (route === 'revoke' && !settings.revoke.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_REVOKE_DISABLED')
  if (route === 'refresh' && !settings.refresh.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_DISABLED')
  if (settings.authCodes.requireFor[route]) {
    const name = settings.authCodes.parameter
    const presented = stringField(bodyOf(request), name) ?? stringField(queryOf(request), name)
    checkAuthCode(presented, settings.authCodes.codes, ctx.clock())
  }
}

function requiredJwt (ctx: JwtLoginContext, request: FastifyRequest): string {
  const token = presentedJwt(request, ctx.settings.current.bearer.enabled)
  if (token === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_JWT_MISSING')
  return token
}

/** Reports a failed validation to the audit events, then lets the error answer. */
function auditValidation (ctx: JwtLoginContext, ip: string, error: unknown): never {
  if (error instanceof JwtLoginError && error.statusCode === 401) {
    ctx.events.emit('validation.failed', { ip, errorCode: error.errorCode })
  }
  throw error
}

export function authRoutes (instance: FastifyInstance, ctx: JwtLoginContext): void {
  instance.post('/auth', {
    schema: { body: LoginBody, response: { 200: LoginReply } }
  }, async (request) => {
    return { success: true, data: await passwordLogin(ctx, bodyOf(request), request.ip) }
  })

  // Validate: reads only (revocation, the user); a failure changes nothing.
  const validate = async (request: FastifyRequest): Promise<unknown> => {
    gate(ctx, request, 'validate')
    const token = requiredJwt(ctx, request)
    try {
      return { success: true, data: describe(ctx, await authenticateToken(ctx, token)) }
    } catch (error) {
      return auditValidation(ctx, request.ip, error)
    }
  }
  instance.get('/auth/validate', { schema: { querystring: JwtFields, response: { 200: ValidateReply } } }, validate)
  instance.post('/auth/validate', { schema: { querystring: JwtFields, body: JwtFields, response: { 200: ValidateReply } } }, validate)

  instance.post('/auth/refresh', {
    schema: { body: RefreshBody, response: { 200: RefreshReply } }
  }, async (request) => {
    gate(ctx, request, 'refresh')
    const refreshToken = stringField(bodyOf(request), 'refresh_token')
    refuseInterimToken(ctx, refreshToken ?? stringField(bodyOf(request), 'JWT'))
    if (refreshToken === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING')
    return { success: true, data: await refreshSession(ctx, refreshToken, request.ip) }
  })

  // Revoke: reads (the token's checks), then one write that ends the session,
  // its access tokens and its refresh token together. A failed write changed
  // nothing and its retry finishes the job; once written, the token is revoked (55).
  instance.post('/auth/revoke', {
    schema: { querystring: JwtFields, body: JwtFields, response: { 200: MessageReply } }
  }, async (request) => {
    gate(ctx, request, 'revoke')
    const token = requiredJwt(ctx, request)
    const auth = await authenticateToken(ctx, token).catch((error: unknown) => auditValidation(ctx, request.ip, error))
    const claims = auth.verified.payload
    await ctx.tokens.revoke(ctx.settings.current, claims)
    ctx.events.emit('token.revoked', { userId: auth.publicUser.ID, sessionId: claims.sid, jti: claims.jti, ip: request.ip })
    return { success: true, data: { message: 'Token was revoked.' } }
  })
}
