import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { JwtLoginSettingsError, type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from './fixtures.js'

export { ALICE, HS_SECRET, testClock } from './fixtures.js'

export interface TestApp {
  app: FastifyInstance
  users: MemoryUserAdapter
}

/**
 * A host app with the plugin mounted on memory users (alice seeded) and an
 * HS256 key. `settings` is merged over the defaults at the top level.
 */
export async function buildApp (settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<TestApp> {
  return await buildHost(() => {}, settings, options)
}

/**
 * Like buildApp, but the host declares its own routes (`routes`) around the
 * plugin before the app is ready.
 */
export async function buildHost (
  routes: (app: FastifyInstance) => void,
  settings: Partial<SettingsInput> = {},
  options: Partial<JwtLoginOptions> = {}
): Promise<TestApp> {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, {
    users,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...settings },
    ...options
  })
  routes(app)
  await app.ready()
  return { app, users }
}

/**
 * What registering the plugin with `options` (over memory users and an
 * HS256 key) and readying the app threw, or `null` when it started. `host`
 * declares the host's own routes first.
 */
export async function registrationThrew (options: Record<string, unknown>, host: (app: FastifyInstance) => void = () => {}): Promise<unknown> {
  const app = Fastify()
  host(app)
  try {
    await app.register(jwtLogin, { users: new MemoryUserAdapter(), settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } }, ...options } as JwtLoginOptions)
    await app.ready()
    return null
  } catch (error) {
    return error
  } finally {
    await app.close()
  }
}

/** The `JwtLoginSettingsError` registration rejects with; a test fails when it starts, or throws anything else. */
export async function registrationRefusal (options: Record<string, unknown>, host?: (app: FastifyInstance) => void): Promise<JwtLoginSettingsError> {
  const error = await registrationThrew(options, host)
  if (error instanceof JwtLoginSettingsError) return error
  throw error ?? new Error('registration was accepted')
}
