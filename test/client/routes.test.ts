// Every method of the client against a listening host with every part on: the second factor, passkeys (a software authenticator behind
// the passkey helpers), step-up, sessions and devices, the reset by mail code, register and delete, the account routes, a provider at
// the test OpenID provider, and /jwks with an asymmetric key.
import { generateKeyPairSync } from 'node:crypto'
import t, { type Test } from 'tap'
import { createClient, enrolPasskey, signInWithPasskey, stepUpWithPasskey, twoFactorWithPasskey, type WebAuthnBrowser } from '../../lib/client.js'
import type { SettingsInput } from '../../lib/index.js'
import { buildAccountApp, mailCode, type AccountApp } from '../helpers/account.js'
import { buildHost, testClock } from '../helpers/app.js'
import { codeIn, totpAt } from '../helpers/fixtures.js'
import { providers } from '../helpers/oauth.js'
import { ACCOUNTS, startIdp } from '../helpers/oidc-provider.js'
import { authenticator, PASSKEY_SETTINGS } from '../helpers/passkeys.js'
import type { SoftAuthenticator } from '../helpers/authenticator.js'
import { ALICE, listen, nextEvent } from '../helpers/client.js'

const SETTINGS: Partial<SettingsInput> = {
  passkeys: PASSKEY_SETTINGS,
  sessions: { enabled: true },
  users: { register: { enabled: true, signIn: true }, delete: { enabled: true } },
  twoFactor: { rememberDevice: { enabled: true } }
}

/** The host of buildAccountApp with every part on, listening. */
async function host (t: Test): Promise<AccountApp & { base: string }> {
  const kit = await buildAccountApp(t, SETTINGS)
  return { ...kit, base: await kit.app.listen({ port: 0, host: '127.0.0.1' }) }
}

/** `@simplewebauthn/browser` as the helpers use it, answered by a software authenticator. */
function webauthnOf (device: SoftAuthenticator): WebAuthnBrowser {
  return {
    startAuthentication: async ({ optionsJSON }) => device.authenticate(optionsJSON),
    startRegistration: async ({ optionsJSON }) => device.register(optionsJSON)
  }
}

t.test('password, TOTP as the second factor, backup codes, the method, step-up, the account routes, the password and the email', async (t) => {
  const kit = await host(t)
  const calls: string[] = []
  const client = createClient({ baseUrl: kit.base, now: kit.clock, fetch: async (input, init) => { calls.push(`${init?.method} ${String(input)}`); return await fetch(input, init) } })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const account = await client.account()
  t.equal(account.user.user_email, ALICE.email)
  t.equal(account.two_factor.enabled, false)

  const { secret, otpauth_uri: uri } = await client.enrolTotp()
  t.match(uri, /^otpauth:\/\/totp\//)
  const { backup_codes: codes } = await client.confirmTotp({ code: await totpAt(secret, kit.clock.now) })
  t.equal(codes?.length, 10)

  await client.signOut()
  const interim = await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal(interim.two_factor_required, true)
  t.equal(client.twoFactorPending, true)
  t.equal(client.jwt, undefined, 'the interim token is no session')
  kit.clock.advance(30_000)
  const events: string[] = []
  client.onSession((event) => { events.push(event.type) })
  const second = await client.completeTwoFactor({ code: await totpAt(secret, kit.clock.now) })
  t.equal(client.twoFactorPending, false)
  t.equal(client.jwt, second.jwt)
  t.same(events, ['signed-in'])

  t.equal((await client.newBackupCodes()).backup_codes.length, 10)
  t.type((await client.setTwoFactorMethod({ method: 'backup_codes' })).message, 'string')
  t.equal((await client.account()).two_factor.method, 'backup_codes')
  t.type((await client.disableTwoFactor()).message, 'string')
  t.equal((await client.account()).two_factor.enabled, false)

  const stepped = await client.stepUp({ password: ALICE.password })
  t.equal(client.jwt, stepped.jwt)
  t.same(events, ['signed-in', 'refreshed'])
  t.equal((await client.validate()).user.user_login, 'alice', 'the stepped-up token works, and refreshes with the refresh token kept')
  t.type(await client.refresh(), 'string')

  const NEW_PASSWORD = 'a new passphrase for alice'
  t.type((await client.changePassword({ current_password: ALICE.password, new_password: NEW_PASSWORD })).message, 'string')
  t.equal((await client.validate()).user.user_login, 'alice', 'this session stays')
  t.match((await kit.mail.next()).text, /was just changed/, 'the notice of the change')

  const NEW_EMAIL = 'alice@new.example.org'
  await client.changeEmail({ new_email: NEW_EMAIL })
  await client.confirmEmailChange({ code: mailCode(await kit.mail.next()) })
  t.equal((await client.account()).user.user_email, NEW_EMAIL)
  const notice = await kit.mail.next()
  t.equal(notice.to, ALICE.email)
  const other = createClient({ baseUrl: kit.base, now: kit.clock })
  t.teardown(() => { other.close() })
  t.type((await other.revertEmailChange({ email: ALICE.email, code: mailCode(notice) })).message, 'string', 'without a session')
  const ended = nextEvent(client, 'ended')
  const before = calls.length
  await t.rejects(client.account(), { status: 401, code: 'ERR_JWT_LOGIN_TOKEN_REVOKED' }, 'the revert ended every session')
  t.same(calls.slice(before), [`GET ${kit.base}/jwt-login/v1/account`, `POST ${kit.base}/jwt-login/v1/auth/refresh`], 'a revoked token gets one refresh, which the server refuses, and no second call')
  t.same(await ended, { type: 'ended', fromOtherTab: false }, 'the session ended here')
  t.equal(client.jwt, undefined)
  t.equal(await client.token(), undefined, 'no session left')

  kit.clock.advance(1000)
  await client.signIn({ email: ALICE.email, password: NEW_PASSWORD })
  t.equal((await client.account()).user.user_email, ALICE.email)
})

t.test('register, verify the email, delete the user; the reset by mail code', async (t) => {
  const kit = await host(t)
  const client = createClient({ baseUrl: kit.base, now: kit.clock })
  t.teardown(() => { client.close() })
  const events: string[] = []
  client.onSession((event) => { events.push(event.type) })
  const registered = await client.register({ email: 'carol@example.com', password: 'carol has a long password', display_name: 'Carol' })
  t.equal(registered.email, 'carol@example.com')
  t.equal(client.jwt, registered.jwt, 'users.register.signIn: signed in')
  t.same(events, ['signed-in'])
  t.equal((await client.account()).user.email_verified, false)
  await client.requestEmailVerification()
  t.type((await client.verifyEmail({ code: mailCode(await kit.mail.next()) })).message, 'string')
  t.equal((await client.account()).user.email_verified, true)
  t.type((await client.deleteUser()).message, 'string')
  t.same(events, ['signed-in', 'signed-out'])
  t.equal(client.jwt, undefined)
  await t.rejects(client.signIn({ email: 'carol@example.com', password: 'carol has a long password' }), { status: 401, code: 'ERR_JWT_LOGIN_WRONG_CREDENTIALS' })

  const plain = await buildAccountApp(t, { users: { register: { enabled: true } } })
  const unsigned = createClient({ baseUrl: await plain.app.listen({ port: 0, host: '127.0.0.1' }), now: plain.clock })
  t.teardown(() => { unsigned.close() })
  const answer = await unsigned.register({ email: 'dave@example.com', password: 'dave has a long password' })
  t.equal(answer.jwt, undefined)
  t.equal(unsigned.jwt, undefined, 'no sign-in without users.register.signIn')
  await unsigned.requestEmailVerification({ email: 'dave@example.com' })
  t.type((await unsigned.verifyEmail({ email: 'dave@example.com', code: mailCode(await plain.mail.next()) })).message, 'string', 'without a session, by address')

  await client.requestPasswordReset({ email: ALICE.email })
  const code = codeIn((await kit.mail.next()).text)
  t.type((await client.resetPassword({ email: ALICE.email, code, new_password: 'the password after the reset' })).message, 'string')
  t.type((await client.signIn({ email: ALICE.email, password: 'the password after the reset' })).jwt, 'string')
})

t.test('passkeys through the helpers: enrol, list, rename, sign in, step up, the second factor, sessions and devices, delete', async (t) => {
  const kit = await host(t)
  const device = authenticator()
  const webauthn = webauthnOf(device)
  const client = createClient({ baseUrl: kit.base, now: kit.clock })
  t.teardown(() => { client.close() })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const { passkey } = await enrolPasskey(client, 'Laptop', webauthn)
  t.equal(passkey.name, 'Laptop')
  const unnamed = await enrolPasskey(client, undefined, webauthnOf(authenticator()))
  t.type(unnamed.passkey.name, 'string')
  t.same((await client.passkeys()).passkeys.map(item => item.id).sort(), [passkey.id, unnamed.passkey.id].sort())
  await client.renamePasskey(passkey.id, 'Work laptop')
  t.equal((await client.passkeys()).passkeys.find(item => item.id === passkey.id)?.name, 'Work laptop')
  t.type((await client.deletePasskey(unnamed.passkey.id)).message, 'string')
  t.equal((await client.passkeys()).passkeys.length, 1)

  await client.signOut()
  const signedIn = await signInWithPasskey(client, webauthn)
  t.equal(client.jwt, signedIn.jwt, 'passwordless')
  const stepped = await stepUpWithPasskey(client, webauthn)
  t.equal(client.jwt, stepped.jwt)

  // the second factor on, as a passkey
  const { secret } = await client.enrolTotp()
  await client.confirmTotp({ code: await totpAt(secret, kit.clock.now) })
  await client.setTwoFactorMethod({ method: 'passkey' })
  const keep = client.jwt
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  t.equal(client.twoFactorPending, true)
  const second = await twoFactorWithPasskey(client, { remember_device: true }, webauthn)
  t.type(second.device_token, 'string', 'the device is trusted')
  t.equal(client.jwt, second.jwt)

  const { sessions, devices } = await client.sessions()
  t.equal(sessions.filter(session => session.current).length, 1)
  t.ok(sessions.length >= 2)
  t.equal(devices.length, 1)
  const earlier = sessions.find(session => !session.current)
  t.type((await client.endSession(earlier?.id ?? '')).message, 'string')
  t.equal((await client.sessions()).sessions.length, sessions.length - 1)
  t.type((await client.forgetDevice(devices[0]?.id ?? '')).message, 'string')
  t.same((await client.sessions()).devices, [])
  t.not(keep, client.jwt)

  await client.signOut()
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  const options = await client.twoFactorPasskeyOptions()
  t.type(options.challenge, 'string')
  const assertion = device.authenticate(await client.passkeySignInOptions())
  await client.passkeySignIn({ credential: assertion })
  await t.rejects(client.passkeySignIn({ credential: assertion }), { name: 'JwtLoginClientError', status: 401 }, 'an assertion replayed is refused')
  await t.rejects(signInWithPasskey(client), /WebAuthn is not supported|not supported in this browser|window is not defined|navigator/, 'without a webauthn argument: @simplewebauthn/browser, which needs a browser')
  const anonymous = createClient({ baseUrl: kit.base, now: kit.clock })
  t.teardown(() => { anonymous.close() })
  await t.rejects(enrolPasskey(anonymous, 'Phone', webauthn), { status: 400, code: 'ERR_JWT_LOGIN_JWT_MISSING' }, 'no session: the options are refused before any prompt')
  t.equal(device.credentials.length, 1, 'no credential was made')
})

t.test('a provider: the nonce and the code exchange at the test OpenID provider', async (t) => {
  const idp = await startIdp()
  t.teardown(async () => { await idp.close() })
  const { app } = await buildHost(() => {}, { oauth: { providers: providers(idp) }, refresh: { enabled: true } })
  const base = await listen(t, app)
  const client = createClient({ baseUrl: base })
  t.teardown(() => { client.close() })
  const { nonce } = await client.providerNonce()
  t.type(nonce, 'string')
  const { code } = await idp.code({ account: ACCOUNTS.alice, nonce })
  const answer = await client.signInWithProvider({ provider: 'idp1', code, nonce })
  t.equal(answer.user?.user_email, ALICE.email)
  t.equal(client.jwt, answer.jwt)
  t.equal((await client.validate()).user.user_login, 'alice')
  await t.rejects(client.signInWithProvider({ provider: 'idp1', code: 'not-a-code' }), { name: 'JwtLoginClientError', status: 401 })
})

t.test('/jwks: the public keys of an asymmetric key, answered whole', async (t) => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const { app } = await buildHost(() => {}, { tokens: { algorithm: 'ES256', keys: [{ kid: 'es-1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }] } }, { clock: testClock(Date.now()) })
  const base = await listen(t, app)
  const client = createClient({ baseUrl: base, prefix: '/jwt-login/v1/' })
  t.teardown(() => { client.close() })
  const { keys } = await client.jwks()
  t.equal(keys.length, 1)
  t.match(keys[0], { kid: 'es-1', kty: 'EC', crv: 'P-256', alg: 'ES256' })
  t.notOk('d' in (keys[0] ?? {}), 'no private part')
})
