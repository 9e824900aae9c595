// Which flow each of the plugin's routes runs: the span's name and what the flow counts.

/** What a flow's end counts, besides its duration: a sign-in by method, a second factor, a refresh, a reset step. */
export type FlowCounter =
  | { kind: 'sign_in', method: 'password' | 'passkey' | 'email' | 'provider' }
  | { kind: 'second_factor' }
  | { kind: 'refresh' }
  | { kind: 'reset', step: 'request' | 'complete' }

export interface FlowSpec {
  /** The span is `jwt-login.<name>`; the `jwt_login.flow` label. */
  readonly name: string
  readonly counter?: FlowCounter
}

const flow = (name: string, counter?: FlowCounter): FlowSpec => counter === undefined ? { name } : { name, counter }

const ACCOUNT_EMAIL = flow('account.email_change')
const SECOND_FACTOR_SETUP = flow('account.second_factor')
const IDENTITIES = flow('account.identities')
const API_KEYS = flow('account.api_keys')
const PASSKEYS = flow('account.passkeys')
const SESSIONS = flow('sessions')
const OAUTH_TOKEN = flow('oauth', { kind: 'sign_in', method: 'provider' })
const PASSKEY = flow('passkey')
const STEP_UP = flow('step_up')
const VALIDATE = flow('validate')
const VERIFICATION = flow('account.email_verification')

/** Each route by its method and path under the prefix; a route not listed (`/jwks`, the catch-alls) runs no flow. */
const FLOWS: Readonly<Record<string, FlowSpec>> = {
  'POST /auth': flow('sign_in', { kind: 'sign_in', method: 'password' }),
  'POST /auth/2fa': flow('second_factor', { kind: 'second_factor' }),
  'POST /auth/2fa/passkey/options': flow('second_factor'),
  'POST /auth/refresh': flow('refresh', { kind: 'refresh' }),
  'GET /auth/validate': VALIDATE,
  'POST /auth/validate': VALIDATE,
  'POST /auth/revoke': flow('revoke'),
  'POST /auth/passkey': flow('passkey', { kind: 'sign_in', method: 'passkey' }),
  'POST /auth/passkey/options': PASSKEY,
  'POST /auth/step-up': STEP_UP,
  'POST /auth/step-up/options': STEP_UP,
  'POST /auth/email': flow('email_sign_in.request'),
  'POST /auth/email/verify': flow('email_sign_in.verify', { kind: 'sign_in', method: 'email' }),
  'POST /user/reset_password': flow('reset.request', { kind: 'reset', step: 'request' }),
  'PUT /user/reset_password': flow('reset.complete', { kind: 'reset', step: 'complete' }),
  'GET /oauth/token': OAUTH_TOKEN,
  'POST /oauth/token': OAUTH_TOKEN,
  'GET /oauth/nonce': flow('oauth.nonce'),
  'POST /oauth/:provider/backchannel-logout': flow('oauth.logout'),
  'GET /sessions': SESSIONS,
  'DELETE /sessions': SESSIONS,
  'DELETE /sessions/:id': SESSIONS,
  'DELETE /devices/:id': SESSIONS,
  'POST /users': flow('register'),
  'DELETE /users': flow('account.delete'),
  'GET /account': flow('account'),
  'POST /account/email/verification': VERIFICATION,
  'POST /account/email/verify': VERIFICATION,
  'PUT /account/password': flow('account.password'),
  'POST /account/email': ACCOUNT_EMAIL,
  'POST /account/email/confirm': ACCOUNT_EMAIL,
  'POST /account/email/revert': ACCOUNT_EMAIL,
  'PUT /account/2fa': SECOND_FACTOR_SETUP,
  'DELETE /account/2fa': SECOND_FACTOR_SETUP,
  'POST /account/2fa/totp': SECOND_FACTOR_SETUP,
  'POST /account/2fa/totp/confirm': SECOND_FACTOR_SETUP,
  'POST /account/2fa/backup-codes': SECOND_FACTOR_SETUP,
  'GET /account/identities': IDENTITIES,
  'POST /account/identities': IDENTITIES,
  'DELETE /account/identities/:provider': IDENTITIES,
  'GET /account/api-keys': API_KEYS,
  'POST /account/api-keys': API_KEYS,
  'DELETE /account/api-keys/:id': API_KEYS,
  'GET /passkeys': PASSKEYS,
  'PATCH /passkeys/:id': PASSKEYS,
  'DELETE /passkeys/:id': PASSKEYS,
  'POST /passkeys/register': PASSKEYS,
  'POST /passkeys/register/options': PASSKEYS
}

/** The flow of a route (its method and its path under the prefix), if it runs one. */
export function flowOf (method: unknown, path: string): FlowSpec | undefined {
  return typeof method === 'string' ? FLOWS[`${method} ${path}`] : undefined
}

/** Every flow's name, for the documentation's check. */
export const FLOW_NAMES: readonly string[] = [...new Set(Object.values(FLOWS).map(spec => spec.name))].sort()
