// The refusal of every sign-in of a locked user (`lockUser`): one read of the user's cutoff entry.
import type { JwtLoginContext } from '../context/context.js'
import { JwtLoginError } from '../core/errors.js'

/** Refuses a sign-in of a locked user: 403 / 251, whether its credentials were right or not. */
export async function refuseLocked (ctx: JwtLoginContext, userId: number): Promise<void> {
  if (await ctx.tokens.lockOf(userId) !== null) throw new JwtLoginError('ERR_JWT_LOGIN_USER_LOCKED')
}
