// `DELETE /users`: the token's own user deletes their account, after a recent sign-in; their sessions end first.
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'
import { requireRecentAuth, type Authenticated } from '../sessions/authenticate.js'
import { endAllSessions } from '../sessions/manage.js'

/**
 * Deletes the caller's own user. The token's sign-in (or step-up) must be
 * within `users.delete.recentAuth` (401 / 220), so a stolen token alone
 * cannot delete an account. Every session of the user ends first (its
 * tokens, refresh tokens and trusted devices, on every instance), so no
 * token outlives the user; then the adapter deletes the user. When that
 * fails the user stays, signed out: 503 / 226, and signing in again
 * retries. A failure while ending the sessions changes nothing (503 / 201).
 */
export async function deleteOwnUser (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<{ message: string, id: number }> {
  requireRecentAuth(auth.verified.payload, call.settings.users.delete.recentAuthMs, ctx.clock())
  const userId = auth.publicUser.ID
  await endAllSessions(ctx, call.settings, userId, 'user_deleted')
  // checked at registration and on every reload: the setting needs the method
  const deleteUser = ctx.users.deleteUser as NonNullable<typeof ctx.users.deleteUser>
  try {
    await deleteUser(auth.user)
  } catch (error) {
    throw new JwtLoginError('ERR_JWT_LOGIN_DELETE_INCOMPLETE', { cause: error })
  }
  // again after the deletion: a request between the sign-out and now may have cached the user anew
  ctx.forgetUser(userId)
  ctx.events.emit('user.deleted', { userId, ip: call.ip })
  return { message: ctx.messages.text(call, 'userDeleted'), id: userId }
}
