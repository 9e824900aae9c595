/**
 * The demo host platform: `npm start`. The plugin is mounted with every
 * feature switched on, on embedded defaults: in-memory users with a seeded
 * demo user, the memory store (or Redis when REDIS_URL is set), mail printed
 * to the console.
 */
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { createTotpSecret, MemoryStore, type SettingsInput, type StateStore } from '../lib/index.js'
import { ConsoleMailer, MemoryTwoFactorStore, MemoryUserAdapter } from '../lib/testing.js'
import { RedisStore } from '../lib/redis.js'

export const DEMO_USER = { login: 'demo', email: 'demo@example.com', password: 'demo-password-123', displayName: 'Demo User', roles: ['editor'] }
/** The second demo user has two-factor on (TOTP); its secret is new at every start. */
export const DEMO_2FA_USER = { login: 'demo2fa', email: 'demo2fa@example.com', password: 'demo-password-456', displayName: 'Demo Two-Factor User' }
export const demoTotp = createTotpSecret('jwt-login demo', DEMO_2FA_USER.email)

/** An OpenID provider for `/oauth/token`, from OAUTH_* environment variables. */
export interface DemoOAuth {
  provider: string
  issuer: string
  clientId: string
  clientSecret?: string
  redirectUri?: string
  autoRegister: boolean
}

/**
 * OAUTH_ISSUER and OAUTH_CLIENT_ID point the demo at a provider; with
 * OAUTH_CLIENT_SECRET and OAUTH_REDIRECT_URI it takes codes too.
 * OAUTH_PROVIDER names it (default idp1), OAUTH_AUTO_REGISTER=1 creates users.
 */
export function oauthFromEnv (env: NodeJS.ProcessEnv): DemoOAuth | undefined {
  if (env.OAUTH_ISSUER === undefined || env.OAUTH_CLIENT_ID === undefined) return undefined
  return {
    provider: env.OAUTH_PROVIDER ?? 'idp1',
    issuer: env.OAUTH_ISSUER,
    clientId: env.OAUTH_CLIENT_ID,
    clientSecret: env.OAUTH_CLIENT_SECRET,
    redirectUri: env.OAUTH_REDIRECT_URI,
    autoRegister: env.OAUTH_AUTO_REGISTER === '1'
  }
}

function oauthSettings (oauth: DemoOAuth | undefined): SettingsInput['oauth'] {
  if (oauth === undefined) return { providers: {} }
  const { clientSecret, redirectUri } = oauth
  const codeFlow = clientSecret !== undefined && redirectUri !== undefined ? { clientSecret, redirectUris: [redirectUri] } : {}
  return {
    providers: {
      [oauth.provider]: {
        enabled: true,
        issuer: oauth.issuer,
        clientId: oauth.clientId,
        ...codeFlow,
        acceptIdToken: true,
        autoRegister: oauth.autoRegister
      }
    }
  }
}

export interface DemoOptions {
  redisUrl?: string
  oauth?: DemoOAuth
  /** Where the demo writes its banner (and mail). */
  print?: (text: string) => void
}

export async function buildDemo (options: DemoOptions = {}): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(DEMO_USER)
  const twoFactorUser = await users.addUser(DEMO_2FA_USER)
  const twoFactor = new MemoryTwoFactorStore()
  await twoFactor.setTotpSecret(twoFactorUser.ID, demoTotp.secret)
  twoFactor.enable(twoFactorUser.ID, 'totp')
  const store: StateStore = options.redisUrl !== undefined
    ? new RedisStore({ url: options.redisUrl, prefix: 'jwt-login-demo:' })
    : new MemoryStore()

  const mailer = new ConsoleMailer(options.print)
  const app = Fastify({ logger: { level: 'warn' } })
  await app.register(jwtLogin, {
    users,
    store,
    settings: {
      tokens: { keys: [{ kid: 'demo-1', secret: randomBytes(32).toString('base64url') }] },
      refresh: { enabled: true },
      bearer: { enabled: true },
      validate: { enabled: true },
      revoke: { enabled: true },
      resetPassword: { enabled: true, mail: { siteName: 'jwt-login demo' } },
      oauth: oauthSettings(options.oauth)
    },
    mailer,
    twoFactor: { port: twoFactor, mailer, issuer: 'jwt-login demo' }
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
    'Two-factor user (TOTP): add the secret to an authenticator app, or use the URI as a QR code:',
    `  email: ${DEMO_2FA_USER.email}`,
    `  password: ${DEMO_2FA_USER.password}`,
    `  TOTP secret: ${demoTotp.secret}`,
    `  otpauth URI: ${demoTotp.uri}`,
    'Try (INTERIM is the jwt of the first answer, CODE the app\'s current 6 digits):',
    `  curl -s -X POST ${prefix}/auth -H 'content-type: application/json' -d '{"email":"${DEMO_2FA_USER.email}","password":"${DEMO_2FA_USER.password}"}'`,
    `  curl -s -X POST ${prefix}/auth/2fa -H 'content-type: application/json' -d '{"JWT":"INTERIM","code":"CODE"}'`,
    'Provider sign-in (with OAUTH_ISSUER and OAUTH_CLIENT_ID set; CODE or ID_TOKEN from the provider; prefer POST):',
    `  curl -s -X POST ${prefix}/oauth/token -H 'content-type: application/json' -d '{"provider":"idp1","code":"CODE"}'`,
    `  curl -s -X POST ${prefix}/oauth/token -H 'content-type: application/json' -d '{"provider":"idp1","id_token":"ID_TOKEN","nonce":"NONCE"}'`,
    ''
  ].join('\n')
}

/** Starts the demo on 127.0.0.1:`env.PORT` and prints the banner. */
export async function main (env: NodeJS.ProcessEnv, print: (text: string) => void = console.log): Promise<FastifyInstance> {
  const app = await buildDemo({ redisUrl: env.REDIS_URL, print, oauth: oauthFromEnv(env) })
  const port = Number(env.PORT)
  const address = await app.listen({ host: '127.0.0.1', port })
  print(banner(address))
  return app
}
