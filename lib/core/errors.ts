/**
 * The one table of jwt-login errors.
 *
 * Each entry has a stable string code (`ERR_JWT_LOGIN_*`) that TypeScript can
 * narrow on, the numeric `errorCode` clients of Simple JWT Login 4.x already
 * know (numbers of 200 and up are new to jwt-login), the HTTP status and the
 * message sent in the envelope. Codes are never reused.
 */

export interface ErrorDefinition {
  readonly errorCode: number
  readonly statusCode: number
  readonly message: string
  /** The `WWW-Authenticate` header (RFC 6750 §3) of answers about a Bearer token. */
  readonly wwwAuthenticate?: string
}

// RFC 6750 §3.1: a request without a token gets a bare challenge, a bad token
// invalid_token, an Authorization header that is not `Bearer <token>` invalid_request
const BEARER = 'Bearer'
const INVALID_TOKEN = 'Bearer error="invalid_token"'
const INVALID_REQUEST = 'Bearer error="invalid_request"'

function def (errorCode: number, statusCode: number, message: string, wwwAuthenticate?: string): ErrorDefinition {
  return wwwAuthenticate === undefined ? { errorCode, statusCode, message } : { errorCode, statusCode, message, wwwAuthenticate }
}

export const errorDefinitions = {
  ERR_JWT_LOGIN_TOKEN_MALFORMED: def(2, 401, 'The JWT is not three dot-separated segments.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_ALGORITHM: def(8, 401, 'The JWT algorithm is not the configured one.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_KID_UNKNOWN: def(9, 401, 'The JWT key id is unknown.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_SIGNATURE: def(11, 401, 'The JWT signature is invalid.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID: def(11, 401, 'The JWT claims are not valid for this service.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_NOT_YET_VALID: def(12, 401, 'The JWT is not valid yet.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_EXPIRED: def(14, 401, 'The JWT has expired.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TOKEN_DECODE: def(22, 401, 'The JWT segments are not valid base64url JSON.', INVALID_TOKEN),
  ERR_JWT_LOGIN_AUTHORIZATION_MALFORMED: def(2, 401, 'The Authorization header is not a Bearer token.', INVALID_REQUEST),
  ERR_JWT_LOGIN_INTERIM_TOKEN_MISSING: def(23, 400, 'The interim JWT is missing.'),
  ERR_JWT_LOGIN_TOKEN_USER_GONE: def(24, 401, 'The user of this JWT no longer exists.', INVALID_TOKEN),
  ERR_JWT_LOGIN_REFRESH_USER_GONE: def(24, 401, 'The user of this refresh token no longer exists.'),
  ERR_JWT_LOGIN_AUTH_CODE_INVALID: def(27, 401, 'The auth code is invalid or expired.'),
  ERR_JWT_LOGIN_AUTH_CODE_MISSING: def(94, 400, 'The auth code is required.'),
  ERR_JWT_LOGIN_AUTH_DISABLED: def(45, 403, 'Authentication is not enabled.'),
  ERR_JWT_LOGIN_LOGIN_MISSING: def(46, 400, 'Give exactly one of email, username or login.'),
  ERR_JWT_LOGIN_PASSWORD_MISSING: def(47, 400, 'Give exactly one of password or password_hash.'),
  ERR_JWT_LOGIN_WRONG_CREDENTIALS: def(48, 401, 'Wrong user credentials.'),
  ERR_JWT_LOGIN_PASSWORD_HASH_DISABLED: def(113, 403, 'Login with password_hash is not enabled.'),
  ERR_JWT_LOGIN_REFRESH_TOKEN_MISSING: def(51, 400, 'The refresh_token is missing.'),
  ERR_JWT_LOGIN_REFRESH_TOKEN_INVALID: def(51, 401, 'The refresh token is invalid, expired or already used.'),
  ERR_JWT_LOGIN_USER_CREATE_FAILED: def(52, 500, 'The user could not be created.'),
  ERR_JWT_LOGIN_JWT_MISSING: def(53, 400, 'The JWT is missing.'),
  ERR_JWT_LOGIN_BEARER_MISSING: def(53, 401, 'The JWT is missing.', BEARER),
  ERR_JWT_LOGIN_TOKEN_REVOKED: def(55, 401, 'The JWT has been revoked.', INVALID_TOKEN),
  ERR_JWT_LOGIN_REFRESH_DISABLED: def(81, 403, 'Refresh tokens are not enabled.'),
  ERR_JWT_LOGIN_VALIDATE_DISABLED: def(82, 403, 'The validate endpoint is not enabled.'),
  ERR_JWT_LOGIN_REVOKE_DISABLED: def(83, 403, 'The revoke endpoint is not enabled.'),
  ERR_JWT_LOGIN_TWO_FACTOR_UNAVAILABLE: def(105, 403, 'Two-factor authentication is not available.'),
  ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID: def(106, 401, 'The interim JWT is invalid, expired or not an interim token.', INVALID_TOKEN),
  ERR_JWT_LOGIN_CHALLENGE_CLOSED: def(107, 401, 'The two-factor challenge is unknown, expired, used or closed.'),
  ERR_JWT_LOGIN_TWO_FACTOR_LOCKED: def(108, 429, 'Too many failed two-factor attempts.'),
  ERR_JWT_LOGIN_TWO_FACTOR_CODE_MISSING: def(109, 400, 'The two-factor code is missing.'),
  ERR_JWT_LOGIN_TWO_FACTOR_CODE_WRONG: def(109, 401, 'The two-factor code is wrong.'),
  ERR_JWT_LOGIN_INTERIM_TOKEN_USED: def(110, 401, 'An interim token cannot be used here; complete the two-factor step first.', INVALID_TOKEN),
  ERR_JWT_LOGIN_TWO_FACTOR_DISABLED: def(206, 403, 'Two-factor sign-in is switched off; this account needs it.'),
  ERR_JWT_LOGIN_RESET_DISABLED: def(56, 403, 'Password reset is not enabled.'),
  ERR_JWT_LOGIN_RESET_EMAIL_MISSING: def(59, 400, 'The email is missing.'),
  ERR_JWT_LOGIN_RESET_CODE_MISSING: def(60, 400, 'The code is missing.'),
  ERR_JWT_LOGIN_RESET_PASSWORD_MISSING: def(61, 400, 'The new_password is missing.'),
  ERR_JWT_LOGIN_RESET_CODE_INVALID: def(62, 400, 'The reset code is invalid or expired.'),
  ERR_JWT_LOGIN_RESET_EMAIL_MALFORMED: def(95, 400, 'The email is malformed.'),
  ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID: def(96, 400, 'The email is malformed or missing.'),
  ERR_JWT_LOGIN_PASSWORD_POLICY: def(204, 400, 'The new password does not meet the password policy.'),
  ERR_JWT_LOGIN_RESET_INCOMPLETE: def(205, 503, 'The password was not changed, but signed-in sessions may have ended; try the code again.'),
  ERR_JWT_LOGIN_REGISTER_DISABLED: def(31, 403, 'Register is not allowed.'),
  ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING: def(35, 400, 'Give an email and a password.'),
  ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID: def(36, 400, 'The email is malformed, or the email or user_login is longer than 60 characters.'),
  ERR_JWT_LOGIN_REGISTER_DOMAIN: def(37, 403, 'Users of this email domain may not register.'),
  ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII: def(230, 400, 'The email must be written in ASCII, an internationalised domain in its xn-- form; letters that only look like ASCII ones are refused.'),
  ERR_JWT_LOGIN_USER_EXISTS: def(38, 409, 'User already exists.'),
  ERR_JWT_LOGIN_DELETE_DISABLED: def(39, 403, 'Delete is not enabled.'),
  ERR_JWT_LOGIN_DELETE_INCOMPLETE: def(226, 503, 'The user was not deleted, but its sessions have ended; sign in and try again.'),
  ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED: def(227, 503, 'The user was created, but could not be signed in; sign in with its password.'),
  ERR_JWT_LOGIN_PROVIDER_UNKNOWN: def(69, 400, 'The provider is unknown.'),
  ERR_JWT_LOGIN_PROVIDER_DISABLED: def(70, 403, 'The provider is not enabled.'),
  ERR_JWT_LOGIN_PROVIDER_CODE_MISSING: def(71, 400, 'Give a code or an id_token.'),
  ERR_JWT_LOGIN_PROVIDER_CODE_INVALID: def(72, 401, 'The provider rejected the code.'),
  ERR_JWT_LOGIN_ID_TOKEN_INVALID: def(73, 401, 'The ID token is invalid.'),
  ERR_JWT_LOGIN_PROVIDER_USER_NOT_FOUND: def(74, 404, 'No user matches and registration is off.'),
  ERR_JWT_LOGIN_EMAIL_UNVERIFIED: def(111, 403, 'The provider does not vouch for the email.'),
  ERR_JWT_LOGIN_RATE_LIMITED: def(200, 429, 'Too many requests; retry later.'),
  ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE: def(201, 503, 'A dependency is unavailable; nothing was changed.'),
  ERR_JWT_LOGIN_PROVIDER_TIMEOUT: def(202, 504, 'The identity provider timed out.'),
  ERR_JWT_LOGIN_PROVIDER_ERROR: def(202, 502, 'The identity provider answered with an error.'),
  ERR_JWT_LOGIN_BAD_REQUEST: def(203, 400, 'The request is malformed.'),
  ERR_JWT_LOGIN_NOT_FOUND: def(207, 404, 'No such route.'),
  ERR_JWT_LOGIN_ORIGIN_NOT_ALLOWED: def(208, 403, 'The Origin of this request is not allowed.'),
  ERR_JWT_LOGIN_CSRF_TOKEN_INVALID: def(209, 403, 'The CSRF token is missing or wrong.'),
  ERR_JWT_LOGIN_ID_TOKEN_REPLAYED: def(210, 401, 'The ID token has been used already.'),
  ERR_JWT_LOGIN_PROVIDER_EMAIL_MISMATCH: def(211, 403, 'The account found does not have the email the provider vouches for.'),
  ERR_JWT_LOGIN_SESSIONS_DISABLED: def(212, 403, 'Session management is not enabled.'),
  ERR_JWT_LOGIN_SESSION_NOT_FOUND: def(213, 404, 'No such session.'),
  ERR_JWT_LOGIN_DEVICE_NOT_FOUND: def(214, 404, 'No such trusted device.'),
  ERR_JWT_LOGIN_PASSKEYS_DISABLED: def(215, 403, 'Passkeys are not enabled.'),
  ERR_JWT_LOGIN_PASSKEY_REFUSED: def(216, 401, 'The passkey could not be verified; ask for new options and try again.'),
  ERR_JWT_LOGIN_PASSKEY_ORIGIN: def(217, 400, 'The passkey ceremony ran on an origin that is not in passkeys.origins.'),
  ERR_JWT_LOGIN_PASSKEY_RP_ID: def(218, 400, 'The passkey is bound to another relying party id than passkeys.rpId.'),
  ERR_JWT_LOGIN_PASSKEY_NOT_FOUND: def(219, 404, 'No such passkey.'),
  ERR_JWT_LOGIN_REAUTHENTICATION_REQUIRED: def(220, 401, 'A more recent sign-in is required: step up with a password, a code or a passkey.', 'Bearer error="insufficient_user_authentication"'),
  ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED: def(221, 400, 'The new passkey could not be verified; ask for new options and try again.'),
  ERR_JWT_LOGIN_PASSKEY_EXISTS: def(222, 409, 'This passkey is registered already.'),
  ERR_JWT_LOGIN_PASSKEY_LIMIT: def(223, 409, 'The account holds as many passkeys as it may; delete one first.'),
  ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED: def(224, 403, 'This kind of authenticator is not allowed here (passkeys.aaguids).'),
  ERR_JWT_LOGIN_STEP_UP_FACTOR_MISSING: def(225, 400, 'Step-up needs a password, a code, a passkey, or a password and a code.'),
  ERR_JWT_LOGIN_BUSY: def(228, 503, 'Too many requests are waiting for a password to be checked or hashed; retry later.'),
  ERR_JWT_LOGIN_EMAIL_NOT_VERIFIED: def(231, 403, 'The email address of this account is not verified yet: enter the code mailed to it, or ask for a new one.'),
  ERR_JWT_LOGIN_PROVIDER_ACCOUNT_UNVERIFIED: def(232, 403, 'An account with this email exists, but its email address was never verified: reset its password by email, which proves the address, then sign in.'),
  ERR_JWT_LOGIN_ACCOUNT_DISABLED: def(233, 403, 'This account feature is not enabled.'),
  ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID: def(234, 400, 'The code is invalid or expired.'),
  ERR_JWT_LOGIN_EMAIL_TAKEN: def(235, 409, 'This email address cannot be used for this account.'),
  ERR_JWT_LOGIN_EMAIL_INVALID: def(236, 400, 'The new email is malformed, longer than 100 characters, not in ASCII, or the account\'s own.'),
  ERR_JWT_LOGIN_EMAIL_VERIFIED_ALREADY: def(237, 409, 'The email address of this account is verified already.'),
  ERR_JWT_LOGIN_CURRENT_PASSWORD_WRONG: def(238, 401, 'The current password is wrong.'),
  ERR_JWT_LOGIN_TOTP_CODE_WRONG: def(239, 400, 'The code does not match the new secret: check the app\'s clock and try its next code.'),
  ERR_JWT_LOGIN_TOTP_NOT_PENDING: def(240, 409, 'No new TOTP secret is waiting for its first code: start the enrolment again.'),
  ERR_JWT_LOGIN_TWO_FACTOR_METHOD_UNAVAILABLE: def(241, 400, 'This account cannot use that method yet: enrol it first.'),
  ERR_JWT_LOGIN_ACCOUNT_INCOMPLETE: def(242, 503, 'The change was not made, but sessions may have ended; try again.'),
  ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED: def(243, 403, 'Sign-in by email is not enabled.'),
  ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID: def(244, 400, 'The email is malformed or missing.'),
  ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING: def(245, 400, 'Give the code from the mail.'),
  ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID: def(246, 401, 'The code is wrong, used or expired; ask for a new one if it keeps failing.'),
  ERR_JWT_LOGIN_IDENTITY_TAKEN: def(247, 409, 'This provider account is linked to another account.'),
  ERR_JWT_LOGIN_IDENTITY_PROVIDER_LINKED: def(248, 409, 'An account of this provider is linked already: unlink it first.'),
  ERR_JWT_LOGIN_IDENTITY_NOT_FOUND: def(249, 404, 'No account of this provider is linked.'),
  ERR_JWT_LOGIN_IDENTITY_LAST: def(250, 409, 'This is the only way to sign in to the account: add a password, a passkey or another provider first.'),
  ERR_JWT_LOGIN_USER_LOCKED: def(251, 403, 'This account is locked; contact the site\'s support.'),
  ERR_JWT_LOGIN_IMPERSONATION_REFUSED: def(252, 403, 'Not while acting as another user: this needs the user\'s own sign-in.'),
  ERR_JWT_LOGIN_API_KEYS_DISABLED: def(253, 403, 'API keys are not enabled.'),
  ERR_JWT_LOGIN_API_KEY_INVALID: def(254, 401, 'The API key is missing, unknown, expired or revoked.', INVALID_TOKEN),
  ERR_JWT_LOGIN_API_KEY_SCOPE: def(255, 403, 'The API key does not carry a scope this route needs.', 'Bearer error="insufficient_scope"'),
  ERR_JWT_LOGIN_API_KEY_RATE_LIMITED: def(256, 429, 'Too many requests with this API key; retry after the time Retry-After gives.'),
  ERR_JWT_LOGIN_API_KEY_LIMIT: def(257, 409, 'The account holds as many API keys as it may; delete one first.'),
  ERR_JWT_LOGIN_API_KEY_NOT_FOUND: def(258, 404, 'No such API key.'),
  ERR_JWT_LOGIN_API_KEY_REQUEST_INVALID: def(259, 400, 'A scope is not one this site declares, or expires_in is outside the range it allows.'),
  ERR_JWT_LOGIN_API_KEY_NOT_ALLOWED: def(260, 403, 'An API key does not sign in here: use a token from a sign-in.'),
  ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID: def(229, 400, 'The user_login may hold only the letters a-z and A-Z, the digits 0-9, spaces and _ . - @, with no space at either end or two in a row, and no email address but the account\'s own.')
} as const satisfies Record<string, ErrorDefinition>

export type JwtLoginErrorCode = keyof typeof errorDefinitions

/** A request field the schema check refused: where it sits, its path, and the check's own words (English). */
export interface FieldDetail {
  place: 'body' | 'querystring' | 'params' | 'headers' | 'other'
  field: string
  reason: string
}

/** Every error jwt-login answers with. `code` is stable; narrow on it. */
export class JwtLoginError extends Error {
  readonly code: JwtLoginErrorCode
  readonly errorCode: number
  readonly statusCode: number
  /** Seconds, sent as `Retry-After` (429 answers, and the 503 of a sign-in refused while password checks are queued). */
  readonly retryAfter: number | undefined
  /** The `WWW-Authenticate` header for answers about a Bearer token (RFC 6750), else `undefined`. */
  readonly wwwAuthenticate: string | undefined
  /** The malformed field a 400 / 203 names, for the message in the request's language. */
  readonly field: FieldDetail | undefined

  /**
   * `detail` says more than the table's message (which field was malformed),
   * appended to it: never a value the client sent.
   */
  constructor (code: JwtLoginErrorCode, options: { cause?: unknown, retryAfter?: number, detail?: string, field?: FieldDetail } = {}) {
    const definition = errorDefinitions[code]
    const message = options.detail === undefined ? definition.message : `${definition.message.replace(/\.$/, '')}: ${options.detail}.`
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'JwtLoginError'
    this.code = code
    this.errorCode = definition.errorCode
    this.statusCode = definition.statusCode
    this.retryAfter = options.retryAfter
    this.wwwAuthenticate = (definition as ErrorDefinition).wwwAuthenticate
    this.field = options.field
  }
}

/**
 * A setting or plugin option that is not valid; `path` names the field
 * (`tokens/keys/0/secret`, `store/consume`). The message says which of the
 * two it is: `jwt-login: invalid setting tokens/algorithm: …` or
 * `jwt-login: invalid option twoFactor/port/methodOf: …`.
 */
export class JwtLoginSettingsError extends Error {
  readonly code = 'ERR_JWT_LOGIN_INVALID_SETTINGS'
  readonly path: string

  constructor (path: string, reason: string, kind: 'setting' | 'option' = 'setting') {
    super(`jwt-login: invalid ${kind} ${path === '' ? '(root)' : path}: ${reason}`)
    this.name = 'JwtLoginSettingsError'
    this.path = path
  }
}

export function isJwtLoginError (value: unknown): value is JwtLoginError {
  return value instanceof JwtLoginError
}

/**
 * The error answer. The number travels twice: `errorCode`, as Simple JWT
 * Login 3.x and its JavaScript SDK read it, and `error_code`, as Simple JWT
 * Login 4.0 names it; both always hold the same number.
 */
export interface ErrorEnvelope {
  success: false
  data: { message: string, errorCode: number, error_code: number }
}

/** The envelope of an error; `message` in the request's language when given, else the error's own (English). */
export function envelope (error: JwtLoginError, message: string = error.message): ErrorEnvelope {
  return { success: false, data: { message, errorCode: error.errorCode, error_code: error.errorCode } }
}

/** The numeric code of an error, as audit events report it. */
export function errorNumber (code: JwtLoginErrorCode): number {
  return errorDefinitions[code].errorCode
}
