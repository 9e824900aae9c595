/**
 * The servers the bench measures: jwt-login as a host registers it, and the
 * bare Fastify baselines doing the least a host would do for the same answer.
 */
import fastifyJwt from '@fastify/jwt'
import argon2 from 'argon2'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { ARGON2_OPTIONS, type PasskeyPort, type StateStore } from '../lib/index.js'
import { MemoryPasskeyStore, MemoryUserAdapter } from '../lib/testing.js'
import { AUDIENCE, ISSUER, PASSKEY_ORIGIN, PASSKEY_RP_ID, REFRESH_LIFETIME, SECRET, USER } from './shared.js'

/** The baselines verify what @fastify/jwt can check itself: the pinned algorithm, issuer and audience. */
const BASELINE_VERIFY = { algorithms: ['HS256' as const], allowedIss: ISSUER, allowedAud: AUDIENCE }
const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * jwt-login with one memory user, refresh tokens on, and the per-IP request
 * and sign-in limits out of the way. `maxPerUser`: the bench signs one user in
 * again and again; the default (50) keeps the login runs at a real user's
 * steady state, and the store-growth run, whose sessions must all live,
 * raises it. `passkeys`: a passkey port turns passkeys on (see
 * `subjectPasskeyApp`).
 */
export async function subjectApp (store?: StateStore, maxPerUser = 50, passkeys?: PasskeyPort): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(USER)
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    restRoute: false,
    ...(store === undefined ? {} : { store }),
    ...(passkeys === undefined ? {} : { passkeys: { port: passkeys } }),
    settings: {
      // an hour, so a long bench never validates an expired token; the lifetime costs nothing per request
      tokens: { keys: [{ kid: 'bench', secret: SECRET }], lifetime: '1h' },
      refresh: { enabled: true, lifetime: REFRESH_LIFETIME },
      // the baselines have no request limit; the login lockouts stay on (successes do not count)
      limits: { requestsPerIp: { max: 1_000_000_000, window: '1m' }, signInsPerAccount: { max: 1_000_000_000, window: '1m' } },
      sessions: { maxPerUser },
      ...(passkeys === undefined ? {} : { passkeys: { enabled: true, rpId: PASSKEY_RP_ID, origins: [PASSKEY_ORIGIN] } })
    }
  })
  return app
}

/**
 * The subject app with passkeys on, credentials in a `MemoryPasskeyStore`,
 * for the passkey sign-in and its password baseline. The bench user has no
 * passkey yet: the parent enrols one over HTTP, as a browser would.
 */
export async function subjectPasskeyApp (): Promise<FastifyInstance> {
  return await subjectApp(undefined, 50, new MemoryPasskeyStore())
}

/** A host route behind `app.jwtLogin.authenticate`. */
export async function subjectHookApp (): Promise<FastifyInstance> {
  const app = await subjectApp()
  app.get('/private', { preHandler: app.jwtLogin.authenticate }, async (request) => {
    return { success: true, data: { id: request.jwtLogin?.user.ID } }
  })
  return app
}

/** The same host route behind @fastify/jwt's `request.jwtVerify()`. */
export async function bareHookApp (): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyJwt, { secret: SECRET, verify: BASELINE_VERIFY })
  app.get('/private', {
    preHandler: async (request) => { await request.jwtVerify() }
  }, async (request) => {
    return { success: true, data: { id: Number((request.user as { sub: string }).sub) } }
  })
  return app
}

/** Pads a JSON object's text with one more string field to `bytes` (ASCII only), so both answers weigh the same. */
export function padJson (json: string, bytes: number): string {
  const room = bytes - json.length - ',"pad":""'.length
  if (room < 0) return json
  return `${json.slice(0, -1)},"pad":"${' '.repeat(room)}"}`
}

/**
 * `POST /verify`: the token from the JSON body verified with @fastify/jwt,
 * answered in the shape of jwt-login's validate answer, padded to
 * `answerBytes` (jwt-login's answer for the same token).
 */
export async function bareValidateApp (answerBytes: number): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyJwt, { secret: SECRET, verify: { ...BASELINE_VERIFY, complete: true } })
  app.post('/verify', async (request, reply) => {
    const token = (request.body as { JWT?: unknown } | null)?.JWT
    if (typeof token !== 'string') return await reply.code(400).send({ success: false })
    const { header, payload } = app.jwt.verify<{ header: object, payload: Record<string, unknown> & { sub: string, exp: number } }>(token)
    const user = {
      ID: Number(payload.sub),
      user_login: payload.username,
      user_email: payload.email,
      display_name: payload.username,
      roles: payload.roles
    }
    const expireIn = Math.max(0, payload.exp - Math.floor(Date.now() / 1000))
    const json = JSON.stringify({ success: true, data: { user, jwt: [{ token, header, payload, expire_in: expireIn }] } })
    return await reply
      .type(JSON_TYPE)
      .header('cache-control', 'no-store')
      .header('pragma', 'no-cache')
      .send(padJson(json, answerBytes))
  })
  return app
}

/** `POST /argon2`: one argon2id verification of the login body's password against the user's hash. */
export async function bareArgon2App (): Promise<FastifyInstance> {
  const hash = await argon2.hash(USER.password, ARGON2_OPTIONS)
  const app = Fastify()
  app.post('/argon2', async (request, reply) => {
    const password = (request.body as { password?: unknown } | null)?.password
    if (typeof password !== 'string' || !(await argon2.verify(hash, password))) {
      return await reply.code(401).send({ success: false })
    }
    return { success: true }
  })
  return app
}
