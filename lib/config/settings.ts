/** The settings the flows read: resolved from the host's input, and the type of each resolved group. */
import type { Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { MailTemplates } from '../../schemas/mail-templates.js'
import { SettingsSchema, type KeySchema, type SettingsInput } from '../../schemas/settings.js'
import { isStandardRequestHeader } from '../../schemas/settings/api-keys.js'
import { JwtLoginSettingsError } from '../core/errors.js'
import { checkSchema, isGroup, originReason, resolveGroups, type Resolved } from './from-schema.js'
import { resolveOAuthProviders, type OAuthProviderSettings } from './oauth-providers.js'

/** A signing key, configured: `kid` and the secret or PEM keys. */
export type ResolvedKey = Static<typeof KeySchema>

/** A resolved rate limit: at most `max` in any window of `windowMs`. */
export interface ResolvedLimit { max: number, windowMs: number }

type Groups = Resolved<SettingsInput>

/**
 * Settings after defaults, with every duration in milliseconds: derived from
 * the schema; only the three groups that resolution reshapes say how.
 */
export type Settings = Omit<Groups, 'authCodes' | 'resetPassword' | 'oauth'> & {
  /** Expiry dates parsed (`null`: no expiry). */
  authCodes: Omit<Groups['authCodes'], 'codes'> & { codes: Array<{ code: string, expiresAt: number | null, role: string | null }> }
  /** The mail texts the settings give, gathered. */
  resetPassword: Omit<Groups['resetPassword'], 'mail'> & {
    mail: { siteName: string, templates: Partial<MailTemplates>, retries: number, retryDelayMs: number }
  }
  /** Each provider with its preset applied. */
  oauth: { providers: Record<string, OAuthProviderSettings> }
}

/** The longest an interim (two-factor) token may live. */
export const MAX_INTERIM_LIFETIME_MS = 5 * 60 * 1000
/** The longest a device may stay trusted (`twoFactor.rememberDevice.lifetime`). */
export const MAX_DEVICE_LIFETIME_MS = 90 * 24 * 60 * 60 * 1000

/** The longest a passkey ceremony's challenge may be answered. */
export const MAX_PASSKEY_CHALLENGE_MS = 10 * 60 * 1000
/** The longest ago a sign-in may be for enrolling a passkey (`passkeys.recentAuth`). */
const MAX_RECENT_AUTH_MS = 24 * 60 * 60 * 1000

/** The longest an old address may put itself back (`account.email.revertLifetime`). */
const MAX_REVERT_MS = 30 * 24 * 60 * 60 * 1000

/** The longest an access token may live (`tokens.lifetime`): refresh tokens keep a session longer. */
export const MAX_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000

/** The longest a rotated refresh token may still be retried. */
export const MAX_REUSE_INTERVAL_MS = 5 * 60 * 1000

/**
 * Validates and defaults the settings; throws `JwtLoginSettingsError` naming
 * the first bad field. The schema gives the defaults, the checks and the
 * shape; what it cannot say (a duration that is zero, one field against
 * another, the providers' presets) is checked here.
 */
export function resolveSettings (input: unknown): Settings {
  if (!isGroup(input)) throw new JwtLoginSettingsError('', 'settings must be an object')
  const value = Value.Default(SettingsSchema, structuredClone(input))
  checkSchema(value)
  checkKids(value.tokens.keys)
  const groups = resolveGroups(value)
  checkGroups(groups)
  return {
    ...groups,
    authCodes: resolveAuthCodes(groups.authCodes),
    resetPassword: { ...groups.resetPassword, mail: gatherTemplates(groups.resetPassword.mail) },
    oauth: { providers: resolveOAuthProviders(groups.oauth.providers) }
  }
}

/** Each key id once: a token names its verifying key by it. */
function checkKids (keys: ResolvedKey[]): void {
  const kids = new Set<string>()
  keys.forEach((key, index) => {
    if (kids.has(key.kid)) throw new JwtLoginSettingsError(`tokens/keys/${index}/kid`, 'duplicate kid')
    kids.add(key.kid)
  })
}

/** The refusals the schema cannot say: a ceiling on a duration, one field against another, an origin the way browsers send it. */
function checkGroups ({ tokens, twoFactor, refresh, resetPassword, cors, passkeys, users, account, emailSignIn, apiKeys }: Groups): void {
  if (tokens.lifetimeMs > MAX_TOKEN_LIFETIME_MS) {
    throw new JwtLoginSettingsError('tokens/lifetime', 'must be at most 1 day (a number is seconds: 900 is 15 minutes, 900000 is 10.4 days); refresh tokens (refresh.lifetime) keep a session longer')
  }
  if (twoFactor.interimLifetimeMs > MAX_INTERIM_LIFETIME_MS) throw new JwtLoginSettingsError('twoFactor/interimLifetime', 'must be at most 5 minutes')
  if (refresh.reuseIntervalMs > MAX_REUSE_INTERVAL_MS) throw new JwtLoginSettingsError('refresh/reuseInterval', 'must be at most 5 minutes')
  if (twoFactor.rememberDevice.lifetimeMs > MAX_DEVICE_LIFETIME_MS) throw new JwtLoginSettingsError('twoFactor/rememberDevice/lifetime', 'must be at most 90 days')
  const { alphabet } = resetPassword.code
  if (new Set(alphabet).size !== [...alphabet].length) {
    throw new JwtLoginSettingsError('resetPassword/code/alphabet', 'the characters must be distinct')
  }
  if (resetPassword.password.minLength > resetPassword.password.maxLength) {
    throw new JwtLoginSettingsError('resetPassword/password/minLength', 'must not exceed maxLength')
  }
  cors.origins.forEach((origin, index) => { checkOrigin(origin, `cors/origins/${index}`) })
  checkPasskeys(passkeys)
  if (users.delete.recentAuthMs > MAX_RECENT_AUTH_MS) throw new JwtLoginSettingsError('users/delete/recentAuth', 'must be at most 1 day')
  if (account.recentAuthMs > MAX_RECENT_AUTH_MS) throw new JwtLoginSettingsError('account/recentAuth', 'must be at most 1 day')
  if (account.email.revertLifetimeMs > MAX_REVERT_MS) throw new JwtLoginSettingsError('account/email/revertLifetime', 'must be at most 30 days')
  checkEmailSignIn(emailSignIn)
  checkApiKeyLifetimes(apiKeys.lifetime)
  if (isStandardRequestHeader(apiKeys.header)) {
    throw new JwtLoginSettingsError('apiKeys/header', `must not be a standard request header (${apiKeys.header} is sent for other reasons; a request with a token and it would be refused): name one of your own, such as X-API-Key`)
  }
  if (refresh.enabled && refresh.cookie.enabled && cors.enabled && cors.origins.length > 0 && !cors.credentials) {
    throw new JwtLoginSettingsError('cors/credentials', 'cookie mode (refresh.cookie.enabled) across origins needs cors.credentials: true, or the browsers send no cookie')
  }
}

/** The longest an API key may live (`apiKeys.lifetime.max`): 5 years of 365.25 days, as `'5y'` reads. */
export const MAX_API_KEY_LIFETIME_MS = 5 * 365.25 * 24 * 60 * 60 * 1000

/** An API key's lifetimes: `min` ≤ `default` ≤ `max` ≤ 5 years. */
function checkApiKeyLifetimes ({ defaultMs, minMs, maxMs }: Groups['apiKeys']['lifetime']): void {
  if (maxMs > MAX_API_KEY_LIFETIME_MS) throw new JwtLoginSettingsError('apiKeys/lifetime/max', 'must be at most 5 years')
  if (minMs > maxMs) throw new JwtLoginSettingsError('apiKeys/lifetime/min', 'must not exceed apiKeys.lifetime.max')
  if (defaultMs < minMs || defaultMs > maxMs) throw new JwtLoginSettingsError('apiKeys/lifetime/default', 'must be between apiKeys.lifetime.min and apiKeys.lifetime.max')
}

/** The longest an emailed sign-in code may live (`emailSignIn.code.lifetime`). */
const MAX_SIGN_IN_CODE_MS = 60 * 60 * 1000

/** Loopback hosts, where a link page may be served over http. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * A code that lives an hour at most; a link page that is an https URL (http
 * on loopback) without a fragment of its own. The link is written into the
 * mail as the setting spells it, so a space (which the URL parser would
 * drop or encode) is refused too: it would cut the link in a text mail.
 */
function checkEmailSignIn ({ code, linkUrl }: Groups['emailSignIn']): void {
  if (code.lifetimeMs > MAX_SIGN_IN_CODE_MS) throw new JwtLoginSettingsError('emailSignIn/code/lifetime', 'must be at most 1 hour')
  if (linkUrl === '') return
  let url: URL | null = null
  try { url = new URL(linkUrl) } catch {}
  const secure = url !== null && (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
  // written into the mail as given: no user info (https://app.example.com@evil.example), no backslash, no control character, no space
  const plain = url !== null && url.username === '' && url.password === '' && /^https?:\/\/[^\\#\s]+$/i.test(linkUrl) && ![...linkUrl].some(character => character < ' ' || character === '\u007f')
  if (!secure || !plain) {
    throw new JwtLoginSettingsError('emailSignIn/linkUrl', 'must be the https URL of the page that reads the code from its fragment (http only on localhost), written plainly: scheme://host/path, without user info, a # of its own, a backslash or a space, such as https://app.example.com/sign-in/email')
  }
}

/**
 * Each origin exactly the way a browser sends it in `Origin` (scheme, host
 * and a port other than the default; no path, no trailing slash, lower
 * case), or it would never match.
 */
function checkOrigin (origin: string, path: string): void {
  let parsed: string | null = null
  try { parsed = new URL(origin).origin } catch {}
  if (parsed !== origin) throw new JwtLoginSettingsError(path, originReason(origin))
}

/**
 * Passkeys on need an origin to accept; each web origin as browsers send
 * it, https (http only on localhost), on the relying party's domain (its
 * host is `rpId` or under it), or no browser would run the ceremony; the
 * relying party a domain name, not an address; a challenge lives at most
 * 10 minutes, a recent sign-in at most a day.
 */
function checkPasskeys (passkeys: Groups['passkeys']): void {
  const { rpId } = passkeys
  if (passkeys.challengeLifetimeMs > MAX_PASSKEY_CHALLENGE_MS) throw new JwtLoginSettingsError('passkeys/challengeLifetime', 'must be at most 10 minutes')
  if (passkeys.recentAuthMs > MAX_RECENT_AUTH_MS) throw new JwtLoginSettingsError('passkeys/recentAuth', 'must be at most 1 day')
  if (rpId.split('.').some(label => label === '') || /^[\d.]+$/.test(rpId) || (!rpId.includes('.') && rpId !== 'localhost')) {
    throw new JwtLoginSettingsError('passkeys/rpId', 'must be a domain name such as example.com (or localhost), not an IP address or a single label')
  }
  passkeys.origins.forEach((origin, index) => {
    if (origin.startsWith('android:')) return
    const path = `passkeys/origins/${index}`
    checkOrigin(origin, path)
    const { protocol, hostname } = new URL(origin)
    if (hostname !== rpId && !hostname.endsWith(`.${rpId}`)) throw new JwtLoginSettingsError(path, `must be on passkeys.rpId (${rpId}) or a subdomain of it`)
    if (protocol === 'http:' && hostname !== 'localhost') throw new JwtLoginSettingsError(path, 'must be https (browsers run WebAuthn over http on localhost only)')
  })
  if (passkeys.enabled && passkeys.origins.length === 0) {
    throw new JwtLoginSettingsError('passkeys/origins', 'passkeys need at least one origin: the page origins (https://app.example.com) whose ceremonies are accepted')
  }
}

/** Expiry dates parsed (`null`: no expiry). */
function resolveAuthCodes (group: Groups['authCodes']): Settings['authCodes'] {
  return {
    ...group,
    codes: group.codes.map(c => ({ code: c.code, expiresAt: c.expiresAt === undefined ? null : Date.parse(c.expiresAt), role: c.role ?? null })),
    requireFor: requireAuthCodeFor(group.requireFor)
  }
}

/** `requireFor.oauth` is the one optional setting without a default. */
type RequireForInput = Omit<Settings['authCodes']['requireFor'], 'oauth'> & { oauth?: boolean }

/** One setting, "Authentication Requires Auth Code", covers `/auth` and `/oauth/token` unless the host sets `oauth` apart. */
function requireAuthCodeFor (input: RequireForInput): Settings['authCodes']['requireFor'] {
  return { ...input, oauth: input.oauth ?? input.auth }
}

/** The parts of the reset mail the settings give, gathered beside its other settings (absent parts stay absent). */
function gatherTemplates ({ siteName, subject, text, html, retries, retryDelayMs }: Groups['resetPassword']['mail']): Settings['resetPassword']['mail'] {
  const templates: Partial<MailTemplates> = {}
  if (subject !== undefined) templates.subject = subject
  if (text !== undefined) templates.text = text
  if (html !== undefined) templates.html = html
  return { siteName, templates, retries, retryDelayMs }
}
