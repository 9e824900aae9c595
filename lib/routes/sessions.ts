import type { Static } from '@sinclair/typebox'
import { JwtFields, MessageReply } from '../../schemas/auth.js'
import { EndAllQuery, IdParams, SessionsReply } from '../../schemas/sessions.js'
import type { JwtLoginContext } from '../context/context.js'
import { succeed } from '../http/error-handler.js'
import { JwtLoginError } from '../core/errors.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { TOKEN_REFUSALS } from '../sessions/authenticate.js'
import { callerOf, IMPERSONATION_REFUSED, iso, said } from './caller.js'
import { endAllSessions, endOwnSession, listSessions } from '../sessions/manage.js'
import { forgetOwnDevice, listDevices } from '../sessions/devices.js'
import type { IndexedSession } from '../tokens/session-index.js'
import type { TrustedDevice } from '../tokens/trusted-devices.js'

/** Every session route: the switch, a final access token (Bearer or `JWT`), and the token's refusals. */
const GATE: RouteGate = { feature: 'sessions', token: 'access', errors: TOKEN_REFUSALS }
const END_ONE: RouteGate = { ...GATE, errors: [...TOKEN_REFUSALS, IMPERSONATION_REFUSED, 'ERR_JWT_LOGIN_SESSION_NOT_FOUND'] }
const END_ALL: RouteGate = { ...GATE, errors: [...TOKEN_REFUSALS, IMPERSONATION_REFUSED] }
const END_DEVICE: RouteGate = { ...GATE, errors: [...TOKEN_REFUSALS, IMPERSONATION_REFUSED, 'ERR_JWT_LOGIN_DEVICE_NOT_FOUND'] }

const LIST_DOC: RouteDoc = {
  tags: ['sessions'],
  operationId: 'jwtLoginSessions',
  summary: 'List my sessions and trusted devices',
  description: 'The live sessions of the token\'s user (oldest sign-in first; `current` marks the token\'s own) with how each began, ' +
    'and the devices trusted for the second factor. Ids are not secrets: they cannot refresh or sign in.'
}
const END_ONE_DOC: RouteDoc = {
  tags: ['sessions'],
  operationId: 'jwtLoginEndSession',
  summary: 'End one of my sessions',
  description: 'Its access and refresh tokens are refused from the next request on, on every instance. A session that is not one of the user\'s live sessions answers 404.'
}
const END_ALL_DOC: RouteDoc = {
  tags: ['sessions'],
  operationId: 'jwtLoginEndSessions',
  summary: 'Sign out everywhere',
  description: 'Ends every session of the user, access tokens already issued included, from the next request on; `keep_current=true` keeps the caller\'s own. ' +
    'Trusted devices are forgotten too. When the caller\'s own session was ended meanwhile (a sign-out everywhere from another session, which then changes nothing here), the answer is 401 / 55.'
}
const END_DEVICE_DOC: RouteDoc = {
  tags: ['sessions'],
  operationId: 'jwtLoginForgetDevice',
  summary: 'Forget one of my trusted devices',
  description: 'Its device token no longer stands in for the second factor. A device that is not one of the user\'s answers 404.'
}

/** The fields of `values` that have one: the answer leaves out what is `null` or absent. */
function defined<T extends object> (values: T): T {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== null && value !== undefined)) as T
}

function sessionItem (session: IndexedSession, current: string): Static<typeof SessionsReply>['data']['sessions'][number] {
  const { origin } = session
  const signIn = origin?.method === 'impersonation' ? null : origin
  return defined({
    id: session.id,
    current: session.id === current,
    started_at: iso(session.startedAt),
    last_refreshed_at: session.lastRefreshedAt === null ? undefined : iso(session.lastRefreshedAt),
    method: origin?.method,
    provider: signIn?.provider,
    second_factor: signIn?.secondFactor,
    actor_id: origin?.method === 'impersonation' ? origin.actorId : undefined,
    ip: session.ip ?? undefined,
    user_agent: session.userAgent ?? undefined
  })
}

function deviceItem (device: TrustedDevice): Static<typeof SessionsReply>['data']['devices'][number] {
  return defined({
    id: device.id,
    trusted_at: iso(device.trustedAt),
    last_used_at: device.lastUsedAt === null ? undefined : iso(device.lastUsedAt),
    expires_at: iso(device.expiresAt),
    ip: device.ip,
    user_agent: device.userAgent ?? undefined
  })
}

/**
 * `GET /sessions`, `DELETE /sessions/{id}`, `DELETE /sessions` and
 * `DELETE /devices/{id}`, each with the user's final access token. They
 * spend nothing guessable (a signed token is needed), so they skip the
 * per-IP request limit like validate and revoke.
 */
export function sessionRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const caller = callerOf(ctx)
  // signing the user out everywhere, and forgetting a trusted device (a second factor's stand-in): the user's, or the host's
  // (`endAllSessions`, `forgetDevices`), never someone acting as the user
  const owner = callerOf(ctx, { impersonation: false })

  app.get('/sessions', {
    config: { jwtLogin: GATE, rateLimit: false },
    schema: { ...LIST_DOC, querystring: JwtFields, response: { 200: SessionsReply } }
  }, async (request) => {
    const { publicUser, verified } = await caller(request)
    const [sessions, devices] = await Promise.all([listSessions(ctx, publicUser.ID), listDevices(ctx, publicUser.ID)])
    return succeed({
      sessions: sessions.map(session => sessionItem(session, verified.payload.sid)),
      devices: devices.map(deviceItem)
    })
  })

  app.delete('/sessions/:id', {
    config: { jwtLogin: END_ONE, rateLimit: false },
    schema: { ...END_ONE_DOC, params: IdParams, querystring: JwtFields, response: { 200: MessageReply } }
  }, async (request) => {
    const { publicUser, verified } = await caller(request)
    // someone acting as the user ends their own session only (as `/auth/revoke` does), none of the user's
    if (verified.payload.act !== undefined && request.params.id !== verified.payload.sid) throw new JwtLoginError(IMPERSONATION_REFUSED)
    if (!await endOwnSession(ctx, stateOf(request).call.settings, publicUser.ID, request.params.id, 'sign_out')) throw new JwtLoginError('ERR_JWT_LOGIN_SESSION_NOT_FOUND')
    return succeed({ message: said(ctx, request, 'sessionEnded') })
  })

  app.delete('/sessions', {
    config: { jwtLogin: END_ALL, rateLimit: false },
    schema: { ...END_ALL_DOC, querystring: EndAllQuery, response: { 200: MessageReply } }
  }, async (request) => {
    const { publicUser, verified } = await owner(request)
    const keep = request.query.keep_current === 'true' ? verified.payload.sid : undefined
    await endAllSessions(ctx, stateOf(request).call.settings, publicUser.ID, 'sign_out_everywhere', keep)
    return succeed({ message: said(ctx, request, keep === undefined ? 'everySessionEnded' : 'everyOtherSessionEnded') })
  })

  app.delete('/devices/:id', {
    config: { jwtLogin: END_DEVICE, rateLimit: false },
    schema: { ...END_DEVICE_DOC, params: IdParams, querystring: JwtFields, response: { 200: MessageReply } }
  }, async (request) => {
    const { publicUser } = await owner(request)
    await forgetOwnDevice(ctx, publicUser.ID, request.params.id)
    return succeed({ message: said(ctx, request, 'deviceForgotten') })
  })
}
