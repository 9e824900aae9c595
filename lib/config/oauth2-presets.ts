/** The plain OAuth 2.0 presets (github, facebook, discord, oauth2): their endpoints, and the settings that only OpenID providers take refused. */
import type { OAuthPreset, OAuthProviderInput } from '../../schemas/settings.js'

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none'

/** The endpoints of a plain OAuth 2.0 provider. */
export interface OAuth2Api {
  authorization: string | null
  token: string
  user: string
  /** GitHub's list of the user's addresses (`/user/emails`). */
  emails: string | null
}

/** Where the user API's answer holds each fact (`oauth2`), as dotted paths; `emailVerified` may be `true`: every email returned is verified. */
export interface ProfileFields {
  subject: string
  email: string
  emailVerified: string | true
  name: string
  display: string
}

/** The presets without an ID token: the user is read from the provider's user API. */
export const OAUTH2_PRESETS: ReadonlySet<OAuthPreset> = new Set(['github', 'facebook', 'discord', 'oauth2'])

/** The Graph API version the facebook preset calls; `api` points elsewhere (another version) when Facebook retires it. */
export const FACEBOOK_GRAPH_VERSION = 'v21.0'

type Fail = (field: string, reason: string) => never

/** The preset's own endpoints: github.com (or `enterpriseUrl`), Facebook's Graph API, Discord's API. */
function presetApi (preset: OAuthPreset, p: OAuthProviderInput, fail: Fail): Partial<OAuth2Api> {
  if (p.enterpriseUrl !== undefined && preset !== 'github') fail('enterpriseUrl', 'only the github preset takes enterpriseUrl')
  switch (preset) {
    case 'github': {
      if (p.enterpriseUrl === undefined) {
        return {
          authorization: 'https://github.com/login/oauth/authorize',
          token: 'https://github.com/login/oauth/access_token',
          user: 'https://api.github.com/user',
          emails: 'https://api.github.com/user/emails'
        }
      }
      // the endpoints are written below the address: a query or a fragment would swallow them
      if (/[?#]/.test(p.enterpriseUrl)) fail('enterpriseUrl', "the server's address, without a query or a fragment")
      const base = p.enterpriseUrl.replace(/\/+$/, '')
      return {
        authorization: `${base}/login/oauth/authorize`,
        token: `${base}/login/oauth/access_token`,
        user: `${base}/api/v3/user`,
        emails: `${base}/api/v3/user/emails`
      }
    }
    case 'facebook': return {
      authorization: `https://www.facebook.com/${FACEBOOK_GRAPH_VERSION}/dialog/oauth`,
      token: `https://graph.facebook.com/${FACEBOOK_GRAPH_VERSION}/oauth/access_token`,
      user: `https://graph.facebook.com/${FACEBOOK_GRAPH_VERSION}/me?fields=id,name,email`
    }
    case 'discord': return {
      authorization: 'https://discord.com/oauth2/authorize',
      token: 'https://discord.com/api/oauth2/token',
      user: 'https://discord.com/api/users/@me'
    }
    default: return {}
  }
}

/** The defaults of `profile` for `oauth2`: the field names most user APIs use. */
const PROFILE_DEFAULTS: ProfileFields = { subject: 'id', email: 'email', emailVerified: 'email_verified', name: 'name', display: 'login' }

/** What a plain OAuth 2.0 preset resolves to, beside the fields every provider has. */
export interface OAuth2Resolved {
  api: OAuth2Api
  profile: ProfileFields | null
  /** The client authentication the provider documents when the host chose none. */
  clientAuthMethod: ClientAuthMethod
}

/**
 * The endpoints and profile of a plain OAuth 2.0 provider, with the
 * settings of OpenID providers refused: there is no issuer to discover, no
 * ID token to accept, no nonce and no logout token. `chosenAuth` is the
 * client authentication the host wrote, if any: GitHub and Facebook take
 * the secret in the body, so that is their default.
 */
export function resolveOAuth2 (preset: OAuthPreset, p: OAuthProviderInput, chosenAuth: ClientAuthMethod | undefined, fail: Fail): OAuth2Resolved {
  for (const field of ['issuer', 'endpoints', 'domain', 'tenant'] as const) {
    if (p[field] !== undefined) fail(field, `the ${preset} preset is plain OAuth 2.0: give api instead`)
  }
  for (const field of ['acceptIdToken', 'requireNonce', 'backchannelLogout'] as const) {
    if (p[field] === true) fail(field, `the ${preset} preset is plain OAuth 2.0, without ID tokens`)
  }
  if (p.profile !== undefined && preset !== 'oauth2') fail('profile', 'only the oauth2 preset takes profile')
  if (p.api?.emails !== undefined && preset !== 'github') fail('api/emails', 'only the github preset reads an email list')
  const api = { ...presetApi(preset, p, fail), ...p.api }
  if (api.token === undefined) fail('api/token', 'the oauth2 preset needs the token endpoint')
  if (api.user === undefined) fail('api/user', 'the oauth2 preset needs the user endpoint')
  return {
    api: { authorization: api.authorization ?? null, token: api.token, user: api.user, emails: api.emails ?? null },
    profile: preset === 'oauth2' ? { ...PROFILE_DEFAULTS, ...p.profile } : null,
    clientAuthMethod: chosenAuth ?? (preset === 'github' || preset === 'facebook' ? 'client_secret_post' : 'client_secret_basic')
  }
}
