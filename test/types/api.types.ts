// Type tests of the `fastify.jwtLogin` decoration (`JwtLoginApi`) and of
// `request.jwtLogin` (`JwtLoginRequestState`), which lib declares on Fastify's
// types by module augmentation once a host imports 'jwt-login'.
import type { JsonWebKey } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { JwtLoginApi, JwtLoginEventMap, JwtLoginErrorCode, JwtLoginEventName, JwtLoginEvents, JwtLoginRequestState, PublicUser, Settings, TokenClaims, TokenKind, TwoFactorEnrollment } from '../../lib/index.js'
import { assertType, expectType, type Equal } from './expect.js'

declare const fastify: FastifyInstance
declare const user: PublicUser

assertType<Equal<FastifyInstance['jwtLogin'], JwtLoginApi>>()
const api = fastify.jwtLogin

// each method's parameters and result
assertType<Equal<typeof api.sign, (user: PublicUser) => string>>()
assertType<Equal<typeof api.verify, (token: string) => Promise<TokenClaims>>>()
assertType<Equal<typeof api.revoke, (token: string) => Promise<void>>>()
assertType<Equal<typeof api.forgetUser, (userId: number) => void>>()
assertType<Equal<typeof api.authenticate, (request: FastifyRequest, reply: FastifyReply) => Promise<void>>>()
assertType<Equal<typeof api.reloadSettings, () => Promise<void>>>()
assertType<Equal<ReturnType<typeof api.jwks>, { keys: JsonWebKey[] } | null>>()
assertType<Equal<typeof api.twoFactor, TwoFactorEnrollment | null>>()
expectType<JwtLoginEvents>(api.events)

expectType<string>(api.sign(user))
const claims = expectType<TokenClaims>(await api.verify('token'))
expectType<string>(claims.sub)
expectType<string>(claims.sid)
assertType<Equal<typeof claims.typ, TokenKind>>()
assertType<Equal<TokenKind, 'access' | 'interim'>>()
expectType<string | undefined>(claims.email)
expectType<string[] | undefined>(claims.roles)
// a host's own claims are there too, as unknown
expectType<unknown>(claims.tenant)

// @ts-expect-error: a token is a string
await api.verify(42)

// @ts-expect-error: verify answers claims, not a boolean
expectType<boolean>(await api.verify('token'))

// @ts-expect-error: a user id is a number
api.forgetUser('1')

// @ts-expect-error: sign takes a public user
api.sign({ ID: 1 })

// the settings in force, read-only all the way down
expectType<number>(api.settings.bodyLimit)
expectType<number>(api.settings.tokens.lifetimeMs)
assertType<Equal<typeof api.settings.tokens.algorithm, Settings['tokens']['algorithm']>>()

// @ts-expect-error: the settings are read-only
api.settings.bodyLimit = 1

// @ts-expect-error: nested groups too
api.settings.refresh.enabled = true

// @ts-expect-error: the decoration's settings cannot be replaced either
api.settings = api.settings

// @ts-expect-error: two-factor helpers are null without the twoFactor option
await api.twoFactor.regenerateBackupCodes(1)

if (api.twoFactor !== null) {
  expectType<{ secret: string, uri: string }>(api.twoFactor.createTotpSecret('ada@example.com'))
  expectType<boolean>(await api.twoFactor.confirmTotp(1, 'SECRET', '123456'))
  expectType<string[]>(await api.twoFactor.regenerateBackupCodes(1))
}

// events: each payload typed by its name
api.events.on('login.succeeded', payload => {
  assertType<Equal<typeof payload, JwtLoginEventMap['login.succeeded']>>()
  expectType<number>(payload.userId)
  assertType<Equal<typeof payload.method, 'password' | 'password_hash'>>()
  // @ts-expect-error: a login carries no session id
  expectType<string>(payload.sessionId)
})
api.events.once('reset.requested', payload => {
  assertType<Equal<typeof payload.userId, number | null>>()
})
api.events.on('oauth.failed', payload => {
  expectType<string | null>(payload.provider)
  assertType<Equal<typeof payload.reason, JwtLoginErrorCode>>()
})
// on, once and off chain
expectType<JwtLoginEvents>(api.events.on('token.revoked', () => {}).off('token.revoked', () => {}))
assertType<Equal<JwtLoginEventName, keyof JwtLoginEventMap>>()

// @ts-expect-error: no such event
api.events.on('login.succeded', () => {})

// @ts-expect-error: a listener of another event's payload
api.events.on('login.failed', (payload: JwtLoginEventMap['login.succeeded']) => payload.userId)

// @ts-expect-error: a host does not emit an event with the wrong payload
api.events.emit('token.refreshed', { userId: 1 })

// authenticate as a preHandler of a host route; request.jwtLogin is set after it
fastify.get('/me', { preHandler: api.authenticate }, async (request) => {
  assertType<Equal<typeof request.jwtLogin, JwtLoginRequestState | null>>()
  // @ts-expect-error: null before authentication, so a host checks
  expectType<PublicUser>(request.jwtLogin.user)
  if (request.jwtLogin === null) return null
  assertType<Equal<typeof request.jwtLogin.user, PublicUser>>()
  assertType<Equal<typeof request.jwtLogin.claims, TokenClaims>>()
  return { id: request.jwtLogin.user.ID, roles: request.jwtLogin.user.roles, session: request.jwtLogin.claims.sid }
})
fastify.addHook('preHandler', api.authenticate)
assertType<Equal<JwtLoginRequestState, { user: PublicUser, claims: TokenClaims }>>()
assertType<Equal<PublicUser, { ID: number, user_login: string, user_email: string, display_name: string, roles: string[] }>>()
