/**
 * The demo host platform: `npm start`. The plugin is mounted with every
 * feature switched on, on embedded defaults: in-memory users with a seeded
 * demo user, the memory store (or Redis when REDIS_URL is set), mail printed
 * to the console.
 */
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { ConsoleMailer, MemoryStore, MemoryUserAdapter, RedisStore, type StateStore } from '../lib/index.js'

export const DEMO_USER = { login: 'demo', email: 'demo@example.com', password: 'demo-password-123', displayName: 'Demo User', roles: ['editor'] }

export interface DemoOptions {
  redisUrl?: string
  /** Where the demo writes its banner (and mail). */
  print?: (text: string) => void
}

export async function buildDemo (options: DemoOptions = {}): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(DEMO_USER)
  const store: StateStore = options.redisUrl !== undefined
    ? new RedisStore({ url: options.redisUrl, prefix: 'jwt-login-demo:' })
    : new MemoryStore()

  const app = Fastify({ logger: { level: 'warn' } })
  await app.register(jwtLogin, {
    users,
    store,
    mailer: new ConsoleMailer(options.print),
    settings: {
      tokens: { keys: [{ kid: 'demo-1', secret: randomBytes(32).toString('base64url') }] },
      refresh: { enabled: true },
      bearer: { enabled: true },
      validate: { enabled: true },
      revoke: { enabled: true },
      resetPassword: { enabled: true, mail: { siteName: 'jwt-login demo' } }
    }
  })
  app.addHook('onClose', async () => { await store.close?.() })

  // A host route protected by the plugin's authenticate hook.
  app.get('/me', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ user: request.jwtLogin?.user }))
  return app
}

export function banner (base: string): string {
  const prefix = `${base}/jwt-login/v1`
  return [
    `jwt-login demo listening on ${base}`,
    '',
    'Demo credentials:',
    `  email: ${DEMO_USER.email}`,
    `  password: ${DEMO_USER.password}`,
    '',
    'Try (JWT and REFRESH come from the login answer):',
    `  curl -s -X POST ${prefix}/auth -H 'content-type: application/json' -d '{"email":"${DEMO_USER.email}","password":"${DEMO_USER.password}"}'`,
    `  JWT=$(curl -s -X POST ${prefix}/auth -H 'content-type: application/json' -d '{"email":"${DEMO_USER.email}","password":"${DEMO_USER.password}"}' | sed -E 's/.*"jwt":"([^"]+)".*/\\1/')`,
    `  curl -s -X POST ${prefix}/auth/validate -H "Authorization: Bearer $JWT"`,
    `  curl -s "${base}/?rest_route=/jwt-login/v1/auth/validate" -H "Authorization: Bearer $JWT"`,
    `  curl -s ${base}/me -H "Authorization: Bearer $JWT"`,
    `  curl -s -X POST ${prefix}/auth/refresh -H 'content-type: application/json' -d '{"refresh_token":"REFRESH"}'`,
    `  curl -s -X POST ${prefix}/auth/revoke -H "Authorization: Bearer $JWT"`,
    '',
    'Password reset (the mail with the CODE is printed on this console):',
    `  curl -s -X POST ${prefix}/user/reset_password -H 'content-type: application/json' -d '{"email":"${DEMO_USER.email}"}'`,
    `  curl -s -X PUT ${prefix}/user/reset_password -H 'content-type: application/json' -d '{"email":"${DEMO_USER.email}","code":"CODE","new_password":"a new demo password"}'`,
    ''
  ].join('\n')
}

export async function main (env: NodeJS.ProcessEnv = process.env, print: (text: string) => void = console.log): Promise<FastifyInstance> {
  const app = await buildDemo({ redisUrl: env.REDIS_URL, print })
  const port = Number(env.PORT ?? 3000)
  const address = await app.listen({ host: '127.0.0.1', port })
  print(banner(address))
  return app
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const app = await main()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  }
}
