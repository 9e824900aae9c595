// What the API-key tests share: a host with keys on and routes that take them, a sign-in, a key created through the route, a host route called with a key.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { createSigner } from 'fast-jwt'
import type { JwtLoginOptions, SettingsInput } from '../../lib/index.js'
import { ALICE, buildHost, HS_SECRET, testClock, type TestApp } from './app.js'
import { claimsOf, PREFIX } from './http.js'
import { MailBox } from './mail-box.js'

export const API_KEYS = `${PREFIX}/account/api-keys`

/** The scopes the test host declares. */
export const SCOPES = ['orders:read', 'orders:write', 'reports']

/** A key as the plugin writes it with the default prefix. */
export const KEY_FORM = /^jwtl_[A-Za-z0-9_-]{16}_[A-Za-z0-9_-]{43}$/

export type Clock = ReturnType<typeof testClock>

export interface KeysApp extends TestApp {
  clock: Clock
}

/**
 * A host with API keys on (the test scopes declared), sessions and the
 * account's routes on (a mail box as the mailer), and three host routes: `/orders` (a key with
 * `orders:read`, or a token), `/any` (a key without scope, or a token),
 * `/token` (a token only, as `authenticate`). Each answers what
 * `request.jwtLogin` holds.
 */
export async function keysApp (settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<KeysApp> {
  const clock = testClock()
  const { apiKeys, ...rest } = settings
  const built = await buildHost((app) => {
    const answer = async (request: { jwtLogin: unknown }): Promise<unknown> => request.jwtLogin
    app.get('/orders', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true, scopes: ['orders:read'] }) }, answer)
    app.get('/any', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true }) }, answer)
    app.get('/token', { preHandler: app.jwtLogin.authenticate }, answer)
  }, {
    sessions: { enabled: true },
    account: { enabled: true },
    users: { delete: { enabled: true } },
    apiKeys: { enabled: true, scopes: SCOPES, ...apiKeys },
    ...rest
  }, { clock, mailer: new MailBox(), ...options })
  return { ...built, clock }
}

const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })

/** A password sign-in of `who` (alice); answers the access token. */
export async function signIn (app: FastifyInstance, who: { email: string, password: string } = ALICE): Promise<string> {
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: who.email, password: who.password } })
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.body}`)
  return res.json().data.jwt as string
}

/** `POST /account/api-keys` with `jwt`. */
export async function createKey (app: FastifyInstance, jwt: string, body: Record<string, unknown> = { name: 'ci', scopes: ['orders:read'] }): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: API_KEYS, headers: bearer(jwt), payload: body })
}

/** A key created through the route: its key and id, or a thrown error. */
export async function newKey (app: FastifyInstance, jwt: string, body?: Record<string, unknown>): Promise<{ key: string, id: string }> {
  const res = await createKey(app, jwt, body)
  if (res.statusCode !== 200) throw new Error(`creation failed: ${res.body}`)
  return res.json().data
}

/** `GET /account/api-keys` with `jwt`. */
export async function listKeys (app: FastifyInstance, jwt: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'GET', url: API_KEYS, headers: bearer(jwt) })
}

/** `DELETE /account/api-keys/{id}` with `jwt`. */
export async function deleteKey (app: FastifyInstance, jwt: string, id: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'DELETE', url: `${API_KEYS}/${id}`, headers: bearer(jwt) })
}

/** A host route called with `key` in `X-API-Key` (or `Authorization: Bearer` with `via: 'bearer'`), from `ip`. */
export async function withKey (app: FastifyInstance, key: string, { path = '/orders', via = 'header', ip = '127.0.0.1' }: { path?: string, via?: 'header' | 'bearer', ip?: string } = {}): Promise<LightMyRequestResponse> {
  const headers = via === 'header' ? { 'x-api-key': key } : bearer(key)
  return await app.inject({ method: 'GET', url: path, headers, remoteAddress: ip })
}

/** The same token with an `act` claim (an impersonation token as RFC 8693 writes it), signed with the test key. */
export function actingToken (jwt: string, actorId = 99): string {
  const sign = createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k1' })
  return sign({ ...claimsOf(jwt), act: { sub: String(actorId) } })
}
