// The account's mailed codes (verify an address, confirm a new one, put an old one back): one record per purpose and subject, only keyed hashes stored, tries counted, spent once.
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { JwtLoginContext } from '../context/context.js'
import { randomCode, randomToken } from '../core/crypto.js'
import { JwtLoginError } from '../core/errors.js'
import { normalizeCode, type KeyedHashes } from '../services/code-hash.js'
import { claimOnce, isClaimed, type Claim } from '../store/claim.js'
import { readMany } from '../store/read.js'

/** What a code is for: verify the current address, confirm a new one, or put the old one back. */
export type CodePurpose = 'verify' | 'change' | 'revert'

/** What the store holds per code: never the code, only its keyed hashes, with what the code stands for. */
export interface AccountCode extends KeyedHashes {
  /** Random per code: salts the hash. */
  id: string
  /** Expiry in ms on the plugin's clock. */
  exp: number
  userId: number
  /** The address the code was sent to (verify, change) or the address to put back (revert). */
  email: string
  /** When it was issued (ms): a revert code older than the user's last revert is dead. */
  issuedAt: number
}

/** The subject of a code: the user (verify, change), or the old address, lower case (revert: the user no longer has it). */
export type Subject = number | string | null

export const accountKeys = {
  code: (purpose: CodePurpose, subject: Subject) => `account:${purpose}:${subject ?? 'none'}`,
  tries: (purpose: CodePurpose, subject: Subject) => `account-tries:${purpose}:${subject ?? 'none'}`,
  /** When the user's email was last put back: revert codes issued before it are dead. */
  revertFloor: (userId: number) => `account:reverted:${userId}`
}

/** A code just made: the code (for the mail only) and the record as written. */
export interface IssuedCode {
  code: string
  raw: string
  record: AccountCode
  key: string
}

/** A new code for `subject`, its record ready to write (`write`); the same work for a decoy. */
export function makeCode (ctx: JwtLoginContext, call: Call, purpose: CodePurpose, subject: Subject, fields: Pick<AccountCode, 'userId' | 'email'>, lifetimeMs: number): IssuedCode {
  const { length } = call.settings.account.code
  const code = randomCode(length, call.settings.resetPassword.code.alphabet)
  const id = randomToken(16)
  const record: AccountCode = { id, ...ctx.reset.hasher.hash(call.settings.tokens, `${purpose}:${id}:${code}`), exp: ctx.clock() + lifetimeMs, issuedAt: ctx.clock(), ...fields }
  return { code, raw: JSON.stringify(record), record, key: accountKeys.code(purpose, subject) }
}

/** Writes a code (replacing any older one of the subject, which stops working) and starts its tries again, in one round trip. */
export async function writeCode (ctx: JwtLoginContext, purpose: CodePurpose, subject: Subject, issued: IssuedCode, lifetimeMs: number): Promise<void> {
  await Promise.all([ctx.store.set(issued.key, issued.raw, lifetimeMs), ctx.store.delete(accountKeys.tries(purpose, subject))])
}

/** A code that matched: its record as read (for the claim) and what it stands for. */
export interface MatchedCode { raw: string, record: AccountCode, key: string }

/**
 * One round trip (the record read, the try counted) and one comparison on
 * every path, so timing tells nothing about the subject; every bad code,
 * an unknown subject, and a try past `account.code.maxTries` answer 234.
 */
export async function matchCode (ctx: JwtLoginContext, call: Call, purpose: CodePurpose, subject: Subject, code: string): Promise<MatchedCode> {
  const key = accountKeys.code(purpose, subject)
  const [[raw], tries] = await Promise.all([
    readMany(ctx.store, [key]),
    ctx.store.increment(accountKeys.tries(purpose, subject), call.settings.account.code.lifetimeMs)
  ])
  const record = raw === null || raw === undefined || isClaimed(raw) ? null : JSON.parse(raw) as AccountCode
  const live = record !== null && record.exp > ctx.clock()
  const presented = `${purpose}:${live ? record.id : 'decoy'}:${normalizeCode(code, call.settings.resetPassword.code.alphabet)}`
  const matches = ctx.reset.hasher.matches(call.settings.tokens, live ? record : null, presented)
  if (!live || !matches || tries.count > call.settings.account.code.maxTries) throw new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID')
  return { raw: raw as string, record, key }
}

/** Spends a matched code: of concurrent requests with it, one goes on; the others answer 234. */
export async function spendCode (ctx: JwtLoginContext, matched: MatchedCode): Promise<Claim> {
  const { record } = matched
  const claim = await claimOnce(ctx.store, matched.key, matched.raw, () => Math.max(1, record.exp - ctx.clock()), (error) => {
    ctx.log.error({ userId: record.userId, err: loggedError(error) }, 'jwt-login: an account code could not be given back after a failure; the user needs a new one')
  })
  if (!claim.won) throw new JwtLoginError('ERR_JWT_LOGIN_ACCOUNT_CODE_INVALID')
  return claim
}
