// The passkey port's conformance suite: what every PasskeyPort (in memory, on PostgreSQL, a host's own) must do.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import type { PasskeyPort, PasskeyUse, StoredPasskey } from '../../lib/adapters/passkeys.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** A port to test, two users it may store credentials for, and what to do once a test is over. */
export interface PasskeyPortUnderTest {
  port: PasskeyPort
  /** Two distinct existing users (a SQL table has a foreign key to its users). */
  userIds: [number, number]
  cleanup?: () => Promise<void>
}

/** The highest signature counter an authenticator can report: an unsigned 32-bit number. */
export const MAX_COUNTER = 2 ** 32 - 1

/** An AAGUID of an authenticator model (any well-formed one does). */
const AAGUID = 'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4'

/** The start of a long name: accents, a decomposed é, Cyrillic, CJK, emoji (beyond 16 bits) and a zero-width joiner. */
const UNICODE_START = 'Clé de Zoë – ключ 鍵 e\u0301 🔑 👩\u200d💻 ß'

/** A name of exactly 64 characters (code points; more UTF-16 units), none of them ASCII at its end. */
export const UNICODE_NAME = UNICODE_START + '·'.repeat(62 - [...UNICODE_START].length) + 'Ωß'

/** A credential of `userId` with a fresh random id; `overrides` change any field. */
export function passkeyOf (userId: number, overrides: Partial<StoredPasskey> = {}): StoredPasskey {
  return {
    id: randomBytes(16).toString('base64url'),
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

/** A case of the suite: a subtest of `parent` with its own port and users. */
type Case = (title: string, body: (t: Tap, port: PasskeyPort, alice: number, bob: number) => Promise<void>) => void

/** How the suite's cases are declared under `parent`, each with what `make` answers it. */
function caseOf (parent: Tap, make: () => Promise<PasskeyPortUnderTest>): Case {
  return (title, body) => {
    parent.test(title, async (t) => {
      const { port, userIds: [alice, bob], cleanup } = await make()
      if (cleanup !== undefined) t.teardown(cleanup)
      await body(t, port, alice, bob)
    })
  }
}

/**
 * The suite, as one subtest `name` of `t`. Each case calls `make` for a
 * port and two users of its own, and `cleanup` (if any) when it ends.
 * Credential ids are random, so a `make` that answers one shared store
 * still sees no other case's credentials, as long as its users are fresh.
 */
export function passkeyPortConformance (
  t: Tap,
  name: string,
  make: () => Promise<PasskeyPortUnderTest>
): void {
  t.test(name, async (t) => {
    const conformance = caseOf(t, make)
    conformance('create and findById round-trip every field', async (t, port, alice, bob) => {
      const fresh = passkeyOf(alice, { counter: MAX_COUNTER, transports: ['usb', 'nfc', 'ble'], deviceType: 'multiDevice', backupEligible: true, backedUp: false })
      const used = passkeyOf(bob, {
        counter: 0,
        transports: [],
        deviceType: 'singleDevice',
        backupEligible: false,
        backedUp: false,
        aaguid: '00000000-0000-0000-0000-000000000000',
        name: 'YubiKey 5',
        createdAt: new Date('2023-01-02T03:04:05.006Z'),
        lastUsedAt: new Date('2024-06-07T08:09:10.011Z')
      })
      for (const passkey of [fresh, used]) {
        t.equal(await port.create(passkey), true, `created ${passkey.name}`)
        const found = await port.findById(passkey.id)
        t.strictSame(found, passkey, `${passkey.name}: every field as stored`)
        t.ok(found?.createdAt instanceof Date, 'createdAt is a Date')
        t.ok(Array.isArray(found?.transports), 'transports is an array')
      }
      t.ok((await port.findById(used.id))?.lastUsedAt instanceof Date, 'lastUsedAt is a Date once set')
      t.equal(await port.findById(passkeyOf(alice).id), null, 'an unknown id: null')
    })

    conformance('a duplicate id is refused, for the same user and for another, and changes nothing', async (t, port, alice, bob) => {
      const original = passkeyOf(alice)
      t.equal(await port.create(original), true)
      t.equal(await port.create({ ...original, name: 'Another', counter: 5 }), false, 'the same user')
      t.equal(await port.create({ ...passkeyOf(bob), id: original.id }), false, 'another user')
      t.strictSame(await port.findById(original.id), original, 'the first credential, unchanged')
      t.strictSame(await port.listByUser(alice), [original], 'one credential for the user')
      t.strictSame(await port.listByUser(bob), [], 'nothing stored for the other user')
    })

    conformance('listByUser answers only that user\'s credentials, oldest first', async (t, port, alice, bob) => {
      t.strictSame(await port.listByUser(alice), [], 'none yet')
      const newest = passkeyOf(alice, { name: 'newest', createdAt: new Date('2024-03-01T00:00:00.000Z') })
      const oldest = passkeyOf(alice, { name: 'oldest', createdAt: new Date('2024-01-01T00:00:00.000Z') })
      const middle = passkeyOf(alice, { name: 'middle', createdAt: new Date('2024-02-01T00:00:00.000Z') })
      const bobs = passkeyOf(bob, { name: 'bob\'s', createdAt: new Date('2024-01-15T00:00:00.000Z') })
      for (const passkey of [newest, bobs, oldest, middle]) t.equal(await port.create(passkey), true)
      t.strictSame(await port.listByUser(alice), [oldest, middle, newest], 'the user\'s three, oldest first')
      t.strictSame(await port.listByUser(bob), [bobs], 'the other user\'s one')
    })

    conformance('recordUse changes the counter, the backup state and the last use, nothing else', async (t, port, alice) => {
      const passkey = passkeyOf(alice, { counter: 41, backedUp: false })
      const other = passkeyOf(alice, { name: 'other' })
      await port.create(passkey)
      await port.create(other)
      const use: PasskeyUse = { counter: 42, backedUp: true, lastUsedAt: new Date('2024-07-08T09:10:11.012Z') }
      t.equal(await port.recordUse(passkey.id, use), undefined)
      t.strictSame(await port.findById(passkey.id), { ...passkey, ...use }, 'the use recorded, nothing else changed')
      t.strictSame(await port.findById(other.id), other, 'another credential, unchanged')

      const later: PasskeyUse = { counter: MAX_COUNTER, backedUp: false, lastUsedAt: new Date('2024-07-09T00:00:00.000Z') }
      await port.recordUse(passkey.id, later)
      t.strictSame(await port.findById(passkey.id), { ...passkey, ...later }, 'a second use replaces the first')

      const late: PasskeyUse = { counter: 7, backedUp: true, lastUsedAt: new Date('2024-07-10T00:00:00.000Z') }
      await port.recordUse(passkey.id, late)
      t.strictSame(await port.findById(passkey.id), { ...passkey, ...late, counter: MAX_COUNTER }, 'a use that finished late never lowers the counter')
    })

    conformance('recordUse on an unknown id resolves and changes nothing', async (t, port, alice) => {
      const passkey = passkeyOf(alice)
      await port.create(passkey)
      await t.resolves(port.recordUse(passkeyOf(alice).id, { counter: 3, backedUp: false, lastUsedAt: new Date() }))
      t.strictSame(await port.findById(passkey.id), passkey)
    })

    conformance('rename acts only on the user\'s own credential', async (t, port, alice, bob) => {
      const passkey = passkeyOf(alice, { name: 'old name' })
      await port.create(passkey)
      t.equal(await port.rename(bob, passkey.id, 'stolen'), false, 'another user\'s: false')
      t.strictSame(await port.findById(passkey.id), passkey, 'and unchanged')
      t.equal(await port.rename(alice, passkeyOf(alice).id, 'nothing'), false, 'an unknown id: false')
      t.equal(await port.rename(alice, passkey.id, 'new name'), true, 'its own: true')
      t.strictSame(await port.findById(passkey.id), { ...passkey, name: 'new name' }, 'and renamed, nothing else')
    })

    conformance('delete acts only on the user\'s own credential', async (t, port, alice, bob) => {
      const passkey = passkeyOf(alice)
      const kept = passkeyOf(alice, { name: 'kept' })
      await port.create(passkey)
      await port.create(kept)
      t.equal(await port.delete(bob, passkey.id), false, 'another user\'s: false')
      t.strictSame(await port.findById(passkey.id), passkey, 'and kept')
      t.equal(await port.delete(alice, passkeyOf(alice).id), false, 'an unknown id: false')
      t.equal(await port.delete(alice, passkey.id), true, 'its own: true')
      t.equal(await port.findById(passkey.id), null, 'and gone')
      t.strictSame(await port.listByUser(alice), [kept], 'the user\'s other credential stays')
      t.equal(await port.delete(alice, passkey.id), false, 'deleted already: false')
    })

    conformance('a unicode name of 64 characters is kept exactly', async (t, port, alice) => {
      t.equal([...UNICODE_NAME].length, 64, '64 characters')
      const passkey = passkeyOf(alice, { name: UNICODE_NAME })
      await port.create(passkey)
      t.equal((await port.findById(passkey.id))?.name, UNICODE_NAME, 'created with it')
      const renamed = [...UNICODE_NAME].reverse().join('')
      t.equal(await port.rename(alice, passkey.id, renamed), true)
      t.equal((await port.listByUser(alice))[0]?.name, renamed, 'renamed to it')
    })

    conformance('of concurrent creates of one id, exactly one is stored', async (t, port, alice, bob) => {
      const id = passkeyOf(alice).id
      const racers = [0, 1, 2, 3, 4].map(n => passkeyOf(n % 2 === 0 ? alice : bob, { id, name: `racer ${n}` }))
      const results = await Promise.all(racers.map(async passkey => await port.create(passkey)))
      t.equal(results.filter(Boolean).length, 1, 'one true, four false')
      t.strictSame(await port.findById(id), racers[results.indexOf(true)], 'the winner, whole')
      const listed = [...await port.listByUser(alice), ...await port.listByUser(bob)]
      t.equal(listed.length, 1, 'one credential in all')
    })
  })
}
