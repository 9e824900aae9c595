/**
 * The demo host platform: `npm start`. The plugin is mounted with every
 * feature switched on, on embedded defaults: in-memory users with a seeded
 * demo user, the memory store (or Redis when REDIS_URL is set), mail printed
 * to the console, the OpenAPI document and Swagger UI at /docs, passkeys
 * (in memory) with a page to try them at http://localhost:<port>/passkeys,
 * and the account routes with a page at /account.
 *
 * The passkey page (examples/passkeys-page.html, a host route outside the
 * plugin's prefix) runs every ceremony with @simplewebauthn/browser, served
 * from node_modules: a password sign-in (the demo user prefilled; the
 * two-factor user a click away), the second factor (a TOTP code or a
 * passkey), enrolling a passkey (needs a sign-in within the last 10
 * minutes), listing them, a passwordless sign-in, a step-up and a sign-out
 * (revoke). Each answer is listed with the claims of its JWT (sub, sid,
 * auth_time, amr). Passkeys belong to the relying party `localhost` and are
 * accepted from the origin http://localhost:<port> only: open the page there,
 * not at 127.0.0.1 (no relying party id), and start the demo on a fixed PORT
 * (with PORT=0 the origin cannot be known beforehand). Try it: sign in with
 * the password, enrol, sign out, sign in with the passkey; or, as the
 * two-factor user, sign in with password and TOTP code, enrol, sign out, sign
 * in with the password and answer the second factor with the passkey.
 * test/browser/passkeys.ts does both in Chromium with a virtual authenticator.
 *
 * The account page (examples/account-page.html at /account, a host route
 * too) calls the account routes (`account.enabled`): after a password
 * sign-in (and its second factor, when on), it shows the account, sends and
 * checks an email verification code, changes the password, enrols TOTP (the
 * QR code and the secret; its first code; the backup codes), makes new
 * backup codes, changes the email address and turns the second factor off.
 * The seeded users' addresses are verified; a user registered there (or by
 * `POST /users`) is mailed a code. Every code is mailed by the console
 * mailer, printed on the console beside the banner. test/browser/account.ts
 * clicks it through.
 *
 * Sign-in by email (`emailSignIn.enabled`) mails a code and a link to the
 * page at http://localhost:<port>/email-sign-in
 * (examples/email-sign-in-page.html, a host route), with the code and the
 * address in the URL fragment: the page reads them, clears them from the
 * address bar and POSTs them to the plugin's `/auth/email/verify`. A GET of
 * the link (what a mail scanner does) never carries the fragment and spends
 * nothing. Without a fragment the page asks for the address, then for the
 * code; the two-factor user is then asked for its second factor (a TOTP or
 * backup code), as the mailbox is one factor. The page calls the routes
 * through the client (`signInWithEmailLink` reads the fragment). `emailSignIn.register` is on, as `users.register`
 * is: any address may sign in by email, and its first sign-in creates the
 * user (the console mailer is the only mailbox, so nothing leaves the
 * machine, and it shows the `createUser` path). The link names the demo's
 * port: with PORT=0 it cannot be known, and the mail carries the code only.
 * test/browser/email-sign-in.ts follows the link in Chromium.
 *
 * The passkey and account pages call the plugin through its client,
 * `fastify-jwt-login/client` (lib/client.ts, docs/client.md): bundled into
 * one ES module by esbuild
 * when the demo starts (from the TypeScript source, so it never lags behind
 * a stale dist/) and served at /client.js. The passkey page hands the
 * client's passkey helpers the `SimpleWebAuthnBrowser` global of
 * @simplewebauthn/browser's UMD bundle. The two pages share their script (the
 * client, the signed-in state from its session events, the list of answers,
 * the password sign-in and sign-out): examples/page-kit.js, a plain browser
 * ES module served as it is at /page-kit.js and imported by each page's
 * inline module script. Each entry of the answers list is what a client
 * method answered, with the status and body of the route's HTTP answer (the
 * client's `fetch` option records them), or the `JwtLoginClientError` it threw.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import { build } from 'esbuild'
import Fastify, { type FastifyInstance } from 'fastify'
import jwtLogin, { BEARER_SCHEME, createTotpSecret, jwtLoginOpenApi, MemoryStore, type SettingsInput, type StateStore } from '../lib/index.js'
import { ConsoleMailer, MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../lib/testing.js'
import { RedisStore } from '../lib/redis.js'

export const DEMO_USER = { login: 'demo', email: 'demo@example.com', password: 'demo-password-123', displayName: 'Demo User', roles: ['editor'] }
/** The second demo user has two-factor on (TOTP); its secret is new at every start. */
export const DEMO_2FA_USER = { login: 'demo2fa', email: 'demo2fa@example.com', password: 'demo-password-456', displayName: 'Demo Two-Factor User' }
export const demoTotp = createTotpSecret('jwt-login demo', DEMO_2FA_USER.email)
/** The port of `npm start` when PORT is not set; the passkey origin is http://localhost on it. */
export const DEFAULT_PORT = 3000
/** Where the plugin is mounted (its default prefix). */
const PREFIX = '/jwt-login/v1'

/** A provider for `/oauth/token`, from OAUTH_* environment variables: an OpenID issuer, or a plain OAuth 2.0 preset. */
export interface DemoOAuth {
  provider: string
  /** An OpenID provider's issuer (its preset is generic), or */
  issuer?: string
  /** a plain OAuth 2.0 preset (`github`, `facebook`, `discord`), which knows its endpoints and takes codes only. */
  preset?: 'github' | 'facebook' | 'discord'
  /** GitHub Enterprise Server's address (the github preset). */
  enterpriseUrl?: string
  clientId: string
  clientSecret?: string
  redirectUri?: string
  autoRegister: boolean
}

/** The presets the demo takes in OAUTH_PRESET. */
const DEMO_PRESETS = new Set(['github', 'facebook', 'discord'])

/**
 * OAUTH_ISSUER and OAUTH_CLIENT_ID point the demo at an OpenID provider; with
 * OAUTH_CLIENT_SECRET and OAUTH_REDIRECT_URI it takes codes too. Or
 * OAUTH_PRESET (github, facebook or discord) with OAUTH_CLIENT_ID,
 * OAUTH_CLIENT_SECRET and OAUTH_REDIRECT_URI: a plain OAuth 2.0 provider
 * (with github, OAUTH_ENTERPRISE_URL names a GitHub Enterprise Server).
 * OAUTH_PROVIDER names it (default idp1), OAUTH_AUTO_REGISTER=1 creates users.
 */
export function oauthFromEnv (env: NodeJS.ProcessEnv): DemoOAuth | undefined {
  const preset = env.OAUTH_PRESET
  if (preset !== undefined && DEMO_PRESETS.has(preset)) {
    if (env.OAUTH_CLIENT_ID === undefined || env.OAUTH_CLIENT_SECRET === undefined || env.OAUTH_REDIRECT_URI === undefined) return undefined
    return {
      provider: env.OAUTH_PROVIDER ?? preset,
      preset: preset as NonNullable<DemoOAuth['preset']>,
      clientId: env.OAUTH_CLIENT_ID,
      clientSecret: env.OAUTH_CLIENT_SECRET,
      redirectUri: env.OAUTH_REDIRECT_URI,
      autoRegister: env.OAUTH_AUTO_REGISTER === '1',
      ...(preset === 'github' && env.OAUTH_ENTERPRISE_URL !== undefined ? { enterpriseUrl: env.OAUTH_ENTERPRISE_URL } : {})
    }
  }
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
  if (oauth.preset !== undefined) {
    const { preset, clientId, enterpriseUrl, autoRegister } = oauth
    return { providers: { [oauth.provider]: { enabled: true, preset, clientId, clientSecret, redirectUris: [redirectUri as string], autoRegister, ...(enterpriseUrl === undefined ? {} : { enterpriseUrl }) } } }
  }
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
  /** The HS256 signing secret (JWT_SECRET), so another program can verify the demo's tokens; a random one by default. */
  jwtSecret?: string
  oauth?: DemoOAuth
  /** Where the demo writes its banner (and mail). */
  print?: (text: string) => void
  /** The port the demo will listen on (default 3000): passkeys are accepted from the page at http://localhost on it only, and the sign-in mail links there. */
  port?: number
  /**
   * Runs on the new Fastify instance before anything is registered on it:
   * where a host registers the plugins that must see every route and hook
   * (examples/observability/ registers @fastify/otel's here).
   */
  beforePlugin?: (app: FastifyInstance) => Promise<void>
}

export async function buildDemo (options: DemoOptions = {}): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  // seeded as verified: their addresses are the demo's own (a user of POST /users starts unverified and is mailed a code)
  await users.addUser({ ...DEMO_USER, emailVerified: true })
  const twoFactorUser = await users.addUser({ ...DEMO_2FA_USER, emailVerified: true })
  const twoFactor = new MemoryTwoFactorStore()
  await twoFactor.setTotpSecret(twoFactorUser.ID, demoTotp.secret)
  twoFactor.enable(twoFactorUser.ID, 'totp')
  const store: StateStore = options.redisUrl !== undefined
    ? new RedisStore({ url: options.redisUrl, prefix: 'jwt-login-demo:' })
    : new MemoryStore()

  const mailer = new ConsoleMailer(options.print)
  const app = Fastify({ logger: { level: 'warn' } })
  await options.beforePlugin?.(app)
  await registerDocs(app)
  await app.register(jwtLogin, {
    users,
    store,
    settings: {
      tokens: { keys: [{ kid: 'demo-1', secret: options.jwtSecret ?? randomBytes(32).toString('base64url') }] },
      refresh: { enabled: true },
      bearer: { enabled: true },
      validate: { enabled: true },
      revoke: { enabled: true },
      sessions: { enabled: true },
      twoFactor: { rememberDevice: { enabled: true } },
      users: { register: { enabled: true, signIn: true, verifyEmail: true }, delete: { enabled: true } },
      resetPassword: { enabled: true, mail: { siteName: 'jwt-login demo' } },
      oauth: oauthSettings(options.oauth),
      account: { enabled: true },
      // API keys for scripts: GET /me takes one too (see below)
      apiKeys: { enabled: true, scopes: ['profile:read'] },
      passkeys: { enabled: true, rpName: 'jwt-login demo', rpId: 'localhost', origins: [passkeyOrigin(options.port ?? DEFAULT_PORT)] },
      // register: any address may sign in, as anyone may register at POST /users here; its mail only reaches this console
      emailSignIn: { enabled: true, linkUrl: emailSignInPageUrl(options.port ?? DEFAULT_PORT), register: true }
    },
    mailer,
    twoFactor: { port: twoFactor, mailer, issuer: 'jwt-login demo' },
    passkeys: { port: new MemoryPasskeyStore() }
  })
  app.addHook('onClose', async () => { await store.close?.() })

  // A host route protected by the plugin's hook: a signed-in user's token, or an API key with the scope `profile:read`.
  app.get('/me', {
    preHandler: app.jwtLogin.authenticateWith({ apiKey: true, scopes: ['profile:read'] }),
    schema: { tags: ['host'], summary: 'The signed-in user (a host route behind the authenticate hook; an API key with `profile:read` works too)', security: [{ [BEARER_SCHEME]: [] }] }
  }, async (request) => ({ user: request.jwtLogin?.user }))
  await registerPageKit(app)
  await registerPasskeyPage(app)
  await registerAccountPage(app)
  await registerEmailSignInPage(app)
  return app
}

/** The one page origin whose passkey ceremonies the demo accepts: http://localhost on its port (WebAuthn's relying party is `localhost`). */
export function passkeyOrigin (port: number): string {
  return `http://localhost:${port}`
}

/** examples/passkeys-page.html, beside this file. */
const PASSKEY_PAGE = new URL('./passkeys-page.html', import.meta.url)
/** Where the demo serves the sign-in by email page: a host route, outside the plugin's prefix. */
export const EMAIL_SIGN_IN_PATH = '/email-sign-in'

/**
 * The page the sign-in mail links to (`emailSignIn.linkUrl`), on localhost
 * as the passkey page; '' (no link, the code only) for port 0, whose real
 * port is not known before the demo listens.
 */
export function emailSignInPageUrl (port: number): string {
  return port === 0 ? '' : `http://localhost:${port}${EMAIL_SIGN_IN_PATH}`
}

/** examples/account-page.html, beside this file. */
const ACCOUNT_PAGE = new URL('./account-page.html', import.meta.url)
/** examples/email-sign-in-page.html, beside this file. */
const EMAIL_SIGN_IN_PAGE = new URL('./email-sign-in-page.html', import.meta.url)
/** examples/page-kit.js, beside this file: the module the passkey and account pages' scripts import. */
const PAGE_KIT = new URL('./page-kit.js', import.meta.url)
/** lib/client.ts: the entry of `fastify-jwt-login/client`, which the pages call the plugin with. */
const CLIENT_ENTRY = fileURLToPath(new URL('../lib/client.ts', import.meta.url))
/** @simplewebauthn/browser's UMD bundle (it defines `SimpleWebAuthnBrowser`), found from the package's own entry point. */
const BROWSER_BUNDLE = join(dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '..', 'dist', 'bundle', 'index.umd.min.js')

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string)

/** A page with its `{{name}}` placeholders filled: the plugin's prefix and the demo users' credentials. */
function fillPage (template: string): string {
  const values: Record<string, string> = {
    prefix: PREFIX,
    email: DEMO_USER.email,
    password: DEMO_USER.password,
    twoFactorEmail: DEMO_2FA_USER.email,
    twoFactorPassword: DEMO_2FA_USER.password
  }
  // every placeholder of the pages has its value (test/examples/demo.test.ts finds none left)
  return Object.entries(values).reduce((page, [name, value]) => page.replaceAll(`{{${name}}}`, escapeHtml(value)), template)
}

/**
 * `fastify-jwt-login/client` as one ES module for the browser, bundled from
 * its TypeScript source. `@simplewebauthn/browser` is not in it (the
 * passkey helpers never make a bundler follow their optional peer): the
 * passkey page passes them the copy it loads itself.
 */
export async function bundleClient (): Promise<string> {
  const { outputFiles } = await build({
    entryPoints: [CLIENT_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent'
  })
  return (outputFiles[0] as { text: string }).text
}

/**
 * The pages' shared module at GET /page-kit.js, read once at start, and the
 * client it imports at GET /client.js, bundled once at start; host routes
 * hidden from the OpenAPI document.
 */
async function registerPageKit (app: FastifyInstance): Promise<void> {
  const [script, client] = await Promise.all([readFile(PAGE_KIT, 'utf8'), bundleClient()])
  app.get('/page-kit.js', { schema: { hide: true } }, async (_request, reply) => await reply.type('text/javascript; charset=utf-8').send(script))
  app.get('/client.js', { schema: { hide: true } }, async (_request, reply) => await reply.type('text/javascript; charset=utf-8').send(client))
}

/**
 * The passkey page at GET /passkeys and the browser library it loads, read
 * once at start. Host routes: the plugin's own passkey routes are under its
 * prefix, so nothing collides; hidden from the OpenAPI document.
 */
async function registerPasskeyPage (app: FastifyInstance): Promise<void> {
  const [page, bundle] = await Promise.all([readFile(PASSKEY_PAGE, 'utf8'), readFile(BROWSER_BUNDLE, 'utf8')])
  const html = fillPage(page)
  app.get('/passkeys', { schema: { hide: true } }, async (_request, reply) => await reply.type('text/html; charset=utf-8').send(html))
  app.get('/passkeys/simplewebauthn-browser.js', { schema: { hide: true } }, async (_request, reply) => await reply.type('text/javascript; charset=utf-8').send(bundle))
}

/**
 * The account page at GET /account, read once at start: plain HTML whose
 * script (its own, with /page-kit.js and the client) calls the plugin's account routes
 * (under its prefix, so the host's `/account` does not collide with them);
 * hidden from the OpenAPI document.
 */
async function registerAccountPage (app: FastifyInstance): Promise<void> {
  const html = fillPage(await readFile(ACCOUNT_PAGE, 'utf8'))
  app.get('/account', { schema: { hide: true } }, async (_request, reply) => await reply.type('text/html; charset=utf-8').send(html))
}

/**
 * The sign-in by email page at GET /email-sign-in, read once at start: the
 * mailed link opens it with the code in the fragment, which never reaches
 * this route (a GET here, a scanner's included, spends nothing); its script
 * POSTs the code. Hidden from the OpenAPI document.
 */
async function registerEmailSignInPage (app: FastifyInstance): Promise<void> {
  const html = fillPage(await readFile(EMAIL_SIGN_IN_PAGE, 'utf8'))
  app.get(EMAIL_SIGN_IN_PATH, { schema: { hide: true } }, async (_request, reply) => await reply.type('text/html; charset=utf-8').send(html))
}

/**
 * The OpenAPI document (from the route schemas) and Swagger UI at /docs.
 * @fastify/swagger comes before the plugin, so it sees the plugin's routes;
 * the plugin's tags and security scheme are spread in because the host's
 * own /me names the scheme too.
 */
async function registerDocs (app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'jwt-login demo', version: '1.0.0', description: 'The routes of jwt-login, mounted on a demo host.' },
      ...jwtLoginOpenApi,
      tags: [...jwtLoginOpenApi.tags, { name: 'host', description: 'Routes of the demo host.' }]
    }
  })
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' })
}

/** A POSIX sed that picks a string field out of the JSON answer on stdin (no jq needed). */
const pick = (field: string): string => `sed -E 's/.*"${field}":"([^"]+)".*/\\1/'`

/** A curl that posts JSON: `body` goes in double quotes, so `$VARIABLES` in it expand. */
const postJson = (url: string, body: string, method = 'POST'): string =>
  `curl -s -X ${method} ${url} -H 'content-type: application/json' -d "${body.replace(/"/g, '\\"')}"`

/**
 * The banner: credentials and shell commands that can be pasted in order
 * into any POSIX shell (each value a later command uses is kept in a variable).
 */
export function banner (base: string): string {
  const prefix = `${base}${PREFIX}`
  const demo = `"email":"${DEMO_USER.email}"`
  return [
    `jwt-login demo listening on ${base}`,
    '',
    `Swagger UI: ${base}/docs (the OpenAPI document: ${base}/docs/json)`,
    '',
    `Passkeys: ${onLocalhost(base, '/passkeys')} (open it at localhost, the passkeys' relying party; not at 127.0.0.1)`,
    '',
    `Your account: ${base}/account (email verification, password and email change, TOTP; the codes are mailed to this console)`,
    '',
    `Sign in by email: ${onLocalhost(base, EMAIL_SIGN_IN_PATH)} (the code and the link are mailed to this console; any address may sign in)`,
    '',
    'Demo credentials:',
    `  email: ${DEMO_USER.email}`,
    `  password: ${DEMO_USER.password}`,
    '',
    'Try (paste in order into sh, bash or zsh; JWT and REFRESH keep the tokens):',
    `  LOGIN=$(${postJson(`${prefix}/auth`, `{${demo},"password":"${DEMO_USER.password}"}`)}); echo "$LOGIN"`,
    `  JWT=$(echo "$LOGIN" | ${pick('jwt')}); REFRESH=$(echo "$LOGIN" | ${pick('refresh_token')})`,
    `  curl -s -X POST ${prefix}/auth/validate -H "Authorization: Bearer $JWT"`,
    `  curl -s "${base}/?rest_route=/jwt-login/v1/auth/validate" -H "Authorization: Bearer $JWT"`,
    `  curl -s ${base}/me -H "Authorization: Bearer $JWT"`,
    `  curl -s ${prefix}/sessions -H "Authorization: Bearer $JWT"`,
    `  curl -s ${prefix}/account -H "Authorization: Bearer $JWT"`,
    `  REFRESHED=$(${postJson(`${prefix}/auth/refresh`, '{"refresh_token":"$REFRESH"}')}); echo "$REFRESHED"`,
    `  JWT=$(echo "$REFRESHED" | ${pick('jwt')}); REFRESH=$(echo "$REFRESHED" | ${pick('refresh_token')})`,
    `  curl -s -X POST ${prefix}/auth/revoke -H "Authorization: Bearer $JWT"`,
    '',
    'Password reset (the mail with the code is printed on this console):',
    `  ${postJson(`${prefix}/user/reset_password`, `{${demo}}`)}`,
    '  CODE=PASTE-THE-CODE-FROM-THE-MAIL',
    `  ${postJson(`${prefix}/user/reset_password`, `{${demo},"code":"$CODE","new_password":"a new demo password"}`, 'PUT')}`,
    '',
    'Sign-in by email (the mail with the code and the link is printed on this console):',
    `  ${postJson(`${prefix}/auth/email`, `{${demo}}`)}`,
    '  CODE=PASTE-THE-CODE-FROM-THE-MAIL',
    `  ${postJson(`${prefix}/auth/email/verify`, `{${demo},"code":"$CODE"}`)}`,
    '',
    'Two-factor user (TOTP): add the secret to an authenticator app, or use the URI as a QR code:',
    `  email: ${DEMO_2FA_USER.email}`,
    `  password: ${DEMO_2FA_USER.password}`,
    `  TOTP secret: ${demoTotp.secret}`,
    `  otpauth URI: ${demoTotp.uri}`,
    'Try (INTERIM keeps the interim token; CODE is the app\'s current 6 digits, or oathtool\'s):',
    `  INTERIM=$(${postJson(`${prefix}/auth`, `{"email":"${DEMO_2FA_USER.email}","password":"${DEMO_2FA_USER.password}"}`)} | ${pick('jwt')})`,
    `  CODE=$(oathtool --totp -b ${demoTotp.secret} 2>/dev/null || echo PASTE-THE-6-DIGITS)`,
    `  ${postJson(`${prefix}/auth/2fa`, '{"JWT":"$INTERIM","code":"$CODE"}')}`,
    '',
    'Provider sign-in (with OAUTH_ISSUER and OAUTH_CLIENT_ID set; set PROVIDER_CODE, or ID_TOKEN and NONCE, from the provider; prefer POST):',
    `  ${postJson(`${prefix}/oauth/token`, '{"provider":"idp1","code":"$PROVIDER_CODE"}')}`,
    `  ${postJson(`${prefix}/oauth/token`, '{"provider":"idp1","id_token":"$ID_TOKEN","nonce":"$NONCE"}')}`,
    ''
  ].join('\n')
}

/** A page of the demo at `base`, named by localhost (its port kept): the passkeys' relying party, and the host the sign-in mail links to. */
function onLocalhost (base: string, path: string): string {
  const url = new URL(path, base)
  url.hostname = 'localhost'
  return url.href
}

/**
 * Starts the demo on 127.0.0.1:`env.PORT` (signing with `env.JWT_SECRET`
 * when set) and prints the banner. Passkeys are accepted from
 * http://localhost:`env.PORT`, so PORT=0 (any free port) leaves them unusable.
 */
export async function main (env: NodeJS.ProcessEnv, print: (text: string) => void = console.log): Promise<FastifyInstance> {
  // examples/start.ts gives PORT its default (3000)
  const port = Number(env.PORT)
  const app = await buildDemo({ redisUrl: env.REDIS_URL, jwtSecret: env.JWT_SECRET, print, oauth: oauthFromEnv(env), port })
  const address = await app.listen({ host: '127.0.0.1', port })
  print(banner(address))
  return app
}
