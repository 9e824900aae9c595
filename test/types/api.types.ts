// Type tests of the `fastify.jwtLogin` decoration (`JwtLoginApi`) and of
// `request.jwtLogin` (`JwtLoginRequestState`), which lib declares on Fastify's
// types by module augmentation once a host imports 'jwt-login'.
import type { JsonWebKey } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApiKeyIdentity, ApiKeyInfo, EndAllSessionsOptions, HealthCheck, HealthOptions, HealthReport, JwtLoginApi, JwtLoginEventMap, JwtLoginErrorCode, JwtLoginEventName, JwtLoginEventPayload, JwtLoginEvents, JwtLoginRequestState, PublicJwk, PublicUser, Settings, TokenClaims, TokenKind, TwoFactorEnrollment } from '../../lib/index.js'
import { expectType, type Equal } from './expect.js'

declare const fastify: FastifyInstance
declare const user: PublicUser

expectType<Equal<FastifyInstance['jwtLogin'], JwtLoginApi>>(true)
const api = fastify.jwtLogin

// each method's parameters and result
expectType<Equal<typeof api.sign, (user: PublicUser) => string>>(true)
expectType<Equal<typeof api.verify, (token: string) => Promise<TokenClaims>>>(true)
expectType<Equal<typeof api.revoke, (token: string) => Promise<void>>>(true)
expectType<Equal<typeof api.forgetUser, (userId: number) => void>>(true)
expectType<Equal<typeof api.authenticate, (request: FastifyRequest, reply: FastifyReply) => Promise<void>>>(true)
expectType<Equal<typeof api.reloadSettings, () => Promise<void>>>(true)
expectType<Equal<ReturnType<typeof api.jwks>, { keys: PublicJwk[] } | null>>(true)
// still assignable to node:crypto's JsonWebKey where a host's @types/node exports it (20 does, 25 no longer)
expectType<JsonWebKey[]>(api.jwks()?.keys ?? [])
expectType<Equal<typeof api.twoFactor, TwoFactorEnrollment | null>>(true)
expectType<JwtLoginEvents>(api.events)

expectType<string>(api.sign(user))
const claims = expectType<TokenClaims>(await api.verify('token'))
expectType<string>(claims.sub)
expectType<string>(claims.sid)
expectType<Equal<typeof claims.typ, TokenKind>>(true)
expectType<Equal<TokenKind, 'access' | 'interim'>>(true)
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

// sessions: end one, or all but the one to keep (the caller's own, after the host's own password change)
expectType<Equal<typeof api.endSession, (userId: number, sessionId: string) => Promise<boolean>>>(true)
expectType<Equal<typeof api.endAllSessions, (userId: number, options?: EndAllSessionsOptions) => Promise<boolean>>>(true)
expectType<Equal<EndAllSessionsOptions, { keep?: string }>>(true)
expectType<boolean>(await api.endAllSessions(1))
expectType<boolean>(await api.endAllSessions(1, { keep: claims.sid }))

// @ts-expect-error: keep is a session id, not a token's claims
await api.endAllSessions(1, { keep: claims })

// @ts-expect-error: the session to keep goes in the options
await api.endAllSessions(1, claims.sid)

// impersonation: a token naming its actor, listed with it; host routes may refuse it
expectType<{ jwt: string, sessionId: string, expiresAt: Date }>(await api.impersonate({ actorId: 2, userId: 1, reason: 'ticket 4711', lifetime: '15m' }))
expectType<Equal<Awaited<ReturnType<typeof api.impersonate>>, { jwt: string, sessionId: string, expiresAt: Date }>>(true)
expectType<{ sub: string } | undefined>(claims.act)
expectType<number | null>((await api.sessions(1))[0]!.actorId)
expectType<Equal<(typeof api.sessions extends (userId: number) => Promise<Array<infer S>> ? S : never)['method'], 'password' | 'provider' | 'passkey' | 'email' | 'impersonation' | null>>(true)
api.authenticateWith({ allowImpersonation: false })

// @ts-expect-error: the reason is required
await api.impersonate({ actorId: 2, userId: 1 })

// @ts-expect-error: allowImpersonation is a boolean
api.authenticateWith({ allowImpersonation: 'no' })

// the settings in force, read-only all the way down
expectType<number>(api.settings.bodyLimit)
expectType<number>(api.settings.tokens.lifetimeMs)
expectType<Equal<typeof api.settings.tokens.algorithm, Settings['tokens']['algorithm']>>(true)

// @ts-expect-error: the settings are read-only
api.settings.bodyLimit = 1

// @ts-expect-error: nested groups too
api.settings.refresh.enabled = true

// @ts-expect-error: the decoration's settings cannot be replaced either
api.settings = fastify.jwtLogin.settings

// @ts-expect-error: two-factor helpers are null without the twoFactor option
await api.twoFactor.regenerateBackupCodes(1)

if (api.twoFactor !== null) {
  expectType<{ secret: string, uri: string }>(api.twoFactor.createTotpSecret('ada@example.com'))
  expectType<boolean>(await api.twoFactor.confirmTotp(1, 'SECRET', '123456'))
  expectType<string[]>(await api.twoFactor.regenerateBackupCodes(1))
}

// events: each payload typed by its name
api.events.on('login.succeeded', payload => {
  expectType<Equal<typeof payload, JwtLoginEventPayload<'login.succeeded'>>>(true)
  expectType<number>(payload.userId)
  // an event emitted while an impersonation token is used names its actor
  expectType<number | undefined>(payload.actorId)
  expectType<Equal<typeof payload.method, 'password' | 'password_hash' | 'passkey' | 'email'>>(true)
  // @ts-expect-error: a login carries no session id
  expectType<string>(payload.sessionId)
})
api.events.once('reset.requested', payload => {
  expectType<Equal<typeof payload.userId, number | null>>(true)
})
api.events.on('oauth.failed', payload => {
  expectType<string | null>(payload.provider)
  expectType<Equal<typeof payload.reason, JwtLoginErrorCode>>(true)
})
// on, once and off chain
expectType<JwtLoginEvents>(api.events.on('token.revoked', () => {}).off('token.revoked', () => {}))
expectType<Equal<JwtLoginEventName, keyof JwtLoginEventMap>>(true)

// @ts-expect-error: no such event
api.events.on('login.succeded', () => {})

// @ts-expect-error: a listener of another event's payload
api.events.on('login.failed', (payload: JwtLoginEventMap['login.succeeded']) => payload.userId)

// @ts-expect-error: a host does not emit an event with the wrong payload
api.events.emit('token.refreshed', { userId: 1 })

// authenticate as a preHandler of a host route; request.jwtLogin is set after it
fastify.get('/me', { preHandler: api.authenticate }, async (request) => {
  expectType<Equal<typeof request.jwtLogin, JwtLoginRequestState | null>>(true)
  // @ts-expect-error: null before authentication, so a host checks
  expectType<PublicUser>(request.jwtLogin.user)
  if (request.jwtLogin === null) return null
  expectType<Equal<typeof request.jwtLogin.user, PublicUser>>(true)
  // @ts-expect-error: null on a route that took an API key, so a host narrows
  expectType<string>(request.jwtLogin.claims.sid)
  if (request.jwtLogin.apiKey !== null) return { id: request.jwtLogin.user.ID, key: request.jwtLogin.apiKey.id, scopes: request.jwtLogin.apiKey.scopes }
  expectType<Equal<typeof request.jwtLogin.claims, TokenClaims>>(true)
  expectType<Equal<typeof request.jwtLogin.actor, { id: number } | null>>(true)
  return { id: request.jwtLogin.user.ID, roles: request.jwtLogin.user.roles, session: request.jwtLogin.claims.sid }
})
fastify.addHook('preHandler', api.authenticate)
expectType<Equal<JwtLoginRequestState, { user: PublicUser, claims: TokenClaims, actor: { id: number } | null, apiKey: null } | { user: PublicUser, claims: null, actor: null, apiKey: ApiKeyIdentity }>>(true)
expectType<Equal<ApiKeyIdentity, { id: string, name: string, scopes: string[] }>>(true)
// @ts-expect-error: scopes are a list
api.authenticateWith({ apiKey: true, scopes: 'orders:read' })
expectType<Promise<boolean>>(api.revokeApiKey(1, 'id'))
expectType<Promise<ApiKeyInfo[]>>(api.listApiKeys(1))
expectType<string>((await api.createApiKey(1, { name: 'ci', scopes: ['orders:read'], expiresIn: 3600 })).key)
expectType<Equal<PublicUser, { ID: number, user_login: string, user_email: string, display_name: string, roles: string[], email_verified?: boolean }>>(true)

// health: one cheap read of the store and of each port, within a deadline
expectType<Equal<typeof api.health, (options?: HealthOptions) => Promise<HealthReport>>>(true)
expectType<Equal<HealthOptions, { deadlineMs?: number }>>(true)
expectType<Equal<HealthReport, { healthy: boolean, checks: HealthCheck[] }>>(true)
expectType<Equal<HealthCheck, { name: 'store' | 'users' | 'passkeys', healthy: boolean, durationMs: number, problem?: string }>>(true)
expectType<string | undefined>((await api.health({ deadlineMs: 500 })).checks[0]?.problem)
// @ts-expect-error: the deadline is a number of ms
await api.health({ deadlineMs: '1s' })
