// Enrolling passkeys through the routes: what is stored, the recent sign-in it needs, every refusal (changing nothing), a user's own list, rename and delete, and the switches.
import { createHash, generateKeyPairSync, sign } from 'node:crypto'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { cose, decodeAttestationObject, isoBase64URL, isoCBOR, parseAuthenticatorData } from '@simplewebauthn/server/helpers'
import t from 'tap'
import type { StoredPasskey } from '../../lib/adapters/passkeys.js'
import { passkeyOf } from '../../lib/conformance/passkey-samples.js'
import jwtLogin, { JwtLoginSettingsError, type JwtLoginEventMap, type JwtLoginEventName, type JwtLoginOptions } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, registrationThrew, testClock } from '../helpers/app.js'
import { errorOf } from '../helpers/http.js'
import { authenticator, buildPasskeyApp, claimsOf, ORIGIN, PASSKEY_SETTINGS, PREFIX, RP_ID, type PasskeyApp } from '../helpers/passkeys.js'
import { BOB, totpAt } from '../helpers/two-factor.js'

/** A third user without a second factor: "another user" whose password alone gives a final token. */
const CAROL = { login: 'carol', email: 'carol@example.com', password: 'carol keeps a long password too', displayName: 'Carol Example' }
/** Two authenticator models (AAGUIDs). */
const YUBIKEY = 'ee882879-721c-4913-9775-3dfcce97072a'
const OTHER_MODEL = 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd'
const MINUTE = 60_000
const REAUTHENTICATE = 'Bearer error="insufficient_user_authentication"'
/** What the list shows of a passkey: never its public key. */
const ITEM_FIELDS = ['aaguid', 'backed_up', 'created_at', 'device_type', 'id', 'name', 'transports']

t.test('an enrolment stores every field of the credential, named or not, and the list shows it without its key', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const registered = collect(kit.app, 'passkey.registered')
  const token = await kit.token()
  const key = authenticator()
  const synced = authenticator()

  const options = await creationOptions(kit, token)
  const response = key.register(options, { aaguid: YUBIKEY, backupEligible: false, counter: 'increasing', transports: ['usb', 'nfc'] })
  const named = await register(kit, token, response, 'YubiKey 5')
  t.equal(named.statusCode, 200, named.body)
  const id = response.id
  const createdAt = new Date(kit.clock.now)
  t.strictSame(named.json().data.passkey, {
    id,
    name: 'YubiKey 5',
    created_at: createdAt.toISOString(),
    device_type: 'singleDevice',
    backed_up: false,
    transports: ['usb', 'nfc'],
    aaguid: YUBIKEY
  }, 'the answer: no last_used_at before a use')
  t.strictSame(await kit.passkeys.findById(id), {
    id,
    userId: kit.aliceId,
    publicKey: publicKeyOf(response),
    counter: 0,
    transports: ['usb', 'nfc'],
    deviceType: 'singleDevice',
    backupEligible: false,
    backedUp: false,
    aaguid: YUBIKEY,
    name: 'YubiKey 5',
    createdAt,
    lastUsedAt: null
  } satisfies StoredPasskey, 'stored: the COSE key the authenticator attested, counter 0, createdAt the clock')

  const unnamed = await kit.enrol(token, synced)
  t.equal(unnamed.statusCode, 200, unnamed.body)
  const syncedId = synced.credentials[0] as string
  t.match(await kit.passkeys.findById(syncedId), {
    name: 'Passkey',
    deviceType: 'multiDevice',
    backupEligible: true,
    backedUp: true,
    transports: ['internal', 'hybrid'],
    aaguid: '00000000-0000-0000-0000-000000000000'
  }, 'no name: `Passkey`; a synced passkey is multiDevice and backed up')

  const notYetBackedUp = authenticator()
  t.equal((await kit.enrol(token, notYetBackedUp, { backupEligible: true, backedUp: false })).statusCode, 200)
  t.match(await kit.passkeys.findById(notYetBackedUp.credentials[0] as string), { deviceType: 'multiDevice', backupEligible: true, backedUp: false },
    'backup eligible but not backed up yet: multiDevice, not backed up')

  t.strictSame(registered, [id, syncedId, notYetBackedUp.credentials[0]].map(passkeyId => ({ userId: kit.aliceId, passkeyId, ip: '127.0.0.1' })), 'one event each')
  const list = await send(kit, 'GET', '/passkeys', token)
  t.equal(list.statusCode, 200, list.body)
  const passkeys = list.json().data.passkeys as Array<Record<string, unknown>>
  t.strictSame(passkeys.map(item => item.id), [id, syncedId, notYetBackedUp.credentials[0]], 'oldest first')
  for (const item of passkeys) t.strictSame(Object.keys(item).sort(), ITEM_FIELDS, `${item.name as string}: no public key, no last_used_at`)
  t.notOk(list.body.includes(publicKeyOf(response)), 'the public key is nowhere in the answer')
})

t.test('a browser that reports no transports: the passkey is stored with none', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const full = authenticator().register(await creationOptions(kit, token))
  const { transports: _reported, ...withoutTransports } = full.response
  const res = await register(kit, token, { ...full, response: withoutTransports })
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(res.json().data.passkey.transports, [])
  t.strictSame((await kit.passkeys.findById(full.id))?.transports, [])
})

t.test('the next options exclude the passkeys held; a credential id registered already is 409 / 222', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const first = authenticator()
  await kit.enrol(token, first, { transports: ['usb'] })
  const options = await creationOptions(kit, token)
  t.strictSame(options.excludeCredentials, [{ id: first.credentials[0], type: 'public-key', transports: ['usb'] }], 'the first passkey, with its transports')

  // a credential of bob's is stored under the id the authenticator made, before alice's registration reaches the server
  const response = authenticator().register(options)
  const bobs = passkeyOf(kit.bobId, { id: response.id, name: 'bob\'s' })
  await kit.passkeys.create(bobs)
  const before = await kit.passkeys.listByUser(kit.aliceId)
  t.same(errorOf(await register(kit, token, response)), [409, 222])
  t.strictSame(await kit.passkeys.listByUser(kit.aliceId), before, 'nothing added')
  t.strictSame(await kit.passkeys.findById(response.id), bobs, 'the stored credential is untouched')
})

t.test('enrolment and delete need a sign-in within passkeys.recentAuth; rename and the list do not; a step-up renews it', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const held = authenticator()
  await kit.enrol(token, held)
  const heldId = held.credentials[0] as string
  const pending = authenticator().register(await creationOptions(kit, token))
  kit.clock.advance(11 * MINUTE)

  const refusals = {
    options: await kit.post('/passkeys/register/options', {}, token),
    register: await register(kit, token, pending),
    delete: await send(kit, 'DELETE', `/passkeys/${heldId}`, token)
  }
  for (const [route, res] of Object.entries(refusals)) {
    t.same(errorOf(res), [401, 220], `${route}: 401 / 220`)
    t.equal(res.headers['www-authenticate'], REAUTHENTICATE, `${route}: WWW-Authenticate asks for a fresher sign-in`)
  }
  t.equal((await send(kit, 'PATCH', `/passkeys/${heldId}`, token, { name: 'Laptop' })).statusCode, 200, 'rename works')
  const list = await send(kit, 'GET', '/passkeys', token)
  t.equal(list.statusCode, 200)
  t.strictSame(list.json().data.passkeys.map((item: { name: string }) => item.name), ['Laptop'], 'the list works; nothing was deleted')

  const stepUp = await kit.post('/auth/step-up', { password: ALICE.password }, token)
  t.equal(stepUp.statusCode, 200, stepUp.body)
  const fresh = stepUp.json().data.jwt as string
  t.equal((await kit.enrol(fresh, authenticator())).statusCode, 200, 'the stepped-up token enrols')
  t.equal((await send(kit, 'DELETE', `/passkeys/${heldId}`, fresh)).statusCode, 200, 'and deletes')
  t.same(errorOf(await kit.post('/passkeys/register/options', {}, token)), [401, 220], 'the old token is still too old')
})

t.test('passkeys.maxPerUser: the options and a registration beyond it are 409 / 223', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { maxPerUser: 1 } } })
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  // two options asked while the user holds none: the bound is checked again at registration
  const [first, second] = [await creationOptions(kit, token), await creationOptions(kit, token)]
  t.equal((await register(kit, token, authenticator().register(first))).statusCode, 200)
  t.same(errorOf(await kit.post('/passkeys/register/options', {}, token)), [409, 223], 'options')
  t.same(errorOf(await register(kit, token, authenticator().register(second))), [409, 223], 'registration')
  t.equal((await kit.passkeys.listByUser(kit.aliceId)).length, 1)
})

t.test('refused registrations change nothing', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const carol = await kit.users.addUser(CAROL)
  const token = await kit.token()
  await kit.enrol(token, authenticator())
  const held = await kit.passkeys.listByUser(kit.aliceId)
  const device = authenticator()
  const fresh = async (): Promise<PublicKeyCredentialCreationOptionsJSON> => await creationOptions(kit, token)

  const replayed = device.register(await fresh())
  t.equal((await register(kit, token, replayed)).statusCode, 200, 'the first answer enrols')
  const enrolled = await kit.passkeys.listByUser(kit.aliceId)
  t.same(errorOf(await register(kit, token, replayed)), [400, 221], 'its challenge is spent: the replay is refused')
  t.strictSame(await kit.passkeys.listByUser(kit.aliceId), enrolled, 'the replay changed nothing')
  await kit.passkeys.delete(kit.aliceId, replayed.id)

  const cases: Array<{ name: string, error: [number, number], answer: () => Promise<LightMyRequestResponse> }> = [
    {
      name: 'options of another session of the same user',
      error: [400, 221],
      answer: async () => await register(kit, await kit.token(), device.register(await fresh()))
    },
    {
      name: 'options of another user',
      error: [400, 221],
      answer: async () => await register(kit, await kit.token(CAROL), device.register(await fresh()))
    },
    {
      name: 'a passwordless sign-in\'s challenge',
      error: [400, 221],
      answer: async () => {
        const signIn = await kit.options('/auth/passkey/options')
        return await register(kit, token, device.register({ ...await fresh(), challenge: signIn.challenge }))
      }
    },
    {
      name: 'a challenge the server never issued',
      error: [400, 221],
      answer: async () => await register(kit, token, device.register({ ...await fresh(), challenge: isoBase64URL.fromUTF8String('made up') }))
    },
    { name: 'a wrong origin', error: [400, 217], answer: async () => await register(kit, token, device.register(await fresh(), { origin: 'https://evil.example.net' })) },
    { name: 'a wrong rpId', error: [400, 218], answer: async () => await register(kit, token, device.register(await fresh(), { rpId: 'evil.example.net' })) },
    {
      name: 'clientDataJSON that is not JSON',
      error: [400, 221],
      answer: async () => await register(kit, token, withClientData(device.register(await fresh()), 'not JSON at all'))
    },
    {
      name: 'clientDataJSON without a challenge',
      error: [400, 221],
      answer: async () => await register(kit, token, withClientData(device.register(await fresh()), JSON.stringify({ type: 'webauthn.create', origin: ORIGIN })))
    },
    {
      name: 'clientDataJSON without an origin',
      error: [400, 221],
      answer: async () => {
        const options = await fresh()
        return await register(kit, token, withClientData(device.register(options), JSON.stringify({ type: 'webauthn.create', challenge: options.challenge })))
      }
    },
    {
      name: 'a get ceremony\'s clientDataJSON',
      error: [400, 221],
      answer: async () => {
        const options = await fresh()
        return await register(kit, token, withClientData(device.register(options), JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: ORIGIN })))
      }
    },
    {
      name: 'a packed self-attestation signed by another key',
      error: [400, 221],
      answer: async () => await register(kit, token, withForgedSelfAttestation(device.register(await fresh())))
    },
    { name: 'no credential', error: [400, 203], answer: async () => await kit.post('/passkeys/register', { name: 'x' }, token) },
    { name: 'a credential of the wrong shape', error: [400, 203], answer: async () => await kit.post('/passkeys/register', { credential: { id: 'abc', type: 'public-key' } }, token) },
    {
      name: 'a credential id that is not base64url',
      error: [400, 203],
      answer: async () => await register(kit, token, { ...device.register(await fresh()), id: 'not base64url!' })
    },
    { name: 'a name of 65 characters', error: [400, 203], answer: async () => await register(kit, token, device.register(await fresh()), 'n'.repeat(65)) }
  ]
  for (const { name, error, answer } of cases) {
    t.same(errorOf(await answer()), error, `${name}: ${error.join(' / ')}`)
    t.strictSame(await kit.passkeys.listByUser(kit.aliceId), held, `${name}: nothing stored`)
  }
  t.strictSame(await kit.passkeys.listByUser(carol.ID), [], 'carol got nothing either')
  // an empty field is an absent one (as Simple JWT Login reads fields): the passkey gets its default name
  const unnamed = await register(kit, token, device.register(await fresh()), '')
  t.equal(unnamed.statusCode, 200, 'an empty name is no name')
  t.not(unnamed.json().data.passkey.name, '', 'and the passkey is named by default')
})

t.test('userVerification required: a registration without UV is 400 / 221, with it 200', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { userVerification: 'required' } } })
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const options = await creationOptions(kit, token)
  t.equal(options.authenticatorSelection?.userVerification, 'required', 'the options ask for it')
  t.same(errorOf(await register(kit, token, authenticator().register(options, { userVerified: false }))), [400, 221])
  t.strictSame(await kit.passkeys.listByUser(kit.aliceId), [])
  t.equal((await kit.enrol(token, authenticator())).statusCode, 200)
})

t.test('passkeys.aaguids: a model not on the list is 403 / 224, one on it is enrolled', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { aaguids: [YUBIKEY] } } })
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  t.same(errorOf(await kit.enrol(token, authenticator(), { aaguid: OTHER_MODEL })), [403, 224], 'another model')
  t.same(errorOf(await kit.enrol(token, authenticator())), [403, 224], 'a model that does not say (all zeros)')
  t.strictSame(await kit.passkeys.listByUser(kit.aliceId), [], 'nothing stored')
  const allowed = await kit.enrol(token, authenticator(), { aaguid: YUBIKEY })
  t.equal(allowed.statusCode, 200, allowed.body)
  t.equal(allowed.json().data.passkey.aaguid, YUBIKEY)
})

t.test('attestation direct asks for it, yet the library accepts a "none" attestation: the model is then unproven', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { attestation: 'direct' } } })
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const options = await creationOptions(kit, token)
  t.equal(options.attestation, 'direct', 'the options ask for an attestation')
  const res = await register(kit, token, authenticator().register(options, { aaguid: YUBIKEY }))
  t.equal(res.statusCode, 200, 'a "none" attestation (what SoftAuthenticator always sends) is enrolled')
  t.equal(res.json().data.passkey.aaguid, YUBIKEY, 'with the AAGUID it claims')
})

t.test('two registrations of the same answer at once: exactly one is enrolled', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const response = authenticator().register(await creationOptions(kit, token))
  const answers = await Promise.all([register(kit, token, response), register(kit, token, response)])
  t.same(answers.map(res => res.statusCode).sort(), [200, 400])
  t.equal((await kit.passkeys.listByUser(kit.aliceId)).length, 1)
})

t.test('a challenge answered after passkeys.challengeLifetime is 400 / 221', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { challengeLifetime: '2m' } } })
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const options = await creationOptions(kit, token)
  t.equal(options.timeout, 2 * MINUTE, 'the options tell the browser the lifetime')
  const late = authenticator().register(options)
  kit.clock.advance(2 * MINUTE)
  t.same(errorOf(await register(kit, token, late)), [400, 221])
  t.strictSame(await kit.passkeys.listByUser(kit.aliceId), [])
  const inTime = await creationOptions(kit, token)
  kit.clock.advance(2 * MINUTE - 1)
  t.equal((await register(kit, token, authenticator().register(inTime))).statusCode, 200, 'a millisecond before, it is enrolled')
})

t.test('a token past its lifetime on a passkey route: 401 and validation.failed', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const refused = collect(kit.app, 'validation.failed')
  const token = await kit.token()
  kit.clock.advance(16 * MINUTE)
  t.same(errorOf(await send(kit, 'GET', '/passkeys', token)), [401, 14], 'the JWT has expired')
  t.strictSame(refused, [{ ip: '127.0.0.1', errorCode: 14 }])
})

t.test('rename: the user\'s own passkey only', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  await kit.users.addUser(CAROL)
  const renamed = collect(kit.app, 'passkey.renamed')
  const token = await kit.token()
  const mine = authenticator()
  const hers = authenticator()
  await kit.enrol(token, mine)
  await kit.enrol(await kit.token(CAROL), hers, {}, 'Carol\'s phone')
  const [mineId, hersId] = [mine.credentials[0] as string, hers.credentials[0] as string]

  const res = await send(kit, 'PATCH', `/passkeys/${mineId}`, token, { name: 'Work laptop' })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.message, 'The passkey was renamed.')
  t.equal((await kit.passkeys.findById(mineId))?.name, 'Work laptop')
  t.strictSame(renamed, [{ userId: kit.aliceId, passkeyId: mineId, ip: '127.0.0.1' }])

  t.same(errorOf(await send(kit, 'PATCH', `/passkeys/${hersId}`, token, { name: 'stolen' })), [404, 219], 'another user\'s')
  t.equal((await kit.passkeys.findById(hersId))?.name, 'Carol\'s phone', 'unchanged')
  t.same(errorOf(await send(kit, 'PATCH', '/passkeys/bm8tc3VjaC1rZXk', token, { name: 'ghost' })), [404, 219], 'an unknown one')
  t.same(errorOf(await send(kit, 'PATCH', `/passkeys/${mineId}`, token, { name: 'n'.repeat(65) })), [400, 203], 'a name of 65 characters')
  t.same(errorOf(await send(kit, 'PATCH', `/passkeys/${mineId}`, token, {})), [400, 203], 'no name')
  t.equal((await kit.passkeys.findById(mineId))?.name, 'Work laptop', 'the refusals renamed nothing')
  t.equal(renamed.length, 1, 'and told nothing')
})

t.test('delete: the user\'s own passkey only; a deleted passkey signs nobody in', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  await kit.users.addUser(CAROL)
  const deleted = collect(kit.app, 'passkey.deleted')
  const token = await kit.token()
  const mine = authenticator()
  const hers = authenticator()
  await kit.enrol(token, mine)
  await kit.enrol(await kit.token(CAROL), hers)
  const [mineId, hersId] = [mine.credentials[0] as string, hers.credentials[0] as string]
  t.equal((await kit.signIn(mine)).statusCode, 200, 'it signs in before')

  t.same(errorOf(await send(kit, 'DELETE', `/passkeys/${hersId}`, token)), [404, 219], 'another user\'s')
  t.not(await kit.passkeys.findById(hersId), null, 'kept')
  t.same(errorOf(await send(kit, 'DELETE', '/passkeys/bm8tc3VjaC1rZXk', token)), [404, 219], 'an unknown one')
  const res = await send(kit, 'DELETE', `/passkeys/${mineId}`, token)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().data.message, 'The passkey was deleted.')
  t.equal(await kit.passkeys.findById(mineId), null, 'gone')
  t.strictSame(deleted, [{ userId: kit.aliceId, passkeyId: mineId, ip: '127.0.0.1' }])
  t.same(errorOf(await send(kit, 'DELETE', `/passkeys/${mineId}`, token)), [404, 219], 'deleted twice: not found')
  t.same(errorOf(await kit.signIn(mine)), [401, 216], 'the authenticator still holds it, but it signs nobody in')
})

t.test('passkeys.enabled false: every passkey route is 403 / 215', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { enabled: false } } })
  t.teardown(() => kit.app.close())
  await assertSwitchedOff(t, kit)
})

t.test('without the passkeys option (passkeys.enabled false): every passkey route is 403 / 215', async (t) => {
  const kit = await buildPasskeyApp({ settings: { passkeys: { enabled: false } }, plugin: { passkeys: undefined } })
  t.teardown(() => kit.app.close())
  await assertSwitchedOff(t, kit)
})

t.test('the passkey settings and option are checked at registration', async (t) => {
  const port = new MemoryPasskeyStore()
  const refused = async (name: string, path: string, settings: Record<string, unknown>, plugin: Partial<JwtLoginOptions> = { passkeys: { port } }): Promise<void> => {
    const error = await registrationError(settings, plugin)
    t.ok(error instanceof JwtLoginSettingsError, `${name}: a JwtLoginSettingsError`)
    t.equal((error as JwtLoginSettingsError).path, path, `${name}: names ${path}`)
  }
  await refused('enabled without the option', 'passkeys/enabled', PASSKEY_SETTINGS, {})
  await refused('enabled without an origin', 'passkeys/origins', { ...PASSKEY_SETTINGS, origins: [] })
  await refused('an origin with a path', 'passkeys/origins/0', { ...PASSKEY_SETTINGS, origins: [`${ORIGIN}/login`] })
  await refused('a challenge living 11 minutes', 'passkeys/challengeLifetime', { ...PASSKEY_SETTINGS, challengeLifetime: '11m' })
  await refused('the option without a port', 'passkeys/port/listByUser', PASSKEY_SETTINGS, { passkeys: {} as never })
  await refused('the option as null', 'passkeys', PASSKEY_SETTINGS, { passkeys: null as never })
  const { delete: _missing, ...withoutDelete } = Object.fromEntries(['listByUser', 'findById', 'create', 'recordUse', 'rename', 'delete'].map(method => [method, async () => null]))
  await refused('a port without delete', 'passkeys/port/delete', PASSKEY_SETTINGS, { passkeys: { port: withoutDelete as never } })
  t.equal(await registrationError({ ...PASSKEY_SETTINGS, challengeLifetime: '10m' }, { passkeys: { port } }), null, 'ten minutes is allowed')
  t.equal(await registrationError({ enabled: false }, {}), null, 'off, no option is needed')
})

t.test('an android:apk-key-hash: origin is accepted, and enrols from the app', async (t) => {
  const app = 'android:apk-key-hash:Xk9sDfq3hFz0eRYLmV1cPw-uTn_GgAbCdEfGhIjKlMn'
  const kit = await buildPasskeyApp({ settings: { passkeys: { origins: [ORIGIN, app] } } })
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const res = await register(kit, token, authenticator().register(await creationOptions(kit, token), { origin: app, rpId: RP_ID }))
  t.equal(res.statusCode, 200, res.body)
})

t.test('a passkey port that throws: 503 / 201, and the log line has neither the credential id nor its public key', async (t) => {
  const lines: string[] = []
  const port = new ThrowingCreate()
  const app = await loggedApp(port, lines)
  t.teardown(() => app.close())
  const signIn = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  const token = signIn.json().data.jwt as string
  const headers = { authorization: `Bearer ${token}` }
  const options = (await app.inject({ method: 'POST', url: `${PREFIX}/passkeys/register/options`, headers, payload: {} })).json().data
  const response = authenticator().register(options)
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/passkeys/register`, headers, payload: { credential: response } })

  t.same(errorOf(res), [503, 201])
  t.equal(port.thrown.length, 1, 'create threw, quoting what it was given')
  const log = lines.join('')
  t.match(log, '"msg":"jwt-login: dependency failed"', 'the failure is logged')
  t.match(log, 'passkeys.port.create failed: Error (23505)', 'naming the port, the method, the class and the code')
  for (const value of [response.id, publicKeyOf(response)]) t.notOk(log.includes(value), `${value.slice(0, 12)}…: not in the log`)
  t.strictSame(await port.listByUser(1), [], 'nothing stored')
})

/** Creation options for a new passkey of the token's user (the route must answer 200). */
async function creationOptions (kit: PasskeyApp, token: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const res = await kit.post('/passkeys/register/options', {}, token)
  if (res.statusCode !== 200) throw new Error(`register/options: ${res.statusCode} ${res.body}`)
  return res.json().data
}

/** `POST /passkeys/register` with this answer (and name). */
async function register (kit: PasskeyApp, token: string, credential: RegistrationResponseJSON, name?: string): Promise<LightMyRequestResponse> {
  return await kit.post('/passkeys/register', { credential, ...(name === undefined ? {} : { name }) }, token)
}

/** A request of any method with the Bearer token. */
async function send (kit: PasskeyApp, method: 'GET' | 'PATCH' | 'DELETE', path: string, token: string, payload?: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return await kit.app.inject({ method, url: `${PREFIX}${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload }) })
}

/** The events of one name, as they come. */
function collect<E extends JwtLoginEventName> (app: FastifyInstance, event: E): Array<JwtLoginEventMap[E]> {
  const seen: Array<JwtLoginEventMap[E]> = []
  app.jwtLogin.events.on(event, (payload) => { seen.push(payload) })
  return seen
}

/** The COSE public key in a registration's attested credential data, base64url, as the port should store it. */
function publicKeyOf (response: RegistrationResponseJSON): string {
  const authData = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject)).get('authData')
  const key = parseAuthenticatorData(authData).credentialPublicKey
  if (key === undefined) throw new Error('no attested credential data')
  return isoBase64URL.fromBuffer(key)
}

/** The answer with another clientDataJSON (the text given, base64url-encoded). */
function withClientData (response: RegistrationResponseJSON, text: string): RegistrationResponseJSON {
  return { ...response, response: { ...response.response, clientDataJSON: isoBase64URL.fromUTF8String(text) } }
}

/**
 * The answer with a "packed" self-attestation instead of "none": the
 * signature over authenticatorData and the clientDataJSON hash is made by a
 * key other than the credential's, so the library answers not verified.
 */
function withForgedSelfAttestation (response: RegistrationResponseJSON): RegistrationResponseJSON {
  const authData = decodeAttestationObject(isoBase64URL.toBuffer(response.response.attestationObject)).get('authData')
  const clientDataHash = createHash('sha256').update(isoBase64URL.toBuffer(response.response.clientDataJSON)).digest()
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const sig = sign('sha256', Buffer.concat([authData, clientDataHash]), { key: privateKey, dsaEncoding: 'der' })
  const attestationObject = isoCBOR.encode(new Map<string, string | Uint8Array | Map<string, number | Uint8Array>>([
    ['fmt', 'packed'],
    ['attStmt', new Map<string, number | Uint8Array>([['alg', cose.COSEALG.ES256], ['sig', sig]])],
    ['authData', authData]
  ]))
  return { ...response, response: { ...response.response, attestationObject: isoBase64URL.fromBuffer(attestationObject) } }
}

/** Every passkey route answers 403 / 215, whatever the ceremony would have said. */
async function assertSwitchedOff (t: Tap, kit: PasskeyApp): Promise<void> {
  const token = await kit.token()
  const bob = (await kit.login({ email: 'bob@example.com', password: 'bob has a long password' })).json().data.jwt as string
  const registration = authenticator().register({
    rp: { id: RP_ID, name: 'jwt-login' },
    user: { id: 'MQ', name: 'alice', displayName: 'Alice' },
    challenge: isoBase64URL.fromUTF8String('no options were given'),
    pubKeyCredParams: [{ type: 'public-key', alg: -7 }]
  })
  const assertion = { id: registration.id, rawId: registration.id, type: 'public-key', response: { clientDataJSON: registration.response.clientDataJSON, authenticatorData: 'AA', signature: 'AA' }, clientExtensionResults: {} }
  const answers: Record<string, LightMyRequestResponse> = {
    'POST /passkeys/register/options': await kit.post('/passkeys/register/options', {}, token),
    'POST /passkeys/register': await register(kit, token, registration),
    'GET /passkeys': await send(kit, 'GET', '/passkeys', token),
    'PATCH /passkeys/:id': await send(kit, 'PATCH', `/passkeys/${registration.id}`, token, { name: 'x' }),
    'DELETE /passkeys/:id': await send(kit, 'DELETE', `/passkeys/${registration.id}`, token),
    'POST /auth/passkey/options': await kit.post('/auth/passkey/options'),
    'POST /auth/passkey': await kit.post('/auth/passkey', { credential: assertion }),
    'POST /auth/2fa/passkey/options': await kit.post('/auth/2fa/passkey/options', {}, bob),
    'POST /auth/step-up/options': await kit.post('/auth/step-up/options', {}, token),
    'POST /auth/step-up with a passkey': await kit.post('/auth/step-up', { passkey: assertion }, token)
  }
  for (const [route, res] of Object.entries(answers)) t.same(errorOf(res), [403, 215], route)
  t.equal((await kit.post('/auth/step-up', { password: ALICE.password }, token)).statusCode, 200, 'a step-up with a password still works')
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** What registering the plugin with these passkey settings and options threw, or `null` when it registered. */
async function registrationError (passkeys: Record<string, unknown>, plugin: Partial<JwtLoginOptions>): Promise<unknown> {
  return await registrationThrew({ settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, passkeys }, ...plugin })
}

/** A passkey store whose `create` fails as a database would, quoting the row it was given. */
class ThrowingCreate extends MemoryPasskeyStore {
  readonly thrown: Error[] = []

  override async create (passkey: StoredPasskey): Promise<boolean> {
    const error = Object.assign(new Error(`duplicate key value violates unique constraint "passkeys_pkey": (id, public_key)=(${passkey.id}, ${passkey.publicKey})`), { code: '23505' })
    this.thrown.push(error)
    throw error
  }
}

/** A host logging at trace level into `lines`, alice signed up, passkeys on over `port`. */
async function loggedApp (port: MemoryPasskeyStore, lines: string[]): Promise<FastifyInstance> {
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'trace', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(jwtLogin, {
    users,
    settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, passkeys: PASSKEY_SETTINGS },
    clock: testClock(),
    passkeys: { port }
  })
  await app.ready()
  return app
}

t.test('a user with a second factor enrols or deletes a passkey only after more than the password', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const interim = (await kit.login(BOB)).json().data.jwt as string
  const signedIn = (await kit.post('/auth/2fa', { code: await totpAt(kit.bobSecret, kit.clock()) }, interim)).json().data.jwt as string
  kit.clock.advance(11 * 60_000)
  const stepped = (await kit.post('/auth/step-up', { password: BOB.password }, signedIn)).json().data.jwt as string
  t.same(claimsOf(stepped).amr, ['pwd'], 'a step-up with the password alone')
  const refused = await kit.enrol(stepped, authenticator())
  t.same([refused.statusCode, refused.json().data.errorCode], [401, 220], 'not enough to enrol: whoever holds only the password could then skip the TOTP')
  t.equal(refused.headers['www-authenticate'], 'Bearer error="insufficient_user_authentication"')
  kit.clock.advance(60_000)
  const withCode = (await kit.post('/auth/step-up', { code: await totpAt(kit.bobSecret, kit.clock()) }, signedIn)).json().data.jwt as string
  t.same(claimsOf(withCode).amr, ['otp'])
  const enrolled = await kit.enrol(withCode, authenticator())
  t.equal(enrolled.statusCode, 200, 'a step-up with the TOTP is')
  const id = enrolled.json().data.passkey.id as string
  const del = await kit.app.inject({ method: 'DELETE', url: `${PREFIX}/passkeys/${id}`, headers: { authorization: `Bearer ${stepped}` } })
  t.same([del.statusCode, del.json().data.errorCode], [401, 220], 'nor to delete one')
  t.equal((await kit.passkeys.listByUser(kit.bobId)).length, 1, 'kept')
  const aliceStepped = (await kit.post('/auth/step-up', { password: ALICE.password }, await kit.token())).json().data.jwt as string
  t.equal((await kit.enrol(aliceStepped, authenticator())).statusCode, 200, 'a user without a second factor: the password is enough')
})

t.test('the credential id is the authenticator\'s: a response naming another id is refused, and so is an id over 1023 bytes', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const device = authenticator()
  const options = (await kit.post('/passkeys/register/options', {}, token)).json().data as PublicKeyCredentialCreationOptionsJSON
  const credential = device.register(options)
  const renamed = { ...credential, id: 'AAAAAAAAAAAAAAAAAAAAAA', rawId: 'AAAAAAAAAAAAAAAAAAAAAA' }
  const res = await kit.post('/passkeys/register', { credential: renamed }, token)
  t.same([res.statusCode, res.json().data.errorCode], [400, 221], 'another id than the authenticator data\'s')
  t.same(await kit.passkeys.listByUser(kit.aliceId), [], 'nothing stored')
})

t.test('a port that answers its dates as strings (a JSON column) is listed all the same', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  t.equal((await kit.enrol(token, authenticator())).statusCode, 200)
  const listByUser = kit.passkeys.listByUser.bind(kit.passkeys)
  kit.passkeys.listByUser = async (userId) => (await listByUser(userId)).map(passkey => ({ ...passkey, createdAt: passkey.createdAt.toISOString() as unknown as Date }))
  const res = await kit.app.inject({ method: 'GET', url: `${PREFIX}/passkeys`, headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().data.passkeys[0].created_at, new Date(kit.clock()).toISOString())
})
