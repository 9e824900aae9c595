// The account's linked provider accounts: listed, linked by a provider's code, unlinked.
import type { FastifyRequest } from 'fastify'
import { MessageReply } from '../../schemas/auth.js'
import { IdentitiesReply, IdentityParams, LinkIdentityBody } from '../../schemas/identities.js'
import { linkOwnIdentity, listOwnIdentities, unlinkOwnIdentity } from '../oauth/account-identities.js'
import type { JwtLoginContext } from '../context/context.js'
import type { JwtLoginErrorCode } from '../core/errors.js'
import { succeed } from '../http/error-handler.js'
import { stateOf, type RouteGate } from '../http/gates.js'
import type { TypedScope } from '../http/scope.js'
import { TOKEN_REFUSALS } from '../sessions/authenticate.js'
import { doc } from './account.js'
import { callerOf, IMPERSONATION_REFUSED, needed, said } from './caller.js'
import { inputOf } from './oauth.js'

const MINE = (errors: JwtLoginErrorCode[]): RouteGate => ({ feature: 'accountIdentities', token: 'access', errors: [...TOKEN_REFUSALS, ...errors] })
const RECENT: JwtLoginErrorCode = 'ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED'
/** What the provider may answer while the code is redeemed, as at `/oauth/token`. */
const PROVIDER: JwtLoginErrorCode[] = [
  'ERR_JWT_LOGIN_PROVIDER_UNKNOWN', 'ERR_JWT_LOGIN_PROVIDER_DISABLED', 'ERR_JWT_LOGIN_PROVIDER_CODE_MISSING', 'ERR_JWT_LOGIN_PROVIDER_CODE_INVALID',
  'ERR_JWT_LOGIN_ID_TOKEN_INVALID', 'ERR_JWT_LOGIN_ID_TOKEN_REPLAYED', 'ERR_JWT_LOGIN_PROVIDER_TIMEOUT', 'ERR_JWT_LOGIN_PROVIDER_ERROR'
]

export function accountIdentityRoutes (app: TypedScope, ctx: JwtLoginContext): void {
  const caller = callerOf(ctx)
  // linking and unlinking: never by someone acting as the user
  const owner = callerOf(ctx, { impersonation: false })
  const callOf = (request: FastifyRequest): ReturnType<typeof stateOf>['call'] => stateOf(request).call

  app.get('/account/identities', {
    config: { jwtLogin: MINE([]), rateLimit: false },
    schema: {
      ...doc('jwtLoginIdentities', 'My linked provider accounts', 'Each provider account linked to mine, oldest first: the provider\'s name, the account as it is known there (a login or an email), and when it was linked. A provider sign-in finds its user by this link first.'),
      response: { 200: IdentitiesReply }
    }
  }, async (request) => succeed(await listOwnIdentities(ctx, await caller(request))))

  app.post('/account/identities', {
    config: { jwtLogin: MINE([IMPERSONATION_REFUSED, RECENT, ...PROVIDER, 'ERR_JWT_LOGIN_IDENTITY_TAKEN', 'ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED']) },
    schema: {
      ...doc('jwtLoginLinkIdentity', 'Link a provider account to mine',
        'The `provider` and its `code` with PKCE\'s `code_verifier` (and `redirect_uri` when used), or an `id_token` with its `nonce` where the provider takes them, as at `/oauth/token`; ' +
        'the verifier or the nonce is required here (400 / 203 without), so that a code or token someone else obtained cannot be planted on this page to link their account. ' +
        'Links the provider account even when its email is not mine; one linked to another account answers 409 / 247, a second account of the same provider 409 / 248. Needs a sign-in within `account.recentAuth`.'),
      body: LinkIdentityBody,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    const fields = request.body
    const auth = await owner(request)
    const input = inputOf(fields)
    // the proof that this page asked for what it presents: without it, a code or ID token obtained by
    // someone else and planted in the page's callback would link their provider account to this user
    if (input.code !== undefined) needed(input.codeVerifier, 'code_verifier')
    else if (input.idToken !== undefined) needed(input.nonce, 'nonce')
    await linkOwnIdentity(ctx, callOf(request), auth, input)
    return succeed({ message: said(ctx, request, 'identityLinked') })
  })

  app.delete('/account/identities/:provider', {
    config: { jwtLogin: MINE([IMPERSONATION_REFUSED, RECENT, 'ERR_JWT_LOGIN_IDENTITY_NOT_FOUND', 'ERR_JWT_LOGIN_IDENTITY_LAST']) },
    schema: {
      ...doc('jwtLoginUnlinkIdentity', 'Unlink a provider account',
        'Removes the link, unless the account would have no way in left: no password, no passkey, no sign-in by email, no other linked provider (409 / 250). Needs a sign-in within `account.recentAuth`.'),
      params: IdentityParams,
      response: { 200: MessageReply }
    }
  }, async (request) => {
    await unlinkOwnIdentity(ctx, callOf(request), await owner(request), request.params.provider)
    return succeed({ message: said(ctx, request, 'identityUnlinked') })
  })
}
