// The account's second-factor routes: TOTP enrolment and its confirmation, new backup codes, the primary method, turning it off.
import type { FastifyRequest } from 'fastify'
import { MessageReply } from '../../schemas/auth.js'
import { BackupCodesReply, CodeBody, MethodBody, TotpConfirmReply, TotpReply } from '../../schemas/account.js'
import { confirmTotp, newBackupCodes, setPrimaryMethod, startTotp, turnOff } from '../account/second-factor.js'
import type { TwoFactorMethod } from '../adapters/two-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import type { JwtLoginErrorCode } from '../core/errors.js'
import { succeed } from '../http/error-handler.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { TypedScope } from '../http/scope.js'
import { TOKEN_REFUSALS } from '../sessions/authenticate.js'
import { doc } from './account.js'
import { callerOf, IMPERSONATION_REFUSED, needed, said } from './caller.js'

/** Every route here changes the second factor: never by someone acting as the user (403 / 252). */
const MINE = (errors: JwtLoginErrorCode[]): RouteGate => ({ feature: 'accountTwoFactor', token: 'access', errors: [...TOKEN_REFUSALS, IMPERSONATION_REFUSED, ...errors] })
const RECENT: JwtLoginErrorCode = 'ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED'
const STRONG = ' Needs a sign-in within `account.recentAuth`; with a second factor on, one that included it (or a passkey).'

export function accountTwoFactorRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const caller = callerOf(ctx, { impersonation: false })
  const callOf = (request: FastifyRequest): ReturnType<typeof stateOf>['call'] => stateOf(request).call

  app.post('/account/2fa/totp', {
    config: { jwtLogin: MINE([RECENT]) },
    schema: {
      ...doc('jwtLoginTotpStart', 'Enrol TOTP: a new secret', `A secret for an authenticator app, its \`otpauth://\` URI and a QR code (SVG), waiting 10 minutes for its first code; an existing secret keeps working until then.${STRONG}`),
      response: { 200: TotpReply }
    }
  }, async (request) => succeed(await startTotp(ctx, callOf(request), await caller(request))))

  app.post('/account/2fa/totp/confirm', {
    config: { jwtLogin: MINE(['ERR_JWT_LOGIN_TOTP_CODE_WRONG', 'ERR_JWT_LOGIN_TOTP_NOT_PENDING']) },
    schema: {
      ...doc('jwtLoginTotpConfirm', 'Enrol TOTP: its first code', 'Stores the pending secret and turns TOTP on (primary when there was none); a user without backup codes gets 10, shown once. Trusted devices are forgotten.'),
      body: CodeBody,
      response: { 200: TotpConfirmReply }
    }
  }, async (request) => {
    const { backupCodes } = await confirmTotp(ctx, callOf(request), await caller(request), needed(request.body.code, 'code'))
    const message = said(ctx, request, 'twoFactorMethodChanged')
    return succeed(backupCodes === null ? { message } : { message, backup_codes: backupCodes })
  })

  app.post('/account/2fa/backup-codes', {
    config: { jwtLogin: MINE([RECENT]) },
    schema: { ...doc('jwtLoginBackupCodes', 'New backup codes', `10 new codes, shown once; the old ones stop working.${STRONG}`), response: { 200: BackupCodesReply } }
  }, async (request) => succeed({ backup_codes: await newBackupCodes(ctx, callOf(request), await caller(request)) }))

  app.put('/account/2fa', {
    config: { jwtLogin: MINE([RECENT, 'ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE']) },
    schema: { ...doc('jwtLoginTwoFactorMethod', 'Choose my second factor', `One of the methods \`GET /account\` lists; turns the second factor on when it was off.${STRONG}`), body: MethodBody, response: { 200: MessageReply } }
  }, async (request) => {
    await setPrimaryMethod(ctx, callOf(request), await caller(request), needed(request.body.method, 'method') as TwoFactorMethod)
    return succeed({ message: said(ctx, request, 'twoFactorMethodChanged') })
  })

  app.delete('/account/2fa', {
    config: { jwtLogin: MINE([RECENT]) },
    schema: { ...doc('jwtLoginTwoFactorOff', 'Turn my second factor off', `Its backup codes go and trusted devices are forgotten.${STRONG}`), response: { 200: MessageReply } }
  }, async (request) => {
    await turnOff(ctx, callOf(request), await caller(request))
    return succeed({ message: said(ctx, request, 'twoFactorDisabled') })
  })
}
