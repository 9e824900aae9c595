import type { FastifyInstance, FastifyRequest } from 'fastify'
import { JwtFields, LoginBody, LoginReply, MessageReply, RefreshBody, RefreshReply, ValidateReply } from '../../schemas/auth.js'
import type { JwtLoginContext } from '../context.js'
import { JwtLoginError } from '../errors.js'
import { stateOf, type RouteGate } from '../gates.js'
import { auditLoginGate, passwordLogin } from '../login.js'
import { stringField, type Fields } from '../params.js'
import { refreshSession, revokeToken, validateToken } from '../session.js'
import { refuseInterimToken } from '../two-factor/flow.js'

const LOGIN: RouteGate = { authCode: 'auth', authCodeFrom: 'body', audit: auditLoginGate }
const VALIDATE: RouteGate = { feature: 'validate', authCode: 'validate', authCodeFrom: 'body-or-query', token: 'access' }
const REFRESH: RouteGate = { feature: 'refresh', authCode: 'refresh', authCodeFrom: 'body-or-query' }
const REVOKE: RouteGate = { feature: 'revoke', authCode: 'revoke', authCodeFrom: 'body-or-query', token: 'access' }

/** `POST /auth`: the body's fields into a login. */
function loginRoute (instance: FastifyInstance, ctx: JwtLoginContext): void {
  instance.post('/auth', {
    config: { jwtLogin: LOGIN },
    schema: { body: LoginBody, response: { 200: LoginReply } }
  }, async (request) => {
    const body = request.body as Fields
    const input = {
      email: stringField(body, 'email'),
      username: stringField(body, 'username'),
      login: stringField(body, 'login'),
      password: stringField(body, 'password'),
      passwordHash: stringField(body, 'password_hash')
    }
    return { success: true, data: await passwordLogin(ctx, stateOf(request).call, input) }
  })
}

/**
 * `/auth` (password login), `/auth/validate`, `/auth/refresh`, `/auth/revoke`.
 * Validate and revoke take a signed token and spend nothing guessable, so
 * they skip the per-IP request limit.
 */
export function authRoutes (instance: FastifyInstance, ctx: JwtLoginContext): void {
  loginRoute(instance, ctx)

  const validate = async (request: FastifyRequest): Promise<unknown> => {
    const { call, token } = stateOf(request)
    return { success: true, data: await validateToken(ctx, call, token as string) }
  }
  instance.get('/auth/validate', { config: { jwtLogin: VALIDATE, rateLimit: false }, schema: { querystring: JwtFields, response: { 200: ValidateReply } } }, validate)
  instance.post('/auth/validate', { config: { jwtLogin: VALIDATE, rateLimit: false }, schema: { body: JwtFields, response: { 200: ValidateReply } } }, validate)

  instance.post('/auth/refresh', {
    config: { jwtLogin: REFRESH },
    schema: { body: RefreshBody, response: { 200: RefreshReply } }
  }, async (request) => {
    const { call } = stateOf(request)
    const body = request.body as Fields
    const refreshToken = stringField(body, 'refresh_token')
    refuseInterimToken(ctx, call, refreshToken ?? stringField(body, 'JWT'))
    if (refreshToken === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING')
    return { success: true, data: await refreshSession(ctx, call, refreshToken) }
  })

  instance.post('/auth/revoke', {
    config: { jwtLogin: REVOKE, rateLimit: false },
    schema: { body: JwtFields, response: { 200: MessageReply } }
  }, async (request) => {
    const { call, token } = stateOf(request)
    return { success: true, data: await revokeToken(ctx, call, token as string) }
  })
}
