// `POST /users` (register) and `DELETE /users` (delete one's own user), as Simple JWT Login and its SDK call them; both off by default.
import type { FastifyRequest } from 'fastify'
import { DeleteUserReply, RegisterUserBody, RegisterUserReply } from '../../schemas/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { matchAuthCode } from '../http/auth-codes.js'
import { clearRefreshCookie, cookieMode, deliver } from '../http/browser.js'
import { succeed } from '../http/error-handler.js'
import { bodyOf, present, stringField } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { TOKEN_REFUSALS } from '../sessions/authenticate.js'
import { deleteOwnUser } from '../users/delete.js'
import { auditRegisterGate, registerUser } from '../users/register.js'
import { callerOf, IMPERSONATION_REFUSED } from './caller.js'

const REGISTER: RouteGate = {
  authentication: false,
  feature: 'register',
  authCode: 'register',
  authCodeFrom: 'body',
  authCodeWhenGiven: true,
  audit: auditRegisterGate,
  refreshCookie: 'issues',
  errors: [
    'ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING', 'ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID', 'ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID', 'ERR_JWT_LOGIN_REGISTER_DOMAIN', 'ERR_JWT_LOGIN_PASSWORD_POLICY',
    'ERR_JWT_LOGIN_USER_EXISTS', 'ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED',
    'ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII', 'ERR_JWT_LOGIN_BUSY'
  ]
}
const DELETE: RouteGate = {
  feature: 'deleteUser',
  authCode: 'deleteUser',
  authCodeFrom: 'body-or-query',
  token: 'access',
  errors: [...TOKEN_REFUSALS, IMPERSONATION_REFUSED, 'ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED', 'ERR_JWT_LOGIN_DELETE_INCOMPLETE']
}

const REGISTER_DOC: RouteDoc = {
  tags: ['users'],
  operationId: 'jwtLoginRegister',
  summary: 'Register a user',
  description: 'Creates a user through the host\'s adapter: `email` and `password` (the reset password policy applies), optionally `user_login` (else the email) and `display_name`. ' +
    'The role is `users.register.defaultRole`, or the role of the auth code presented; a code that is wrong or expired answers 401 / 27, required or not (as in Simple JWT Login). With `users.register.signIn`, answers the new user\'s JWT too. ' +
    'A `user_login` that WordPress\'s sanitize_user would change, or that holds an `@` but is not the registrant\'s own email, answers 400 / 229; `display_name` is stored without markup. ' +
    'An email that is not plain ASCII (a look-alike of another address: a full-width letter, the Kelvin sign) answers 400 / 230. ' +
    'An email or login that has an account answers 409 / 38, also when a concurrent registration of it won. ' +
    'A full registration hashing queue answers 503 / 228.'
}
const DELETE_DOC: RouteDoc = {
  tags: ['users'],
  operationId: 'jwtLoginDeleteUser',
  summary: 'Delete the token\'s own user',
  description: 'Needs a final access token whose sign-in is within `users.delete.recentAuth`. Ends every session of the user, then deletes the user through the host\'s adapter.'
}

/** The role of the auth code presented on `POST /users` (the gate refused a wrong or expired one): the new user gets that role (as in Simple JWT Login). */
function codeRoleOf (request: FastifyRequest): string | null {
  const { settings, startedAt } = stateOf(request).call
  const presented = stringField(bodyOf(request), settings.authCodes.parameter)
  if (presented === undefined) return null
  const code = matchAuthCode(presented, settings.authCodes.codes, startedAt) as (typeof settings.authCodes.codes)[number]
  return code.role ?? null
}

export function userRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  app.post('/users', {
    config: { jwtLogin: REGISTER },
    schema: { ...REGISTER_DOC, body: RegisterUserBody, response: { 200: RegisterUserReply } }
  }, async (request, reply) => {
    const { body } = request
    const { call } = stateOf(request)
    const input = {
      email: present(body.email),
      password: present(body.password),
      userLogin: present(body.user_login),
      displayName: present(body.display_name),
      codeRole: codeRoleOf(request)
    }
    const { signIn, ...created } = await registerUser(ctx, call, input)
    // Simple JWT Login 4.0's fields beside the id: the user's, without their `user_` prefix
    const { user } = created
    const registered = { ...created, login: user.user_login, email: user.user_email, display_name: user.display_name }
    return succeed(signIn === undefined ? registered : { ...registered, ...deliver(reply, call.settings, signIn) })
  })

  // the account's end: never by someone acting as the user
  const caller = callerOf(ctx, { impersonation: false })
  app.delete('/users', {
    config: { jwtLogin: DELETE },
    schema: { ...DELETE_DOC, response: { 200: DeleteUserReply } }
  }, async (request, reply) => {
    const { call } = stateOf(request)
    const deleted = await deleteOwnUser(ctx, call, await caller(request))
    // the browser forgets the refresh cookie of a user that is gone
    if (cookieMode(call.settings)) clearRefreshCookie(reply, call.settings)
    return succeed(deleted)
  })
}
