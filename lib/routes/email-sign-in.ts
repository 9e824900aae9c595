import { LoginReply } from '../../schemas/auth.js'
import { EmailSignInBody, EmailSignInReply, EmailSignInVerifyBody } from '../../schemas/email-sign-in.js'
import type { JwtLoginContext } from '../context/context.js'
import { requestEmailSignIn } from '../email-sign-in/request.js'
import { verifyEmailSignIn } from '../email-sign-in/verify.js'
import { deliver } from '../http/browser.js'
import { succeed } from '../http/error-handler.js'
import { present } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { auditLoginGate } from '../login/flow.js'

/** Both steps behind `emailSignIn.enabled`, and the auth code of sign-in (`authCodes.requireFor.auth`) in the body. */
const REQUEST: RouteGate = {
  feature: 'emailSignIn',
  authCode: 'auth',
  authCodeFrom: 'body',
  audit: auditLoginGate,
  errors: ['ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID']
}
const VERIFY: RouteGate = {
  ...REQUEST,
  refreshCookie: 'issues',
  errors: [
    'ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID', 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING', 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID',
    'ERR_JWT_LOGIN_TWO_FACTOR_DISABLED', 'ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED', 'ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE', 'ERR_JWT_LOGIN_USER_LOCKED'
  ]
}

const REQUEST_DOC: RouteDoc = {
  tags: ['auth'],
  operationId: 'jwtLoginEmailSignIn',
  summary: 'Mail a one-time sign-in code (and link) to an address',
  description: 'Every well-formed email gets the same answer, whether an account has it or not. The code goes to an account\'s address ' +
    '(with `emailSignIn.register`, to a new address too), with a link to `emailSignIn.linkUrl` that carries it in the URL fragment.'
}
const VERIFY_DOC: RouteDoc = {
  tags: ['auth'],
  operationId: 'jwtLoginEmailSignInVerify',
  summary: 'Sign in with the mailed code',
  description: 'Answers as `POST /auth` does: a JWT (and a refresh token when refresh is on), or for a user with two-factor on, an interim JWT ' +
    'with `two_factor_required: true`. A wrong, used or expired code answers 246 whatever the reason.'
}

/** `POST /auth/email` and `/auth/email/verify`; the second sets the refresh cookie in cookie mode. */
export function emailSignInRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  app.post('/auth/email', {
    config: { jwtLogin: REQUEST },
    schema: { ...REQUEST_DOC, body: EmailSignInBody, response: { 200: EmailSignInReply } }
  }, async (request) => {
    return succeed(await requestEmailSignIn(ctx, stateOf(request).call, { email: present(request.body.email) }))
  })

  app.post('/auth/email/verify', {
    config: { jwtLogin: VERIFY },
    schema: { ...VERIFY_DOC, body: EmailSignInVerifyBody, response: { 200: LoginReply } }
  }, async (request, reply) => {
    const { call } = stateOf(request)
    const result = await verifyEmailSignIn(ctx, call, { email: present(request.body.email), code: present(request.body.code) })
    return succeed(deliver(reply, call.settings, result))
  })
}
