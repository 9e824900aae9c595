// Type tests of `fastify-jwt-login/client` (lib/client.ts): the calls' fields and the answers come from the routes' TypeBox schemas,
// so a wrong field in a call or an answer, or a wrong option, fails tsc.
import {
  createClient, enrolPasskey, JwtLoginClientError, memoryStorage, signInWithPasskey, stepUpWithPasskey, twoFactorWithPasskey,
  type ClientStorage, type EmailSignInFields, type EmailSignInRequestFields, type JwtLoginClient, type SessionEvent, type SignInAnswer, type SignInFields, type ValidateAnswer, type WebAuthnBrowser
} from '../../lib/client.js'
import type { JwtLoginErrorCode } from '../../lib/index.js'
import { expectType, type Equal } from './expect.js'

const client = createClient({ baseUrl: 'https://api.example.com', mode: 'cookie', storage: memoryStorage(), language: 'de', name: 'api', refreshAhead: 30, lockWait: 5000, crossTab: true, authCode: { value: 'x' }, now: Date.now })
expectType<JwtLoginClient>(client)
createClient({ baseUrl: new URL('https://api.example.com'), mode: 'bearer', fetch: globalThis.fetch })
// @ts-expect-error: no such mode
createClient({ baseUrl: 'https://api.example.com', mode: 'session' })
// @ts-expect-error: baseUrl is needed
createClient({ mode: 'bearer' })
// @ts-expect-error: an auth code is an object with its value
createClient({ baseUrl: 'https://api.example.com', authCode: 'the-code' })

// a call's fields
const answer = await client.signIn({ email: 'ada@example.com', password: 'p' })
await client.signIn({ username: 'ada', password: 'p' })
// @ts-expect-error: a misspelt field
await client.signIn({ emial: 'ada@example.com', password: 'p' })
// @ts-expect-error: the password is a string
await client.signIn({ email: 'ada@example.com', password: 42 })
// @ts-expect-error: the token travels in Authorization, never in the body
await client.changePassword({ new_password: 'n', JWT: 'token' })
await client.completeTwoFactor({ code: '123456', remember_device: true })
// @ts-expect-error: no login at all
await client.signIn({ password: 'p' })
// @ts-expect-error: no password nor its hash
await client.signIn({ email: 'ada@example.com' })
await client.signIn({ login: 'ada', password_hash: '$P$B…' })
// @ts-expect-error: a second factor needs its code or a passkey
await client.completeTwoFactor({ remember_device: true })
// @ts-expect-error: the reset needs the code and the new password too
await client.resetPassword({ email: 'ada@example.com' })
// @ts-expect-error: the reset request needs the address
await client.requestPasswordReset({})
await client.signInWithProvider({ provider: 'google', code: 'c', code_verifier: 'v' })
await client.signInWithProvider({ provider: 'google', id_token: 'eyJ…', nonce: 'n' })
// @ts-expect-error: a provider sign-in needs a code or an ID token
await client.signInWithProvider({ provider: 'google' })
// @ts-expect-error: remember_device is a boolean here
await client.completeTwoFactor({ code: '123456', remember_device: 'yes' })
// sign-in by email: the address, then the address and its code; the link page's helper
expectType<string>((await client.requestEmailSignIn({ email: 'ada@example.com' })).message)
// @ts-expect-error: a code needs the address it goes to
await client.requestEmailSignIn({})
expectType<Equal<Awaited<ReturnType<typeof client.signInWithEmail>>, SignInAnswer>>(true)
expectType<string | undefined>((await client.signInWithEmail({ email: 'ada@example.com', code: '123456' })).jwt)
// @ts-expect-error: the address and the code are needed
await client.signInWithEmail({})
// @ts-expect-error: the code is needed
await client.signInWithEmail({ email: 'ada@example.com' })
// @ts-expect-error: the address is needed
await client.signInWithEmail({ code: '123456' })
// @ts-expect-error: the code is a string
await client.signInWithEmail({ email: 'ada@example.com', code: 123456 })
expectType<Equal<Awaited<ReturnType<typeof client.signInWithEmailLink>>, SignInAnswer | null>>(true)
await client.signInWithEmailLink()
await client.signInWithEmailLink('https://app.example.com/sign-in/email#code=123456&email=ada%40example.com')
await client.signInWithEmailLink(new URL('https://app.example.com/sign-in/email'))
declare const location: { href: string, hash: string, reload: () => void }
await client.signInWithEmailLink(location)
// @ts-expect-error: a URL, a Location or a string
await client.signInWithEmailLink(42)
expectType<EmailSignInFields>({ email: 'ada@example.com', code: '123456' })
expectType<EmailSignInRequestFields>({ email: 'ada@example.com' })
await client.setTwoFactorMethod({ method: 'totp' })
// the schema's method is a string with an enum, which TypeBox types as string: 'sms' compiles, a number does not
// @ts-expect-error: the method is a string
await client.setTwoFactorMethod({ method: 1 })
await client.endAllSessions({ keepCurrent: true })
await client.endAllSessions()
// @ts-expect-error: a session id is a string
await client.endSession(7)
expectType<SignInFields>({ login: 'ada', password: 'p' })

// the answers
expectType<Equal<typeof answer, SignInAnswer>>(true)
expectType<string | undefined>(answer.jwt)
expectType<boolean | undefined>(answer.two_factor_required)
// @ts-expect-error: a misspelt answer field
expectType<unknown>(answer.refresh_tokn)
const validated = await client.validate()
expectType<Equal<typeof validated, ValidateAnswer>>(true)
expectType<string>(validated.user.user_login)
// @ts-expect-error: the user's login is a string
expectType<number>(validated.user.user_login)
expectType<string[]>((await client.newBackupCodes()).backup_codes)
expectType<boolean>((await client.sessions()).sessions[0]?.current ?? false)
expectType<string>((await client.jwks()).keys[0]?.kid ?? '')
// @ts-expect-error: the sessions answer has no users
expectType<unknown>((await client.sessions()).users)
expectType<Equal<Awaited<ReturnType<typeof client.refresh>>, string>>(true)
expectType<Equal<Awaited<ReturnType<typeof client.signOut>>, void>>(true)
expectType<Equal<typeof client.jwt, string | undefined>>(true)
expectType<Response>(await client.fetch('/me', { method: 'POST', body: '{}' }))
expectType<Response>(await client.fetch(new Request('https://api.example.com/me')))

// events, storage, errors
const stop = client.onSession((event) => {
  expectType<Equal<typeof event, SessionEvent>>(true)
  expectType<'signed-in' | 'refreshed' | 'signed-out' | 'ended'>(event.type)
  // @ts-expect-error: no such event
  if (event.type === 'expired') expectType<never>(event)
})
expectType<() => void>(stop)
const asyncStorage: ClientStorage = { getItem: async () => null, setItem: async () => {}, removeItem: async () => {} }
createClient({ baseUrl: 'https://api.example.com', storage: asyncStorage })
// @ts-expect-error: a storage has removeItem
createClient({ baseUrl: 'https://api.example.com', storage: { getItem: () => null, setItem: () => {} } })
declare const thrown: JwtLoginClientError
expectType<number>(thrown.status)
expectType<Equal<typeof thrown.errorCode, number | undefined>>(true)
expectType<Equal<typeof thrown.code, JwtLoginErrorCode | undefined>>(true)
expectType<Equal<typeof thrown.retryAfter, number | undefined>>(true)

// the passkey helpers
declare const webauthn: WebAuthnBrowser
expectType<string | undefined>((await signInWithPasskey(client, webauthn)).jwt)
expectType<string>((await twoFactorWithPasskey(client, { remember_device: true }, webauthn)).jwt)
expectType<string>((await stepUpWithPasskey(client)).jwt)
expectType<string>((await enrolPasskey(client, 'Laptop', webauthn)).passkey.id)
// @ts-expect-error: the name is a string
await enrolPasskey(client, 7)
