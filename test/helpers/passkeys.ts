// A test host with passkeys on (memory stores unless told), a software authenticator, and the ceremonies as one call each.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import jwtLogin, { type JwtLoginOptions, type SettingsInput, type StateStore } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { createTotpSecret } from '../../lib/two-factor/methods/totp.js'
import { ALICE, HS_SECRET, testClock } from './app.js'
import { SoftAuthenticator, type AuthenticateOptions, type RegisterOptions } from './authenticator.js'
import { BOB } from './two-factor.js'

export const PREFIX = '/jwt-login/v1'
export const ORIGIN = 'https://app.example.com'
export const RP_ID = 'example.com'

export interface PasskeyApp {
  app: FastifyInstance
  users: MemoryUserAdapter
  passkeys: MemoryPasskeyStore
  twoFactor: MemoryTwoFactorStore
  clock: ReturnType<typeof testClock>
  /** Alice: no second factor. Bob: TOTP on (`bobSecret`). */
  aliceId: number
  bobId: number
  bobSecret: string
  /** A password sign-in's answer. */
  login: (who?: { email: string, password: string }) => Promise<LightMyRequestResponse>
  /** A final access token of a fresh password sign-in (alice unless told). */
  token: (who?: { email: string, password: string }) => Promise<string>
  post: (path: string, payload?: unknown, token?: string) => Promise<LightMyRequestResponse>
  /** Enrols a passkey on `authenticator` with `token` (a fresh sign-in's); answers the route's answer. */
  enrol: (token: string, authenticator: SoftAuthenticator, opts?: RegisterOptions, name?: string) => Promise<LightMyRequestResponse>
  /** Options then assertion of a passwordless sign-in. */
  signIn: (authenticator: SoftAuthenticator, opts?: AuthenticateOptions) => Promise<LightMyRequestResponse>
  options: (path: string, token?: string) => Promise<PublicKeyCredentialRequestOptionsJSON>
  assert: (path: string, token: string | undefined, authenticator: SoftAuthenticator, opts?: AuthenticateOptions) => Promise<AuthenticationResponseJSON>
}

/** The passkey settings of the tests: the relying party `example.com`, its one page origin. */
export const PASSKEY_SETTINGS = { enabled: true, rpId: RP_ID, origins: [ORIGIN] }

export async function buildPasskeyApp (options: { settings?: Partial<SettingsInput>, plugin?: Partial<JwtLoginOptions>, store?: StateStore } = {}): Promise<PasskeyApp> {
  const clock = testClock()
  const users = new MemoryUserAdapter()
  const passkeys = new MemoryPasskeyStore()
  const twoFactor = new MemoryTwoFactorStore()
  const alice = await users.addUser(ALICE)
  const bob = await users.addUser(BOB)
  const { secret } = createTotpSecret('jwt-login test', BOB.email)
  await twoFactor.setTotpSecret(bob.ID, secret)
  twoFactor.enable(bob.ID, 'totp')
  const app = Fastify()
  const { passkeys: passkeySettings, ...rest } = options.settings ?? {}
  await app.register(jwtLogin, {
    users,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...rest, passkeys: { ...PASSKEY_SETTINGS, ...passkeySettings } },
    clock,
    store: options.store,
    twoFactor: { port: twoFactor },
    passkeys: { port: passkeys },
    ...options.plugin
  })
  await app.ready()
  const post = async (path: string, payload: unknown = {}, token?: string): Promise<LightMyRequestResponse> =>
    await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload: payload as Record<string, unknown>, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  const login = async (who: { email: string, password: string } = ALICE): Promise<LightMyRequestResponse> => await post('/auth', { email: who.email, password: who.password })
  const optionsOf = async (path: string, token?: string): Promise<PublicKeyCredentialRequestOptionsJSON> => {
    const res = await post(path, {}, token)
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json().data
  }
  const assert = async (path: string, token: string | undefined, authenticator: SoftAuthenticator, opts?: AuthenticateOptions): Promise<AuthenticationResponseJSON> =>
    authenticator.authenticate(await optionsOf(path, token), opts)
  return {
    app,
    users,
    passkeys,
    twoFactor,
    clock,
    aliceId: alice.ID,
    bobId: bob.ID,
    bobSecret: secret,
    login,
    token: async (who) => (await login(who)).json().data.jwt as string,
    post,
    enrol: async (token, authenticator, opts, name) => {
      const res = await post('/passkeys/register/options', {}, token)
      if (res.statusCode !== 200) return res
      const creation = res.json().data as PublicKeyCredentialCreationOptionsJSON
      return await post('/passkeys/register', { credential: authenticator.register(creation, opts), ...(name === undefined ? {} : { name }) }, token)
    },
    signIn: async (authenticator, opts) => await post('/auth/passkey', { credential: await assert('/auth/passkey/options', undefined, authenticator, opts) }),
    options: optionsOf,
    assert
  }
}

/** A software authenticator on the tests' page origin. */
export function authenticator (): SoftAuthenticator {
  return new SoftAuthenticator({ origin: ORIGIN })
}

/** The claims of a JWT, unverified (the tests read `auth_time` and `amr`). */
export function claimsOf (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8'))
}
