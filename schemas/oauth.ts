import { Type, type Static } from '@sinclair/typebox'
import { Field, Fields, Success } from './common.js'
import { CsrfToken } from './auth.js'

/** The longest ID token `/oauth/token` takes: Entra ID tokens with group claims run past 4096 characters. */
export const ID_TOKEN_MAX_LENGTH = 16384

/** What a provider gave the client, as `/oauth/token` and `POST /account/identities` take it. */
export const PROVIDER_FIELDS = {
  provider: Field,
  code: Field,
  id_token: Type.Optional(Type.String({ maxLength: ID_TOKEN_MAX_LENGTH })),
  code_verifier: Field,
  nonce: Field,
  redirect_uri: Field
}

/** `/oauth/token` parameters: the query on GET, the body (JSON, form or multipart) on POST. */
export const OAuthTokenFields = Fields(PROVIDER_FIELDS)
/** `/oauth/token` (query or body) as validated. */
export type OAuthTokenInput = Static<typeof OAuthTokenFields>

/** The user as `/oauth/token` answers it: exactly these four fields. */
export const OAuthUser = Type.Object({
  ID: Type.Integer(),
  user_login: Type.String(),
  user_email: Type.String(),
  display_name: Type.String()
})

export const OAuthTokenReply = Success({
  jwt: Type.String(),
  refresh_token: Type.Optional(Type.String()),
  csrf_token: CsrfToken,
  two_factor_required: Type.Optional(Type.Boolean()),
  user: Type.Optional(OAuthUser)
})

/** `GET /oauth/nonce`: a nonce this server issued, for an ID-token sign-in (`requireNonce`). */
export const OAuthNonceReply = Success({
  /** Kept by the client and sent beside the ID token. */
  nonce: Type.String(),
  /** Its SHA-256 (hex): what the client gives the provider. */
  nonce_sha256: Type.String(),
  /** Seconds the nonce is accepted. */
  expires_in: Type.Integer()
})
