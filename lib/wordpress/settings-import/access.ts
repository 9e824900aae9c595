// The access settings of the import: general, auth codes, refresh, reset, register, delete, CORS.
import type { SettingsInput } from '../../../schemas/settings.js'
import { isGroup } from '../../config/from-schema.js'
import { filled, text, type AuthCode, type AuthCodes, type Reader, type Register, type Users } from './reader.js'

/** Why a reset-password flow other than the custom mail (2) does not carry over. */
const RESET_FLOWS: Readonly<Record<string, string>> = {
  0: 'saves the reset code without mailing it; jwt-login mails a one-time code to the user, so give it a mailer',
  1: "sends WordPress's own reset link; jwt-login mails a one-time code instead, so give it a mailer"
}

/** Where jwt-login's own routes take a JWT besides the `Authorization` header. */
const JWT_FIELD = 'jwt-login\'s own routes that take a JWT (validate, revoke, DELETE /users, the account, session and passkey routes, /auth/2fa) read it from the Authorization header or a JWT field in the body or the query string'
const JWT_FIELD_SHORT = 'a JWT field in the body or the query string of its own routes that take a JWT'

const TEMPLATE = 'is a mail template written for Simple JWT Login ({{CODE}}, {{NAME}}, …); jwt-login templates use {{code}}, {{display_name}}, {{email}}, {{site_name}} and {{expires_in_minutes}}: rewrite it as resetPassword.mail'

/** Whether a value is an origin exactly as browsers send it. */
function isExactOrigin (value: string): boolean {
  try {
    return /^https?:\/\//.test(value) && new URL(value).origin === value
  } catch {
    return false
  }
}

/**
 * An auth code's expiration date as ISO date-time. Simple JWT Login asks for
 * `YYYY-MM-DD HH:MM:SS` and reads it with PHP's `strtotime` under
 * WordPress's UTC default time zone; a date without a time is midnight.
 * Anything else (or a date that does not exist) is `undefined`.
 */
function isoDate (value: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value.trim())
  if (match === null) return undefined
  const [, year, month, day, hour = '00', minute = '00', second = '00'] = match
  const written = `${year}-${month}-${day}T${hour}:${minute}:${second}`
  const date = new Date(`${written}Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 19) === written ? `${written}Z` : undefined
}

/** `general.*` settings that carry nothing but may matter to clients. */
export function readGeneral (r: Reader): void {
  const namespace = text(r.from.value('general.route_namespace'))
  if (namespace !== undefined) {
    const prefix = `/${namespace.trim().replace(/^\/+|\/+$/g, '')}`
    const alias = `/wp-json${prefix === '/' ? '' : prefix}`
    r.leave('general.route_namespace', `served the routes under ${alias} and /?rest_route=${prefix}; jwt-login serves them under its prefix option (default /jwt-login/v1): pass the option aliases: ['${alias}'] to keep both URLs clients call`)
  }
  if (r.onUnlessOff('general.request_jwt_url')) {
    r.leave('general.request_jwt_url', `reads the JWT from the URL query on every request; ${JWT_FIELD}, and the host's routes (the authenticate hook) read the Authorization header only, as a token in a URL ends up in logs`)
  }
  const header = text(r.from.value('general.request_keys.header'))
  if (header !== undefined && header.trim().toLowerCase() !== 'authorization') {
    r.leave('general.request_keys.header', `reads the JWT from the ${header.trim()} header; jwt-login reads the Authorization header only (and ${JWT_FIELD_SHORT})`)
  }
}

/**
 * `auth_codes.codes` (v1 `auth_codes`): each a string (old exports) or
 * `{ code, role, expiration_date }`; `auth_codes.key` (v1
 * `auth_code_key`) names the parameter. Where each is required comes
 * from the `authorization` section. Simple JWT Login 3.x (the flat layout)
 * has one rule for three routes: `auth_requires_auth_code` gates `/auth`,
 * refresh and revoke (validate takes no code there); 4.x has a rule for
 * each, off when absent.
 */
export function readAuthCodes (r: Reader): AuthCodes {
  const auth = r.on('authorization.auth_code')
  const group: AuthCodes = {
    codes: readCodes(r),
    requireFor: {
      auth,
      validate: r.on('authorization.validate_auth_code'),
      refresh: r.flag('authorization.refresh_auth_code', r.from.flat && auth),
      revoke: r.flag('authorization.revoke_auth_code', r.from.flat && auth)
    }
  }
  const parameter = text(r.from.value('auth_codes.key'))
  if (parameter !== undefined) group.parameter = parameter
  return group
}

export function readCodes (r: Reader): AuthCode[] {
  const value = r.from.value('auth_codes.codes')
  const name = r.from.name('auth_codes.codes')
  if (value !== undefined && !Array.isArray(value)) {
    r.left.push({ setting: name, reason: 'is not a list of auth codes' })
    return []
  }
  const codes: AuthCode[] = []
  const entries: unknown[] = Array.isArray(value) ? value : []
  for (const [index, entry] of entries.entries()) {
    const read = readCode(entry)
    if (read === null) continue
    const reason = typeof read === 'string' ? read : codes.length >= 100 ? 'is beyond the 100 auth codes jwt-login takes' : undefined
    if (reason !== undefined) r.left.push({ setting: `${name}[${index}]`, reason })
    else codes.push(read as AuthCode)
  }
  return codes
}

/**
 * `authorization.refresh_token_enabled` (4.x, off when absent). Simple JWT
 * Login 3.x (the flat layout) has no such switch: its `/auth/refresh`
 * works whenever authentication does, and refreshes the JWT itself, sent
 * back within `jwt_auth_refresh_ttl` minutes of its expiry. Refresh stays
 * on, and the way clients refresh, which differs, is listed.
 */
export function readRefresh (r: Reader): NonNullable<SettingsInput['refresh']> {
  const switched = r.from.value('authorization.refresh_token_enabled') !== undefined
  const enabled = r.flag('authorization.refresh_token_enabled', r.from.flat && r.on('authorization.enabled'))
  const refresh: NonNullable<SettingsInput['refresh']> = { enabled }
  const lifetime = r.minutes('authorization.refresh_ttl')
  if (lifetime !== undefined) refresh.lifetime = lifetime
  if (enabled && !switched) {
    r.leave('authorization.refresh_ttl', 'is how long Simple JWT Login 3.x refreshes an expired JWT sent back to /auth/refresh; ' +
      'jwt-login keeps refresh on (this is refresh.lifetime) but refreshes with the refresh_token its sign-in answers, not with the JWT: clients that send the JWT there must send refresh_token instead')
  }
  return refresh
}

/**
 * `/auth/validate` and `/auth/revoke`: Simple JWT Login 3.x (the flat
 * layout) serves both whenever authentication is on (as jwt-login's
 * switches do under `authentication.enabled`); 4.x serves each only when
 * its switch is on. Validate answers its `data.jwt` as the version did:
 * 4.x (the sectioned layout) one object, 3.x a list of one.
 */
export function readTokenRoutes (r: Reader): Pick<SettingsInput, 'validate' | 'revoke'> {
  return {
    validate: { enabled: r.flag('authorization.validate_token_enabled', r.from.flat), ...(r.from.flat ? {} : { jwtAsObject: true }) },
    revoke: { enabled: r.flag('authorization.revoke_token_enabled', r.from.flat) }
  }
}

/**
 * `Authorization` without the `Bearer ` scheme: Simple JWT Login takes it
 * unless `request_jwt_header_require_bearer` (4.x, off when absent) is on;
 * 3.x always takes it. Carried only where the header is read.
 */
export function readBearer (r: Reader): NonNullable<SettingsInput['bearer']> {
  const enabled = r.onUnlessOff('general.request_jwt_header')
  const requireScheme = r.on('general.request_jwt_header_require_bearer')
  return { enabled, allowBareToken: enabled && !requireScheme }
}

/**
 * `reset_password.flow` (v1 `jwt_reset_password_flow`): 0 saves the code
 * only, 1 sends WordPress's reset link, 2 mails a code with the
 * `email_subject` / `email_body` templates. jwt-login always mails a code
 * with its own templates.
 */
export function readResetPassword (r: Reader): NonNullable<SettingsInput['resetPassword']> {
  const enabled = r.on('reset_password.enabled')
  const flow = String(r.from.value('reset_password.flow') ?? 0)
  const subject = r.from.value('reset_password.email_subject')
  const body = r.from.value('reset_password.email_body')
  if (enabled && flow !== '2') {
    r.leave('reset_password.flow', RESET_FLOWS[flow] ?? 'is a reset flow this import does not know; jwt-login mails a one-time code, so give it a mailer')
  }
  if (enabled && flow === '2') {
    if (filled(subject)) r.leave('reset_password.email_subject', TEMPLATE)
    if (filled(body)) r.leave('reset_password.email_body', TEMPLATE)
  }
  return { enabled, requireAuthCode: r.on('reset_password.auth_code') }
}

/**
 * `register.*`: the auth code is required unless the export turns it off
 * (Simple JWT Login's default); `new_user_profile` may name several roles,
 * jwt-login gives one. An allow-list of domains that came over empty
 * turns registration off: an empty list would let every domain in.
 */
export function readRegister (r: Reader): Register {
  const register: Register = {
    enabled: r.on('register.enabled'),
    requireAuthCode: r.onUnlessOff('register.auth_code'),
    signIn: r.on('register.return_jwt')
  }
  const roles = (text(r.from.value('register.new_user_profile')) ?? '').split(',').map(role => role.trim()).filter(role => role !== '')
  const role = roles[0]
  if (role !== undefined && role.length <= 64) register.defaultRole = role
  if (roles.length > 1 || (role !== undefined && role.length > 64)) {
    r.leave('register.new_user_profile', register.defaultRole === undefined
      ? 'names a role longer than the 64 characters jwt-login takes, so new users get the default role'
      : `gives new users several roles; jwt-login gives one, so they get ${role as string} only`)
  }
  const written = text(r.from.value('register.domain_whitelist'))
  if (written === undefined) return register
  const domains: string[] = []
  const unusable: string[] = []
  for (const entry of written.split(/[\s,;]+/).filter(part => part !== '')) {
    const domain = entry.replace(/^@/, '').toLowerCase()
    const usable = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(domain) && domains.length < 100
    if (usable && !domains.includes(domain)) domains.push(domain)
    if (!usable) unusable.push(entry)
  }
  if (unusable.length > 0) {
    r.leave('register.domain_whitelist', `lists domains jwt-login cannot take (${unusable.join(', ')}): each must be a domain name, and at most 100 are taken`)
  }
  register.allowedDomains = domains
  if (domains.length === 0 && register.enabled === true) {
    register.enabled = false
    r.leave('register.enabled', 'is turned off: no allowed email domain came over, and an empty list would let every domain register')
  }
  return register
}

/**
 * `delete_user.*`. jwt-login deletes the user the token's `sub` (user ID)
 * names. v1's `delete_user_by` found the user by the JWT's email (0), ID
 * (1) or login (2) claim instead: ID is the same rule; the others are
 * listed, though for tokens jwt-login issues they name the same user.
 */
export function readDelete (r: Reader): NonNullable<Users['delete']> {
  const enabled = r.on('delete_user.enabled')
  const by = r.from.value('delete_user.delete_user_by')
  if (enabled && by !== undefined && String(by) !== '1') {
    r.leave('delete_user.delete_user_by', "finds the user to delete by the JWT's email or login claim; jwt-login deletes the user its sub (the user ID) names, which is the token's own user")
  }
  return { enabled, requireAuthCode: r.onUnlessOff('delete_user.auth_code') }
}

/**
 * `cors.*`: Simple JWT Login sends `allow_origin` (default `*`) when
 * `allow_origin_enabled` is on. jwt-login takes exact origins only, so
 * CORS is on only when one came over; `*` and anything else is listed.
 */
export function readCors (r: Reader): NonNullable<SettingsInput['cors']> {
  const enabled = r.on('cors.enabled')
  const originOn = r.on('cors.allow_origin_enabled')
  const written = text(r.from.value('cors.allow_origin')) ?? '*'
  for (const [field, header] of [['methods', 'Methods'], ['headers', 'Headers']] as const) {
    const path = `cors.allow_${field}`
    const on = r.on(`${path}_enabled`)
    r.from.value(path)
    if (enabled && on) r.leave(path, `sets Access-Control-Allow-${header}; jwt-login sends the ones its routes need`)
  }
  const origins: string[] = []
  if (!enabled || !originOn) return { enabled: false, origins }
  const unusable: string[] = []
  for (const entry of written.split(/[\s,]+/).filter(part => part !== '')) {
    if (entry === '*') {
      r.leave('cors.allow_origin', 'allows every origin (*); jwt-login takes exact origins only: list the pages that call it in cors.origins')
    } else if (isExactOrigin(entry) && origins.length < 50) {
      if (!origins.includes(entry)) origins.push(entry)
    } else {
      unusable.push(entry)
    }
  }
  if (unusable.length > 0) {
    r.leave('cors.allow_origin', `lists origins jwt-login cannot take (${unusable.join(', ')}): each must be exact (scheme, host and port, no path), and at most 50 are taken`)
  }
  return { enabled: origins.length > 0, origins }
}

/**
 * One auth code: `null` for an empty one (Simple JWT Login skips those),
 * the reason when it cannot come over. A code whose expiration date cannot
 * be read stays behind whole: carried without it, it would never expire.
 */
function readCode (entry: unknown): AuthCode | string | null {
  if (typeof entry === 'string') return entry.trim() === '' ? null : { code: entry }
  if (!isGroup(entry) || typeof entry.code !== 'string') return 'is neither a code nor a { code, role, expiration_date } entry'
  if (entry.code.trim() === '') return null
  const code: AuthCode = { code: entry.code }
  const role = text(entry.role)?.trim()
  if (role !== undefined && role.length > 64) return 'names a role longer than the 64 characters jwt-login takes'
  if (role !== undefined) code.role = role
  const expiration = text(entry.expiration_date)
  if (expiration === undefined) return code
  const expiresAt = isoDate(expiration)
  if (expiresAt === undefined) return 'has an expiration date that is not YYYY-MM-DD HH:MM:SS, so the code is left out rather than carried without expiry'
  code.expiresAt = expiresAt
  return code
}
