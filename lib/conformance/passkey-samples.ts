// What the passkey suite stores and how it reads it back: credentials with every kind of field, and the suite's fixture.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { PasskeyPort, StoredPasskey } from '../adapters/passkeys.js'
import { inSuiteRealm } from './realm.js'
import type { Rule } from './runner.js'
import { nextUserId } from './port-helpers.js'

/** What `create` resolves: the port, and how the suite makes its users exist. */
export interface PasskeyPortFixture {
  port: PasskeyPort
  /**
   * Creates the user with this id, for a port whose table refers to its
   * users (a foreign key); without it the suite stores credentials of users
   * it never announced. The suite picks the ids (positive integers below
   * 2^31, new ones on every run) and calls this before it first uses one:
   * it must create the user, never find one, and a user who already has
   * credentials is refused before anything is written.
   */
  user?: (userId: number) => Promise<unknown>
}

/** What the rules read of the options. */
export interface PasskeyPortSettings {
  parallelism: number
}

export type PasskeyRule = Rule<PasskeyPortFixture, PasskeyPortSettings>

/** The highest signature counter an authenticator can report: an unsigned 32-bit number. */
export const MAX_COUNTER = 2 ** 32 - 1

/** The longest credential id WebAuthn allows, 1,023 bytes, as base64url: 1,364 characters. */
export const LONGEST_ID_BYTES = 1023

/** An AAGUID of an authenticator model (any well-formed one does). */
const AAGUID = 'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4'

/** The start of a long name: accents, a decomposed é, Cyrillic, CJK, emoji (beyond 16 bits) and a zero-width joiner. */
const UNICODE_START = 'Clé de Zoë – ключ 鍵 e\u0301 🔑 👩\u200d💻 ß'

/** A name of exactly 64 characters (code points; more UTF-16 units), none of them ASCII at its end. */
export const UNICODE_NAME = UNICODE_START + '·'.repeat(62 - [...UNICODE_START].length) + 'Ωß'

/** A fresh credential id of `bytes` random bytes: no run meets another's. */
export function credentialId (bytes = 16): string {
  return randomBytes(bytes).toString('base64url')
}

/** A credential of `userId` with a fresh random id; `overrides` change any field. */
export function passkeyOf (userId: number, overrides: Partial<StoredPasskey> = {}): StoredPasskey {
  return {
    id: credentialId(),
    userId,
    publicKey: randomBytes(77).toString('base64url'),
    counter: 0,
    transports: ['internal', 'hybrid'],
    deviceType: 'multiDevice',
    backupEligible: true,
    backedUp: true,
    aaguid: AAGUID,
    name: 'iPhone',
    createdAt: new Date('2024-05-01T10:00:00.123Z'),
    lastUsedAt: null,
    ...overrides
  }
}

/**
 * A user of this run, made to exist through the fixture. Refused when the
 * user has credentials already: `user` found a real user, whom the rules
 * would give credentials of their own.
 */
export async function newUser (fixture: PasskeyPortFixture): Promise<number> {
  const userId = nextUserId()
  await fixture.user?.(userId)
  const held = await fixture.port.listByUser(userId)
  if (Array.isArray(held) && held.length > 0) throw new Error(`user ${userId} already has credentials (${held.length}): the suite only writes to users it made`)
  return userId
}

/** Two users of this run. */
export async function twoUsers (fixture: PasskeyPortFixture): Promise<[number, number]> {
  return [await newUser(fixture), await newUser(fixture)]
}

const FIELDS: ReadonlyArray<keyof StoredPasskey> = [
  'id', 'userId', 'publicKey', 'counter', 'transports', 'deviceType', 'backupEligible', 'backedUp', 'aaguid', 'name', 'createdAt', 'lastUsedAt'
]

/** The fields of `StoredPasskey` of what a port answered: a host's own columns beside them are its business. */
export function fieldsOf (passkey: StoredPasskey | null | undefined): Partial<StoredPasskey> | null | undefined {
  if (passkey === null || passkey === undefined) return passkey
  return Object.fromEntries(FIELDS.filter(field => field in passkey).map(field => [field, passkey[field]]))
}

/** Checks that the port answered `expected`, field by field (dates as Dates, transports as an array). */
export function assertStored (found: StoredPasskey | null | undefined, expected: StoredPasskey, what: string): void {
  assert.deepEqual(inSuiteRealm(fieldsOf(found)), expected, `${what}: every field as it was stored`)
}

/** Checks a list the port answered against the credentials expected there, in order. */
export function assertListed (found: StoredPasskey[], expected: StoredPasskey[], what: string): void {
  assert.ok(Array.isArray(found), `${what}: listByUser answered ${typeof found}, not an array`)
  assert.deepEqual(inSuiteRealm(found.map(fieldsOf)), expected, `${what}: the credentials, in order, every field as stored`)
}
