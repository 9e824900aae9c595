// The passkey suite's rules on storing and reading credentials: create, findById, listByUser.
import assert from 'node:assert/strict'
import {
  LONGEST_ID_BYTES, MAX_COUNTER, UNICODE_NAME, assertListed, assertStored, credentialId, newUser, passkeyOf, twoUsers, type PasskeyRule
} from './passkey-samples.js'
import { promised, settleAll } from './port-helpers.js'

export const storingRules: readonly PasskeyRule[] = [
  {
    name: 'every method answers a promise',
    contract: 'Every method is Promise-only.',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId)
      await promised('create', () => port.create(passkey))
      await promised('findById', () => port.findById(passkey.id))
      await promised('listByUser', () => port.listByUser(userId))
      await promised('recordUse', () => port.recordUse(passkey.id, { counter: 1, backedUp: true, lastUsedAt: new Date() }))
      await promised('rename', () => port.rename(userId, passkey.id, 'renamed'))
      await promised('delete', () => port.delete(userId, passkey.id))
    }
  },
  {
    name: 'create resolves true and findById answers every field as stored',
    contract: 'Keep every field; a host may add its own columns.',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const fresh = passkeyOf(userId, { counter: MAX_COUNTER, transports: ['usb', 'nfc', 'ble'], deviceType: 'multiDevice', backupEligible: true, backedUp: false })
      const used = passkeyOf(userId, {
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
        assert.equal(await port.create(passkey), true, `create of a new credential (${passkey.name})`)
        assertStored(await port.findById(passkey.id), passkey, `findById of ${passkey.name}`)
      }
    }
  },
  {
    name: 'a credential id of 1,364 characters is kept exactly',
    contract: 'The credential id, base64url (as WebAuthn\'s JSON carries it): up to 1,023 bytes, 1,364 characters.',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId, { id: credentialId(LONGEST_ID_BYTES) })
      assert.equal(await port.create(passkey), true, 'create of a credential with the longest id')
      assertStored(await port.findById(passkey.id), passkey, 'findById of the long id')
      assertListed(await port.listByUser(userId), [passkey], 'listByUser')
    }
  },
  {
    name: 'a unicode name of 64 characters is kept exactly',
    contract: 'The user\'s name for it (`iPhone`, `YubiKey 5`); at most 64 characters.',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId, { name: UNICODE_NAME })
      await port.create(passkey)
      assert.equal((await port.findById(passkey.id))?.name, UNICODE_NAME, 'the name findById answers')
      assert.equal((await port.listByUser(userId))[0]?.name, UNICODE_NAME, 'the name listByUser answers')
    }
  },
  {
    name: 'findById resolves null for an unknown id',
    contract: 'The credential with this id, whoever\'s it is, or `null`',
    async run (fixture) {
      const userId = await newUser(fixture)
      await fixture.port.create(passkeyOf(userId))
      assert.equal(await fixture.port.findById(credentialId()), null, 'findById of an id nobody has')
    }
  },
  {
    name: 'findById finds any user\'s credential',
    contract: 'The credential with this id, whoever\'s it is, or `null`',
    async run (fixture) {
      const [alice, bob] = await twoUsers(fixture)
      const [alices, bobs] = [passkeyOf(alice), passkeyOf(bob)]
      await fixture.port.create(alices)
      await fixture.port.create(bobs)
      assertStored(await fixture.port.findById(bobs.id), bobs, 'findById of one user\'s credential')
      assertStored(await fixture.port.findById(alices.id), alices, 'findById of another user\'s credential')
    }
  },
  {
    name: 'create resolves false for a taken id, for any user, storing nothing',
    contract: 'Resolves `false`, storing nothing, when a credential with this id exists already (for any user)',
    async run (fixture) {
      const { port } = fixture
      const [alice, bob] = await twoUsers(fixture)
      const original = passkeyOf(alice)
      await port.create(original)
      assert.equal(await port.create({ ...original, name: 'Another', counter: 5, publicKey: credentialId(77) }), false, 'create of a taken id for the same user')
      assert.equal(await port.create({ ...passkeyOf(bob), id: original.id }), false, 'create of a taken id for another user')
      assertStored(await port.findById(original.id), original, 'findById of the first credential')
      assertListed(await port.listByUser(alice), [original], 'listByUser of the first credential\'s user')
      assertListed(await port.listByUser(bob), [], 'listByUser of the other user')
    }
  },
  {
    name: 'of concurrent creates of one id exactly one is stored',
    contract: 'Unique across all users.',
    async run (fixture, { parallelism }) {
      const { port } = fixture
      const users: number[] = []
      for (let n = 0; n < parallelism; n++) users.push(await newUser(fixture))
      const id = credentialId()
      // each racer a user of its own, as registrations of one authenticator by several accounts would be
      const racers = users.map((userId, n) => passkeyOf(userId, { id, name: `racer ${n}` }))
      const answers = await settleAll(racers.map(async passkey => await port.create(passkey)))
      assert.equal(answers.filter(answer => answer).length, 1, `of ${parallelism} concurrent creates of one id, how many resolved true`)
      const listed = (await settleAll(users.map(async userId => await port.listByUser(userId)))).flat()
      assert.equal(listed.length, 1, `how many credentials the ${parallelism} users list in all`)
    }
  },
  {
    name: 'listByUser answers the user\'s credentials only, oldest first',
    contract: 'The user\'s credentials, oldest first.',
    async run (fixture) {
      const { port } = fixture
      const [alice, bob] = await twoUsers(fixture)
      assertListed(await port.listByUser(alice), [], 'listByUser of a user without credentials')
      // the ids sort oldest, newest, middle, the order of neither createdAt nor creation: a port that lists by id fails, ascending or descending
      const newest = passkeyOf(alice, { id: `m${credentialId()}`, name: 'newest', createdAt: new Date('2024-03-01T00:00:00.000Z') })
      const oldest = passkeyOf(alice, { id: `c${credentialId()}`, name: 'oldest', createdAt: new Date('2024-01-01T00:00:00.000Z') })
      const middle = passkeyOf(alice, { id: `w${credentialId()}`, name: 'middle', createdAt: new Date('2024-02-01T00:00:00.001Z') })
      const bobs = passkeyOf(bob, { name: 'bob\'s', createdAt: new Date('2024-01-15T00:00:00.000Z') })
      for (const passkey of [newest, bobs, oldest, middle]) assert.equal(await port.create(passkey), true, `create of ${passkey.name}`)
      assertListed(await port.listByUser(alice), [oldest, middle, newest], 'listByUser of a user with three credentials created newest first')
      assertListed(await port.listByUser(bob), [bobs], 'listByUser of the other user')
    }
  }
]
