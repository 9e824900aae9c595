// The software authenticator against @simplewebauthn/server itself: real ceremonies verify, forged ones fail.
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
  type WebAuthnCredential
} from '@simplewebauthn/server'
import { cose, decodeCredentialPublicKey, isoBase64URL, isoCBOR, parseAuthenticatorData } from '@simplewebauthn/server/helpers'
import t from 'tap'
import { challengeOf, SoftAuthenticator, type RegisterOptions } from '../helpers/authenticator.js'

const ORIGIN = 'https://login.example.test'
const RP_ID = 'example.test'
const AAGUID = 'adce0002-35bc-c60a-648b-0b25f1f05503'

/** Registration options from the library for `userName` on our RP. */
async function creationOptions (userName = 'alice', rpID = RP_ID): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return await generateRegistrationOptions({ rpName: 'Example', rpID, userName, attestationType: 'none' })
}

/** Verifies a registration the way a server would, with our origin and RP ID unless told. */
async function verifyRegistration (
  response: RegistrationResponseJSON,
  options: PublicKeyCredentialCreationOptionsJSON,
  expect: { origin?: string, rpId?: string, requireUserVerification?: boolean } = {}
): Promise<Awaited<ReturnType<typeof verifyRegistrationResponse>>> {
  return await verifyRegistrationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: expect.origin ?? ORIGIN,
    expectedRPID: expect.rpId ?? RP_ID,
    requireUserVerification: expect.requireUserVerification
  })
}

/** Registers a new credential on `authenticator` and answers it as the server would store it. */
async function enroll (authenticator: SoftAuthenticator, opts: RegisterOptions = {}, userName = 'alice'): Promise<WebAuthnCredential & { userHandle: string }> {
  const options = await creationOptions(userName)
  const verified = await verifyRegistration(authenticator.register(options, opts), options)
  if (!verified.verified) throw new Error('registration not verified')
  return { ...verified.registrationInfo.credential, userHandle: options.user.id }
}

/** One authentication ceremony against `credential`; the counter is updated as a server would. */
async function signIn (
  authenticator: SoftAuthenticator,
  credential: WebAuthnCredential,
  opts: Parameters<SoftAuthenticator['authenticate']>[1] = {},
  expect: { origin?: string, rpId?: string } = {}
): Promise<Awaited<ReturnType<typeof verifyAuthenticationResponse>>> {
  const options = await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [{ id: credential.id }] })
  const result = await verifyAuthenticationResponse({
    response: authenticator.authenticate(options, opts),
    expectedChallenge: options.challenge,
    expectedOrigin: expect.origin ?? ORIGIN,
    expectedRPID: expect.rpId ?? RP_ID,
    credential
  })
  if (result.verified) credential.counter = result.authenticationInfo.newCounter
  return result
}

t.test('a registration verifies with the fields the authenticator put in it', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const options = await creationOptions()
  const response = authenticator.register(options, { aaguid: AAGUID })
  const result = await verifyRegistration(response, options)
  t.equal(result.verified, true)
  const info = result.registrationInfo
  t.equal(info?.fmt, 'none')
  t.equal(info?.aaguid, AAGUID)
  t.equal(info?.credential.id, response.id)
  t.equal(info?.credential.counter, 0, 'synced passkeys count nothing')
  t.same(info?.credential.transports, ['internal', 'hybrid'])
  t.equal(info?.userVerified, true)
  t.equal(info?.credentialDeviceType, 'multiDevice')
  t.equal(info?.credentialBackedUp, true)
  t.equal(info?.rpID, RP_ID)
  t.equal(info?.origin, ORIGIN)
  t.same(authenticator.credentials, [response.id])
  t.equal(challengeOf(response), options.challenge)
  const idBytes = isoBase64URL.toBuffer(response.id).length
  t.ok(idBytes >= 16 && idBytes <= 32, `credential id of ${idBytes} bytes`)
})

t.test('the JSON form carries the same key and authenticator data as the attestation object', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const response = authenticator.register(await creationOptions(), { transports: ['usb'] })
  const attestation = isoCBOR.decodeFirst<Map<string, unknown>>(isoBase64URL.toBuffer(response.response.attestationObject))
  t.equal(attestation.get('fmt'), 'none')
  t.equal((attestation.get('attStmt') as Map<string, unknown>).size, 0)
  const authData = attestation.get('authData') as Uint8Array<ArrayBuffer>
  t.equal(response.response.authenticatorData, isoBase64URL.fromBuffer(authData))
  const parsed = parseAuthenticatorData(authData)
  t.same(parsed.flags, { up: true, uv: true, be: true, bs: true, at: true, ed: false, flagsInt: 0x5d })
  t.equal(response.response.publicKeyAlgorithm, -7)
  const spki = createPublicKey({ key: Buffer.from(response.response.publicKey as string, 'base64url'), format: 'der', type: 'spki' })
  const coseKey = decodeCredentialPublicKey(parsed.credentialPublicKey as Uint8Array<ArrayBuffer>) as cose.COSEPublicKeyEC2
  t.equal(coseKey.get(cose.COSEKEYS.crv), cose.COSECRV.P256)
  const jwk = spki.export({ format: 'jwk' })
  const text = (bytes: Uint8Array<ArrayBuffer> | undefined): string => isoBase64URL.fromBuffer(bytes as Uint8Array<ArrayBuffer>)
  t.same({ x: text(coseKey.get(cose.COSEKEYS.x)), y: text(coseKey.get(cose.COSEKEYS.y)) }, { x: jwk.x, y: jwk.y }, 'the SPKI public key is the COSE one')
  t.same(response.response.transports, ['usb'])
  t.equal(response.type, 'public-key')
  t.equal(response.authenticatorAttachment, 'platform')
  t.same(response.clientExtensionResults, {})
})

t.test('backup flags and user verification are as told', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const options = await creationOptions()
  const singleDevice = await verifyRegistration(authenticator.register(options, { backupEligible: false }), options)
  t.equal(singleDevice.registrationInfo?.credentialDeviceType, 'singleDevice')
  t.equal(singleDevice.registrationInfo?.credentialBackedUp, false)
  const notYetBackedUp = await verifyRegistration(authenticator.register(options, { backedUp: false }), options)
  t.equal(notYetBackedUp.registrationInfo?.credentialDeviceType, 'multiDevice')
  t.equal(notYetBackedUp.registrationInfo?.credentialBackedUp, false)

  const unverified = authenticator.register(options, { userVerified: false })
  await t.rejects(verifyRegistration(unverified, options), /User verification was required/)
  const lenient = await verifyRegistration(unverified, options, { requireUserVerification: false })
  t.equal(lenient.registrationInfo?.userVerified, false)
})

t.test('an assertion verifies, with the user handle of the registration', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const credential = await enroll(authenticator)
  const options = await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [{ id: credential.id }] })
  const response = authenticator.authenticate(options)
  t.equal(response.id, credential.id)
  t.equal(response.response.userHandle, credential.userHandle)
  t.equal(challengeOf(response), options.challenge)
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
    credential
  })
  t.equal(result.verified, true)
  t.equal(result.authenticationInfo.newCounter, 0)
  t.equal(result.authenticationInfo.userVerified, true)
  t.equal(result.authenticationInfo.credentialBackedUp, true)
  t.equal(result.authenticationInfo.rpID, RP_ID)
  await t.rejects(signIn(authenticator, credential, { userVerified: false }), /User verification required/)
})

t.test('assertion flags follow the options', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const credential = await enroll(authenticator)
  const options = await generateAuthenticationOptions({ rpID: RP_ID })
  const response = authenticator.authenticate(options, { userVerified: false, backedUp: false, omitUserHandle: true })
  t.equal(response.response.userHandle, undefined)
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
    credential,
    requireUserVerification: false
  })
  t.equal(result.verified, true)
  t.equal(result.authenticationInfo.userVerified, false)
  t.equal(result.authenticationInfo.credentialBackedUp, false)
})

t.test("'increasing' counters go up with each use, and a forced lower one is refused", async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const credential = await enroll(authenticator, { counter: 'increasing' })
  t.equal(credential.counter, 0)
  t.equal((await signIn(authenticator, credential)).authenticationInfo.newCounter, 1)
  t.equal((await signIn(authenticator, credential)).authenticationInfo.newCounter, 2)
  await t.rejects(signIn(authenticator, credential, { counter: 1 }), /counter value 1 was lower than expected 2/)
  t.equal((await signIn(authenticator, credential)).authenticationInfo.newCounter, 4, 'the forced answer still used the device once')

  const synced = await enroll(authenticator)
  t.equal((await signIn(authenticator, synced)).authenticationInfo.newCounter, 0)
  t.equal((await signIn(authenticator, synced)).authenticationInfo.newCounter, 0)
  t.equal((await signIn(authenticator, synced, { counter: 7 })).authenticationInfo.newCounter, 7)
})

t.test('the credential used is the one asked for, else the first of the RP the options allow', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const elsewhere = authenticator.register(await creationOptions('alice', 'other.test'), {})
  const first = await enroll(authenticator, {}, 'alice')
  const second = await enroll(authenticator, {}, 'bob')
  t.same(authenticator.credentials, [elsewhere.id, first.id, second.id])

  const discoverable = await generateAuthenticationOptions({ rpID: RP_ID })
  t.equal(authenticator.authenticate(discoverable).id, first.id, 'any of the RP when nothing is listed')
  t.equal(authenticator.authenticate(discoverable).response.userHandle, first.userHandle)
  const allowSecond = await generateAuthenticationOptions({ rpID: RP_ID, allowCredentials: [{ id: second.id }] })
  t.equal(authenticator.authenticate(allowSecond).id, second.id)
  t.equal(authenticator.authenticate(discoverable, { credentialId: second.id }).id, second.id)
  t.throws(() => authenticator.authenticate(discoverable, { credentialId: 'nope' }), /no credential nope/)

  authenticator.forget(second.id)
  t.same(authenticator.credentials, [elsewhere.id, first.id])
  t.throws(() => authenticator.authenticate(allowSecond), /no credential for example\.test that the options allow/)
  authenticator.forget(first.id)
  t.throws(() => authenticator.authenticate(discoverable), /no credential for example\.test/)
})

t.test('the RP ID comes from the constructor, else the options, else the origin host', async (t) => {
  const fixed = new SoftAuthenticator({ origin: ORIGIN, rpId: RP_ID })
  const options = await creationOptions()
  const otherRp = { ...options, rp: { ...options.rp, id: 'other.test' } }
  t.equal((await verifyRegistration(fixed.register(otherRp), options)).verified, true)

  const fromHost = new SoftAuthenticator({ origin: ORIGIN })
  const noRpId = { ...options, rp: { name: options.rp.name } }
  t.equal((await verifyRegistration(fromHost.register(noRpId), options, { rpId: 'login.example.test' })).verified, true)
  const assertion = fromHost.authenticate({ challenge: options.challenge })
  t.equal(assertion.id, fromHost.credentials[0])
})

t.test('a malformed AAGUID is refused', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const options = await creationOptions()
  t.throws(() => authenticator.register(options, { aaguid: 'not-a-uuid' }), /not a UUID/)
})

t.test('forged ceremonies fail in the library', async (t) => {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN })
  const options = await creationOptions()
  await t.rejects(verifyRegistration(authenticator.register(options, { origin: 'https://evil.test' }), options), /origin "https:\/\/evil\.test"/)
  await t.rejects(verifyRegistration(authenticator.register(options, { rpId: 'evil.test' }), options), /Unexpected RP ID hash/)

  const credential = await enroll(authenticator)
  await t.rejects(signIn(authenticator, credential, { origin: 'https://evil.test' }), /origin "https:\/\/evil\.test"/)
  await t.rejects(signIn(authenticator, credential, { rpId: 'evil.test' }), /Unexpected RP ID hash/)
  const { privateKey: foreign } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const forged = await signIn(authenticator, credential, { signWith: foreign })
  t.equal(forged.verified, false, 'a signature by another key does not verify')
  t.equal((await signIn(authenticator, credential, { signWith: 'self' })).verified, true)
})
