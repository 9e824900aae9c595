// What the tests of POST and DELETE /users share: a host that keeps its log lines, the log check, and adapters without one method.
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import jwtLogin, { type JwtLoginOptions, type SettingsInput, type UserAdapter } from '../../lib/index.js'
import type { MemoryUser, MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET, registrationThrew, testClock } from './app.js'

export { collect } from './oauth.js'

export const KEYS = { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }

export interface LoggingHost {
  app: FastifyInstance
  clock: ReturnType<typeof testClock>
  /** Every line the host's logger wrote, at trace level. */
  lines: string[]
}

/** A host logging at trace level into `lines`, with the plugin on `users` and these settings over the HS256 key. */
export async function loggingHost (t: Test, users: UserAdapter<any>, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<LoggingHost> {
  const lines: string[] = []
  const clock = testClock()
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(jwtLogin, { users, clock, settings: { ...KEYS, ...settings }, ...options })
  await app.ready()
  t.teardown(() => app.close())
  return { app, clock, lines }
}

/** No log line holds any of `values`, in any letter case. */
export function assertNotLogged (t: Test, lines: string[], values: string[]): void {
  const log = lines.join('').toLowerCase()
  for (const value of values) t.notOk(log.includes(value.toLowerCase()), `${value.slice(0, 8)}…: in no log line`)
}

/** What registering the plugin with these settings over `users` threw, or `null` when it registered. */
export async function registrationError (settings: Partial<SettingsInput>, users: UserAdapter<any>): Promise<unknown> {
  return await registrationThrew({ users, settings: { ...KEYS, ...settings } })
}

/** The memory adapter's methods, bound, but `missing`: an adapter that cannot register or delete users. */
export function adapterWithout (users: MemoryUserAdapter, missing: 'createUser' | 'deleteUser'): UserAdapter<MemoryUser> {
  const adapter: UserAdapter<MemoryUser> = {
    findByEmail: users.findByEmail.bind(users),
    findByLogin: users.findByLogin.bind(users),
    findById: users.findById.bind(users),
    verifyPassword: users.verifyPassword.bind(users),
    toPublicUser: users.toPublicUser.bind(users),
    createUser: users.createUser.bind(users),
    deleteUser: users.deleteUser.bind(users)
  }
  Reflect.deleteProperty(adapter, missing)
  return adapter
}
