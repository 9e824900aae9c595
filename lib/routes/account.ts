// The account routes: the overview, email verification, the password and email changes (the second factor's are in account-two-factor.ts).
import type { FastifyRequest } from 'fastify'
import { MessageReply } from '../../schemas/auth.js'
import { AccountReply, NewEmailBody, PasswordBody, RevertBody, CodeBody, VerificationBody, VerifyBody } from '../../schemas/account.js'
import { confirmEmailChange, requestEmailChange, revertEmail } from '../account/email-change.js'
import { accountOverview } from '../account/overview.js'
import { changeOwnPassword } from '../account/password.js'
import { requestVerification, verifyEmail } from '../account/verification.js'
import type { JwtLoginContext } from '../context/context.js'
import type { JwtLoginErrorCode } from '../core/errors.js'
import { succeed } from '../http/error-handler.js'
import { presentedJwt } from '../http/fields.js'
import { stateOf, type Feature, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { audited, authenticateToken, TOKEN_REFUSALS, type Authenticated } from '../sessions/authenticate.js'
import { callerOf, IMPERSONATION_REFUSED, needed, said } from './caller.js'

const RECENT: JwtLoginErrorCode = 'ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED'
const CODE: JwtLoginErrorCode[] = ['ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID', 'ERR_JWT_LOGIN_RATE_LIMITED']

/** A route of the account with a final access token (Bearer or `JWT`). */
const MINE = (feature: Feature, errors: JwtLoginErrorCode[]): RouteGate => ({ feature, token: 'access', errors: [...TOKEN_REFUSALS, ...errors] })
/** A route that takes a token when one is given, and an address when not. */
const EITHER = (errors: JwtLoginErrorCode[]): RouteGate => ({ feature: 'emailVerification', errors: [...TOKEN_REFUSALS, 'ERR_JWT_LOGIN_EMAIL_INVALID', ...errors] })

export const doc = (operationId: string, summary: string, description: string): RouteDoc => ({ tags: ['account'], operationId, summary, description })

/** The caller when the request carries a token (authenticated, refusals reported), or `null`. */
function optionalCaller (ctx: JwtLoginContext): (request: FastifyRequest) => Promise<Authenticated | null> {
  return async (request) => {
    const { call } = stateOf(request)
    const token = presentedJwt(request, call.settings.bearer, call.settings.apiKeys.prefix)
    return token === undefined ? null : await audited(ctx, call, authenticateToken(ctx, call, token))
  }
}

export function accountRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const caller = callerOf(ctx)
  // the password and email changes: never by someone acting as the user
  const owner = callerOf(ctx, { impersonation: false })
  const maybeCaller = optionalCaller(ctx)
  const callOf = (request: FastifyRequest): ReturnType<typeof stateOf>['call'] => stateOf(request).call

  app.get('/account', {
    config: { jwtLogin: MINE('account', []), rateLimit: false },
    schema: {
      ...doc('jwtLoginAccount', 'My account', 'The user as the host has it now (with `email_verified`), the second factor (on, its method, the methods the user can choose, backup codes left), and how many passkeys and live sessions the account holds.'),
      response: { 200: AccountReply }
    }
  }, async (request) => succeed(await accountOverview(ctx, callOf(request), await caller(request))))

  app.post('/account/email/verification', {
    config: { jwtLogin: EITHER(['ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY', 'ERR_JWT_LOGIN_RATE_LIMITED']) },
    schema: {
      ...doc('jwtLoginEmailVerification', 'Send a code that verifies my email',
        'With a token: a code to the account\'s address (409 / 237 when verified already). Without one: `email`, and the same answer, whether the address has an unverified account, a verified one, or none. Limited by `account.limits`.'),
      body: VerificationBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    await requestVerification(ctx, callOf(request), await maybeCaller(request), request.body.email)
    return succeed({ message: said(ctx, request, 'verificationSent') })
  })

  app.post('/account/email/verify', {
    config: { jwtLogin: EITHER([...CODE, 'ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE']) },
    schema: {
      ...doc('jwtLoginEmailVerify', 'Verify my email with its code',
        'With a token, the code alone; the session stays. Without one, `email` and the code: every session, trusted device, passkey and second factor the account held is ended first (whoever registered the address before its owner keeps nothing).'),
      body: VerifyBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    const { code, email } = request.body
    await verifyEmail(ctx, callOf(request), await maybeCaller(request), { code: needed(code, 'code'), email })
    return succeed({ message: said(ctx, request, 'emailVerified') })
  })

  app.put('/account/password', {
    config: { jwtLogin: MINE('accountPassword', [IMPERSONATION_REFUSED, RECENT, 'ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG', 'ERR_JWT_LOGIN_PASSWORD_POLICY', 'ERR_JWT_LOGIN_RATE_LIMITED', 'ERR_JWT_LOGIN_BUSY']) },
    schema: {
      ...doc('jwtLoginChangePassword', 'Change my password',
        '`current_password` (a wrong one counts on the account\'s sign-in lockout), or a sign-in within `account.recentAuth` that was not by password alone. Every other session and trusted device ends; the caller\'s session stays; a notice is mailed.'),
      body: PasswordBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    await changeOwnPassword(ctx, callOf(request), await owner(request), { currentPassword: request.body.current_password, newPassword: needed(request.body.new_password, 'new_password') })
    return succeed({ message: said(ctx, request, 'accountPasswordChanged') })
  })

  app.post('/account/email', {
    config: { jwtLogin: MINE('accountEmail', [IMPERSONATION_REFUSED, RECENT, 'ERR_JWT_LOGIN_EMAIL_INVALID', 'ERR_JWT_LOGIN_RATE_LIMITED']) },
    schema: {
      ...doc('jwtLoginChangeEmail', 'Change my email: send a code to the new address', 'Needs a sign-in within `account.recentAuth`. Nothing changes until the code is entered at `/account/email/confirm`.'),
      body: NewEmailBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    await requestEmailChange(ctx, callOf(request), await owner(request), needed(request.body.new_email, 'new_email'))
    return succeed({ message: said(ctx, request, 'emailChangeSent') })
  })

  app.post('/account/email/confirm', {
    config: { jwtLogin: MINE('accountEmail', [IMPERSONATION_REFUSED, ...CODE, 'ERR_JWT_LOGIN_EMAIL_TAKEN']) },
    schema: {
      ...doc('jwtLoginConfirmEmail', 'Change my email: the code from the new address', 'The address changes; the old one is mailed a notice with a revert code. An address another account has answers 409 / 235.'),
      body: CodeBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    await confirmEmailChange(ctx, callOf(request), await owner(request), needed(request.body.code, 'code'))
    return succeed({ message: said(ctx, request, 'emailChanged') })
  })

  app.post('/account/email/revert', {
    config: { jwtLogin: { feature: 'accountEmail', errors: ['ERR_JWT_LOGIN_EMAIL_INVALID', ...CODE, 'ERR_JWT_LOGIN_EMAIL_TAKEN', 'ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE'] } },
    schema: {
      ...doc('jwtLoginRevertEmail', 'Put my old email back',
        'No token: the old address and the revert code mailed to it. The address comes back, and every session, trusted device, passkey and second factor of the account ends; reset the password next.'),
      body: RevertBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    await revertEmail(ctx, callOf(request), { email: needed(request.body.email, 'email'), code: needed(request.body.code, 'code') })
    return succeed({ message: said(ctx, request, 'emailReverted') })
  })
}
