// `GET /account`: the user as the host has it now, the second factor's state, and how many passkeys and sessions the account holds.
import type { AccountAnswer } from '../../schemas/account.js'
import type { Call } from '../adapters/second-factor.js'
import type { JwtLoginContext } from '../context/context.js'
import type { Authenticated } from '../sessions/authenticate.js'
import { listSessions } from '../sessions/manage.js'
import { availableMethods } from './second-factor.js'

/** The second factor as `GET /account` shows it; off and empty without the `twoFactor` option. */
async function twoFactorState (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<AccountAnswer['two_factor']> {
  if (ctx.twoFactor === null) return { enabled: false, methods: [] }
  const { port } = ctx.twoFactor
  const userId = auth.publicUser.ID
  const [method, left] = await Promise.all([port.methodOf(userId, auth.user), port.countBackupCodes?.(userId)])
  const state: AccountAnswer['two_factor'] = { enabled: method !== null, methods: await availableMethods(ctx, call, userId, left ?? null) }
  if (method !== null) state.method = method
  if (left !== undefined) state.backup_codes_left = left
  return state
}

export async function accountOverview (ctx: JwtLoginContext, call: Call, auth: Authenticated): Promise<AccountAnswer> {
  const userId = auth.publicUser.ID
  const passkeysOn = ctx.passkeys !== null && call.settings.passkeys.enabled
  const [twoFactor, sessions, passkeys] = await Promise.all([
    twoFactorState(ctx, call, auth),
    listSessions(ctx, userId),
    passkeysOn ? ctx.passkeys?.port.listByUser(userId) : undefined
  ])
  const answer: AccountAnswer = { user: auth.publicUser, two_factor: twoFactor, sessions: sessions.length }
  if (passkeys !== undefined) answer.passkeys = passkeys.length
  return answer
}
