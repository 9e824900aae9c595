// A passkey as the second factor of a password sign-in: its options, /auth/2fa with `passkey`, refusals, the challenge's binding and single use, and a failing port.
import { generateKeyPairSync } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { MemoryStore, type JwtLoginEventMap, type JwtLoginEventName, type JwtLoginOptions, type MailMessage, type PasskeyUse, type SettingsInput } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore } from '../../lib/testing.js'
import type { SoftAuthenticator } from '../helpers/authenticator.js'
import { errorOf } from '../helpers/http.js'
import { authenticator, buildPasskeyApp, claimsOf, PREFIX, RP_ID, type PasskeyApp } from '../helpers/passkeys.js'
import { BOB, totpAt } from '../helpers/two-factor.js'

const SESSIONS_ON = { sessions: { enabled: true } } satisfies Partial<SettingsInput>
const OPTIONS = '/auth/2fa/passkey/options'

/** A passkey port whose `recordUse` can be made to fail, as a host whose passkey table is down. */
class FlakyPasskeyStore extends MemoryPasskeyStore {
  failUse = false

  override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
    if (this.failUse) throw new Error('injected: the passkey table is down')
    await super.recordUse(credentialId, use)
  }
}

/** The passkey test host, closed when the test ends. */
async function build (t: Test, options: { settings?: Partial<SettingsInput>, plugin?: Partial<JwtLoginOptions> } = {}): Promise<PasskeyApp> {
  const kit = await buildPasskeyApp({ settings: { ...SESSIONS_ON, ...options.settings }, plugin: options.plugin })
  t.teardown(async () => { await kit.app.close() })
  return kit
}

/** Collects the payloads of one audit event. */
function collect<E extends JwtLoginEventName> (kit: PasskeyApp, event: E): Array<JwtLoginEventMap[E]> {
  const seen: Array<JwtLoginEventMap[E]> = []
  kit.app.jwtLogin.events.on(event, (payload) => { seen.push(payload) })
  return seen
}

/** Bob's password step: the interim token of a new challenge. */
async function interimOf (kit: PasskeyApp): Promise<string> {
  const res = await kit.login(BOB)
  if (res.json().data?.two_factor_required !== true) throw new Error(`no challenge: ${res.body}`)
  return res.json().data.jwt
}

/** `POST /auth/2fa` with the interim token as Bearer. */
async function submit (kit: PasskeyApp, interim: string, payload: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return await kit.post('/auth/2fa', payload, interim)
}

/** A right TOTP code of a new step (the clock moves 30 s first, so no step is used twice). */
async function freshTotp (kit: PasskeyApp): Promise<string> {
  kit.clock.advance(30_000)
  return await totpAt(kit.bobSecret, kit.clock.now)
}

/** Bob's final token by password and TOTP. */
async function bobToken (kit: PasskeyApp): Promise<string> {
  const interim = await interimOf(kit)
  const res = await submit(kit, interim, { code: await freshTotp(kit) })
  if (res.statusCode !== 200) throw new Error(`bob's second step: ${res.body}`)
  return res.json().data.jwt
}

/** Enrols a passkey on a new authenticator with `token`; answers the authenticator. */
async function enrolled (kit: PasskeyApp, token: string): Promise<SoftAuthenticator> {
  const device = authenticator()
  const res = await kit.enrol(token, device)
  if (res.statusCode !== 200) throw new Error(`enrolment: ${res.body}`)
  return device
}

/** An authenticator holding a credential for the site that was never enrolled (its options never asked for). */
function unenrolled (): SoftAuthenticator {
  const device = authenticator()
  device.register({ rp: { id: RP_ID, name: 'nowhere' }, user: { id: 'MQ', name: 'nobody', displayName: 'Nobody' }, challenge: 'bmV2ZXIgYXNrZWQ', pubKeyCredParams: [] })
  return device
}

/** A private key no passkey was made with, to forge a signature. */
function foreignKey (): ReturnType<typeof generateKeyPairSync>['privateKey'] {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
}

/** `GET /sessions` as the token's user. */
async function sessionsOf (kit: PasskeyApp, token: string): Promise<Array<Record<string, unknown>>> {
  const res = await kit.app.inject({ method: 'GET', url: `${PREFIX}/sessions`, headers: { authorization: `Bearer ${token}` } })
  if (res.statusCode !== 200) throw new Error(`GET /sessions: ${res.body}`)
  return res.json().data.sessions
}

t.test('password, then bob\'s passkey: a final token of two factors, and the session says passkey', async (t) => {
  const kit = await build(t)
  const device = await enrolled(kit, await bobToken(kit))
  const accepted = collect(kit, 'two_factor.code_accepted')
  const interim = await interimOf(kit)

  const byBearer = await kit.options(OPTIONS, interim)
  t.same(byBearer.allowCredentials?.map(credential => credential.id), device.credentials, 'the options name bob\'s passkeys')
  t.equal(byBearer.rpId, 'example.com')
  const byField = await kit.post(OPTIONS, { JWT: interim })
  t.equal(byField.statusCode, 200, 'the interim token may travel in the JWT field too')
  t.not(byField.json().data.challenge, byBearer.challenge, 'each call gives a new challenge')

  const res = await submit(kit, interim, { passkey: device.authenticate(byBearer) })
  t.equal(res.statusCode, 200)
  const claims = claimsOf(res.json().data.jwt)
  t.same(claims.amr, ['pwd', 'hwk', 'mfa'], 'password and a passkey: two factors')
  t.same(accepted, [{ userId: kit.bobId, method: 'passkey', ip: '127.0.0.1' }])
  const current = (await sessionsOf(kit, res.json().data.jwt)).find(session => session.current === true)
  t.match(current, { method: 'password', second_factor: 'passkey' }, 'GET /sessions names the passkey as the second factor')
  t.equal((await kit.passkeys.findById(device.credentials[0] as string))?.lastUsedAt?.getTime(), kit.clock.now, 'the use is recorded on the passkey')
})

t.test('a passkey without user verification, then a code: its session says passkey and totp', async (t) => {
  const kit = await build(t)
  const token = await bobToken(kit)
  const key = await enrolled(kit, token)
  await enrolled(kit, token)
  const first = await kit.signIn(key, { userVerified: false })
  t.equal(first.json().data.two_factor_required, true, 'one factor: bob is asked for his second')
  const interim = first.json().data.jwt
  t.same(errorOf(await kit.post(OPTIONS, {}, interim)), [404, 219], 'not another of his passkeys either: a code is due')
  const res = await submit(kit, interim, { code: await freshTotp(kit) })
  t.equal(res.statusCode, 200)
  t.same(claimsOf(res.json().data.jwt).amr, ['hwk', 'otp', 'mfa'])
  const current = (await sessionsOf(kit, res.json().data.jwt)).find(session => session.current === true)
  t.match(current, { method: 'passkey', second_factor: 'totp' })
})

t.test('after a passkey without user verification, no passkey is the second factor: the same key, or another', async (t) => {
  const kit = await build(t)
  const device = await enrolled(kit, await bobToken(kit))
  const first = await kit.signIn(device, { userVerified: false })
  t.equal(first.json().data.two_factor_required, true, 'one factor: bob is asked for his second')
  const interim = first.json().data.jwt
  t.same(errorOf(await kit.post(OPTIONS, {}, interim)), [404, 219], 'no passkey options for this challenge')
  // options of another challenge of bob's, answered on this one: refused as a wrong answer, without looking at it
  const other = await interimOf(kit)
  const again = await submit(kit, interim, { passkey: device.authenticate(await kit.options(OPTIONS, other), { userVerified: false }) })
  t.same(errorOf(again), [401, 109], 'the same credential again is no second factor')
  t.equal((await submit(kit, interim, { code: await freshTotp(kit) })).statusCode, 200, 'bob\'s TOTP completes it')
})

t.test('/auth/2fa takes a code or a passkey, not both, and not neither', async (t) => {
  const kit = await build(t)
  const device = await enrolled(kit, await bobToken(kit))
  const interim = await interimOf(kit)
  const passkey = device.authenticate(await kit.options(OPTIONS, interim))
  t.same(errorOf(await submit(kit, interim, { code: await freshTotp(kit), passkey })), [400, 203], 'both: a malformed request')
  t.same(errorOf(await submit(kit, interim, {})), [400, 109], 'neither: the code is missing')
  t.equal((await submit(kit, interim, { passkey })).statusCode, 200, 'the challenge was untouched by either')
})

t.test('a refused passkey is a wrong answer, counted on the challenge until it closes', async (t) => {
  const kit = await build(t, { settings: { twoFactor: { attemptsPerChallenge: 3 } } })
  const device = await enrolled(kit, await bobToken(kit))
  const aliceDevice = await enrolled(kit, await kit.token())
  const rejected = collect(kit, 'two_factor.code_rejected')
  const closed = collect(kit, 'two_factor.challenge_closed')
  const interim = await interimOf(kit)

  const forged = device.authenticate(await kit.options(OPTIONS, interim), { signWith: foreignKey() })
  t.same(errorOf(await submit(kit, interim, { passkey: forged })), [401, 109], 'a signature of another key')
  const alices = aliceDevice.authenticate(await kit.options(OPTIONS, interim), { credentialId: aliceDevice.credentials[0] })
  t.same(errorOf(await submit(kit, interim, { passkey: alices })), [401, 109], 'alice\'s passkey answering bob\'s options')
  const unknown = unenrolled()
  const stranger = unknown.authenticate(await kit.options(OPTIONS, interim), { credentialId: unknown.credentials[0] })
  t.same(errorOf(await submit(kit, interim, { passkey: stranger })), [401, 107], 'a passkey never enrolled, the last attempt: the challenge closes')

  t.same(rejected.map(event => event.attempt), [1, 2, 3])
  t.equal(closed.length, 1)
  t.same(errorOf(await kit.post(OPTIONS, {}, interim)), [401, 107], 'no options for a closed challenge')
  t.same(errorOf(await submit(kit, interim, { code: await freshTotp(kit) })), [401, 107], 'nor a right code')
})

t.test('an assertion from another origin is named (400 / 217) and not counted as an attempt', async (t) => {
  const kit = await build(t, { settings: { twoFactor: { attemptsPerChallenge: 1 } } })
  const device = await enrolled(kit, await bobToken(kit))
  const interim = await interimOf(kit)
  const elsewhere = device.authenticate(await kit.options(OPTIONS, interim), { origin: 'https://evil.example.net' })
  t.same(errorOf(await submit(kit, interim, { passkey: elsewhere })), [400, 217])
  t.equal((await submit(kit, interim, { passkey: device.authenticate(await kit.options(OPTIONS, interim)) })).statusCode, 200, 'the one attempt was given back')
})

t.test('the passkey challenge is bound to its two-factor challenge, and spent by the sign-in it completes', async (t) => {
  const kit = await build(t)
  const device = await enrolled(kit, await bobToken(kit))
  const interimA = await interimOf(kit)
  const interimB = await interimOf(kit)
  const forA = device.authenticate(await kit.options(OPTIONS, interimA))
  t.same(errorOf(await submit(kit, interimB, { passkey: forA })), [401, 109], 'A\'s options answered with B\'s interim token')
  t.equal((await submit(kit, interimA, { passkey: forA })).statusCode, 200, 'then with its own: a refusal spent nothing')
  t.same(errorOf(await submit(kit, interimA, { passkey: forA })), [401, 107], 'replayed: A is used')
  t.same(errorOf(await submit(kit, interimB, { passkey: forA })), [401, 109], 'and on B: its challenge was spent by A\'s sign-in')
  t.equal((await submit(kit, interimB, { passkey: device.authenticate(await kit.options(OPTIONS, interimB)) })).statusCode, 200, 'B is still open to new options')
})

t.test('two passkey answers to one challenge in parallel: exactly one signs in', async (t) => {
  const kit = await build(t)
  const device = await enrolled(kit, await bobToken(kit))
  const interim = await interimOf(kit)
  const first = device.authenticate(await kit.options(OPTIONS, interim))
  const second = device.authenticate(await kit.options(OPTIONS, interim))
  const answers = await Promise.all([submit(kit, interim, { passkey: first }), submit(kit, interim, { passkey: second })])
  const statuses = answers.map(res => res.statusCode).sort()
  t.same(statuses, [200, 401], 'one 200')
  t.same(errorOf(answers.find(res => res.statusCode === 401) as LightMyRequestResponse), [401, 107], 'the other finds the challenge used')
  t.equal((await kit.app.jwtLogin.sessions(kit.bobId)).length, 2, 'the enrolment\'s session and the winner\'s: the loser\'s was discarded')
})

t.test('a user whose method is passkey: the password asks for it, mails nothing, and a backup code still works', async (t) => {
  const port = new MemoryTwoFactorStore()
  const mails: MailMessage[] = []
  const kit = await build(t, { plugin: { twoFactor: { port, mailer: { send: async (message) => { mails.push(message) } } } } })
  port.enable(kit.bobId, 'passkey')
  const issued = collect(kit, 'two_factor.challenge_issued')
  const [backupCode, otherBackupCode] = await (kit.app.jwtLogin.twoFactor?.regenerateBackupCodes(kit.bobId) ?? [])

  const first = await interimOf(kit)
  t.same(issued.map(event => event.method), ['passkey'], 'a challenge of the passkey method')
  t.same(errorOf(await kit.post(OPTIONS, {}, first)), [404, 219], 'no passkey yet: nothing to ask for')
  t.same(errorOf(await submit(kit, first, { code: await totpAt(kit.bobSecret, kit.clock.now) })), [401, 109], 'six digits are no code of this method')
  const byBackup = await submit(kit, first, { code: backupCode })
  t.equal(byBackup.statusCode, 200, 'a backup code completes it')
  t.same(claimsOf(byBackup.json().data.jwt).amr, ['pwd', 'otp', 'mfa'])

  const device = await enrolled(kit, byBackup.json().data.jwt)
  const second = await interimOf(kit)
  const byPasskey = await submit(kit, second, { passkey: device.authenticate(await kit.options(OPTIONS, second)) })
  t.equal(byPasskey.statusCode, 200, 'then the passkey does')
  const third = await interimOf(kit)
  t.equal((await submit(kit, third, { code: otherBackupCode })).statusCode, 200, 'and backup codes still do')
  await new Promise(resolve => setImmediate(resolve))
  t.same(mails, [], 'no mail was sent')
})

t.test('/auth/2fa/passkey/options refuses without passkeys on, without a port, and for a used challenge', async (t) => {
  t.test('passkeys.enabled false', async (t) => {
    const kit = await build(t, { settings: { passkeys: { enabled: false } } })
    const interim = await interimOf(kit)
    t.same(errorOf(await kit.post(OPTIONS, {}, interim)), [403, 215])
    const anyAssertion = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' }, clientExtensionResults: {} }
    t.same(errorOf(await submit(kit, interim, { passkey: anyAssertion })), [403, 215], '/auth/2fa with a passkey too')
    t.equal((await submit(kit, interim, { code: await freshTotp(kit) })).statusCode, 200, 'a code still completes the challenge')
  })
  t.test('the plugin without the passkeys option', async (t) => {
    const kit = await build(t, { settings: { passkeys: { enabled: false } }, plugin: { passkeys: undefined } })
    t.same(errorOf(await kit.post(OPTIONS, {}, await interimOf(kit))), [403, 215])
  })
  t.test('a challenge already completed', async (t) => {
    const kit = await build(t)
    await enrolled(kit, await bobToken(kit))
    const interim = await interimOf(kit)
    t.equal((await submit(kit, interim, { code: await freshTotp(kit) })).statusCode, 200)
    t.same(errorOf(await kit.post(OPTIONS, {}, interim)), [401, 107])
  })
  t.test('an access token is no interim token', async (t) => {
    const kit = await build(t)
    t.same(errorOf(await kit.post(OPTIONS, {}, await kit.token())), [401, 106])
  })
})

t.test('a port failure when the use is recorded: 503, nothing spent, and the same answer then completes the sign-in', async (t) => {
  const port = new FlakyPasskeyStore()
  const kit = await build(t, { plugin: { passkeys: { port } } })
  const device = await enrolled(kit, await bobToken(kit))
  const interim = await interimOf(kit)
  const before = (await kit.app.jwtLogin.sessions(kit.bobId)).length
  const assertion = device.authenticate(await kit.options(OPTIONS, interim))
  port.failUse = true
  t.same(errorOf(await submit(kit, interim, { passkey: assertion })), [503, 201])
  t.equal((await kit.app.jwtLogin.sessions(kit.bobId)).length, before, 'no session was left behind')
  port.failUse = false
  const res = await submit(kit, interim, { passkey: assertion })
  t.equal(res.statusCode, 200, 'the same assertion again: its passkey challenge was not spent, the two-factor challenge was given back')
  t.same(claimsOf(res.json().data.jwt).amr, ['pwd', 'hwk', 'mfa'])
  t.same(errorOf(await submit(kit, interim, { code: await freshTotp(kit) })), [401, 107], 'and then the challenge is used')
})

t.test('copies of one right passkey answer, in parallel: one signs in, the copies meet a used challenge and cost no attempt', async (t) => {
  const kit = await build(t, { settings: { twoFactor: { attemptsPerChallenge: 3 } } })
  const device = await enrolled(kit, await bobToken(kit))
  const rejected = collect(kit, 'two_factor.code_rejected')
  const interim = await interimOf(kit)
  const passkey = device.authenticate(await kit.options(OPTIONS, interim))
  const answers = await Promise.all(Array.from({ length: 8 }, async () => await submit(kit, interim, { passkey })))
  t.equal(answers.filter(res => res.statusCode === 200).length, 1, 'exactly one 200, however many copies (more than attemptsPerChallenge)')
  t.same(answers.filter(res => res.statusCode !== 200).map(errorOf), Array.from({ length: 7 }, () => [401, 107]), 'the copies: the challenge is used (107), never a wrong answer')
  t.same(rejected, [], 'no attempt was counted as wrong')
  t.same(errorOf(await submit(kit, interim, { passkey })), [401, 107], 'and a late copy alike')
})

t.test('a wrong passkey answer leaves its options usable: the challenge counts the attempt, the passkey\'s challenge stays', async (t) => {
  const kit = await build(t)
  const device = await enrolled(kit, await bobToken(kit))
  const interim = await interimOf(kit)
  const options = await kit.options(OPTIONS, interim)
  t.same(errorOf(await submit(kit, interim, { passkey: device.authenticate(options, { signWith: foreignKey() }) })), [401, 109])
  t.equal((await submit(kit, interim, { passkey: device.authenticate(options) })).statusCode, 200, 'the same options, answered right')
})

/** A memory store whose passkey challenges can vanish between their read and their consume (they expired meanwhile). */
class ExpiringChallenges extends MemoryStore {
  expireOnConsume = false

  override async consume (key: string): Promise<string | null> {
    if (this.expireOnConsume && key.startsWith('passkey:challenge:')) {
      await this.delete(key)
      return null
    }
    return await super.consume(key)
  }
}

t.test('a passkey challenge gone by the time the sign-in spends it: a wrong answer, the two-factor challenge given back', async (t) => {
  const store = new ExpiringChallenges()
  const kit = await buildPasskeyApp({ store })
  t.teardown(() => kit.app.close())
  const device = await enrolled(kit, await bobToken(kit))
  const interim = await interimOf(kit)
  const passkey = device.authenticate(await kit.options(OPTIONS, interim))
  store.expireOnConsume = true
  t.same(errorOf(await submit(kit, interim, { passkey })), [401, 109], 'its challenge was gone when it was spent')
  store.expireOnConsume = false
  t.equal((await kit.app.jwtLogin.sessions(kit.bobId)).length, 1, 'no session of the failed answer stays (the enrolment\'s only)')
  t.equal((await submit(kit, interim, { code: await freshTotp(kit) })).statusCode, 200, 'the two-factor challenge is still open')
})
