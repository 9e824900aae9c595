// What the account tests share: a host with every account part on (memory users, two-factor and passkey stores, a mail box), and the routes as calls.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import jwtLogin, { type JwtLoginOptions, type MailMessage, type SettingsInput } from '../../lib/index.js'
import type { TwoFactorPort } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, testClock } from './app.js'
import { MailBox } from './mail-box.js'

export const PREFIX = '/jwt-login/v1'
export { ALICE }

/** Every account part on, with registration, reset and refresh. */
export const ACCOUNT_SETTINGS: Partial<SettingsInput> = {
  account: { enabled: true },
  users: { register: { enabled: true } },
  resetPassword: { enabled: true, mail: { retries: 0 } },
  refresh: { enabled: true }
}

export interface AccountApp {
  app: FastifyInstance
  users: MemoryUserAdapter
  twoFactor: MemoryTwoFactorStore
  passkeys: MemoryPasskeyStore
  mail: MailBox
  clock: ReturnType<typeof testClock>
  /** Every line the host's logger wrote. */
  lines: string[]
  call: (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, jwt?: string, payload?: Record<string, unknown>) => Promise<LightMyRequestResponse>
  signIn: (email: string, password: string) => Promise<LightMyRequestResponse>
  /** A final token of a password sign-in (throws when the sign-in does not answer one). */
  token: (email?: string, password?: string) => Promise<string>
}

/** The code a mail carries: the word "code", then the code ("code is X", "code: X"). */
export function mailCode (message: MailMessage): string {
  const match = /code(?: is|:)\s*([A-Za-z0-9]+)/.exec(message.text)
  if (match === null) throw new Error(`no code in: ${message.text}`)
  return match[1] as string
}

export async function buildAccountApp (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<AccountApp> {
  const users = new MemoryUserAdapter()
  await users.addUser({ ...ALICE, emailVerified: true })
  const twoFactor = new MemoryTwoFactorStore()
  const passkeys = new MemoryPasskeyStore()
  const mail = new MailBox()
  const clock = testClock()
  const lines: string[] = []
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(jwtLogin, {
    users,
    clock,
    mailer: mail,
    twoFactor: { port: twoFactor },
    passkeys: { port: passkeys },
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...ACCOUNT_SETTINGS, ...settings },
    ...options
  })
  await app.ready()
  t.teardown(async () => { await app.close() })
  const call: AccountApp['call'] = async (method, path, jwt, payload) => await app.inject({
    method,
    url: `${PREFIX}${path}`,
    headers: jwt === undefined ? {} : { authorization: `Bearer ${jwt}` },
    ...(payload === undefined ? {} : { payload })
  })
  const signIn: AccountApp['signIn'] = async (email, password) => await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email, password } })
  const token: AccountApp['token'] = async (email = ALICE.email, password = ALICE.password) => {
    const res = await signIn(email, password)
    const jwt = res.json().data?.jwt as string | undefined
    if (res.statusCode !== 200 || jwt === undefined) throw new Error(`no token: ${res.body}`)
    return jwt
  }
  return { app, users, twoFactor, passkeys, mail, clock, lines, call, signIn, token }
}

/**
 * The memory port seen without one of its optional methods, as a host's
 * port may be: each method called on the store itself (they use its
 * private fields, which a prototype copy would not reach).
 */
export function portWithout (port: MemoryTwoFactorStore, method: 'setMethod' | 'countBackupCodes'): TwoFactorPort {
  const methods: TwoFactorPort = {
    methodOf: async (id) => await port.methodOf(id),
    getTotpSecret: async (id) => await port.getTotpSecret(id),
    setTotpSecret: async (id, secret) => { await port.setTotpSecret(id, secret) },
    consumeBackupCode: async (id, hash, claim) => await port.consumeBackupCode(id, hash, claim),
    replaceBackupCodes: async (id, hashes) => { await port.replaceBackupCodes(id, hashes) },
    setMethod: async (id, value) => { await port.setMethod(id, value) },
    countBackupCodes: async (id) => await port.countBackupCodes(id)
  }
  delete methods[method]
  return methods
}
