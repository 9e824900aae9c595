// `POST /users`: a new user through the adapter's createUser, under the password policy, the domain allow-list and a per-IP count; optionally signed in.
import type { Call, SignInResult } from '../adapters/second-factor.js'
import type { PublicUser } from '../adapters/users.js'
import { loggedError } from '../adapters/guard.js'
import { issueVerification } from '../account/verification.js'
import type { GateAudit, JwtLoginContext } from '../context/context.js'
import { clientKey } from '../core/client-key.js'
import { isEmail, isPlainEmail } from '../core/email.js'
import { JwtLoginError } from '../core/errors.js'
import { countInWindow, subjectKey } from '../services/limits.js'
import { withinPasswordLengths } from '../services/password-lengths.js'
import { completeSignIn } from '../sessions/sign-in.js'
import { cleanText, isCleanLogin } from '../core/clean-text.js'

/** WordPress's `user_login` column, and Simple JWT Login's limit on it (and on an email used as the login). */
const MAX_LOGIN_LENGTH = 60

/** `POST /users` as the route read it. */
export interface RegisterInput {
  email: string | undefined
  password: string | undefined
  userLogin: string | undefined
  displayName: string | undefined
  /** The role of the auth code presented, when it matched a code that has one. */
  codeRole: string | null
}

export interface Registered {
  message: string
  id: number
  user: PublicUser
  roles: string[]
  /** With `users.register.signIn`: the sign-in of the new user. */
  signIn?: SignInResult
}

/**
 * The fields present and well formed: an email of an allowed domain, in
 * plain ASCII (`isPlainEmail`: no look-alike of another address), a login
 * of at most 60 characters that WordPress would store as given (see
 * lib/core/clean-text.ts) and that holds an `@` only as the registrant's own
 * email, a password within the lengths.
 */
function checkInput (call: Call, input: RegisterInput): { email: string, login: string, password: string } {
  const { email, password } = input
  if (email === undefined || password === undefined) throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_FIELDS_MISSING')
  const login = input.userLogin ?? email
  if (!isEmail(email) || [...login].length > MAX_LOGIN_LENGTH) throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_EMAIL_INVALID')
  if (!isPlainEmail(email)) throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_EMAIL_NOT_ASCII')
  if (!isCleanLogin(login) || (login.includes('@') && login.toLowerCase() !== email.toLowerCase())) {
    throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_LOGIN_INVALID')
  }
  const { allowedDomains } = call.settings.users.register
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
  if (allowedDomains.length > 0 && !allowedDomains.some(allowed => allowed.toLowerCase() === domain)) {
    throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_DOMAIN')
  }
  if (!withinPasswordLengths(password, call.settings.resetPassword.password)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_POLICY')
  return { email, login, password }
}

/**
 * Registers a user. Order: the attempt counted per client IP
 * (`users.register.perIp`, every attempt that passed the route's gate, so
 * the route cannot be used to test many emails); the fields checked; the
 * host's password policy (with the user to
 * be, `ID` 0); the email and the login looked up (a taken one answers
 * 409 / 38: registration cannot hide that an email has an account, see
 * docs/simple-jwt-login.md); the user created; with `signIn` (and
 * `authentication.enabled`), signed in as `POST /auth` would. A failure before `createUser` changes nothing but
 * the count; a taken email or login that `createUser` reports (a concurrent
 * registration of it won) is 409 / 38 as well; any other `createUser`
 * failure is 503 and the retry looks up again.
 * A sign-in that fails after the user was created answers 503 / 227: the
 * user exists (a retry answers 38), and `POST /auth` signs it in.
 */
export async function registerUser (ctx: JwtLoginContext, call: Call, input: RegisterInput): Promise<Registered> {
  try {
    return await register(ctx, call, input)
  } catch (error) {
    const failure = error instanceof JwtLoginError ? error : new JwtLoginError('ERR_JWT_LOGIN_DEPENDENCY_UNAVAILABLE', { cause: error })
    ctx.events.emit('user.register_failed', { ip: call.ip, reason: failure.code, errorCode: failure.errorCode })
    throw failure
  }
}

async function register (ctx: JwtLoginContext, call: Call, input: RegisterInput): Promise<Registered> {
  const settings = call.settings.users.register
  const retryAfter = await countInWindow(ctx.store, subjectKey('register:ip', clientKey(call.ip)), settings.perIp)
  if (retryAfter !== null) throw new JwtLoginError('ERR_JWT_LOGIN_RATE_LIMITED', { retryAfter })
  const { email, login, password } = checkInput(call, input)
  const role = input.codeRole ?? settings.defaultRole
  // stored without markup, as WordPress stores it; nothing left is the login, as when none was given
  const displayName = cleanText(input.displayName ?? '') || login
  const candidate: PublicUser = { ID: 0, user_login: login, user_email: email, display_name: displayName, roles: [role] }
  if (ctx.reset.policy !== null && await ctx.reset.policy(password, candidate) !== true) throw new JwtLoginError('ERR_JWT_LOGIN_PASSWORD_POLICY')
  const [byEmail, byLogin] = await Promise.all([ctx.users.findByEmail(email), ctx.users.findByLogin(login)])
  if (byEmail !== null || byLogin !== null) throw new JwtLoginError('ERR_JWT_LOGIN_USER_EXISTS')
  // checked at registration and on every reload: the setting needs the method
  const createUser = ctx.users.createUser as NonNullable<typeof ctx.users.createUser>
  // nobody has proven the address yet: a provider sign-in never lands in this account until its owner does
  const user = await createUser({ email, login, displayName, role, password, emailVerified: false })
  const publicUser = ctx.users.toPublicUser(user)
  ctx.events.emit('user.registered', { userId: publicUser.ID, ip: call.ip })
  if (settings.verifyEmail) await mailVerification(ctx, call, publicUser)
  const registered: Registered = { message: ctx.messages.text(call, 'userCreated'), id: publicUser.ID, user: publicUser, roles: publicUser.roles }
  // with authentication off nothing signs in, a registration neither; nor one that must verify its email first
  const mustVerify = call.settings.authentication.requireVerifiedEmail && publicUser.email_verified === false
  if (!settings.signIn || !call.settings.authentication.enabled || mustVerify) return registered
  try {
    return { ...registered, signIn: await completeSignIn(ctx, call, user) }
  } catch (error) {
    throw new JwtLoginError('ERR_JWT_LOGIN_REGISTER_SIGN_IN_FAILED', { cause: error })
  }
}

/**
 * The new user's verification code (`users.register.verifyEmail`), mailed
 * after the answer. The user exists already: a failure to write the code is
 * logged, and `POST /account/email/verification` sends another.
 */
async function mailVerification (ctx: JwtLoginContext, call: Call, user: PublicUser): Promise<void> {
  await issueVerification(ctx, call, user).catch((error: unknown) => {
    ctx.log.error({ userId: user.ID, err: loggedError(error) }, 'jwt-login: the new user\'s verification code could not be written; POST /account/email/verification sends another')
  })
}

/** A refusal of the route's gate (registration off, the auth code) is a failed registration too. */
export const auditRegisterGate: GateAudit = (events, call, error) => {
  events.emit('user.register_failed', { ip: call.ip, reason: error.code, errorCode: error.errorCode })
}
