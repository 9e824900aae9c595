import { generateKeyPairSync } from 'node:crypto'
import fastifySwagger from '@fastify/swagger'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { type JwtLoginOptions } from '../../lib/index.js'
import { ConsoleMailer, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE } from './app.js'

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
const EC_KEY = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()

/**
 * A host with every route of the plugin (an EC key, so `/jwks` too; two-factor,
 * reset, refresh, validate, revoke on), and `@fastify/swagger` registered
 * first when `swagger` is given (its options); `before` runs just before the plugin is registered.
 */
export async function buildDocumentedHost (
  swagger: Record<string, unknown> | null,
  options: Partial<JwtLoginOptions> = {},
  before: (app: FastifyInstance) => void = () => {}
): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const mailer = new ConsoleMailer(() => {})
  const app = Fastify()
  if (swagger !== null) await app.register(fastifySwagger, swagger)
  before(app)
  await app.register(jwtLogin, {
    users,
    mailer,
    twoFactor: { port: new MemoryTwoFactorStore(), mailer },
    settings: {
      tokens: { algorithm: 'ES256', keys: [{ kid: 'ec1', privateKey: EC_KEY }] },
      refresh: { enabled: true },
      validate: { enabled: true },
      revoke: { enabled: true },
      resetPassword: { enabled: true }
    },
    ...options
  })
  await app.ready()
  return app
}
