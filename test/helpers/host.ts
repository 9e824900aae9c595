import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { MemoryUserAdapter, type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { ALICE, HS_SECRET } from './app.js'

/**
 * Like buildApp, but the host declares its own routes (`routes`) around the
 * plugin before the app is ready.
 */
export async function buildHost (
  routes: (app: FastifyInstance) => void,
  settings: Partial<SettingsInput> = {},
  options: Partial<JwtLoginOptions> = {}
): Promise<{ app: FastifyInstance, users: MemoryUserAdapter }> {
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
