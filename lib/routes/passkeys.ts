// The passkey routes: enrolment and a user's own passkeys, passwordless sign-in, the passkey second factor's options, and step-up.
import type { Static } from '@sinclair/typebox'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import type { FastifyRequest } from 'fastify'
import { LoginReply, MessageReply } from '../../schemas/auth.js'
import {
  OptionsReply, PasskeyParams, PasskeyReply, PasskeySignInBody, PasskeysReply, RegisterBody, RenameBody, StepUpBody, StepUpReply, type PasskeyItem
} from '../../schemas/passkeys.js'
import type { StoredPasskey } from '../adapters/passkeys.js'
import type { JwtLoginContext } from '../context/context.js'
import type { JwtLoginErrorCode } from '../core/errors.js'
import { deliver } from '../http/browser.js'
import { succeed } from '../http/error-handler.js'
import { present } from '../http/fields.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { RouteDoc } from '../http/openapi.js'
import type { TypedScope } from '../http/scope.js'
import { auditLoginGate } from '../login/flow.js'
import { stepUp, stepUpOptions } from '../login/step-up.js'
import { deletePasskey, listPasskeys, registerPasskey, registrationOptions, renamePasskey } from '../passkeys/manage.js'
import { passkeySignIn, passkeySignInOptions } from '../passkeys/sign-in.js'
import { TOKEN_REFUSALS } from '../sessions/authenticate.js'
import { callerOf, IMPERSONATION_REFUSED, iso, said } from './caller.js'
import { twoFactorPasskeyOptions } from '../two-factor/flow.js'

const CEREMONY: JwtLoginErrorCode[] = ['ERR_JWT_LOGIN_PASSKEY_ORIGIN', 'ERR_JWT_LOGIN_PASSKEY_RP_ID']
const RECENT: JwtLoginErrorCode[] = ['ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED']
/** A change of the user's passkeys, or a step-up: never by someone acting as the user. */
const OWNER: JwtLoginErrorCode[] = [IMPERSONATION_REFUSED]

/** A route of the user's own passkeys: the switch and a final access token (Bearer or `JWT`). */
const MINE = (errors: JwtLoginErrorCode[]): RouteGate => ({ feature: 'passkeys', token: 'access', errors: [...TOKEN_REFUSALS, ...errors] })

const SIGN_IN_OPTIONS: RouteGate = { feature: 'passkeys' }
const SIGN_IN: RouteGate = {
  feature: 'passkeys',
  authCode: 'auth',
  authCodeFrom: 'body',
  audit: auditLoginGate,
  refreshCookie: 'issues',
  errors: ['ERR_JWT_LOGIN_PASSKEY_REFUSED', ...CEREMONY, 'ERR_JWT_LOGIN_TWO_FACTOR_DISABLED', 'ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED', 'ERR_JWT_LOGIN_USER_LOCKED']
}
const TWO_FACTOR_OPTIONS: RouteGate = {
  feature: 'twoFactor',
  token: 'interim',
  errors: ['ERR_JWT_LOGIN_PASSKEYS_DISABLED', 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID', 'ERR_JWT_LOGIN_TOKEN_REVOKED', 'ERR_JWT_LOGIN_TOKEN_USER_GONE', 'ERR_JWT_LOGIN_CHALLENGE_CLOSED', 'ERR_JWT_LOGIN_PASSKEY_NOT_FOUND']
}
const STEP_UP: RouteGate = {
  token: 'access',
  errors: [
    ...TOKEN_REFUSALS, IMPERSONATION_REFUSED, 'ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING', 'ERR_JWT_LOGIN_WRONG_CREDENTIALS', 'ERR_JWT_LOGIN_BUSY', 'ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE',
    'ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG', 'ERR_JWT_LOGIN_TWO_FACTOR_LOCKED', 'ERR_JWT_LOGIN_PASSKEYS_DISABLED', 'ERR_JWT_LOGIN_PASSKEY_REFUSED', ...CEREMONY
  ]
}

const doc = (operationId: string, summary: string, description: string, tag = 'passkeys'): RouteDoc => ({ tags: [tag], operationId, summary, description })

/** The wildcard's value as the `id` the schema checks and the handlers read. */
function longIdParam (request: FastifyRequest, _reply: unknown, done: () => void): void {
  const params = request.params as Record<string, string>
  request.params = { id: params['*'] }
  done()
}

function passkeyItem (passkey: StoredPasskey): Static<typeof PasskeyItem> {
  const item: Static<typeof PasskeyItem> = {
    id: passkey.id,
    name: passkey.name,
    created_at: iso(passkey.createdAt),
    device_type: passkey.deviceType,
    backed_up: passkey.backedUp,
    transports: passkey.transports,
    aaguid: passkey.aaguid
  }
  if (passkey.lastUsedAt !== null) item.last_used_at = iso(passkey.lastUsedAt)
  return item
}

/**
 * The passkey routes. The ceremonies' JSON is WebAuthn's own (what
 * @simplewebauthn/browser's `startRegistration` and `startAuthentication`
 * take and answer), so any WebAuthn client works.
 */
export function passkeyRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const caller = callerOf(ctx)
  const owner = callerOf(ctx, { impersonation: false })
  const callOf = (request: FastifyRequest): ReturnType<typeof stateOf>['call'] => stateOf(request).call

  app.post('/passkeys/register/options', {
    config: { jwtLogin: MINE([...OWNER, ...RECENT, 'ERR_JWT_LOGIN_PASSKEY_LIMIT']) },
    schema: {
      ...doc('jwtLoginPasskeyRegisterOptions', 'Options to enrol a passkey', 'Creation options (`PublicKeyCredentialCreationOptionsJSON`) for `startRegistration`. Needs a sign-in (or step-up) within `passkeys.recentAuth`.'),
      response: { 200: OptionsReply }
    }
  }, async (request) => succeed(await registrationOptions(ctx, callOf(request), await owner(request))))

  app.post('/passkeys/register', {
    config: { jwtLogin: MINE([...OWNER, ...RECENT, ...CEREMONY, 'ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED', 'ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED', 'ERR_JWT_LOGIN_PASSKEY_EXISTS', 'ERR_JWT_LOGIN_PASSKEY_LIMIT']) },
    schema: {
      ...doc('jwtLoginPasskeyRegister', 'Enrol a passkey', '`credential`: what `startRegistration` answered for the options of `/passkeys/register/options`; `name`: what the user calls it.'),
      body: RegisterBody,
      response: { 200: PasskeyReply }
    }
  }, async (request) => {
    const { credential, name } = request.body
    const passkey = await registerPasskey(ctx, callOf(request), await owner(request), credential as RegistrationResponseJSON, name)
    return succeed({ passkey: passkeyItem(passkey) })
  })

  app.get('/passkeys', {
    config: { jwtLogin: MINE([]) },
    schema: { ...doc('jwtLoginPasskeys', 'List my passkeys', 'The token\'s user\'s passkeys, oldest first.'), response: { 200: PasskeysReply } }
  }, async (request) => succeed({ passkeys: (await listPasskeys(ctx, callOf(request), await caller(request))).map(passkeyItem) }))

  const rename = async (request: FastifyRequest, id: string, name: string): Promise<Static<typeof MessageReply>> => {
    await renamePasskey(ctx, callOf(request), await owner(request), id, name)
    return succeed({ message: said(ctx, request, 'passkeyRenamed') })
  }
  const remove = async (request: FastifyRequest, id: string): Promise<Static<typeof MessageReply>> => {
    await deletePasskey(ctx, callOf(request), await owner(request), id)
    return succeed({ message: said(ctx, request, 'passkeyDeleted') })
  }
  const RENAME = { config: { jwtLogin: MINE([...OWNER, 'ERR_JWT_LOGIN_PASSKEY_NOT_FOUND']) } }
  const DELETE = { config: { jwtLogin: MINE([...OWNER, ...RECENT, 'ERR_JWT_LOGIN_PASSKEY_NOT_FOUND']) } }

  app.patch('/passkeys/:id', {
    ...RENAME,
    schema: { ...doc('jwtLoginPasskeyRename', 'Rename one of my passkeys', 'Another user\'s passkey, or an unknown one, answers 404.'), params: PasskeyParams, body: RenameBody, response: { 200: MessageReply } }
  }, async (request) => await rename(request, request.params.id, request.body.name))

  app.delete('/passkeys/:id', {
    ...DELETE,
    schema: { ...doc('jwtLoginPasskeyDelete', 'Delete one of my passkeys', 'Needs a sign-in (or step-up) within `passkeys.recentAuth`. Another user\'s passkey, or an unknown one, answers 404.'), params: PasskeyParams, response: { 200: MessageReply } }
  }, async (request) => await remove(request, request.params.id))

  // The same two routes for a credential id longer than the host's `maxParamLength`
  // (Fastify's default is 100; an id may have 1,364 characters): the router limits
  // `:id`, never a wildcard, and tries this one when `:id` is too long. The id is
  // checked by the same schema, under its own name.
  const hidden = { hide: true } as object
  app.patch('/passkeys/*', { ...RENAME, preValidation: longIdParam, schema: { ...hidden, params: PasskeyParams, body: RenameBody, response: { 200: MessageReply } } },
    async (request) => await rename(request, request.params.id, request.body.name))
  app.delete('/passkeys/*', { ...DELETE, preValidation: longIdParam, schema: { ...hidden, params: PasskeyParams, response: { 200: MessageReply } } },
    async (request) => await remove(request, request.params.id))

  app.post('/auth/passkey/options', {
    config: { jwtLogin: SIGN_IN_OPTIONS },
    schema: { ...doc('jwtLoginPasskeySignInOptions', 'Options to sign in with a passkey', 'Request options without a username (discoverable passkeys) for `startAuthentication`.', 'tokens'), response: { 200: OptionsReply } }
  }, async (request) => succeed(await passkeySignInOptions(ctx, callOf(request))))

  app.post('/auth/passkey', {
    config: { jwtLogin: SIGN_IN },
    schema: {
      ...doc('jwtLoginPasskeySignIn', 'Sign in with a passkey', '`credential`: what `startAuthentication` answered. Answers as `POST /auth`: a JWT (and a refresh token), or, for a passkey without user verification and a user with a second factor, the interim JWT.', 'tokens'),
      body: PasskeySignInBody,
      response: { 200: LoginReply }
    }
  }, async (request, reply) => {
    const { call } = stateOf(request)
    return succeed(deliver(reply, call.settings, await passkeySignIn(ctx, call, request.body.credential as AuthenticationResponseJSON)))
  })

  app.post('/auth/2fa/passkey/options', {
    config: { jwtLogin: TWO_FACTOR_OPTIONS },
    schema: { ...doc('jwtLoginTwoFactorPasskeyOptions', 'Options for a passkey as the second factor', 'With the interim JWT: request options for the user\'s passkeys; `POST /auth/2fa` then takes `passkey` instead of `code`.', 'two-factor'), response: { 200: OptionsReply } }
  }, async (request) => {
    const { call, token } = stateOf(request)
    return succeed(await twoFactorPasskeyOptions(ctx, call, token as string))
  })

  app.post('/auth/step-up/options', {
    config: { jwtLogin: MINE([...OWNER, 'ERR_JWT_LOGIN_PASSKEY_NOT_FOUND']) },
    schema: { ...doc('jwtLoginStepUpOptions', 'Options to step up with a passkey', 'Request options for the token\'s user\'s passkeys, good for a step-up of this session.', 'tokens'), response: { 200: OptionsReply } }
  }, async (request) => succeed(await stepUpOptions(ctx, callOf(request), await owner(request))))

  app.post('/auth/step-up', {
    config: { jwtLogin: STEP_UP },
    schema: {
      ...doc('jwtLoginStepUp', 'Authenticate again, in the same session', 'With a valid access token and one of `password`, `code` (TOTP or backup code) or `passkey` (for the options of `/auth/step-up/options`), or `password` with `code`: ' +
        'a fresh access token of the same session, `auth_time` now. No new session or refresh token.', 'tokens'),
      body: StepUpBody,
      response: { 200: StepUpReply }
    }
  }, async (request) => {
    const { body } = request
    const input = { password: present(body.password), code: present(body.code), passkey: body.passkey as AuthenticationResponseJSON | undefined }
    return succeed(await stepUp(ctx, callOf(request), await owner(request), input))
  })
}
