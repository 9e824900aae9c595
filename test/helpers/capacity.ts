/**
 * The measurements behind the capacity model (docs/deployment.md, "Capacity
 * model"): each route's usual path run through the plugin on a memory store
 * that records every call, and the way the docs write those calls.
 * test/store/capacity-model.test.ts checks the docs' tables against them, and
 * scripts/capacity-measure.ts replays the entries they write on Redis and
 * PostgreSQL to measure their size.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { generate } from 'otplib'
import jwtLogin, { createTotpSecret, generateBackupCodes, MemoryStore, type NewProviderUser, type PublicUser, type StateStore, type UserAdapter } from '../../lib/index.js'
import type { AtomicBatch } from '../../lib/store/types.js'
import { MemoryTwoFactorStore, MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from './app.js'
import { providers } from './oauth.js'
import { ACCOUNTS, type TestIdp } from './oidc-provider.js'
import { codeIn as resetCodeIn } from './reset.js'
import { MailBox } from './mail-box.js'

type Method = 'get' | 'getMany' | 'set' | 'consume' | 'increment' | 'compareAndSet' | 'delete' | 'readAndIncrement'

/** One call the plugin made on the store. */
export interface StoreCall {
  method: Method
  /** The key, or the keys read (a getMany, a readAndIncrement). */
  keys: string[]
  /** A readAndIncrement's counters: their keys, the count each reached (`null`: held back) and their TTLs. */
  counters?: Array<{ key: string, count: string | null, ttlMs: number }>
  /** A readAndIncrement's condition: the keys that hold its counts back while over now. */
  unlessAbove?: string[]
  /** What the call stored: the value of a set or of a compare-and-set that wrote, the new count of an increment; else `null`. */
  written: string | null
  ttlMs: number | null
  /**
   * The round trip the call rides: one more than the latest round trip
   * finished when it was made. Calls made together (in parallel) share one.
   */
  wave: number
}

/**
 * How long each call's answer takes to come back (ms), as from a store one
 * network hop away: the host's adapters and the plugin's own work answer
 * within microseconds, so a call waits for an earlier one (rides a later
 * round trip) only when it needed that one's answer, not because an
 * unrelated call happened to finish first.
 */
export const ROUND_TRIP_MS = 4

/**
 * The kind of store a recording store models: `ordered` (calls take effect in
 * the order made: the memory store, a single Redis) and `batch` (it offers
 * `readAndIncrement`: every store of the plugin's; a host's may not).
 */
export interface StoreModel {
  name: string
  ordered: boolean
  batch: boolean
}

/** The memory store and a single Redis. */
export const ORDERED_STORE: StoreModel = { name: 'the memory store, a single Redis', ordered: true, batch: true }
/** PostgreSQL and a Redis Cluster: calls may overtake one another; the batch is there. */
export const UNORDERED_STORE: StoreModel = { name: 'PostgreSQL, a Redis Cluster', ordered: false, batch: true }

/** A store that records every call and passes it on. */
export class RecordingStore implements StateStore {
  /** As the model says (the memory store it passes the calls to keeps their order whatever it says). */
  readonly ordered: boolean
  readonly calls: StoreCall[] = []
  readonly inner: MemoryStore
  /** Only when the model has the batch: the plugin looks for the method. */
  readonly readAndIncrement?: AtomicBatch['readAndIncrement']
  #finished = 0

  constructor (inner: MemoryStore, model: StoreModel = ORDERED_STORE) {
    this.inner = inner
    this.ordered = model.ordered
    if (model.batch) {
      this.readAndIncrement = async (read, increments, options) => {
        const counters = increments.map(({ key, ttlMs }) => ({ key, count: null as string | null, ttlMs }))
        return await this.#record('readAndIncrement', [...read], null, async () => await inner.readAndIncrement(read, increments, options), (result) => {
          result.counts.forEach((counted, i) => { (counters[i] as { count: string | null }).count = counted === null ? null : String(counted.count) })
          return result.counts.some(counted => counted !== null) ? 'counted' : null
        }, { counters, unlessAbove: [...options?.unlessAbove?.keys ?? []] })
      }
    }
  }

  /** Forgets the calls so far: what follows is one measured request. */
  start (): void {
    this.calls.length = 0
    this.#finished = 0
  }

  async #record<T> (method: Method, keys: string[], ttlMs: number | null, run: () => Promise<T>, written: (result: T) => string | null, more: Partial<StoreCall> = {}): Promise<T> {
    const call: StoreCall = { method, keys, written: null, ttlMs, wave: this.#finished + 1, ...more }
    this.calls.push(call)
    try {
      const result = await run()
      call.written = written(result)
      return result
    } finally {
      // the call took effect when made (in order); its answer, or its error, comes back a round trip later
      await sleep(ROUND_TRIP_MS)
      this.#finished = Math.max(this.#finished, call.wave)
    }
  }

  async get (key: string): Promise<string | null> {
    return await this.#record('get', [key], null, async () => await this.inner.get(key), () => null)
  }

  async getMany (keys: readonly string[]): Promise<Array<string | null>> {
    return await this.#record('getMany', [...keys], null, async () => await this.inner.getMany(keys), () => null)
  }

  async set (key: string, value: string, ttlMs: number): Promise<void> {
    await this.#record('set', [key], ttlMs, async () => { await this.inner.set(key, value, ttlMs) }, () => value)
  }

  async consume (key: string): Promise<string | null> {
    return await this.#record('consume', [key], null, async () => await this.inner.consume(key), () => null)
  }

  async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    return await this.#record('increment', [key], ttlMs, async () => await this.inner.increment(key, ttlMs), (result) => String(result.count))
  }

  async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    return await this.#record('compareAndSet', [key], ttlMs, async () => await this.inner.compareAndSet(key, expected, value, ttlMs), (wrote) => wrote ? value : null)
  }

  async delete (key: string): Promise<void> {
    await this.#record('delete', [key], null, async () => { await this.inner.delete(key) }, () => null)
  }

  async close (): Promise<void> {
    await this.inner.close()
  }
}

const SESSION_ID = /^[0-9a-z]{1,12}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const HASH = /^[A-Za-z0-9_-]{43}$/
const RECORD_ID = /^[A-Za-z0-9_-]{22}$/
const DIGITS = /^\d+$/

/**
 * A key as the docs write it: its variable parts as `<ip>` (a client),
 * `<sid>` (a session or challenge id), `<h>` (a SHA-256, base64url),
 * `<uid>` (a user id), `<step>` (a TOTP step), `<rid>` (a reset code's id).
 */
export function keyFamily (key: string): string {
  if (key.startsWith('rate:')) return 'rate:<ip>'
  // an attempt counter's subject is a hash tag: `fails:{login:user:<h>}`
  const tagged = /^([^{]*)\{([^}]*)\}$/.exec(key)
  if (tagged !== null) return `${tagged[1] as string}{${keyFamily(tagged[2] as string)}}`
  const parts = key.split(':')
  return parts.map((part, i) => {
    if (SESSION_ID.test(part)) return '<sid>'
    if (HASH.test(part)) return '<h>'
    if (RECORD_ID.test(part)) return '<rid>'
    if (DIGITS.test(part)) return i > 0 && DIGITS.test(parts[i - 1] as string) ? '<step>' : '<uid>'
    return part
  }).join(':')
}

/** The keys the attempt limiter reads per subject, in its order; a subject that forgives (`reset`) has its failures read too. */
const PEEK = ['released', 'forgiven', 'lock', 'fails']
const FORGIVING = 'failed'

/** The subjects a getMany reads as the limiter's read (`peek`, each as its family and as read), and the keys it reads after them (a flow's own); `null` when it is no peek. */
function peekOf (keys: string[]): { subjects: string[], raw: string[], rest: string[] } | null {
  const subjects: string[] = []
  const raw: string[] = []
  let at = 0
  while (at + PEEK.length <= keys.length) {
    const first = keys[at] as string
    const subject = first.slice(first.indexOf(':') + 1)
    if (!PEEK.every((name, j) => keys[at + j] === `${name}:${subject}`)) break
    at += PEEK.length
    if (keys[at] === `${FORGIVING}:${subject}`) at++
    raw.push(subject)
    subjects.push(keyFamily(subject.replace(/^\{(.*)\}$/, '$1')))
  }
  return subjects.length === 0 ? null : { subjects, raw, rest: keys.slice(at) }
}

/** Whether a readAndIncrement is the limiter's: each subject's attempts counted (`fails:S`) unless its lock (`lock:S`) is ahead. */
function countsPeek (call: StoreCall, raw: string[]): boolean {
  const same = (keys: string[] | undefined, name: string): boolean => keys?.join(' ') === raw.map(subject => `${name}:${subject}`).join(' ')
  return same(call.counters?.map(counter => counter.key), 'fails') && same(call.unlessAbove, 'lock')
}

/**
 * One call as the docs write it, e.g. `increment rate:<ip>`, `getMany
 * peek(login:user:<h>)`, `getMany peek(2fa:account:<h>) [sessions:user:<uid>]`
 * or `readAndIncrement count(login:user:<h>) [sessions:user:<uid>]` (the
 * limiter's peek and its counts in one call, held back by a lock).
 */
export function renderCall (call: StoreCall): string {
  if (call.method !== 'getMany' && call.method !== 'readAndIncrement') return `${call.method} ${keyFamily(call.keys[0] as string)}`
  const peek = peekOf(call.keys)
  const listed = (keys: string[]): string => `[${keys.map(keyFamily).join(', ')}]`
  const rest = (keys: string[]): string => keys.length === 0 ? '' : ` ${listed(keys)}`
  if (call.method === 'readAndIncrement') {
    if (peek !== null && countsPeek(call, peek.raw)) return `readAndIncrement count(${peek.subjects.join(', ')})${rest(peek.rest)}`
    return `readAndIncrement ${listed(call.keys)} counting ${listed(call.counters?.map(counter => counter.key) ?? [])}`
  }
  if (peek === null) return `getMany ${listed(call.keys)}`
  return `getMany peek(${peek.subjects.join(', ')})${rest(peek.rest)}`
}

/** The calls in order, each in backticks: `+` between calls made together, `→` between round trips. */
export function renderCalls (calls: StoreCall[]): string {
  if (calls.length === 0) return 'none'
  let text = ''
  calls.forEach((call, i) => {
    if (i > 0) text += (calls[i - 1] as StoreCall).wave === call.wave ? ' + ' : ' → '
    text += `\`${renderCall(call)}\``
  })
  return text
}

/** What a request costs: calls, round trips, commands on a Redis Cluster, and the key and value bytes written. */
export interface Cost {
  calls: number
  /** Calls that change the store (set, compare-and-set, increment, consume, delete): INSERT, UPDATE or DELETE on PostgreSQL. */
  writes: number
  roundTrips: number
  /** A getMany of n keys is n GETs on a cluster (pipelined per node); everything else one command. */
  clusterCommands: number
  bytesWritten: number
}

const READS = new Set<Method>(['get', 'getMany'])

/** The hash tag a Redis Cluster hashes a key by (as RedisStore groups a readAndIncrement's keys). */
function hashTag (key: string): string {
  return /\{([^}]+)\}/.exec(key)?.[1] ?? key
}

/** Commands of one call on a Redis Cluster: a getMany of n keys is n GETs; a readAndIncrement one script per hash tag; else one. */
function clusterCommandsOf (call: StoreCall): number {
  if (call.method === 'getMany') return call.keys.length
  if (call.method === 'readAndIncrement') return new Set([...call.keys, ...call.counters?.map(counter => counter.key) ?? []].map(hashTag)).size
  return 1
}

/** What one call wrote: the entry of a set, a compare-and-set or an increment, or each counter a readAndIncrement counted. */
function writesOf (call: StoreCall): Array<{ key: string, value: string, ttlMs: number, method: Method }> {
  if (call.method === 'readAndIncrement') return (call.counters ?? []).flatMap(c => c.count === null ? [] : [{ key: c.key, value: c.count, ttlMs: c.ttlMs, method: 'increment' as const }])
  return call.written === null ? [] : [{ key: call.keys[0] as string, value: call.written, ttlMs: call.ttlMs as number, method: call.method }]
}

export function costOf (calls: StoreCall[]): Cost {
  return {
    calls: calls.length,
    // a readAndIncrement held back by a lock writes nothing
    writes: calls.filter(call => !READS.has(call.method) && (call.method !== 'readAndIncrement' || call.written !== null)).length,
    roundTrips: Math.max(0, ...calls.map(call => call.wave)),
    clusterCommands: calls.reduce((sum, call) => sum + clusterCommandsOf(call), 0),
    bytesWritten: calls.reduce((sum, call) => sum + writesOf(call).reduce((bytes, entry) => bytes + entryBytes(entry.key, entry.value), 0), 0)
  }
}

/** Key and value bytes of one entry (without a store's key prefix). */
export function entryBytes (key: string, value: string): number {
  return Buffer.byteLength(key) + Buffer.byteLength(value)
}

/** User ids as a host with ten million users has them: eight digits. */
export const ID_OFFSET = 12_000_000

/** The memory users, their ids shifted by `ID_OFFSET`, so keys and records that hold an id have their real size. */
export class LargeIdUsers implements UserAdapter<MemoryUser> {
  readonly inner = new MemoryUserAdapter()
  async findByEmail (email: string): Promise<MemoryUser | null> { return await this.inner.findByEmail(email) }
  async findByLogin (login: string): Promise<MemoryUser | null> { return await this.inner.findByLogin(login) }
  async findById (id: number): Promise<MemoryUser | null> { return await this.inner.findById(id - ID_OFFSET) }
  async verifyPassword (user: MemoryUser, password: string): Promise<boolean> { return await this.inner.verifyPassword(user, password) }
  async getPasswordHash (user: MemoryUser): Promise<string | null> { return await this.inner.getPasswordHash(user) }
  async setPassword (user: MemoryUser, password: string): Promise<void> { await this.inner.setPassword(user, password) }
  async createUser (input: NewProviderUser): Promise<MemoryUser> { return await this.inner.createUser(input) }
  toPublicUser (user: MemoryUser): PublicUser {
    const shown = this.inner.toPublicUser(user)
    return { ...shown, ID: shown.ID + ID_OFFSET }
  }
}

export const CLIENT_IP = '203.0.113.147'
export const PREFIX = '/jwt-login/v1'
export const BOB = { login: 'bob', email: 'bob@example.com', password: 'bob has a long password' }
export const CAROL = { login: 'carol', email: 'carol@example.com', password: 'carol has a long password' }
const WRONG_PASSWORD = 'not the password at all'
const NEW_PASSWORD = 'a brand new passphrase'

/** The plugin as a host with refresh tokens, two-factor, password reset and (with an IdP) OpenID sign-in would run it. */
export interface Rig {
  app: FastifyInstance
  store: RecordingStore
  mail: MailBox
  /** Bob's TOTP secret (bob: TOTP, carol: email codes, alice: no second factor). */
  totpSecret: string
  /** Bob's backup codes. */
  backupCodes: string[]
  idp: TestIdp | null
  send: (method: 'GET' | 'POST' | 'PUT', path: string, payload?: Record<string, string>, token?: string) => Promise<LightMyRequestResponse>
}

export async function buildRig (idp: TestIdp | null, model: StoreModel = ORDERED_STORE): Promise<Rig> {
  const users = new LargeIdUsers()
  await users.inner.addUser(ALICE)
  const bob = users.toPublicUser(await users.inner.addUser(BOB))
  const carol = users.toPublicUser(await users.inner.addUser(CAROL))
  const port = new MemoryTwoFactorStore()
  const { secret } = createTotpSecret('jwt-login capacity', BOB.email)
  await port.setTotpSecret(bob.ID, secret)
  port.enable(bob.ID, 'totp')
  const backup = generateBackupCodes()
  await port.replaceBackupCodes(bob.ID, backup.hashes)
  port.enable(carol.ID, 'email')
  const store = new RecordingStore(new MemoryStore(), model)
  const mail = new MailBox()
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    store,
    mailer: mail,
    twoFactor: { port, mailer: mail },
    settings: {
      tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
      refresh: { enabled: true },
      resetPassword: { enabled: true },
      oauth: { providers: idp === null ? {} : providers(idp) }
    }
  })
  app.get('/profile', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ id: request.jwtLogin?.user.ID }))
  await app.ready()
  const send: Rig['send'] = async (method, path, payload, token) => await app.inject({
    method,
    url: path.startsWith('/profile') ? path : `${PREFIX}${path}`,
    remoteAddress: CLIENT_IP,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload })
  })
  return { app, store, mail, totpSecret: secret, backupCodes: backup.codes, idp, send }
}

/** The data of an answer that must have `status`. */
function dataOf (res: LightMyRequestResponse, status = 200): Record<string, string> {
  if (res.statusCode !== status) throw new Error(`expected ${status}, got ${res.statusCode}: ${res.body}`)
  return res.json().data
}

async function signIn (rig: Rig, who: { email: string, password: string } = ALICE): Promise<Record<string, string>> {
  return dataOf(await rig.send('POST', '/auth', { email: who.email, password: who.password }))
}

/** The store calls of one request, which must answer `status`. */
async function measured (rig: Rig, request: () => Promise<LightMyRequestResponse>, status = 200): Promise<StoreCall[]> {
  rig.store.start()
  dataOf(await request(), status)
  return [...rig.store.calls]
}

const wrongLogin = (rig: Rig): Promise<LightMyRequestResponse> => rig.send('POST', '/auth', { email: ALICE.email, password: WRONG_PASSWORD })

async function totpNow (secret: string): Promise<string> {
  return await generate({ secret, epoch: Math.floor(Date.now() / 1000) })
}

/** A route's usual path: the setup it needs, then the one request measured. */
export interface Scenario {
  /** The route and path as the docs' tables name them. */
  route: string
  run: (rig: Rig) => Promise<StoreCall[]>
}

/** Every route's usual paths, in the docs' order. A route may be run more than once (GET and POST validate). */
export const SCENARIOS: Scenario[] = [
  { route: 'POST /auth — success', run: async (rig) => await measured(rig, async () => await rig.send('POST', '/auth', { email: ALICE.email, password: ALICE.password })) },
  { route: 'POST /auth — wrong password', run: async (rig) => await measured(rig, async () => await wrongLogin(rig), 401) },
  {
    route: 'POST /auth — success after a wrong password',
    run: async (rig) => {
      dataOf(await wrongLogin(rig), 401)
      return await measured(rig, async () => await rig.send('POST', '/auth', { email: ALICE.email, password: ALICE.password }))
    }
  },
  {
    route: 'POST /auth — the attempt that locks the account',
    run: async (rig) => {
      for (let i = 0; i < 10; i++) dataOf(await wrongLogin(rig), 401)
      return await measured(rig, async () => await wrongLogin(rig), 429)
    }
  },
  {
    route: 'POST /auth — while the account is locked',
    run: async (rig) => {
      for (let i = 0; i < 10; i++) dataOf(await wrongLogin(rig), 401)
      dataOf(await wrongLogin(rig), 429)
      return await measured(rig, async () => await wrongLogin(rig), 429)
    }
  },
  { route: 'POST /auth — two-factor challenge (TOTP)', run: async (rig) => await measured(rig, async () => await rig.send('POST', '/auth', { email: BOB.email, password: BOB.password })) },
  {
    route: 'POST /auth — two-factor challenge (email code)',
    run: async (rig) => {
      const calls = await measured(rig, async () => await rig.send('POST', '/auth', { email: CAROL.email, password: CAROL.password }))
      await rig.mail.next()
      return calls
    }
  },
  {
    route: 'POST /auth/2fa — TOTP code',
    run: async (rig) => {
      const { jwt } = await signIn(rig, BOB)
      const code = await totpNow(rig.totpSecret)
      return await measured(rig, async () => await rig.send('POST', '/auth/2fa', { code }, jwt))
    }
  },
  {
    route: 'POST /auth/2fa — email code',
    run: async (rig) => {
      const { jwt } = await signIn(rig, CAROL)
      const code = (/\b(\d{6})\b/.exec((await rig.mail.next()).text) as RegExpExecArray)[1] as string
      return await measured(rig, async () => await rig.send('POST', '/auth/2fa', { code }, jwt))
    }
  },
  {
    route: 'POST /auth/2fa — backup code',
    run: async (rig) => {
      const { jwt } = await signIn(rig, BOB)
      return await measured(rig, async () => await rig.send('POST', '/auth/2fa', { code: rig.backupCodes[0] as string }, jwt))
    }
  },
  { route: 'GET /auth/validate', run: async (rig) => { const { jwt } = await signIn(rig); return await measured(rig, async () => await rig.send('GET', '/auth/validate', undefined, jwt)) } },
  { route: 'POST /auth/validate', run: async (rig) => { const { jwt } = await signIn(rig); return await measured(rig, async () => await rig.send('POST', '/auth/validate', {}, jwt)) } },
  { route: 'authenticate hook on a host route', run: async (rig) => { const { jwt } = await signIn(rig); return await measured(rig, async () => await rig.send('GET', '/profile', undefined, jwt)) } },
  {
    route: 'POST /auth/refresh',
    run: async (rig) => {
      const { refresh_token: token } = await signIn(rig)
      return await measured(rig, async () => await rig.send('POST', '/auth/refresh', { refresh_token: token as string }))
    }
  },
  { route: 'POST /auth/revoke', run: async (rig) => { const { jwt } = await signIn(rig); return await measured(rig, async () => await rig.send('POST', '/auth/revoke', {}, jwt)) } },
  {
    route: 'POST /user/reset_password — known email',
    run: async (rig) => {
      const calls = await measured(rig, async () => await rig.send('POST', '/user/reset_password', { email: ALICE.email }))
      await rig.mail.next()
      return calls
    }
  },
  { route: 'POST /user/reset_password — unknown email', run: async (rig) => await measured(rig, async () => await rig.send('POST', '/user/reset_password', { email: 'nobody@example.com' })) },
  {
    route: 'PUT /user/reset_password — right code',
    run: async (rig) => {
      dataOf(await rig.send('POST', '/user/reset_password', { email: ALICE.email }))
      const code = resetCodeIn((await rig.mail.next()).text)
      return await measured(rig, async () => await rig.send('PUT', '/user/reset_password', { email: ALICE.email, code, new_password: NEW_PASSWORD }))
    }
  },
  {
    route: 'POST /oauth/token — code flow, known user',
    run: async (rig) => {
      const { code } = await (rig.idp as TestIdp).code({ account: ACCOUNTS.alice })
      return await measured(rig, async () => await rig.send('POST', '/oauth/token', { provider: 'idp1', code }))
    }
  },
  {
    route: 'POST /oauth/token — ID token, known user',
    run: async (rig) => {
      // a nonce this server issued, as a provider with `requireNonce` needs (fetched before the measured request)
      const { nonce } = dataOf(await rig.send('GET', '/oauth/nonce')) as { nonce: string }
      const idToken = await (rig.idp as TestIdp).idToken({ account: ACCOUNTS.alice, nonce })
      return await measured(rig, async () => await rig.send('POST', '/oauth/token', { provider: 'idp1', id_token: idToken, nonce }))
    }
  }
]

/**
 * The most sequential round trips each route's usual path may take (issue
 * 25's targets): password sign-in 3 (the per-IP request count, the counts
 * with the reads, the settling with the session or challenge), a second
 * factor 4, refresh 2, validate 1, revoke 2, a reset request 3, its
 * completion 4. Routes not listed have none.
 */
export const ROUND_TRIP_TARGETS: Record<string, number> = {
  'POST /auth — success': 3,
  'POST /auth — wrong password': 3,
  'POST /auth — success after a wrong password': 3,
  'POST /auth — two-factor challenge (TOTP)': 3,
  'POST /auth — two-factor challenge (email code)': 3,
  'POST /auth/2fa — TOTP code': 4,
  'POST /auth/2fa — email code': 4,
  'POST /auth/2fa — backup code': 4,
  'GET /auth/validate': 1,
  'POST /auth/validate': 1,
  'authenticate hook on a host route': 1,
  'POST /auth/refresh': 2,
  'POST /auth/revoke': 2,
  'POST /user/reset_password — known email': 3,
  'POST /user/reset_password — unknown email': 3,
  'PUT /user/reset_password — right code': 4
}

/** Runs one scenario on a rig of its own (a fresh store of the model's kind), and closes it. */
export async function runScenario (scenario: Scenario, idp: TestIdp | null, model: StoreModel = ORDERED_STORE): Promise<StoreCall[]> {
  const rig = await buildRig(idp, model)
  try {
    return await scenario.run(rig)
  } finally {
    await rig.app.close()
    await rig.store.close()
  }
}

/** The headers of the capacity model's tables in docs/deployment.md. */
export const TABLES = {
  calls: ['route (usual path)', 'store calls, in order'],
  costs: ['route (usual path)', 'calls', 'writes', 'Redis commands', 'round trips', 'Redis Cluster commands', 'PostgreSQL statements', 'bytes written'],
  entries: ['entry', 'key', 'written by', 'TTL (defaults)', 'key + value bytes', 'Redis bytes per entry', 'PostgreSQL bytes per row']
} as const

function cells (line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(cell => cell.trim())
}

/** The rows of the table in `markdown` whose header is exactly `header`, each as its trimmed cells. */
export function docTable (markdown: string, header: readonly string[]): string[][] {
  const lines = markdown.split('\n')
  const start = lines.findIndex(line => line.startsWith('|') && cells(line).join('|') === header.join('|'))
  if (start === -1) throw new Error(`no table with the header | ${header.join(' | ')} |`)
  const rows: string[][] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    rows.push(cells(line))
  }
  return rows
}

/** A route as the docs' cells write it: its method and path (or the hook's name) as code. */
export function routeCell (route: string): string {
  return route.replace(/^((?:GET|POST|PUT) \S+|authenticate)/, '`$1`')
}

/** A cell without its code spans' backticks. */
export function plain (cell: string): string {
  return cell.replace(/`/g, '')
}

const UNITS: Record<string, number> = { d: 86_400_000, h: 3_600_000, min: 60_000, s: 1000 }

/** The duration a cell starts with (`14 d`, `15 min 5 s`), in ms. */
export function durationOf (cell: string): number {
  const head = /^(?:\d+ (?:d|h|min|s)\b\s*)+/.exec(plain(cell))
  if (head === null) throw new Error(`no duration at the start of "${cell}"`)
  return [...head[0].matchAll(/(\d+) (d|h|min|s)/g)].reduce((sum, [, n, unit]) => sum + Number(n) * (UNITS[unit as string] as number), 0)
}

/** The last entry a scenario's calls wrote under a key family, as a template for more of its kind. */
export interface EntryTemplate {
  method: Method
  key: string
  value: string
  ttlMs: number
}

export function writtenEntry (calls: StoreCall[], family: string): EntryTemplate | null {
  return calls.flatMap(writesOf).findLast(entry => keyFamily(entry.key) === family) ?? null
}
