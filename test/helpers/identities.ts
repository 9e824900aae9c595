// What the linked-identity tests share: an account host beside the local OpenID provider (idp1, idp2) and a local GitHub (gh), provider sign-ins as calls, and the memory adapter seen without some of its methods.
import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import type { JwtLoginOptions, SettingsInput, UserAdapter } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, buildAccountApp, type AccountApp } from './account.js'
import { providers } from './oauth.js'
import type { GitHubAccount, TestOAuth2Provider } from './oauth2-providers.js'
import { CLIENTS, type TestAccount, type TestIdp } from './oidc-provider.js'

type Providers = NonNullable<NonNullable<SettingsInput['oauth']>['providers']>
type Provider = Providers[string]

export interface IdentityKitOptions {
  /** The local GitHub, configured as `gh` (GitHub Enterprise Server's paths at its origin). */
  github?: TestOAuth2Provider<'github'>
  idp1?: Partial<Provider>
  idp2?: Partial<Provider>
  gh?: Partial<Provider>
  /** Settings over the account host's (top level); `oauth` is the providers'. */
  settings?: Partial<SettingsInput>
  plugin?: Partial<JwtLoginOptions>
  /** The adapter the plugin is given, made from the memory users the kit holds (`adapterOf`); those users themselves by default. */
  adapter?: (users: MemoryUserAdapter) => UserAdapter<MemoryUser>
  /** The memory users to hold, as a host's database that outlives one configuration; new ones (with alice) by default. */
  users?: MemoryUserAdapter
}

export interface IdentityKit extends AccountApp {
  /** `POST /oauth/token` with `fields`: a provider sign-in. */
  providerSignIn: (fields: Record<string, string>) => Promise<LightMyRequestResponse>
  /** The access token of a provider sign-in (throws when it does not answer one). */
  providerToken: (fields: Record<string, string>) => Promise<string>
  /** `POST /account/identities` with `fields`, as `jwt`. */
  link: (jwt: string, fields: Record<string, string>) => Promise<LightMyRequestResponse>
  /** The user's links as the adapter keeps them. */
  linksOf: (email: string) => Promise<Array<{ provider: string, subject: string }>>
}

/**
 * The account host (alice with a password, memory ports, a mail box) with
 * idp1 and idp2 registering the users they do not find, and `gh` when a
 * local GitHub is given.
 */
export async function buildIdentityApp (t: Test, idp: TestIdp, options: IdentityKitOptions = {}): Promise<IdentityKit> {
  const oidc = providers(idp, { idp1: { autoRegister: true, ...options.idp1 }, idp2: { autoRegister: true, ...options.idp2 } })
  const github: Providers = options.github === undefined
    ? {}
    : { gh: { enabled: true, preset: 'github', clientId: options.github.clientId, clientSecret: options.github.clientSecret, redirectUris: [options.github.redirectUris[0]], ...options.github.settings, ...options.gh } as Provider }
  const { oauth, ...rest } = options.settings ?? {}
  const users = options.users ?? new MemoryUserAdapter()
  if (options.users === undefined) await users.addUser({ ...ALICE, emailVerified: true })
  const plugin = { ...options.plugin, users: options.adapter?.(users) ?? users }
  const kit = { ...await buildAccountApp(t, { ...rest, oauth: { ...oauth, providers: { ...oidc, ...github } } }, plugin), users }
  const providerSignIn: IdentityKit['providerSignIn'] = async (fields) => await kit.app.inject({ method: 'POST', url: '/jwt-login/v1/oauth/token', payload: fields })
  return {
    ...kit,
    providerSignIn,
    providerToken: async (fields) => {
      const res = await providerSignIn(fields)
      const jwt = res.json().data?.jwt as string | undefined
      if (res.statusCode !== 200 || jwt === undefined) throw new Error(`no token: ${res.body}`)
      return jwt
    },
    link: async (jwt, fields) => await kit.call('POST', '/account/identities', jwt, fields),
    linksOf: async (email) => {
      const user = await kit.users.findByEmail(email)
      if (user === null) throw new Error(`no user ${email}`)
      return (await kit.users.listIdentities(user)).map(({ provider, subject }) => ({ provider, subject }))
    }
  }
}

/**
 * A provider account's subject as a link holds it: `<issuer URL> <subject>`,
 * the issuer written as the URL parser writes it (an OpenID provider's
 * issuer; a plain OAuth 2.0 provider's user API origin). Built here from the
 * documented form rather than by the plugin's own function, so that a change
 * of the form shows.
 */
export function subjectAt (issuer: string, subject: string): string {
  return `${new URL(issuer).href} ${subject}`
}

/**
 * The fields of an authorization code of the test provider for `account`,
 * issued to the client of `provider` with a PKCE challenge: the code and its
 * verifier, which `POST /account/identities` requires beside a code.
 */
export async function codeFields (idp: TestIdp, account: TestAccount, provider: 'idp1' | 'idp2' = 'idp1'): Promise<Record<string, string>> {
  const { code, codeVerifier } = await idp.code({ client: CLIENTS[provider], account, pkce: true })
  if (codeVerifier === undefined) throw new Error('the provider answered no PKCE verifier')
  return { provider, code, code_verifier: codeVerifier }
}

/**
 * The fields of an ID token of idp1's client for `sub` (`idTokenOf`) that
 * carries a fresh nonce: the token and that nonce, which
 * `POST /account/identities` requires beside an ID token.
 */
export async function idTokenFields (idp: TestIdp, clock: () => number, sub: string, claims: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const nonce = randomUUID()
  return { provider: 'idp1', id_token: await idTokenOf(idp, clock, sub, { nonce, ...claims }), nonce }
}

/** An ID token of idp1's client for `sub`, issued now by `clock` (each its own `jti`); `claims` over the defaults. */
export async function idTokenOf (idp: TestIdp, clock: () => number, sub: string, claims: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(clock() / 1000)
  return await idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub, iat: now, exp: now + 600, jti: randomUUID(), ...claims })
}

/** A GitHub account whose primary, verified address is `email`. */
export function gitHubAccount (id: number, login: string, email: string): GitHubAccount {
  return { id, login, name: null, email: null, emails: [{ email, primary: true, verified: true, visibility: 'private' }] }
}

/**
 * The memory adapter as a host's adapter may be: each of its methods called
 * on the adapter itself (they use its private fields), without the methods
 * in `omit`, and with `replace` in place of its own.
 */
export function adapterOf (users: MemoryUserAdapter, omit: string[] = [], replace: Partial<UserAdapter<MemoryUser>> = {}): UserAdapter<MemoryUser> {
  const methods: Record<string, unknown> = {}
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(users))) {
    const method = (users as unknown as Record<string, unknown>)[name]
    if (name !== 'constructor' && typeof method === 'function' && !omit.includes(name)) methods[name] = method.bind(users)
  }
  return { ...methods, ...replace } as unknown as UserAdapter<MemoryUser>
}
