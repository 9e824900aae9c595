// The account routes' bodies and answers.
import { Type, type Static } from '@sinclair/typebox'
import { Field, Fields, PublicUser, Success } from './common.js'

/**
 * A field the route needs: optional in the schema, so that the route's
 * switch answers before the fields do; the route refuses it missing with
 * 400 / 203 naming it (`needed`).
 */
const Required = (maxLength = 4096) => Type.Optional(Type.String({ maxLength }))

export const TwoFactorMethodSchema = Type.String({ enum: ['totp', 'email', 'backup_codes', 'passkey'] })

/** `GET /account`. */
export const AccountReply = Success({
  user: PublicUser,
  two_factor: Type.Object({
    enabled: Type.Boolean(),
    /** The primary method; absent when off. */
    method: Type.Optional(TwoFactorMethodSchema),
    /** The methods the user can choose as the primary one (`PUT /account/2fa`). */
    methods: Type.Array(TwoFactorMethodSchema),
    /** Unused backup codes; absent when the host's port cannot tell. */
    backup_codes_left: Type.Optional(Type.Integer())
  }),
  /** The user's passkeys; absent when passkeys are off. */
  passkeys: Type.Optional(Type.Integer()),
  /** The user's live sessions, this one included. */
  sessions: Type.Integer()
})

/** `POST /account/email/verification`: with a token, nothing; without, the address. */
export const VerificationBody = Fields({ email: Field, JWT: Field }, { email: 'ada@example.com' })
/** `POST /account/email/verify`. */
export const VerifyBody = Fields({ code: Required(128), email: Field, JWT: Field }, { code: 'K7PX4N2Q' })
/** `PUT /account/password`. */
export const PasswordBody = Fields({ current_password: Field, new_password: Required(), JWT: Field }, { current_password: 'the password now', new_password: 'a new passphrase' })
/** `POST /account/email`. */
export const NewEmailBody = Fields({ new_email: Required(320), JWT: Field }, { new_email: 'ada@new.example.com' })
/** `POST /account/email/confirm` and the TOTP confirmation. */
export const CodeBody = Fields({ code: Required(128), JWT: Field }, { code: '123456' })
/** `POST /account/email/revert`: no token, the old address and its code. */
export const RevertBody = Fields({ email: Required(320), code: Required(128) }, { email: 'ada@example.com', code: 'K7PX4N2Q' })
/** `PUT /account/2fa`. */
export const MethodBody = Fields({ method: Type.Optional(TwoFactorMethodSchema), JWT: Field }, { method: 'totp' })

/** `POST /account/2fa/totp`: the pending secret, shown once, for the app (the URI or its QR code). */
export const TotpReply = Success({
  secret: Type.String(),
  otpauth_uri: Type.String(),
  /** The `otpauth://` URI as a QR code, an SVG document. */
  qr_svg: Type.String()
})

/** `POST /account/2fa/totp/confirm`: 10 backup codes when the user had none, shown once. */
export const TotpConfirmReply = Success({
  message: Type.String(),
  backup_codes: Type.Optional(Type.Array(Type.String()))
})

/** `POST /account/2fa/backup-codes`. */
export const BackupCodesReply = Success({ backup_codes: Type.Array(Type.String()) })

export type AccountAnswer = Static<typeof AccountReply>['data']
