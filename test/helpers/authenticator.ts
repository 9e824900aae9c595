// A software WebAuthn authenticator for the tests: real keys, real CBOR, real ES256 signatures, nothing mocked.
import { createHash, generateKeyPairSync, randomBytes, randomInt, sign, type KeyObject } from 'node:crypto'
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON
} from '@simplewebauthn/server'
import { cose, decodeClientDataJSON, isoCBOR } from '@simplewebauthn/server/helpers'

/** Authenticator data flag bits (WebAuthn §6.1). */
const FLAG = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const
const ZERO_AAGUID = '00000000-0000-0000-0000-000000000000'

/** How a credential's signature counter moves: synced passkeys keep it at 0, security keys count up. */
export type CounterMode = 'increasing' | 'zero'

/** One credential the authenticator made, with everything it needs to sign for it later. */
interface SoftCredential {
  id: string
  privateKey: KeyObject
  rpId: string
  userHandle: string
  counterMode: CounterMode
  counter: number
  backupEligible: boolean
  backedUp: boolean
}

/** What `register` may be told, mostly to forge or shape what a real device would answer. */
export interface RegisterOptions {
  /** The UV flag (default true). */
  userVerified?: boolean
  /** The origin written into clientDataJSON (default: the authenticator's). */
  origin?: string
  /** The RP ID hashed into authenticatorData (default: the authenticator's or the options'); set it to forge a wrong one. */
  rpId?: string
  /** The BE flag (default true, as a synced passkey). */
  backupEligible?: boolean
  /** The BS flag (default: the same as `backupEligible`). */
  backedUp?: boolean
  /** The authenticator model as a UUID (default all zeros). */
  aaguid?: string
  /** Whether the signature counter counts up with each use (default 'zero', as synced passkeys). */
  counter?: CounterMode
  /** The transports reported to the server (default ['internal', 'hybrid']). */
  transports?: string[]
  /** The credential id's length in bytes (default: 16 to 32 at random; WebAuthn allows up to 1023). */
  idBytes?: number
}

/** What `authenticate` may be told, mostly to forge or shape what a real device would answer. */
export interface AuthenticateOptions {
  /** The credential to use (default: the first of this RP's that `allowCredentials` allows, any of them when it is empty). */
  credentialId?: string
  /** The UV flag (default true). */
  userVerified?: boolean
  /** The origin written into clientDataJSON (default: the authenticator's). */
  origin?: string
  /** The RP ID hashed into authenticatorData (default: the credential's); set it to forge a wrong one. */
  rpId?: string
  /** A signature counter for this one answer, whatever the credential's own counter says. */
  counter?: number
  /** The BS flag (default: the credential's). */
  backedUp?: boolean
  /** Leaves `userHandle` out of the response, as authenticators may for non-discoverable credentials. */
  omitUserHandle?: boolean
  /** The private key to sign with (default 'self', the credential's own); another key forges a bad signature. */
  signWith?: 'self' | KeyObject
}

/**
 * A passkey authenticator in software, so that tests drive real WebAuthn
 * ceremonies against @simplewebauthn/server: it answers creation options
 * with a "none" attestation of a fresh ES256 key, and request options with
 * an assertion signed by that key. Options let a test forge what a hostile
 * or unusual device would send (wrong origin or RP ID, foreign key,
 * replayed counter, missing user handle).
 */
export class SoftAuthenticator {
  readonly #origin: string
  readonly #rpId: string | undefined
  readonly #credentials = new Map<string, SoftCredential>()

  /** `rpId` defaults to the one in the options each ceremony answers (then to the origin's host). */
  constructor (options: { origin: string, rpId?: string }) {
    this.#origin = options.origin
    this.#rpId = options.rpId
  }

  /** The ids (base64url) of the credentials this authenticator holds, oldest first. */
  get credentials (): string[] {
    return [...this.#credentials.keys()]
  }

  /** Deletes a credential, as a user removing a passkey from their device. */
  forget (id: string): void {
    this.#credentials.delete(id)
  }

  /** Answers `navigator.credentials.create()`: makes and keeps a new credential, and returns its registration response. */
  register (options: PublicKeyCredentialCreationOptionsJSON, opts: RegisterOptions = {}): RegistrationResponseJSON {
    const rpId = opts.rpId ?? this.#rpIdFor(options.rp.id)
    const backupEligible = opts.backupEligible ?? true
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const credential: SoftCredential = {
      id: randomBytes(opts.idBytes ?? randomInt(16, 33)).toString('base64url'),
      privateKey,
      rpId,
      userHandle: options.user.id,
      counterMode: opts.counter ?? 'zero',
      counter: 0,
      backupEligible,
      backedUp: opts.backedUp ?? backupEligible
    }
    const flags = flagsOf({ userVerified: opts.userVerified, backupEligible, backedUp: credential.backedUp }) | FLAG.AT
    const authData = Buffer.concat([
      authDataHead(rpId, flags, credential.counter),
      attestedCredentialData(opts.aaguid ?? ZERO_AAGUID, credential.id, publicKey)
    ])
    const attestationObject = isoCBOR.encode(new Map<string, string | Uint8Array | Map<string, string>>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData]
    ]))
    this.#credentials.set(credential.id, credential)
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientData('webauthn.create', options.challenge, opts.origin ?? this.#origin),
        attestationObject: base64url(attestationObject),
        authenticatorData: base64url(authData),
        transports: opts.transports ?? ['internal', 'hybrid'],
        publicKeyAlgorithm: cose.COSEALG.ES256,
        publicKey: base64url(publicKey.export({ format: 'der', type: 'spki' }))
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform'
    }
  }

  /** Answers `navigator.credentials.get()`: signs the challenge with one of its credentials and returns the assertion. */
  authenticate (options: PublicKeyCredentialRequestOptionsJSON, opts: AuthenticateOptions = {}): AuthenticationResponseJSON {
    const credential = this.#pick(options, opts.credentialId)
    if (credential.counterMode === 'increasing') credential.counter += 1
    const flags = flagsOf({
      userVerified: opts.userVerified,
      backupEligible: credential.backupEligible,
      backedUp: opts.backedUp ?? credential.backedUp
    })
    const authData = authDataHead(opts.rpId ?? credential.rpId, flags, opts.counter ?? credential.counter)
    const clientDataJSON = clientData('webauthn.get', options.challenge, opts.origin ?? this.#origin)
    const signed = Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))])
    const key = opts.signWith === undefined || opts.signWith === 'self' ? credential.privateKey : opts.signWith
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: base64url(authData),
        signature: base64url(sign('sha256', signed, { key, dsaEncoding: 'der' })),
        ...(opts.omitUserHandle === true ? {} : { userHandle: credential.userHandle })
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform'
    }
  }

  /** The RP ID a ceremony uses when not forged: ours if set, else the options', else the origin's host (as browsers do). */
  #rpIdFor (optionsRpId: string | undefined): string {
    return this.#rpId ?? optionsRpId ?? new URL(this.#origin).hostname
  }

  /** The credential to assert with: the one asked for, else the first of the RP's that the options allow. */
  #pick (options: PublicKeyCredentialRequestOptionsJSON, credentialId: string | undefined): SoftCredential {
    if (credentialId !== undefined) {
      const chosen = this.#credentials.get(credentialId)
      if (chosen === undefined) throw new Error(`SoftAuthenticator holds no credential ${credentialId}`)
      return chosen
    }
    const rpId = this.#rpIdFor(options.rpId)
    const allowed = new Set((options.allowCredentials ?? []).map(descriptor => descriptor.id))
    const found = [...this.#credentials.values()]
      .find(credential => credential.rpId === rpId && (allowed.size === 0 || allowed.has(credential.id)))
    if (found === undefined) throw new Error(`SoftAuthenticator holds no credential for ${rpId} that the options allow`)
    return found
  }
}

/** The challenge a response answers (decoded from its clientDataJSON), to find the ceremony it belongs to. */
export function challengeOf (response: RegistrationResponseJSON | AuthenticationResponseJSON): string {
  return decodeClientDataJSON(response.response.clientDataJSON).challenge
}

/** The flags byte without AT: UP always, UV, BE and BS as told. */
function flagsOf (flags: { userVerified: boolean | undefined, backupEligible: boolean, backedUp: boolean }): number {
  return FLAG.UP |
    (flags.userVerified === false ? 0 : FLAG.UV) |
    (flags.backupEligible ? FLAG.BE : 0) |
    (flags.backedUp ? FLAG.BS : 0)
}

/** The first 37 bytes of authenticatorData: SHA-256(rpId), flags, and the counter as 4 bytes big-endian. */
function authDataHead (rpId: string, flags: number, counter: number): Buffer {
  const head = Buffer.alloc(37)
  sha256(Buffer.from(rpId, 'utf8')).copy(head, 0)
  head.writeUInt8(flags, 32)
  head.writeUInt32BE(counter, 33)
  return head
}

/** Attested credential data: AAGUID, credential id length (2 bytes) and id, then the COSE public key. */
function attestedCredentialData (aaguid: string, credentialId: string, publicKey: KeyObject): Buffer {
  const id = Buffer.from(credentialId, 'base64url')
  const idLength = Buffer.alloc(2)
  idLength.writeUInt16BE(id.length)
  return Buffer.concat([aaguidBytes(aaguid), idLength, id, coseEs256(publicKey)])
}

/** The 16 bytes of a UUID. */
function aaguidBytes (uuid: string): Buffer {
  const hex = uuid.replaceAll('-', '')
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a UUID: ${uuid}`)
  return Buffer.from(hex, 'hex')
}

/** A P-256 public key as a CBOR-encoded COSE_Key (kty EC2, alg ES256, crv P-256, x, y). */
function coseEs256 (publicKey: KeyObject): Uint8Array {
  const { x, y } = publicKey.export({ format: 'jwk' })
  return isoCBOR.encode(new Map<number, number | Uint8Array>([
    [cose.COSEKEYS.kty, cose.COSEKTY.EC2],
    [cose.COSEKEYS.alg, cose.COSEALG.ES256],
    [cose.COSEKEYS.crv, cose.COSECRV.P256],
    [cose.COSEKEYS.x, Buffer.from(x as string, 'base64url')],
    [cose.COSEKEYS.y, Buffer.from(y as string, 'base64url')]
  ]))
}

/** clientDataJSON as a browser writes it, base64url-encoded. */
function clientData (type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): string {
  return base64url(Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8'))
}

function sha256 (data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest()
}

function base64url (data: Uint8Array): string {
  return Buffer.from(data).toString('base64url')
}
