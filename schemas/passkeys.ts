// The passkey routes' bodies and answers: WebAuthn's own JSON forms (as @simplewebauthn/browser and the browsers' toJSON() produce them), bounded.
import { Type } from '@sinclair/typebox'
import { CsrfToken } from './auth.js'
import { Field, Fields, Success } from './common.js'

/** A base64url value of a WebAuthn structure: bounded, so a huge one is a 400 before it is decoded. */
const Base64Url = (maxLength: number) => Type.String({ pattern: '^[A-Za-z0-9_-]*$', maxLength })

/** A credential id: at most 1023 bytes by the WebAuthn spec, so 1364 characters. */
const CredentialId = Base64Url(1364)

/** What a client passes on that the library ignores (extensions' outputs, the attachment): kept open, bounded by the body limit. */
const Open = Type.Object({}, { additionalProperties: true })

/** `navigator.credentials.get()`'s answer, as JSON (`AuthenticationResponseJSON`). */
export const AuthenticationResponse = Type.Object({
  id: CredentialId,
  rawId: CredentialId,
  type: Type.String({ pattern: '^public-key$' }),
  response: Type.Object({
    clientDataJSON: Base64Url(8192),
    authenticatorData: Base64Url(8192),
    signature: Base64Url(2048),
    userHandle: Type.Optional(Base64Url(128))
  }),
  clientExtensionResults: Open,
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 }))
})

/** `navigator.credentials.create()`'s answer, as JSON (`RegistrationResponseJSON`). */
export const RegistrationResponse = Type.Object({
  id: CredentialId,
  rawId: CredentialId,
  type: Type.String({ pattern: '^public-key$' }),
  response: Type.Object({
    clientDataJSON: Base64Url(8192),
    attestationObject: Base64Url(65536),
    authenticatorData: Type.Optional(Base64Url(8192)),
    transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })),
    publicKeyAlgorithm: Type.Optional(Type.Integer()),
    publicKey: Type.Optional(Base64Url(8192))
  }),
  clientExtensionResults: Open,
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 }))
})

/** The options a ceremony runs with (`PublicKeyCredentialCreationOptionsJSON` or `…RequestOptionsJSON`), for `startRegistration` / `startAuthentication`. */
export const OptionsReply = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ challenge: Type.String() }, { additionalProperties: true })
})

/** A passkey's name: what its user calls it. */
const Name = Type.String({ minLength: 1, maxLength: 64 })

/** The example of `POST /passkeys/register`: the shape `startRegistration` answers (its values cut short; a real one is longer). */
const REGISTRATION_EXAMPLE = {
  id: 'f1NO4xX9Fq1mLrZ0o3kVJg',
  rawId: 'f1NO4xX9Fq1mLrZ0o3kVJg',
  type: 'public-key',
  response: {
    clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiaHFTNW80V2Q5cjBHMXBYd3pOZjJrQSIsIm9yaWdpbiI6Imh0dHBzOi8vYXBwLmV4YW1wbGUuY29tIn0',
    attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjF',
    transports: ['internal', 'hybrid']
  },
  clientExtensionResults: {},
  authenticatorAttachment: 'platform'
}

/** `POST /passkeys/register`: the new credential, and a name for it. */
export const RegisterBody = Fields({
  JWT: Field,
  credential: RegistrationResponse,
  name: Type.Optional(Name)
}, { credential: REGISTRATION_EXAMPLE, name: 'Work laptop' })

/** `PATCH /passkeys/{id}`: the new name. */
export const RenameBody = Fields({
  JWT: Field,
  name: Name
}, { name: 'Work laptop' })

/** A passkey's id in the path: its credential id. */
export const PasskeyParams = Type.Object({ id: CredentialId })

/** One of the user's passkeys. Nothing here is secret (the public key is not even shown). */
export const PasskeyItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** When it was enrolled, and last used (ISO 8601, UTC); `last_used_at` is absent before the first use. */
  created_at: Type.String(),
  last_used_at: Type.Optional(Type.String()),
  /** `singleDevice` (a security key) or `multiDevice` (a synced passkey). */
  device_type: Type.String(),
  backed_up: Type.Boolean(),
  transports: Type.Array(Type.String()),
  /** The authenticator's model, when it says. */
  aaguid: Type.String()
})

export const PasskeyReply = Success({ passkey: PasskeyItem })
export const PasskeysReply = Success({ passkeys: Type.Array(PasskeyItem) })

/** `POST /auth/passkey`: the assertion for the options of `/auth/passkey/options`. */
export const PasskeySignInBody = Fields({
  credential: AuthenticationResponse
})

/** `POST /auth/step-up`: a password, a code, a passkey, or a password and a code. */
export const StepUpBody = Fields({
  JWT: Field,
  password: Field,
  /** A TOTP code or a backup code. */
  code: Field,
  passkey: Type.Optional(AuthenticationResponse)
}, { password: 'correct horse battery staple' })

/** A fresh access token of the same session. */
export const StepUpReply = Success({
  jwt: Type.String(),
  csrf_token: CsrfToken
})
