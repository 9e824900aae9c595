import Fastify, { type FastifyInstance, type FastifyServerOptions, type LightMyRequestResponse } from 'fastify'
import jwtLogin, { type JwtLoginOptions, type Mailer, type SettingsInput, type TwoFactorMethod } from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { ALICE, HS_SECRET, testClock } from './app.js'

export const BOB = { login: 'bob', email: 'bob@example.com', password: 'bob has a long password', displayName: 'Bob Example' }
export const PREFIX = '/jwt-login/v1'

export { totpAt, wrongCode } from './fixtures.js'

export interface TwoFactorApp {
  app: FastifyInstance
  users: MemoryUserAdapter
  port: MemoryTwoFactorStore
  clock: ReturnType<typeof testClock>
  /** Bob's user id (two-factor on with `method`); alice (id 1) has it off. */
  bobId: number
  secret: string
  login: (who?: { email: string, password: string }) => Promise<LightMyRequestResponse>
  interim: () => Promise<string>
  submit: (payload: Record<string, unknown>, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
}

/** The test app with a second user, bob, who has two-factor on (TOTP unless told). */
export async function buildTwoFactorApp (
  options: {
    method?: TwoFactorMethod
    mailer?: Mailer
    settings?: Partial<SettingsInput>
    plugin?: Partial<JwtLoginOptions>
    /** Host routes to add before the app is ready. */
    beforeReady?: (app: FastifyInstance) => void
    /** Options of the host's Fastify (a logger, say). */
    fastify?: FastifyServerOptions
  } = {}
): Promise<TwoFactorApp> {
  const clock = testClock()
  const port = new MemoryTwoFactorStore()
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify(options.fastify)
  await app.register(jwtLogin, {
    users,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...options.settings },
    clock,
    twoFactor: { port, mailer: options.mailer },
    ...options.plugin
  })
  options.beforeReady?.(app)
  await app.ready()
  const bob = await users.addUser(BOB)
  const { secret } = createTotpSecret('jwt-login test', BOB.email)
  await port.setTotpSecret(bob.ID, secret)
  port.enable(bob.ID, options.method ?? 'totp')
  const login = async (who: { email: string, password: string } = BOB): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: who.email, password: who.password } })
  return {
    app,
    users,
    port,
    clock,
    bobId: bob.ID,
    secret,
    login,
    interim: async () => (await login()).json().data.jwt as string,
    submit: async (payload, headers = {}) => await app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload, headers })
  }
}

export { ALICE }
