/**
 * The client's request and answer types, from the routes' own TypeBox
 * schemas (type-only imports: nothing of them reaches a bundle). A route
 * whose schema changes changes these, so a client that no longer fits fails
 * `tsc`.
 */
import type { Static, TSchema } from '@sinclair/typebox'
import type { AccountReply, BackupCodesReply, CodeBody, MethodBody, NewEmailBody, PasswordBody, RevertBody, TotpConfirmReply, TotpReply, VerificationBody, VerifyBody } from '../../schemas/account.js'
import type { ApiKeyEndedReply, ApiKeysReply, NewApiKeyBody, NewApiKeyReply } from '../../schemas/api-keys.js'
import type { LoginBody, LoginReply, MessageReply, RefreshReply, RevokeReply, ValidateReply } from '../../schemas/auth.js'
import type { JwksReply } from '../../schemas/common.js'
import type { IdentitiesReply, LinkIdentityBody } from '../../schemas/identities.js'
import type { EmailSignInBody, EmailSignInReply, EmailSignInVerifyBody } from '../../schemas/email-sign-in.js'
import type { OAuthNonceReply, OAuthTokenFields, OAuthTokenReply } from '../../schemas/oauth.js'
import type { AuthenticationResponse, OptionsReply, PasskeyReply, PasskeySignInBody, PasskeysReply, RegisterBody, StepUpBody, StepUpReply } from '../../schemas/passkeys.js'
import type { ResetCompleteBody, ResetReply, ResetRequestBody } from '../../schemas/reset-password.js'
import type { SessionsReply } from '../../schemas/sessions.js'
import type { TwoFactorBody, TwoFactorReply } from '../../schemas/two-factor.js'
import type { DeleteUserReply, RegisterUserBody, RegisterUserReply } from '../../schemas/users.js'

/** A route's body as the client sends it: the token travels in `Authorization`, never in the body. */
type Body<T extends TSchema> = Omit<Static<T>, 'JWT'>
/** `T` with the fields `K` required (the schema leaves them optional so that its own answer names what is missing). */
type With<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> }

/** A route's answer: its `data`. */
type Data<T extends TSchema> = Static<T> extends { data: infer D } ? D : never

/** Exactly what `POST /auth` needs: one of email, username or login, and the password (or its hash, where allowed). */
export type SignInFields = (With<Body<typeof LoginBody>, 'email'> | With<Body<typeof LoginBody>, 'username'> | With<Body<typeof LoginBody>, 'login'>) &
  (With<Body<typeof LoginBody>, 'password'> | With<Body<typeof LoginBody>, 'password_hash'>)
export type SignInAnswer = Data<typeof LoginReply>
type TwoFactorBase = Omit<Body<typeof TwoFactorBody>, 'remember_device'> & { remember_device?: boolean }
/** The second factor: a `code`, or a `passkey` assertion. */
export type TwoFactorFields = With<TwoFactorBase, 'code'> | With<TwoFactorBase, 'passkey'>
export type TwoFactorAnswer = Data<typeof TwoFactorReply>
export type ValidateAnswer = Data<typeof ValidateReply>
export type RefreshAnswer = Data<typeof RefreshReply>
export type RevokeAnswer = Static<typeof RevokeReply>['data']
export type MessageAnswer = Data<typeof MessageReply>
export type ResetRequestFields = With<Body<typeof ResetRequestBody>, 'email'>
export type ResetFields = With<Body<typeof ResetCompleteBody>, 'email' | 'code' | 'new_password'>
export type ResetAnswer = Data<typeof ResetReply>
/** The address a sign-in code is mailed to. */
export type EmailSignInRequestFields = With<Body<typeof EmailSignInBody>, 'email'>
export type EmailSignInRequestAnswer = Data<typeof EmailSignInReply>
/** The address and the code mailed to it. */
export type EmailSignInFields = With<Body<typeof EmailSignInVerifyBody>, 'email' | 'code'>
/** A provider and its authorization `code` (with `code_verifier` and `redirect_uri` when used) or an `id_token`. */
export type ProviderFields = With<Body<typeof OAuthTokenFields>, 'provider' | 'code'> | With<Body<typeof OAuthTokenFields>, 'provider' | 'id_token'>
export type ProviderAnswer = Data<typeof OAuthTokenReply>
export type NonceAnswer = Data<typeof OAuthNonceReply>
export type SessionsAnswer = Data<typeof SessionsReply>
/** The options of a WebAuthn ceremony, for `startAuthentication` / `startRegistration`. */
export type PasskeyOptions = Data<typeof OptionsReply>
export type PasskeyAssertion = Static<typeof AuthenticationResponse>
export type PasskeySignInFields = Body<typeof PasskeySignInBody>
export type PasskeyRegisterFields = Body<typeof RegisterBody>
export type PasskeyAnswer = Data<typeof PasskeyReply>
export type PasskeysAnswer = Data<typeof PasskeysReply>
export type StepUpFields = Body<typeof StepUpBody>
export type StepUpAnswer = Data<typeof StepUpReply>
export type RegisterFields = Body<typeof RegisterUserBody>
export type RegisterAnswer = Data<typeof RegisterUserReply>
export type DeleteUserAnswer = Data<typeof DeleteUserReply>
export type AccountAnswer = Data<typeof AccountReply>
export type VerificationFields = Body<typeof VerificationBody>
export type VerifyFields = Body<typeof VerifyBody>
export type PasswordFields = Body<typeof PasswordBody>
export type NewEmailFields = Body<typeof NewEmailBody>
export type CodeFields = Body<typeof CodeBody>
export type RevertFields = Body<typeof RevertBody>
export type MethodFields = Body<typeof MethodBody>
export type TotpAnswer = Data<typeof TotpReply>
export type TotpConfirmAnswer = Data<typeof TotpConfirmReply>
export type BackupCodesAnswer = Data<typeof BackupCodesReply>
export type JwksAnswer = Static<typeof JwksReply>
export type IdentitiesAnswer = Data<typeof IdentitiesReply>
/** A provider and what it gave the client (a `code`, or an `id_token`), to link its account to the signed-in user. */
export type LinkIdentityFields = With<Body<typeof LinkIdentityBody>, 'provider' | 'code'> | With<Body<typeof LinkIdentityBody>, 'provider' | 'id_token'>
/** A new API key: its `name` (required), the `scopes` of those the site declares, `expires_in` seconds. */
export type NewApiKeyFields = With<Body<typeof NewApiKeyBody>, 'name'>
/** The new key, in `key` this once, with its listing fields. */
export type NewApiKeyAnswer = Data<typeof NewApiKeyReply>
export type ApiKeysAnswer = Data<typeof ApiKeysReply>
export type ApiKeyEndedAnswer = Data<typeof ApiKeyEndedReply>
