import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { JwtLoginEventMap, JwtLoginEventName, JwtLoginOptions, SettingsInput } from '../../lib/index.js'
import { buildApp, type TestApp } from './app.js'
import { CLIENTS, OTHER_REDIRECT_URI, REDIRECT_URI, type TestIdp } from './oidc-provider.js'

export const TOKEN_URL = '/jwt-login/v1/oauth/token'

type Providers = NonNullable<NonNullable<SettingsInput['oauth']>['providers']>
type Provider = Providers[string]

/** idp1 (code or ID token, client_secret_basic) and idp2 (code only, client_secret_post) at the test provider. */
export function providers (idp: TestIdp, overrides: { idp1?: Partial<Provider>, idp2?: Partial<Provider> } = {}): { idp1: Provider, idp2: Provider } {
  return {
    idp1: {
      enabled: true,
      issuer: idp.issuer,
      clientId: CLIENTS.idp1.client_id,
      clientSecret: CLIENTS.idp1.client_secret,
      redirectUris: [REDIRECT_URI, OTHER_REDIRECT_URI],
      acceptIdToken: true,
      ...overrides.idp1
    } as Provider,
    idp2: {
      enabled: true,
      issuer: idp.issuer,
      clientId: CLIENTS.idp2.client_id,
      clientSecret: CLIENTS.idp2.client_secret,
      clientAuthMethod: 'client_secret_post',
      redirectUris: [REDIRECT_URI],
      ...overrides.idp2
    } as Provider
  }
}

export async function buildOAuthApp (oauthProviders: Providers, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<TestApp> {
  return await buildApp({ oauth: { providers: oauthProviders }, ...settings }, options)
}

export async function postToken (app: FastifyInstance, payload: Record<string, string>): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: TOKEN_URL, payload })
}

/** Collects the payloads of one audit event. */
export function collect<E extends JwtLoginEventName> (app: FastifyInstance, event: E): Array<JwtLoginEventMap[E]> {
  const seen: Array<JwtLoginEventMap[E]> = []
  app.jwtLogin.events.on(event, (payload) => { seen.push(payload) })
  return seen
}

export { errorOf } from './http.js'
