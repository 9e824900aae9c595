/**
 * The servers the bench measures: jwt-login as a host registers it, and the
 * bare Fastify baselines doing the least a host would do for the same answer.
 */
import fastifyJwt from '@fastify/jwt'
import argon2 from 'argon2'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { ARGON2_OPTIONS, MemoryStore, type PasskeyPort, type PublicUser, type StateStore, type TwoFactorPort, type UserAdapter } from '../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter, type MemoryUser } from '../lib/testing.js'
import { AUDIENCE, ISSUER, KEYCLOAK_USER, PASSKEY_ORIGIN, PASSKEY_RP_ID, REFRESH_LIFETIME, SECRET, signInUser, totpUser, USER } from './shared.js'

/** The baselines verify what @fastify/jwt can check itself: the pinned algorithm, issuer and audience. */
const BASELINE_VERIFY = { algorithms: ['HS256' as const], allowedIss: ISSUER, allowedAud: AUDIENCE }
const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Keycloak's default argon2 parameters (its `argon2` password-hashing
 * provider: argon2id, 7 MiB, 5 iterations, 1 lane), for the sizing run's
 * sign-in beside Keycloak's published figures.
 */
export const KEYCLOAK_ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 7168, timeCost: 5, parallelism: 1 } as const

/**
 * A very cheap argon2id (64 KiB, 1 pass): the stored hash of
 * the sizing run's TOTP users, whose password sign-ins are only the
 * unmeasured challenges before the measured second factors, so that making
 * thousands of them costs little.
 */
const CHALLENGE_ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 64, timeCost: 1, parallelism: 1 } as const

/** What a subject app is registered with beside the common settings. */
interface SubjectOptions {
  users: UserAdapter
  store?: StateStore
  maxPerUser?: number
  passkeys?: PasskeyPort
  twoFactor?: TwoFactorPort
  /** `passwordHashing.concurrency`; the default (one fewer than the cores) when absent */
  hashingConcurrency?: number
}

/**
 * jwt-login with refresh tokens on, and the per-IP request and sign-in
 * limits out of the way. `maxPerUser`: the bench signs one user in again and
 * again; the default (50) keeps the login runs at a real user's steady
 * state, and the store-growth run, whose sessions must all live, raises it.
 * `passkeys`: a passkey port turns passkeys on (see `subjectPasskeyApp`);
 * `twoFactor`: a two-factor port turns the second step on (see `remoteApp`);
 * `hashingConcurrency`: the password-hashing bound (see `sizingApp`).
 */
async function registered ({ users, store, maxPerUser = 50, passkeys, twoFactor, hashingConcurrency }: SubjectOptions): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    restRoute: false,
    ...(store === undefined ? {} : { store }),
    ...(passkeys === undefined ? {} : { passkeys: { port: passkeys } }),
    ...(twoFactor === undefined ? {} : { twoFactor: { port: twoFactor } }),
    settings: {
      // an hour, so a long bench never validates an expired token; the lifetime costs nothing per request
      tokens: { keys: [{ kid: 'bench', secret: SECRET }], lifetime: '1h' },
      refresh: { enabled: true, lifetime: REFRESH_LIFETIME },
      // the baselines have no request limit; the login lockouts stay on (successes do not count)
      limits: { requestsPerIp: { max: 1_000_000_000, window: '1m' }, signInsPerAccount: { max: 1_000_000_000, window: '1m' } },
      sessions: { maxPerUser },
      ...(hashingConcurrency === undefined ? {} : { passwordHashing: { concurrency: hashingConcurrency } }),
      ...(passkeys === undefined ? {} : { passkeys: { enabled: true, rpId: PASSKEY_RP_ID, origins: [PASSKEY_ORIGIN] } })
    }
  })
  return app
}

/**
 * jwt-login with the bench user in a `MemoryUserAdapter` (see `registered`
 * for the settings); `hashingConcurrency`: `passwordHashing.concurrency`,
 * the default when absent.
 */
export async function subjectApp (store?: StateStore, maxPerUser = 50, passkeys?: PasskeyPort, hashingConcurrency?: number): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(USER)
  return await registered({ users, store, maxPerUser, passkeys, hashingConcurrency })
}

/**
 * The bench user and `count` more sign-in users and `count` TOTP users, all
 * with the bench user's password and its one argon2id hash: each sign-in
 * verifies the password as the memory adapter does, but the users cost no
 * hashing to create. Each sign-in of the latency run can so be a user's
 * first (the usual path the round-trip targets count), and each TOTP code a
 * user's first (a step is spent once per user).
 */
export class BenchUsers implements UserAdapter<MemoryUser> {
  readonly #inner: MemoryUserAdapter
  readonly #byEmail = new Map<string, MemoryUser>()
  readonly #byLogin = new Map<string, MemoryUser>()
  readonly #byId = new Map<number, MemoryUser>()
  /** The ids of the TOTP users, for the two-factor port. */
  readonly totpIds: number[] = []

  private constructor (inner: MemoryUserAdapter) {
    this.#inner = inner
  }

  /**
   * `count` sign-in users and `totp` TOTP users (as many by default), all
   * with the bench user's password; the TOTP users' stored hash is
   * `totpPasswordHash` when given, else the bench user's.
   */
  static async create (count: number, { totp = count, totpPasswordHash }: { totp?: number, totpPasswordHash?: string } = {}): Promise<BenchUsers> {
    const inner = new MemoryUserAdapter()
    const bench = await inner.addUser(USER)
    const users = new BenchUsers(inner)
    for (let i = 0; i < count; i++) users.#add(bench, signInUser(i))
    const totpUsers = totpPasswordHash === undefined ? bench : { ...bench, passwordHash: totpPasswordHash }
    for (let i = 0; i < totp; i++) users.totpIds.push(users.#add(totpUsers, totpUser(i)))
    return users
  }

  /** One more user with the bench user's password under `passwordHash` (a hash made with other parameters); answers its id. */
  async addWithHash (who: { id: number, login: string, email: string }, passwordHash: string): Promise<number> {
    const bench = await this.#inner.findByEmail(USER.email) as MemoryUser
    return this.#add({ ...bench, passwordHash }, who)
  }

  #add (model: MemoryUser, { id, login, email }: { id: number, login: string, email: string }): number {
    const user: MemoryUser = { ...model, ID: id, user_login: login, user_email: email, display_name: login, roles: [...model.roles] }
    this.#byEmail.set(email, user)
    this.#byLogin.set(login, user)
    this.#byId.set(id, user)
    return id
  }

  async findByEmail (email: string): Promise<MemoryUser | null> {
    return this.#byEmail.get(email.toLowerCase()) ?? await this.#inner.findByEmail(email)
  }

  async findByLogin (login: string): Promise<MemoryUser | null> {
    return this.#byLogin.get(login) ?? await this.#inner.findByLogin(login)
  }

  async findById (id: number): Promise<MemoryUser | null> {
    return this.#byId.get(id) ?? await this.#inner.findById(id)
  }

  async verifyPassword (user: MemoryUser, password: string): Promise<boolean> {
    return await this.#inner.verifyPassword(user, password)
  }

  toPublicUser (user: MemoryUser): PublicUser {
    return this.#inner.toPublicUser(user)
  }
}

/**
 * The subject of the login flood: the subject app's settings on a memory
 * store, with the bench user (whom the flood signs in) and one more user
 * (whose token is validated), so the flood's sessions, bounded per user,
 * never push out the validated token's session.
 */
export async function floodApp (): Promise<FastifyInstance> {
  return await registered({ users: await BenchUsers.create(1) })
}

/** A `MemoryTwoFactorStore` in which each of `ids` has TOTP on with `secret`. */
async function totpPort (ids: number[], secret: string): Promise<MemoryTwoFactorStore> {
  const port = new MemoryTwoFactorStore()
  for (const id of ids) {
    await port.setTotpSecret(id, secret)
    port.enable(id, 'totp')
  }
  return port
}

/**
 * The subject of the latency run: jwt-login on `store`, with the users of
 * `BenchUsers` and a `MemoryTwoFactorStore` in which every TOTP user has
 * TOTP on with `totpSecret` (the parent makes the codes).
 */
export async function remoteApp (store: StateStore, users: number, totpSecret: string): Promise<FastifyInstance> {
  const benchUsers = await BenchUsers.create(users)
  return await registered({ users: benchUsers, store, twoFactor: await totpPort(benchUsers.totpIds, totpSecret) })
}

/** Sign-in users of the sizing server: one for each refresh chain, the last for the validated token, with room to spare. */
export const SIZING_SIGN_IN_USERS = 64

/**
 * The subject of the sizing run (bench/sizing.ts): jwt-login on a memory
 * store, with the password-hashing bound at `hashingConcurrency`, and as
 * users
 * - the bench user (the default argon2 parameters, `ARGON2_OPTIONS`), whom
 *   the sign-in load signs in again and again;
 * - `KEYCLOAK_USER`, the same password hashed with Keycloak's defaults
 *   (argon2 reads the parameters from the stored hash, so nothing else
 *   differs);
 * - `SIZING_SIGN_IN_USERS` sign-in users, for the refresh chains and the
 *   validated token, whom no load signs in (their sessions stay);
 * - `totpUsers` TOTP users, each second factor a fresh one's, with TOTP on
 *   with `totpSecret` and a cheap stored hash (`CHALLENGE_ARGON2_OPTIONS`).
 * The store's bounds are raised so that every TOTP user's entries fit (a
 * challenge and a second factor write 5 state entries and 9 counters).
 */
export async function sizingApp (totpUsers: number, totpSecret: string, hashingConcurrency: number): Promise<FastifyInstance> {
  const users = await BenchUsers.create(SIZING_SIGN_IN_USERS, { totp: totpUsers, totpPasswordHash: await argon2.hash(USER.password, CHALLENGE_ARGON2_OPTIONS) })
  await users.addWithHash(KEYCLOAK_USER, await argon2.hash(USER.password, KEYCLOAK_ARGON2_OPTIONS))
  const store = new MemoryStore({ maxEntries: 100_000 + 8 * totpUsers, maxCounters: 100_000 + 12 * totpUsers })
  return await registered({ users, store, twoFactor: await totpPort(users.totpIds, totpSecret), hashingConcurrency })
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
 * What a bare route with a store reads for a token (the session's entry and
 * its user's cutoff), and whether the token is still live by what it read.
 */
export interface SessionRead {
  live: (sessionId: string, userId: string) => Promise<boolean>
  close: () => Promise<void>
}

/**
 * `POST /verify`: the token from the JSON body verified with @fastify/jwt,
 * answered in the shape of jwt-login's validate answer, padded to
 * `answerBytes` (jwt-login's answer for the same token). With `read`, the
 * store is read first and a token it finds ended answers 401.
 */
export async function bareValidateApp (answerBytes: number, read?: SessionRead): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(fastifyJwt, { secret: SECRET, verify: { ...BASELINE_VERIFY, complete: true } })
  app.post('/verify', async (request, reply) => {
    const token = (request.body as { JWT?: unknown } | null)?.JWT
    if (typeof token !== 'string') return await reply.code(400).send({ success: false })
    const { header, payload } = app.jwt.verify<{ header: object, payload: Record<string, unknown> & { sub: string, sid: string, exp: number } }>(token)
    if (read !== undefined && !await read.live(payload.sid, payload.sub)) return await reply.code(401).send({ success: false })
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

/**
 * At most `limit` tasks at once, the others waiting first in, first out: a
 * bare semaphore written for the bench (no package), the least a host would
 * write to bound its hashing as jwt-login's `passwordHashing.concurrency`
 * does, without the plugin's two queues, their bounds and its refusals.
 */
class FifoSemaphore {
  readonly #limit: number
  readonly #waiting: Array<() => void> = []
  #running = 0

  constructor (limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`a semaphore needs a positive integer limit, not ${limit}`)
    this.#limit = limit
  }

  /** Runs `task` in a slot, after those that came first; the slot goes to the next in line however the task ends. */
  async run<T> (task: () => Promise<T>): Promise<T> {
    if (this.#running < this.#limit) {
      this.#running++
    } else {
      // the slot is handed over by the task that gives it back: `#running` stays counted
      await new Promise<void>(resolve => { this.#waiting.push(resolve) })
    }
    try {
      return await task()
    } finally {
      const next = this.#waiting.shift()
      if (next === undefined) this.#running--
      else next()
    }
  }
}

/**
 * `POST /argon2`: one argon2id verification of the login body's password
 * against the user's hash; with `atOnce`, at most that many verifications
 * run at once, the others waiting in arrival order (`FifoSemaphore`), as
 * jwt-login's hashing bound makes sign-ins wait; unbounded without.
 */
export async function bareArgon2App (atOnce?: number): Promise<FastifyInstance> {
  const hash = await argon2.hash(USER.password, ARGON2_OPTIONS)
  const bound = atOnce === undefined ? null : new FifoSemaphore(atOnce)
  const verify = async (password: string): Promise<boolean> => await argon2.verify(hash, password)
  const app = Fastify()
  app.post('/argon2', async (request, reply) => {
    const password = (request.body as { password?: unknown } | null)?.password
    if (typeof password !== 'string' || !(await (bound === null ? verify(password) : bound.run(async () => await verify(password))))) {
      return await reply.code(401).send({ success: false })
    }
    return { success: true }
  })
  return app
}
