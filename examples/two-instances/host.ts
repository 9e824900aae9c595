/**
 * One host process of the two-instances example: run it twice (or N times)
 * behind a load balancer, every process on the same store and signing key,
 * and a token, a revocation, a spent refresh token, a used two-factor or
 * reset code or a lockout made through one process holds on all of them.
 * So does an API key: created through one, it works on the host's own
 * route (`GET /orders`) of every process, and ends on all of them.
 *
 *   REDIS_PREFIX=myapp: JWT_SECRET=... PORT=3001 node --import tsx examples/two-instances/host.ts
 *
 * A host imports 'jwt-login', 'fastify-jwt-login/redis' and its own user adapter;
 * this example imports the plugin's source and its in-memory test users.
 */
import { readFile } from 'node:fs/promises'
import Fastify from 'fastify'
import jwtLogin, { type Mailer, type SettingsInput, type SettingsSource } from '../../lib/index.js'
import { MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { storeFromEnv } from './store.js'
import { API_KEY_SCOPE, LOCKOUT_MAX, SEEDED_USERS, TOTP_SECRET } from './users.js'

const { JWT_SECRET, PORT = '0', SETTINGS_FILE, SETTINGS_TTL = '30s' } = process.env
// No default key: a made-up one would let each process sign tokens the others refuse.
if (JWT_SECRET === undefined) throw new Error('JWT_SECRET is required (the same one in every instance, at least 32 bytes)')

// Same users, same order, same IDs in every process (a real host has one user database),
// and the same two-factor setup: carol uses an authenticator app, dave gets codes by email.
const users = new MemoryUserAdapter()
const twoFactorPort = new MemoryTwoFactorStore()
for (const { twoFactor, ...user } of SEEDED_USERS) {
  const { ID } = await users.addUser(user)
  if (twoFactor === 'totp') await twoFactorPort.setTotpSecret(ID, TOTP_SECRET)
  if (twoFactor !== undefined) twoFactorPort.enable(ID, twoFactor)
}

// Everything the instances must agree on lives in the store (see store.ts): sessions and their
// refresh families, revocations, reset and two-factor codes, lockout counters.
const store = await storeFromEnv(process.env)

// The example's "mail": one JSON line per message on stdout, which a script can read.
// A real host sends it (NodemailerMailer from 'fastify-jwt-login/nodemailer').
const mailer: Mailer = {
  async send (message) { console.log(JSON.stringify({ mail: message })) }
}

/** The settings without the signing key: what the settings file holds (a secret stays out of it). */
type SharedSettings = Omit<SettingsInput, 'tokens'> & { tokens?: Omit<SettingsInput['tokens'], 'keys'> }

const STATIC_SETTINGS: SharedSettings = {
  refresh: { enabled: true },
  resetPassword: { enabled: true, mail: { siteName: 'jwt-login example' } },
  limits: { loginPerAccount: { max: LOCKOUT_MAX, window: '15m' } },
  // personal API keys (`/jwt-login/v1/account/api-keys`) for scripts, taken by `GET /orders` below
  apiKeys: { enabled: true, scopes: [API_KEY_SCOPE] }
}

/** The same key id and secret everywhere: a token signed by one process verifies on the others. */
function withKey (settings: SharedSettings): SettingsInput {
  return { ...settings, tokens: { ...settings.tokens, keys: [{ kid: 'shared-1', secret: JWT_SECRET as string }] } }
}

// With SETTINGS_FILE, the settings are re-read from that JSON file every SETTINGS_TTL, as a host
// re-reads its admin screen's settings: change the file, and every instance follows within the TTL.
const settingsFile: SettingsSource | undefined = SETTINGS_FILE === undefined
  ? undefined
  : async () => withKey(JSON.parse(await readFile(SETTINGS_FILE, 'utf8')) as SharedSettings)

const app = Fastify({ logger: { level: 'warn' } })
await app.register(jwtLogin, {
  users,
  store,
  mailer,
  twoFactor: { port: twoFactorPort, mailer },
  settings: settingsFile ?? withKey(STATIC_SETTINGS),
  settingsTtl: SETTINGS_TTL
})
app.addHook('onClose', async () => { await store.close?.() })

// The host's own route for scripts: an API key with the scope (or a signed-in user's token). A settings
// file must declare the scope in `apiKeys.scopes`, or the host refuses to start here.
app.get('/orders', { preHandler: app.jwtLogin.authenticateWith({ apiKey: true, scopes: [API_KEY_SCOPE] }) }, async (request) => {
  const { user, apiKey } = request.jwtLogin!
  return { userId: user.ID, keyId: apiKey?.id ?? null }
})

const address = await app.listen({ host: '127.0.0.1', port: Number(PORT) })
// One JSON line on stdout tells a supervisor (or the test) where this instance listens.
console.log(JSON.stringify({ listening: address }))

// Close gracefully: in-flight requests finish and the store's connections are released.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
}
