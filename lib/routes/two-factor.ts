import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import { TwoFactorBody, TwoFactorReply } from '../../schemas/two-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { deliver } from '../http/browser.js'
import { succeed } from '../http/error-handler.js'
import { present } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { completeTwoFactor } from '../two-factor/flow.js'
import { JwtLoginError } from '../core/errors.js'

const GATE: RouteGate = {
  feature: 'twoFactor',
  token: 'interim',
  refreshCookie: 'issues',
  errors: [
    'ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING', 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', 'ERR_JWT_LOGIN_TOKEN_REVOKED', 'ERR_JWT_LOGIN_TOKEN_USER_GONE',
    'ERR_JWT_LOGIN_TWO_FACTOR_LOCKED', 'ERR_JWT_LOGIN_CHALLENGE_CLOSED', 'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG',
    'ERR_JWT_LOGIN_PASSKEYS_DISABLED', 'ERR_JWT_LOGIN_PASSKEY_ORIGIN', 'ERR_JWT_LOGIN_PASSKEY_RP_ID', 'ERR_JWT_LOGIN_USER_LOCKED'
  ]
}

const DOC: RouteDoc = {
  tags: ['two-factor'],
  operationId: 'jwtLoginTwoFactor',
  summary: 'Complete a sign-in with the two-factor code',
  description: 'The interim JWT of the first step (in `JWT` or `Authorization: Bearer`) and the `code`: a TOTP code, an emailed code or a backup code; ' +
    'or, instead of `code`, `passkey`: a passkey\'s assertion for the options of `/auth/2fa/passkey/options`. ' +
    'Answers the JWT (and a refresh token when refresh is on).'
}

/** `remember_device`: `true` (JSON) or `"true"` (a form) asks; absent, `false` or `"false"` does not; anything else is 400 / 203. */
function rememberDevice (value: unknown): boolean {
  if (value === undefined || value === false || value === 'false') return false
  if (value === true || value === 'true') return true
  throw new JwtLoginError('ERR_JWT_LOGIN_BAD_REQUEST')
}

/** `POST /auth/2fa`; without the `twoFactor` option the gate answers 105 (the route stays, like the others). */
export function twoFactorRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  app.post('/auth/2fa', {
    config: { jwtLogin: GATE },
    schema: { ...DOC, body: TwoFactorBody, response: { 200: TwoFactorReply } }
  }, async (request, reply) => {
    const { call, token } = stateOf(request)
    const { body } = request
    const input = { token: token as string, code: present(body.code), passkey: body.passkey as AuthenticationResponseJSON | undefined, rememberDevice: rememberDevice(body.remember_device) }
    return succeed(deliver(reply, call.settings, await completeTwoFactor(ctx, call, input)))
  })
}
