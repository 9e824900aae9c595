// WebAuthn ceremonies with @simplewebauthn/server: the options, their single-use challenges in the state store, and the verification of what an authenticator answered.
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON
} from '@simplewebauthn/server'
import type { PasskeyPort, PasskeyUse, StoredPasskey } from '../adapters/passkeys.js'
import type { PublicUser } from '../adapters/users.js'
import type { Settings } from '../config/settings.js'
import type { Clock } from '../core/clock.js'
import { JwtLoginError } from '../core/errors.js'
import type { JwtLoginEvents } from '../services/events.js'
import type { StateStore } from '../store/types.js'

/**
 * What a challenge was issued for: a new passkey, a passwordless sign-in,
 * the second factor of a sign-in, or a step-up of a session. An answer is
 * accepted only for the purpose, user and session its challenge names.
 */
export type CeremonyPurpose = 'register' | 'sign_in' | 'second_factor' | 'step_up'

/** Who a challenge is for: a user and the session (or two-factor challenge) that asked; none for a passwordless sign-in. */
export interface CeremonyFor {
  userId?: number
  sessionId?: string
}

/** A challenge as stored: short names, one per ceremony. */
interface ChallengeRecord { p: CeremonyPurpose, u?: number, s?: string }

/** A verified assertion: the credential, whether the user was verified, and the use to record. */
export interface VerifiedAssertion {
  passkey: StoredPasskey
  userVerified: boolean
  use: PasskeyUse
}

/**
 * An assertion verified while its challenge stays (`verifyUnspent`): `spend`
 * consumes the challenge, once, and answers whether this call did.
 */
export interface UnspentAssertion extends VerifiedAssertion {
  spend: () => Promise<boolean>
}

/** The longest credential id WebAuthn allows: 1023 bytes. */
const MAX_CREDENTIAL_ID_BYTES = 1023

/** The new credential of a verified registration, ready for the port. */
export type VerifiedRegistration = StoredPasskey

const challengeKey = (challenge: string): string => `passkey:challenge:${createHash('sha256').update(challenge).digest('base64url')}`

/** The user handle a user's passkeys carry: the user id, as bytes (no name, no email). */
export function userHandleOf (userId: number): string {
  return Buffer.from(String(userId)).toString('base64url')
}

/** The challenge and origin a client's `clientDataJSON` names, or `null` when it is not readable JSON with both. */
function clientDataOf (clientDataJSON: string): { challenge: string, origin: string } | null {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const { challenge, origin } = data as { challenge?: unknown, origin?: unknown }
    return typeof challenge === 'string' && typeof origin === 'string' ? { challenge, origin } : null
  } catch {
    return null
  }
}

/** What the library checks a ceremony's answer against: its challenge, the origins, the relying party, and user verification when required. */
function expected (passkeys: Settings['passkeys'], challenge: string): { expectedChallenge: string, expectedOrigin: string[], expectedRPID: string, requireUserVerification: boolean } {
  return { expectedChallenge: challenge, expectedOrigin: passkeys.origins, expectedRPID: passkeys.rpId, requireUserVerification: passkeys.userVerification === 'required' }
}

/** The library's refusal of the relying party id (the authenticator data's hash of it). */
const RP_ID_MISMATCH = /RP ID/

type UserVerification = 'required' | 'preferred' | 'discouraged'

type Refusal = 'ERR_JWT_LOGIN_PASSKEY_REFUSED' | 'ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED'

/**
 * The passkey ceremonies over the host's `PasskeyPort`. Challenges are
 * random (the library's 32 bytes), live `passkeys.challengeLifetime`, and
 * are consumed in one atomic step before anything is verified: of two
 * answers to one challenge (a replay, or a race), one is looked at.
 */
export class Passkeys {
  readonly port: PasskeyPort
  readonly #store: StateStore
  readonly #clock: Clock
  readonly #events: JwtLoginEvents
  readonly #log: FastifyBaseLogger

  constructor (port: PasskeyPort, store: StateStore, clock: Clock, events: JwtLoginEvents, log: FastifyBaseLogger) {
    this.port = port
    this.#store = store
    this.#clock = clock
    this.#events = events
    this.#log = log
  }

  /** Creation options for a new passkey of `user`; the ones the user holds are excluded (one per authenticator). */
  async registrationOptions (settings: Settings, user: PublicUser, held: StoredPasskey[], sessionId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const { passkeys } = settings
    const options = await generateRegistrationOptions({
      rpName: passkeys.rpName,
      rpID: passkeys.rpId,
      userName: user.user_login,
      userDisplayName: user.display_name,
      userID: Buffer.from(String(user.ID)),
      timeout: passkeys.challengeLifetimeMs,
      attestationType: passkeys.attestation as 'none' | 'direct',
      excludeCredentials: held.map(passkey => ({ id: passkey.id, transports: passkey.transports as never })),
      // a discoverable credential, so it can sign in without a username
      authenticatorSelection: { residentKey: 'required', userVerification: passkeys.userVerification as UserVerification }
    })
    await this.#remember(settings, options.challenge, { p: 'register', u: user.ID, s: sessionId })
    return options
  }

  /** Request options: the user's credentials when the user is known, none (discoverable) for a passwordless sign-in. */
  async authenticationOptions (settings: Settings, purpose: Exclude<CeremonyPurpose, 'register'>, held: StoredPasskey[] | null, who: CeremonyFor = {}): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const { passkeys } = settings
    const options = await generateAuthenticationOptions({
      rpID: passkeys.rpId,
      timeout: passkeys.challengeLifetimeMs,
      userVerification: passkeys.userVerification as UserVerification,
      allowCredentials: held?.map(passkey => ({ id: passkey.id, transports: passkey.transports as never }))
    })
    await this.#remember(settings, options.challenge, { p: purpose, u: who.userId, s: who.sessionId })
    return options
  }

  /**
   * Verifies a new credential against its challenge (spent first), the
   * origins and the relying party id, and the AAGUID allow-list; answers
   * the credential to store. Nothing is stored here.
   */
  async verifyRegistration (settings: Settings, response: RegistrationResponseJSON, who: Required<CeremonyFor>, name: string): Promise<VerifiedRegistration> {
    const { passkeys } = settings
    const challenge = await this.#spend(settings, response.response.clientDataJSON, 'register', who, 'ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED')
    let verified
    try {
      verified = await verifyRegistrationResponse({ response, ...expected(passkeys, challenge) })
    } catch (error) {
      throw refusal(error, 'ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED')
    }
    if (!verified.verified) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED')
    const info = verified.registrationInfo
    // the id the port keys by is the authenticator's, and it must be the one the client says (and WebAuthn's size)
    if (info.credential.id !== response.id || Buffer.from(info.credential.id, 'base64url').length > MAX_CREDENTIAL_ID_BYTES) {
      throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REGISTRATION_REFUSED')
    }
    if (passkeys.aaguids.length > 0 && !passkeys.aaguids.includes(info.aaguid)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_AUTHENTICATOR_NOT_ALLOWED')
    return {
      id: info.credential.id,
      userId: who.userId,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: response.response.transports ?? [],
      deviceType: info.credentialDeviceType,
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
      name,
      createdAt: new Date(this.#clock()),
      lastUsedAt: null
    }
  }

  /**
   * Verifies an assertion: its challenge is spent first (for this purpose,
   * user and session), then the credential is found through the port (it
   * must be the expected user's, when one is expected), then the library
   * checks the signature, origin, relying party id and user presence (and
   * verification when required). The library is given a counter of 0, so
   * that a counter that did not go up is judged here: an event, and a
   * refusal only with `passkeys.refuseCounterRegression`.
   */
  async verifyAssertion (settings: Settings, response: AuthenticationResponseJSON, purpose: Exclude<CeremonyPurpose, 'register'>, who: CeremonyFor = {}): Promise<VerifiedAssertion> {
    const challenge = await this.#spend(settings, response.response.clientDataJSON, purpose, who, 'ERR_JWT_LOGIN_PASSKEY_REFUSED')
    return await this.#verify(settings, response, challenge, who)
  }

  /**
   * Verifies an assertion as `verifyAssertion` does, but only reads its
   * challenge: the caller spends it (`spend`) once its own single-use step
   * (a two-factor challenge's claim) is won, so of concurrent copies of one
   * right answer, the copies are turned away by that step, not counted as
   * wrong answers.
   */
  async verifyUnspent (settings: Settings, response: AuthenticationResponseJSON, purpose: Exclude<CeremonyPurpose, 'register'>, who: CeremonyFor): Promise<UnspentAssertion> {
    const { key, challenge } = await this.#read(settings, response.response.clientDataJSON, purpose, who, async (key) => await this.#store.get(key), 'ERR_JWT_LOGIN_PASSKEY_REFUSED')
    const verified = await this.#verify(settings, response, challenge, who)
    return { ...verified, spend: async () => await this.#store.consume(key) !== null }
  }

  async #verify (settings: Settings, response: AuthenticationResponseJSON, challenge: string, who: CeremonyFor): Promise<VerifiedAssertion> {
    const { passkeys } = settings
    const passkey = await this.port.findById(response.id)
    if (passkey === null || (who.userId !== undefined && passkey.userId !== who.userId)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REFUSED')
    const handle = response.response.userHandle
    if (handle !== undefined && handle !== userHandleOf(passkey.userId)) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REFUSED')
    let verified
    try {
      verified = await verifyAuthenticationResponse({
        response,
        ...expected(passkeys, challenge),
        credential: { id: passkey.id, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: 0, transports: passkey.transports as never }
      })
    } catch (error) {
      throw refusal(error, 'ERR_JWT_LOGIN_PASSKEY_REFUSED')
    }
    if (!verified.verified) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REFUSED')
    const info = verified.authenticationInfo
    const counter = this.#judgeCounter(settings, passkey, info.newCounter)
    return { passkey, userVerified: info.userVerified, use: { counter, backedUp: info.credentialBackedUp, lastUsedAt: new Date(this.#clock()) } }
  }

  /** A counter that should have gone up and did not: told, and refused when the settings say so; answers the counter to keep. */
  #judgeCounter (settings: Settings, passkey: StoredPasskey, presented: number): number {
    if ((presented > 0 || passkey.counter > 0) && presented <= passkey.counter) {
      this.#events.emit('passkey.counter_regressed', { userId: passkey.userId, passkeyId: passkey.id, stored: passkey.counter, presented })
      if (settings.passkeys.refuseCounterRegression) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_REFUSED')
      return passkey.counter
    }
    return presented
  }

  async #remember (settings: Settings, challenge: string, record: ChallengeRecord): Promise<void> {
    await this.#store.set(challengeKey(challenge), JSON.stringify(record), settings.passkeys.challengeLifetimeMs)
  }

  /**
   * Spends the challenge `clientDataJSON` names (one atomic consume) and
   * answers it (see `#read`).
   */
  async #spend (settings: Settings, clientDataJSON: string, purpose: CeremonyPurpose, who: CeremonyFor, refused: Refusal): Promise<string> {
    return (await this.#read(settings, clientDataJSON, purpose, who, async (key) => await this.#store.consume(key), refused)).challenge
  }

  /**
   * The challenge `clientDataJSON` names, taken by `take` (consumed, or
   * read), when it was issued for this purpose, user and session. An origin
   * not in `passkeys.origins` is named (400 / 217), after the take.
   */
  async #read (settings: Settings, clientDataJSON: string, purpose: CeremonyPurpose, who: CeremonyFor, take: (key: string) => Promise<string | null>, refused: Refusal): Promise<{ key: string, challenge: string }> {
    const data = clientDataOf(clientDataJSON)
    if (data === null) throw new JwtLoginError(refused)
    const key = challengeKey(data.challenge)
    const raw = await take(key)
    if (!settings.passkeys.origins.includes(data.origin)) {
      // an origin is no secret: the host learns which page ran the ceremony, and what to add to passkeys.origins
      this.#log.warn({ origin: data.origin.slice(0, 200), allowed: settings.passkeys.origins },
        'jwt-login: a passkey ceremony ran on an origin not in passkeys.origins (400 / 217); add it there if the page is yours')
      throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEY_ORIGIN')
    }
    if (raw === null) throw new JwtLoginError(refused)
    const record = JSON.parse(raw) as ChallengeRecord
    if (record.p !== purpose || record.u !== who.userId || record.s !== who.sessionId) throw new JwtLoginError(refused)
    return { key, challenge: data.challenge }
  }
}

/** The passkey ceremonies, when the host gave their port and the settings have them on; else 403 / 215. */
export function passkeysOn (passkeys: Passkeys | null, settings: Settings): Passkeys {
  if (passkeys === null || !settings.passkeys.enabled) throw new JwtLoginError('ERR_JWT_LOGIN_PASSKEYS_DISABLED')
  return passkeys
}

/** The library's refusal as ours: a relying party id named (400 / 218), anything else the ceremony's refusal. */
function refusal (error: unknown, refused: Refusal): JwtLoginError {
  // the library throws Errors; String() reads their message (and anything else it might throw) without a branch
  return new JwtLoginError(RP_ID_MISMATCH.test(String(error)) ? 'ERR_JWT_LOGIN_PASSKEY_RP_ID' : refused, { cause: error })
}
