/**
 * The harness of the fault sweep (test/helpers/fault-suite.ts, whose header
 * says what it checks): one app per store with the store and the host
 * adapters behind fault switches (`Rig`), the requests the flows make, the
 * assertions every flow shares, and `runFlow`, which sweeps one flow.
 * The flows are in fault-suite.ts, fault-account.ts and fault-email-sign-in.ts.
 */
import t from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import jwtLogin, { type JwtLoginOptions, type Mailer, type MailMessage, type SettingsInput, type StateStore } from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { buildApp, HS_SECRET } from './app.js'
import { Faults, faultyAdapter, faultyStore, type FaultCall, type FaultMode } from './faults.js'
import { storeOf, type StoreKind } from './shared-stores.js'

export type Test = Parameters<Parameters<typeof t.test>[0]>[0]
export type Response = LightMyRequestResponse
export type StoreName = StoreKind
export type Layer = 'store' | 'adapter'

export const PREFIX = '/jwt-login/v1'
/**
 * Adapter writes on which an `after` fault (the host did it, then errored) is tried too. The passkey
 * port's `create` and `recordUse` are among them: a host that stored the new passkey (or the use) and then
 * threw leaves it stored under a 503. So are the account's: the user adapter's `setEmailVerified` and
 * `setEmail`, the two-factor port's `setMethod`, `setTotpSecret` and `replaceBackupCodes` (its
 * `countBackupCodes` is a read: an `after` fault there is its `before`); and the identity links'
 * `linkIdentity` and `unlinkIdentity`, a link made or removed under a 503.
 */
export const ADAPTER_WRITES = new Set([
  'setPassword', 'consumeBackupCode', 'createUser', 'deleteUser', 'create', 'recordUse',
  'setEmailVerified', 'setEmail', 'setMethod', 'setTotpSecret', 'replaceBackupCodes', 'linkIdentity', 'unlinkIdentity'
])
export const MANY = { max: 1_000_000 }

/** Settings that keep every counter from triggering, refresh on. */
export const BASE: Partial<SettingsInput> = {
  refresh: { enabled: true },
  // setup logins use password_hash to skip argon2 (see setupLogin)
  login: { allowPasswordHash: true },
  limits: { loginPerAccount: MANY, loginPerIp: MANY, requestsPerIp: MANY, signInsPerAccount: MANY },
  // the sweep signs one user in hundreds of times: the session index then never has to check its families,
  // so every run of a flow makes the probe's calls; the session routes on, so the flows can list and end sessions
  sessions: { enabled: true, maxPerUser: 1000 },
  twoFactor: { attemptsPerChallenge: 10, perAccount: MANY }
}

/** The password of the rigs' users (set up with it; the setup logins use its hash). */
export const PASSWORD = 'a long and correct password'

/** Real time plus an offset the test moves forward (cutoffs compare session starts to the ms, so time must flow). */
export interface MovingClock {
  (): number
  advance: (ms: number) => void
}

function movingClock (): MovingClock {
  let offset = 0
  return Object.assign(() => Date.now() + offset, { advance: (ms: number) => { offset += ms } })
}

/**
 * A mailer that keeps what it is given. It can be made to refuse its next
 * sends (`failing`), as a mail service that answers an error, or to hold
 * them (`stall`) until `resume`, as one that does not answer.
 */
export class CapturingMailer implements Mailer {
  readonly sent: MailMessage[] = []
  /** The messages of the sends it refused. */
  readonly refused: MailMessage[] = []
  /** How many of the next sends fail (counted down). */
  failing = 0
  readonly #waiting: Array<() => void> = []
  #stalled: { held: Promise<void>, resume: () => void } | null = null

  async send (message: MailMessage): Promise<void> {
    if (this.#stalled !== null) await this.#stalled.held
    if (this.failing > 0) {
      this.failing--
      this.refused.push(message)
      for (const wake of this.#waiting.splice(0)) wake()
      // as a mail service's refusal may: it quotes what it was given (the plugin must not log it)
      throw new Error(`550 rejected: ${message.subject} / ${message.text}`)
    }
    this.sent.push(message)
    for (const wake of this.#waiting.splice(0)) wake()
  }

  /** From now on sends wait, answering nothing, until `resume`. */
  stall (): void {
    let resume: () => void = () => {}
    const held = new Promise<void>((resolve) => { resume = resolve })
    this.#stalled = { held, resume }
  }

  /** The held sends go on. */
  resume (): void {
    this.#stalled?.resume()
    this.#stalled = null
  }

  /** Waits until `count` sends were refused in all (5 s at most). */
  async waitForRefused (count: number): Promise<void> {
    const deadline = Date.now() + 5000
    while (this.refused.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} refused mails, got ${this.refused.length}`)
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve)
        setTimeout(resolve, 100).unref()
      })
    }
  }

  /** Waits until `count` messages were sent in all (5 s at most). */
  async waitFor (count: number): Promise<void> {
    const deadline = Date.now() + 5000
    while (this.sent.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} mails, got ${this.sent.length}`)
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve)
        setTimeout(resolve, 100).unref()
      })
    }
  }

  /** The first mail to `to` among those sent after the first `from`, waited for (5 s at most); `null` when none came. */
  async mailTo (to: string, from: number): Promise<MailMessage | null> {
    const deadline = Date.now() + 5000
    for (;;) {
      const found = this.sent.slice(from).find(message => message.to === to)
      if (found !== undefined || Date.now() > deadline) return found ?? null
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve)
        setTimeout(resolve, 100).unref()
      })
    }
  }

  get last (): MailMessage {
    const message = this.sent.at(-1)
    if (message === undefined) throw new Error('no mail was sent')
    return message
  }
}

/** One app on one store, with the store and the host adapters behind fault switches. */
export interface Rig {
  store: StoreName
  app: FastifyInstance
  /** The inner (unwrapped) user adapter, for setup. */
  users: MemoryUserAdapter
  /** The inner two-factor port, for setup. */
  port: MemoryTwoFactorStore
  mailer: CapturingMailer
  clock: MovingClock
  faults: Record<Layer, Faults>
  /** The app's log lines (JSON, every level), when the rig was built with `logged`; else always empty. */
  logs: string[]
}

/** Like `buildApp`, with Fastify's logger writing every line, at every level, to `logs`. */
async function loggedApp (logs: string[], settings: Partial<SettingsInput>, options: Partial<JwtLoginOptions> & Pick<JwtLoginOptions, 'users'>): Promise<FastifyInstance> {
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { logs.push(line) } } } })
  await app.register(jwtLogin, { settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...settings }, ...options })
  await app.ready()
  return app
}

export async function buildRig (
  t: Test,
  store: StoreName,
  label: string,
  settings: Partial<SettingsInput>,
  options: (parts: { port: MemoryTwoFactorStore, mailer: CapturingMailer, faults: Faults }) => Partial<JwtLoginOptions> = () => ({}),
  { logged = false, users = new MemoryUserAdapter() }: { logged?: boolean, users?: MemoryUserAdapter } = {}
): Promise<Rig> {
  const clock = movingClock()
  const inner: StateStore = await storeOf(t, store, `faults-${label}`, clock)
  const faults = { store: new Faults(), adapter: new Faults() }
  const port = new MemoryTwoFactorStore()
  const mailer = new CapturingMailer()
  const logs: string[] = []
  const plugin = {
    store: faultyStore(inner, faults.store),
    users: faultyAdapter(users, faults.adapter),
    clock,
    ...options({ port, mailer, faults: faults.adapter })
  }
  const app = logged ? await loggedApp(logs, { ...BASE, ...settings }, plugin) : (await buildApp({ ...BASE, ...settings }, plugin)).app
  t.teardown(() => app.close())
  return { store, app, users, port, mailer, clock, faults, logs }
}

// ---- requests --------------------------------------------------------------

/**
 * The session of every token an answer handed to this client (final or
 * interim): a session listed but not among them was started by a request
 * whose answer never arrived, so no client holds it.
 */
const delivered = new Set<string>()

/** The session id (`sid`) of a JWT, read without verifying it. */
export function sidOf (jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8')) as { sid: string }).sid
}

/** Notes the session of the token a successful answer carries (see `delivered`). */
export function noted (res: Response): Response {
  if (!ok(res)) return res
  const jwt = (res.json() as { data?: { jwt?: unknown } }).data?.jwt
  if (typeof jwt === 'string') delivered.add(sidOf(jwt))
  return res
}

export async function post (app: FastifyInstance, path: string, payload: Record<string, unknown>): Promise<Response> {
  return noted(await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload }))
}

export const login = async (app: FastifyInstance, email: string, password: string): Promise<Response> => await post(app, '/auth', { email, password })
export const validate = async (app: FastifyInstance, jwt: string): Promise<Response> => await post(app, '/auth/validate', { JWT: jwt })
export const refresh = async (app: FastifyInstance, token: string): Promise<Response> => await post(app, '/auth/refresh', { refresh_token: token })
export const revoke = async (app: FastifyInstance, jwt: string): Promise<Response> => await post(app, '/auth/revoke', { JWT: jwt })
export const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })
export const listSessions = async (app: FastifyInstance, jwt: string): Promise<Response> => await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: bearer(jwt) })
export const endSession = async (app: FastifyInstance, jwt: string, id: string): Promise<Response> =>
  await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions/${encodeURIComponent(id)}`, headers: bearer(jwt) })
export const endAllSessions = async (app: FastifyInstance, jwt: string, keepCurrent = false): Promise<Response> =>
  await app.inject({ method: 'DELETE', url: `${PREFIX}/sessions${keepCurrent ? '?keep_current=true' : ''}`, headers: bearer(jwt) })

/** The session ids a `GET /sessions` answer lists, oldest first. */
export function listedIds (res: Response): string[] {
  return dataOf<{ sessions: Array<{ id: string }> }>(res).sessions.map(session => session.id)
}

/** `POST /users` with `email` and the rigs' password. */
export const registerUser = async (app: FastifyInstance, email: string): Promise<Response> => noted(await app.inject({ method: 'POST', url: `${PREFIX}/users`, payload: { email, password: PASSWORD } }))

export interface Session { jwt: string, refresh_token: string }

export function ok (res: Response): boolean {
  return res.statusCode >= 200 && res.statusCode < 300
}

export function dataOf<T = Record<string, any>> (res: Response): T {
  return (res.json() as { data: T }).data
}

/**
 * A setup login that skips argon2: `password_hash` with the stored hash
 * (the rigs turn `login.allowPasswordHash` on for this). The flows under test
 * and the password checks of the reset invariants use real passwords.
 */
export async function setupLogin (rig: Rig, email: string): Promise<Response> {
  const res = await hashLogin(rig, email)
  if (res.statusCode !== 200) throw new Error(`setup login failed: ${res.body}`)
  return res
}

/** `POST /auth` with `password_hash` (no argon2), whatever it answers: for flows whose subject is not the password check. */
export async function hashLogin (rig: Rig, email: string): Promise<Response> {
  const user = await rig.users.findByEmail(email)
  if (user === null) throw new Error(`no user ${email}`)
  return await post(rig.app, '/auth', { email, password_hash: user.passwordHash })
}

export async function session (rig: Rig, email: string): Promise<Session> {
  return dataOf<Session>(await setupLogin(rig, email))
}

/** The `data` of a setup request (faults off), which must answer 200. */
export async function setupData<T = Record<string, any>> (what: string, request: Promise<Response>): Promise<T> {
  const res = await request
  if (res.statusCode !== 200) throw new Error(`setup ${what} failed: ${res.body}`)
  return dataOf<T>(res)
}

// ---- assertions ------------------------------------------------------------

/** Where the fault was, for assertion messages and diagnostics. */
export interface FaultInfo {
  layer: Layer
  mode: FaultMode | 'clean'
  k: number
  call: FaultCall | null
  log: string
  /** The calls of the clean probe run of this flow and layer. */
  sequence: readonly FaultCall[]
}

export function where (info: FaultInfo): string {
  if (info.call === null) return info.k === 0 ? `${info.layer} probe` : `${info.layer} clean k=${info.k}`
  return `${info.layer}:${info.mode} k=${info.k} at ${info.call.method}:${info.call.key}`
}

export function errorCodeOf (res: Response): number | undefined {
  try {
    const data = (res.json() as { data?: { errorCode?: number, error_code?: number } }).data
    // both names carry the same number, or the answer counts as no envelope
    return data?.error_code === data?.errorCode ? data?.errorCode : undefined
  } catch {
    return undefined
  }
}

/** Asserts a status (and error code); answers whether it held. */
export function expect (t: Test, res: Response, status: number, code: number | null, what: string, info: FaultInfo): boolean {
  const got = code === null ? String(res.statusCode) : `${res.statusCode}/${String(errorCodeOf(res))}`
  const want = code === null ? String(status) : `${status}/${code}`
  return t.equal(got, want, `${what} [${where(info)}]`, { body: res.body.slice(0, 300), calls: info.log.split('\n') })
}

/**
 * Invariant 1: a 2xx, or the error envelope with 503 / 201 — or 503 / 205 on
 * `PUT /user/reset_password`, which says the password did not change but the
 * user's sessions may have ended; 503 / 226 on `DELETE /users`, which says
 * the user was not deleted but its sessions have ended; 503 / 227 on
 * `POST /users`, which says the user was created but not signed in; 503 /
 * 242 on the account's verification by code and address and its email
 * revert, which say the change was not made but sessions may have ended.
 */
export function checkAnswer (t: Test, res: Response, info: FaultInfo): void {
  if (ok(res)) return
  let body: unknown
  try {
    body = res.json()
  } catch {
    body = res.body
  }
  t.match(body, { success: false, data: { message: String, errorCode: Number, error_code: Number } }, `the answer is the error envelope [${where(info)}]`)
  const code = res.statusCode === 503 && [205, 226, 227, 242].includes(errorCodeOf(res) ?? 0) ? errorCodeOf(res) as number : 201
  expect(t, res, 503, code, 'a failed dependency answers 503 / 201 (never a 500)', info)
}

/**
 * The session index against the token state, checked with faults off after
 * a flow that may have started sessions: of the final tokens the flow
 * produced (`candidates`), each that validates is listed and each listed
 * validates. The list is asked with the first candidate that validates, or
 * else with `lister`'s (a session of the same user). A listed session that
 * no answer delivered (a request started it, then failed) is held by no
 * client: it must at least end (`DELETE /sessions/{id}` answers 200).
 */
export async function checkListConsistent (t: Test, rig: Rig, info: FaultInfo, candidates: readonly string[], lister?: () => Promise<string>): Promise<void> {
  const { app } = rig
  const unique = [...new Map(candidates.map(jwt => [sidOf(jwt), jwt])).entries()]
  const states = await Promise.all(unique.map(async ([sid, jwt]) => ({ sid, jwt, live: (await validate(app, jwt)).statusCode === 200 })))
  const by = states.find(state => state.live)?.jwt ?? await lister?.()
  if (!t.ok(by, `a live session of the user lists its sessions [${where(info)}]`) || by === undefined) return
  const res = await listSessions(app, by)
  if (!expect(t, res, 200, null, 'GET /sessions (clean) answers', info)) return
  const listed = listedIds(res)
  for (const { sid, live } of states) {
    t.equal(listed.includes(sid), live, `${live ? 'a session that validates is listed' : 'a session that is refused is not listed'} [${where(info)}]`, { sid, listed, calls: info.log.split('\n') })
  }
  for (const sid of listed.filter(id => !delivered.has(id))) {
    t.comment(`${where(info)}: listed, never delivered: ${sid}`)
    expect(t, await endSession(app, by, sid), 200, null, `a listed session no answer delivered can be ended (${sid})`, info)
  }
}

// ---- the runner ------------------------------------------------------------

export interface Flow<C> {
  name: string
  rig: Rig
  /** Fresh state for one case, made with faults off. */
  setup: () => Promise<C>
  /** The one request made under faults. */
  act: (c: C) => Promise<Response>
  /** The invariants, checked with faults off after the faulty request. */
  check: (t: Test, c: C, res: Response, info: FaultInfo) => Promise<void>
  /**
   * The first call whose fault this flow sweeps (default: every call): the
   * calls before it are those of a flow that already sweeps them in the same
   * order (the password check's limiter calls of `login`), so they are not
   * swept again. With no call matching, every call is swept.
   */
  sweepFrom?: (call: FaultCall) => boolean
}

/**
 * The calls without a read-and-compare-and-set tried again on the same key
 * (`get k, compareAndSet k` right after the same pair): an update that
 * lost its compare-and-set, to another writer or to an entry that expired
 * between the two (an emptied session index lives 1 ms), reads and tries
 * again. Timing decides it, so a clean run may make it where the probe did
 * not, or the other way round.
 */
function withoutRetries (list: readonly FaultCall[]): FaultCall[] {
  const kept: FaultCall[] = []
  for (const call of list) {
    kept.push(call)
    const [get, cas, again, casAgain] = kept.slice(-4)
    if (get === undefined || cas === undefined || again === undefined || casAgain === undefined) continue
    const pair = (read: FaultCall, write: FaultCall): boolean => read.method === 'get' && write.method === 'compareAndSet' && read.key === write.key
    if (pair(get, cas) && pair(again, casAgain) && get.key === again.key) kept.splice(-2, 2)
  }
  return kept
}

/**
 * The methods a run called, to compare with the probe's: retries left out,
 * and the one call that depends on earlier cases (after a success the
 * limiter writes `forgiven:` only when failures were recorded in the window).
 */
function callShape (list: readonly FaultCall[]): string[] {
  return withoutRetries(list).filter(call => !(call.method === 'set' && call.key.startsWith('forgiven:'))).map(call => call.method)
}

export async function runFlow<C> (t: Test, flow: Flow<C>): Promise<void> {
  const { rig } = flow
  for (const layer of ['store', 'adapter'] as const) {
    const faults = rig.faults[layer]

    // N: the calls of one clean request (checked like any case, so stateful flows stay in step)
    let calls: FaultCall[] = []
    await t.test(`${rig.store} ${flow.name} ${layer}:probe`, async (t) => {
      const c = await flow.setup()
      faults.arm()
      const res = await flow.act(c).finally(() => faults.disarm())
      calls = [...faults.calls]
      t.comment(`${rig.store} ${flow.name}: ${layer} calls (N=${calls.length})\n${faults.describe()}`)
      const info: FaultInfo = { layer, mode: 'clean', k: 0, call: null, log: faults.describe(), sequence: calls }
      expect(t, res, 200, null, 'the clean probe succeeds', info)
      await flow.check(t, c, res, info)
    })
    const n = calls.length

    const cases: Array<{ k: number, mode: FaultMode }> = []
    const from = flow.sweepFrom === undefined ? 0 : Math.max(0, calls.findIndex(flow.sweepFrom))
    for (const call of calls.slice(from)) {
      cases.push({ k: call.n, mode: 'before' })
      if (layer === 'store' || ADAPTER_WRITES.has(call.method)) cases.push({ k: call.n, mode: 'after' })
    }
    for (const { k, mode } of cases) {
      await t.test(`${rig.store} ${flow.name} ${layer}:${mode} k=${k}`, async (t) => {
        const c = await flow.setup()
        faults.arm({ k, mode })
        const res = await flow.act(c).finally(() => faults.disarm())
        const info: FaultInfo = { layer, mode, k, call: faults.fired, log: faults.describe(), sequence: calls }
        // the probe's k-th call was a compare-and-set tried again, which timing spared this run: nothing
        // was faulted, so the run is a clean one, held to what a clean run must do
        if (info.call === null && faults.calls.length < k && withoutRetries(calls).length < k) {
          t.same(callShape(faults.calls), callShape(calls), `no call k=${k} (the probe's was a retried compare-and-set): a clean run's calls`, { calls: info.log.split('\n') })
          expect(t, res, 200, null, 'and a clean run\'s answer', info)
        } else {
          t.ok(info.call, `the fault fired [${layer}:${mode} k=${k}]`, { calls: info.log.split('\n') })
          checkAnswer(t, res, info)
        }
        await flow.check(t, c, res, info)
      })
    }
    await t.test(`${rig.store} ${flow.name} ${layer}:clean k=${n + 1}`, async (t) => {
      const c = await flow.setup()
      faults.arm({ k: Number.MAX_SAFE_INTEGER, mode: 'before' })
      const res = await flow.act(c).finally(() => faults.disarm())
      const info: FaultInfo = { layer, mode: 'clean', k: n + 1, call: faults.fired, log: faults.describe(), sequence: calls }
      t.same(callShape(faults.calls), callShape(calls), 'a clean run makes the probe\'s calls', { calls: info.log.split('\n') })
      t.equal(info.call, null, 'no fault fired')
      expect(t, res, 200, null, 'the clean run succeeds', info)
      await flow.check(t, c, res, info)
    })
  }
}
