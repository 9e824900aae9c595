// Sign-in codes by email: one per address, only its keyed hashes stored, every try counted before the code is looked at, spent once.
import type { Call } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import type { JwtLoginContext } from '../context/context.js'
import { randomCode, randomToken } from '../core/crypto.js'
import { isPlainEmail } from '../core/email.js'
import { normalizeCode, type KeyedHashes } from '../services/code-hash.js'
import { subjectKey } from '../services/limits.js'
import { isClaimed } from '../store/claim.js'

/** The digits a code is drawn from. */
const DIGITS = '0123456789'

/** What the store holds per address: never the code, only its keyed hashes, and the account the address found when it was mailed. */
export interface SignInCode extends KeyedHashes {
  /** Random per code: salts the hash. */
  id: string
  /** Expiry in ms on the plugin's clock. */
  exp: number
  /** The account the address found when the code was mailed; `null`: none (`emailSignIn.register`). */
  userId: number | null
  /**
   * The account's address was not verified when the code was mailed: its
   * sessions start after the cutoff its proof writes, on a retry too (when
   * an earlier try proved it and then failed, the account reads as verified).
   */
  unproven?: true
}

/** An address as codes and counts key it: NFKC, lower case, trimmed, so its spellings count together. */
export function normalizedAddress (email: string): string {
  return email.normalize('NFKC').toLowerCase().trim()
}

/**
 * The store key of an address's code (the address hashed: an email in a
 * store key is personal data). The code is the address's, not the
 * account's: it proves the mailbox, and which account the address finds is
 * asked when it is used.
 */
export function codeKey (email: string): string {
  return subjectKey('email-signin', normalizedAddress(email))
}

/**
 * The key of the tries at one code: named by the code's own id, so a new
 * code starts with none and no write has to reset them (a reset beside the
 * write could give an older code its tries back, or miss a try counted
 * between the two). Where the address has no live code, a decoy per address.
 */
export function triesKey (email: string, read: SignInCode | null): string {
  return `${codeKey(email)}:tries:${read?.id ?? 'none'}`
}

/** A code's record as read: `null` when absent or claimed. */
export function readCode (raw: string | null | undefined): SignInCode | null {
  return raw === null || raw === undefined || isClaimed(raw) ? null : JSON.parse(raw) as SignInCode
}

/**
 * Whether a new address may get a code that registers it
 * (`emailSignIn.register`): in plain ASCII (a look-alike could block the
 * address it imitates) and of an allowed domain (`users.register.allowedDomains`),
 * as at `POST /users`. Any other address is answered alike, with no code;
 * and a code that reaches `/auth/email/verify` under another spelling of
 * its address (NFKC folds a look-alike into the same code) creates nobody.
 */
export function mayRegister (call: Call, email: string): boolean {
  if (!call.settings.emailSignIn.register || !isPlainEmail(email)) return false
  const { allowedDomains } = call.settings.users.register
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
  return allowedDomains.length === 0 || allowedDomains.some(allowed => allowed.toLowerCase() === domain)
}

/** A code just made: the code (for the mail only), the record as written, and its key. */
export interface IssuedSignInCode {
  code: string
  raw: string
  record: SignInCode
  key: string
}

/** The string a code's hash is taken of: bound to its record's id and its use. */
const hashed = (id: string, code: string): string => `email-sign-in:${id}:${code}`

/** A new code for `email` (the same work whether it is written or not). */
export function makeSignInCode (ctx: JwtLoginContext, call: Call, email: string, user: PublicUser | null): IssuedSignInCode {
  const { length, lifetimeMs } = call.settings.emailSignIn.code
  const code = randomCode(length, DIGITS)
  const id = randomToken(16)
  const record: SignInCode = { id, ...ctx.reset.hasher.hash(call.settings.tokens, hashed(id, code)), exp: ctx.clock() + lifetimeMs, userId: user?.ID ?? null }
  if (user?.email_verified === false) record.unproven = true
  return { code, raw: JSON.stringify(record), record, key: codeKey(email) }
}

/** Writes a code: it replaces the address's older one, which stops working; its tries start at none (`triesKey`). */
export async function writeSignInCode (ctx: JwtLoginContext, call: Call, email: string, issued: IssuedSignInCode): Promise<void> {
  await ctx.store.set(issued.key, issued.raw, call.settings.emailSignIn.code.lifetimeMs)
}

/**
 * The code presented against the record read (`read`), for the account the
 * address finds now (`userId`): `right` when it is the live code (whoever
 * presents it holds the mailbox: a refusal of it is no guess), and
 * `record` when it may also be spent, within `emailSignIn.code.maxTries`
 * tries (`tries`, counted before). One comparison on every path, so timing
 * tells nothing about the address.
 */
export function matchSignInCode (ctx: JwtLoginContext, call: Call, read: SignInCode | null, userId: number | null, code: string, tries: number): { right: boolean, record: SignInCode | null } {
  // a code mailed to an account is for that account only; one mailed to a new address signs in whoever the address finds now
  const live = read !== null && read.exp > ctx.clock() && (read.userId === null || read.userId === userId)
  const presented = hashed(live ? read.id : 'decoy', normalizeCode(code, DIGITS))
  const right = ctx.reset.hasher.matches(call.settings.tokens, live ? read : null, presented) && live
  return { right, record: right && tries <= call.settings.emailSignIn.code.maxTries ? read : null }
}
