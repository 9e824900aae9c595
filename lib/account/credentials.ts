// What an account held before its address was proven: ended when the mailbox's owner proves it without a session of the account (a verification by code and address, a password reset).
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { keepsLinks, linksOf } from '../adapters/users.js'
import { endUserApiKeys } from '../sessions/api-keys.js'
import { endAllSessions } from '../sessions/manage.js'

/**
 * Ends every credential but the password (which a reset replaces): the
 * passkeys, the second factor and its backup codes, the provider accounts
 * linked (a link made by whoever held the account would sign them in);
 * then, with `sessions`, every session and trusted device, by one cutoff
 * after the credentials are gone, so that a sign-in that used one of them
 * meanwhile ends too; every API key of the user ends as well (with a
 * password reset too, whose new password ends the sessions). Whoever registered someone else's address keeps
 * nothing once its owner proves it. Each step is idempotent, so a retry
 * after a failure finishes the work.
 */
export async function resetCredentials (ctx: JwtLoginContext, call: Call, userId: number, user: unknown, reason: 'email_verified' | 'password_reset' | 'email_reverted', sessions: boolean): Promise<void> {
  const [passkeys, secondFactor] = await Promise.all([endPasskeys(ctx, call, userId), endSecondFactor(ctx, userId, user), endIdentities(ctx, userId, user)])
  if (sessions) await endAllSessions(ctx, call.settings, userId, reason === 'email_reverted' ? 'email_reverted' : 'email_verified')
  // a reset's new password ends the sessions; the API keys end here, as with the other reasons (a plain password change keeps them)
  if (reason === 'password_reset') await endUserApiKeys(ctx, call.settings, userId, 'password_reset')
  ctx.forgetUser(userId)
  ctx.events.emit('account.credentials_reset', { userId, passkeys, secondFactor, reason })
}

async function endPasskeys (ctx: JwtLoginContext, call: Call, userId: number): Promise<number> {
  if (ctx.passkeys === null) return 0
  const port = ctx.passkeys.port
  const held = await port.listByUser(userId)
  await Promise.all(held.map(async passkey => await port.delete(userId, passkey.id)))
  for (const passkey of held) ctx.events.emit('passkey.deleted', { userId, passkeyId: passkey.id, ip: call.ip })
  return held.length
}

/** Every provider account linked to the user unlinked, when the adapter keeps links. */
async function endIdentities (ctx: JwtLoginContext, userId: number, user: unknown): Promise<void> {
  if (!keepsLinks(ctx.users)) return
  const links = linksOf(ctx.users)
  const held = await links.listIdentities(user)
  const removed = await Promise.all(held.map(async linked => await links.unlinkIdentity(user, linked.provider, linked.subject)))
  // a link another request removed meanwhile is reported by that request
  held.forEach((linked, index) => {
    if (removed[index] === true) ctx.events.emit('identity.unlinked', { userId, ip: null, provider: linked.provider, reason: 'credentials_reset' })
  })
}

/** The second factor off (with `setMethod`) and the backup codes gone; answers whether it was on. */
async function endSecondFactor (ctx: JwtLoginContext, userId: number, user: unknown): Promise<boolean> {
  if (ctx.twoFactor === null) return false
  const { port } = ctx.twoFactor
  const on = await port.methodOf(userId, user) !== null
  await Promise.all([port.setMethod?.(userId, null), port.replaceBackupCodes(userId, [])])
  return on
}
