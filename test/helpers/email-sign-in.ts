// What the sign-in-by-email tests share: a host with both routes on (memory users, a two-factor store, a mail box, a settable clock, a recorded log), the routes as calls, and the code a mail carries.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import jwtLogin, { type JwtLoginEventMap, type JwtLoginEventName, type JwtLoginOptions, type MailMessage, type SettingsInput, type StateStore, type UserAdapter } from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, HS_SECRET, testClock } from './app.js'
import { MailBox } from './mail-box.js'

export const PREFIX = '/jwt-login/v1'
export { ALICE }

/** A second user, whose address was never proven (registered by whoever typed it). */
export const CAROL = { login: 'carol', email: 'carol@example.com', password: 'carol typed this password', displayName: 'Carol Example' }

export type EmailSignInInput = NonNullable<SettingsInput['emailSignIn']>

/** One event as it was emitted. */
export interface Seen<E extends JwtLoginEventName = JwtLoginEventName> { name: E, payload: JwtLoginEventMap[E] }

/** Every event the plugin emits, in order; `of` keeps one kind's payloads. */
export interface EventLog {
  all: Seen[]
  of: <E extends JwtLoginEventName>(name: E) => Array<JwtLoginEventMap[E]>
  clear: () => void
}

export interface EmailSignInKit {
  app: FastifyInstance
  users: MemoryUserAdapter
  twoFactor: MemoryTwoFactorStore
  mail: RecordingMailBox
  clock: ReturnType<typeof testClock>
  /** Every line the host's logger wrote, parsed. */
  logs: Array<Record<string, any>>
  events: EventLog
  /** `POST /auth/email` with `email` (left out when `undefined`). */
  request: (email: unknown, options?: Call) => Promise<LightMyRequestResponse>
  /** `POST /auth/email/verify` with `email` and `code` (each left out when `undefined`). */
  verify: (email: unknown, code: unknown, options?: Call) => Promise<LightMyRequestResponse>
  /** The next mail sent since the last one taken, once the work after the answers ran; throws when there is none (never waits). */
  mailed: () => Promise<MailMessage>
  /** A request whose answer is 200, and the code its mail carries. */
  codeFor: (email: string, options?: Call) => Promise<string>
  /** The whole sign-in: a code asked for, read from its mail and given back. */
  signIn: (email?: string, options?: Call) => Promise<LightMyRequestResponse>
  /** A password sign-in's answer. */
  password: (email: string, password: string) => Promise<LightMyRequestResponse>
  /** `GET /sessions` with `jwt`: the sessions' items. */
  sessions: (jwt: string) => Promise<Array<Record<string, any>>>
  /** Replaces the settings the async source answers, and reloads them. */
  reload: (settings: Partial<SettingsInput>) => Promise<void>
}

/** A call's extras: headers, the client address, more body fields. */
export interface Call {
  headers?: Record<string, string>
  ip?: string
  body?: Record<string, unknown>
  /** The path as asked, instead of `<prefix>/auth/email…` (the `?rest_route=` form). */
  url?: string
}

export interface KitOptions {
  /** Over `{ enabled: true }`. */
  emailSignIn?: EmailSignInInput
  /** Other settings, over the HS256 key. */
  settings?: Partial<SettingsInput>
  /** Plugin options over the kit's own (users, clock, mailer, two-factor port). */
  plugin?: Partial<JwtLoginOptions>
  /** The two-factor port's own mailer (the `email` second factor). */
  twoFactorMailer?: boolean
  /** Methods the plugin's user adapter lacks (the kit's `users` still has them, for the test). */
  usersWithout?: Array<keyof UserAdapter>
  /** The state store, made on the kit's clock (a memory store unless told). */
  store?: (clock: () => number) => StateStore
}

/** The code a sign-in mail carries ("Your sign-in code is 123456"). */
export function codeOf (message: MailMessage): string {
  const match = /sign-in code is (\d+)/.exec(message.text)
  if (match === null) throw new Error(`no code in: ${message.text}`)
  return match[1] as string
}

/** The link a sign-in mail carries, or `null`. */
export function linkOf (message: MailMessage): string | null {
  return /(https?:\/\/\S+)/.exec(message.text)?.[1] ?? null
}

/** A six-digit code that is not `code`. */
export function otherCode (code: string, step = 1): string {
  return String((Number(code) + step) % 10 ** code.length).padStart(code.length, '0')
}

/**
 * `users` as a host's adapter without `missing`: every other method calls
 * the memory adapter's as it is at the time of the call, so a test may
 * still replace one on `users`.
 */
export function adapterWithout (users: MemoryUserAdapter, ...missing: Array<keyof UserAdapter>): UserAdapter<MemoryUser> {
  const names = Object.getOwnPropertyNames(MemoryUserAdapter.prototype).filter(name => name !== 'constructor' && !(missing as string[]).includes(name))
  const byName = users as unknown as Record<string, (...args: unknown[]) => unknown>
  return Object.fromEntries(names.map(name => [name, (...args: unknown[]) => byName[name]?.(...args)])) as unknown as UserAdapter<MemoryUser>
}

/** A mail box that also lists everything it was given, so a test can tell that nothing was mailed. */
export class RecordingMailBox extends MailBox {
  readonly sent: MailMessage[] = []

  override async send (message: MailMessage): Promise<void> {
    this.sent.push(message)
    await super.send(message)
  }
}

/** Lets the work queued after an answer run (a mail goes out on `setImmediate`). */
export async function afterAnswers (): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
}

/** Records every event the app's plugin emits (wrapping `emit`, so the order across kinds is kept). */
export function recordEvents (app: FastifyInstance): EventLog {
  const all: Seen[] = []
  const { events } = app.jwtLogin
  const emit = events.emit.bind(events)
  events.emit = ((name: JwtLoginEventName, payload: never) => { all.push({ name, payload }); emit(name, payload) }) as typeof events.emit
  return {
    all,
    of: (name) => all.filter(seen => seen.name === name).map(seen => seen.payload) as never,
    clear: () => { all.length = 0 }
  }
}

/**
 * The host: alice (verified) and carol (`email_verified: false`) seeded,
 * sign-in by email on, refresh and sessions on, a mail box as the
 * mailer, the settings read from an async source (so `reload` can change
 * them), every log line kept.
 */
export async function buildEmailSignInApp (t: Test, options: KitOptions = {}): Promise<EmailSignInKit> {
  const users = new MemoryUserAdapter()
  await users.addUser({ ...ALICE, emailVerified: true })
  await users.addUser({ ...CAROL, emailVerified: false })
  const twoFactor = new MemoryTwoFactorStore()
  const mail = new RecordingMailBox()
  const clock = testClock()
  const logs: Array<Record<string, any>> = []
  let input: SettingsInput = {
    tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
    refresh: { enabled: true },
    sessions: { enabled: true },
    resetPassword: { mail: { retries: 0 } },
    ...options.settings,
    emailSignIn: { enabled: true, ...options.emailSignIn }
  } as SettingsInput
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } } })
  await app.register(jwtLogin, {
    users: options.usersWithout === undefined ? users : adapterWithout(users, ...options.usersWithout),
    clock,
    mailer: mail,
    twoFactor: { port: twoFactor, ...(options.twoFactorMailer === true ? { mailer: mail } : {}) },
    settings: async () => structuredClone(input),
    settingsTtl: '1h',
    ...(options.store === undefined ? {} : { store: options.store(clock) }),
    ...options.plugin
  })
  await app.ready()
  t.teardown(async () => { await app.close() })
  const events = recordEvents(app)

  const send = async (path: string, payload: Record<string, unknown>, call: Call = {}): Promise<LightMyRequestResponse> => await app.inject({
    method: 'POST',
    url: call.url ?? `${PREFIX}${path}`,
    payload: { ...payload, ...call.body },
    headers: call.headers ?? {},
    ...(call.ip === undefined ? {} : { remoteAddress: call.ip })
  })
  const fields = (values: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined))
  const request: EmailSignInKit['request'] = async (email, call) => await send('/auth/email', fields({ email }), call)
  const verify: EmailSignInKit['verify'] = async (email, code, call) => await send('/auth/email/verify', fields({ email, code }), call)
  let taken = 0
  const mailed: EmailSignInKit['mailed'] = async () => {
    await afterAnswers()
    const message = mail.sent[taken]
    if (message === undefined) throw new Error('no mail was sent')
    taken++
    return message
  }
  const codeFor: EmailSignInKit['codeFor'] = async (email, call) => {
    const res = await request(email, call)
    if (res.statusCode !== 200) throw new Error(`POST /auth/email: ${res.statusCode} ${res.body}`)
    return codeOf(await mailed())
  }
  const signIn: EmailSignInKit['signIn'] = async (email = ALICE.email, call) => await verify(email, await codeFor(email, call), call)
  const password: EmailSignInKit['password'] = async (email, secret) => await send('/auth', { email, password: secret })
  const sessions: EmailSignInKit['sessions'] = async (jwt) => {
    const res = await app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${jwt}` } })
    if (res.statusCode !== 200) throw new Error(`GET /sessions: ${res.statusCode} ${res.body}`)
    return res.json().data.sessions
  }
  const reload: EmailSignInKit['reload'] = async (settings) => {
    input = { ...input, ...settings } as SettingsInput
    await app.jwtLogin.reloadSettings()
  }
  return { app, users, twoFactor, mail, clock, logs, events, request, verify, mailed, codeFor, signIn, password, sessions, reload }
}
