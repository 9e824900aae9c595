// The passkey suite's rules on changing credentials: recordUse, rename, delete.
import assert from 'node:assert/strict'
import type { PasskeyUse } from '../adapters/passkeys.js'
import { settleAll } from './port-helpers.js'
import { MAX_COUNTER, assertListed, assertStored, credentialId, newUser, passkeyOf, twoUsers, type PasskeyRule } from './passkey-samples.js'

export const changingRules: readonly PasskeyRule[] = [
  {
    name: 'recordUse records the counter, the backup state and the time, nothing else',
    contract: 'Records a use: the counter, the backup state and the time.',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId, { counter: 41, backedUp: false })
      const other = passkeyOf(userId, { name: 'other' })
      await port.create(passkey)
      await port.create(other)
      const use: PasskeyUse = { counter: 42, backedUp: true, lastUsedAt: new Date('2024-07-08T09:10:11.012Z') }
      assert.equal(await port.recordUse(passkey.id, use), undefined, 'what recordUse resolves')
      assertStored(await port.findById(passkey.id), { ...passkey, ...use }, 'findById after recordUse')
      assertStored(await port.findById(other.id), other, 'findById of another credential of the user')
      const next: PasskeyUse = { counter: MAX_COUNTER, backedUp: false, lastUsedAt: new Date('2024-07-09T00:00:00.000Z') }
      await port.recordUse(passkey.id, next)
      assertStored(await port.findById(passkey.id), { ...passkey, ...next }, 'findById after a second use, up to the greatest counter')
    }
  },
  {
    name: 'recordUse keeps the greater counter of a use that finished late',
    contract: 'Keep the greater counter (SQL `GREATEST(counter, $2)`): two uses may finish out of order.',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId, { counter: 41, backedUp: false })
      await port.create(passkey)
      await port.recordUse(passkey.id, { counter: 42, backedUp: false, lastUsedAt: new Date('2024-07-08T09:10:11.012Z') })
      const late: PasskeyUse = { counter: 7, backedUp: true, lastUsedAt: new Date('2024-07-10T00:00:00.000Z') }
      await port.recordUse(passkey.id, late)
      assertStored(await port.findById(passkey.id), { ...passkey, ...late, counter: 42 }, 'findById after a use with a lower counter: the counter kept, the backup state and the time recorded')
      await port.recordUse(passkey.id, { ...late, counter: 0 })
      assert.equal((await port.findById(passkey.id))?.counter, 42, 'the counter after a use with the counter 0')
    }
  },
  {
    name: 'of concurrent uses the greatest counter stays',
    contract: 'two uses may finish out of order',
    async run (fixture, { parallelism }) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId)
      await port.create(passkey)
      const lastUsedAt = new Date('2024-07-08T09:10:11.012Z')
      // made in counting order: a port whose writes land out of order must still keep the greatest
      const counters = Array.from({ length: parallelism }, (_, n) => n + 1)
      await settleAll(counters.map(async counter => { await port.recordUse(passkey.id, { counter, backedUp: true, lastUsedAt }) }))
      assert.equal((await port.findById(passkey.id))?.counter, parallelism, `the counter after ${parallelism} concurrent uses counting 1 to ${parallelism}`)
    }
  },
  {
    name: 'recordUse of a gone credential resolves and stores nothing',
    contract: 'A credential gone since is not an error.',
    async run (fixture) {
      const { port } = fixture
      const [userId, other] = await twoUsers(fixture)
      const [kept, gone] = [passkeyOf(userId), passkeyOf(other, { name: 'gone' })]
      await port.create(kept)
      await port.create(gone)
      await port.delete(other, gone.id)
      const use: PasskeyUse = { counter: 3, backedUp: false, lastUsedAt: new Date('2024-07-08T09:10:11.012Z') }
      assert.equal(await port.recordUse(gone.id, use), undefined, 'what recordUse of a deleted credential resolves')
      assert.equal(await port.recordUse(credentialId(), use), undefined, 'what recordUse of an id nobody had resolves')
      assert.equal(await port.findById(gone.id), null, 'findById of the deleted credential after its use')
      assertListed(await port.listByUser(other), [], 'listByUser of the deleted credential\'s user')
      assertListed(await port.listByUser(userId), [kept], 'listByUser of another user: the credential, untouched')
    }
  },
  {
    name: 'rename renames the user\'s own credential, nothing else',
    contract: 'Renames the user\'s credential',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const [passkey, other] = [passkeyOf(userId, { name: 'old name' }), passkeyOf(userId, { name: 'other' })]
      await port.create(passkey)
      await port.create(other)
      assert.equal(await port.rename(userId, passkey.id, 'new name'), true, 'rename of the user\'s own credential')
      assertStored(await port.findById(passkey.id), { ...passkey, name: 'new name' }, 'findById after rename')
      assertStored(await port.findById(other.id), other, 'findById of the user\'s other credential')
    }
  },
  {
    name: 'rename resolves false when the user has no credential with the id',
    contract: '`false` when the user has no credential with this id',
    async run (fixture) {
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId)
      await fixture.port.create(passkey)
      assert.equal(await fixture.port.rename(userId, credentialId(), 'nothing'), false, 'rename of an id nobody has')
      await fixture.port.delete(userId, passkey.id)
      assert.equal(await fixture.port.rename(userId, passkey.id, 'nothing'), false, 'rename of a deleted credential')
      assert.equal(await fixture.port.findById(passkey.id), null, 'findById of the deleted credential after the rename')
    }
  },
  {
    name: 'rename leaves another user\'s credential alone',
    contract: 'so one user can never rename or delete another\'s',
    async run (fixture) {
      const [alice, bob] = await twoUsers(fixture)
      const passkey = passkeyOf(alice, { name: 'alice\'s' })
      await fixture.port.create(passkey)
      assert.equal(await fixture.port.rename(bob, passkey.id, 'stolen'), false, 'rename of another user\'s credential')
      assertStored(await fixture.port.findById(passkey.id), passkey, 'findById of that credential after the rename')
    }
  },
  {
    name: 'delete deletes the user\'s own credential, nothing else',
    contract: 'Deletes the user\'s credential',
    async run (fixture) {
      const { port } = fixture
      const userId = await newUser(fixture)
      const [passkey, kept] = [passkeyOf(userId), passkeyOf(userId, { name: 'kept' })]
      await port.create(passkey)
      await port.create(kept)
      assert.equal(await port.delete(userId, passkey.id), true, 'delete of the user\'s own credential')
      assert.equal(await port.findById(passkey.id), null, 'findById of the deleted credential')
      assertListed(await port.listByUser(userId), [kept], 'listByUser after delete: the user\'s other credential')
    }
  },
  {
    name: 'delete resolves false when the user has no credential with the id',
    contract: '`false` when the user has no credential with this id',
    async run (fixture) {
      const userId = await newUser(fixture)
      const passkey = passkeyOf(userId)
      await fixture.port.create(passkey)
      assert.equal(await fixture.port.delete(userId, credentialId()), false, 'delete of an id nobody has')
      await fixture.port.delete(userId, passkey.id)
      assert.equal(await fixture.port.delete(userId, passkey.id), false, 'delete of a credential deleted already')
    }
  },
  {
    name: 'delete leaves another user\'s credential alone',
    contract: 'Methods that name a user act only on that user\'s credentials',
    async run (fixture) {
      const [alice, bob] = await twoUsers(fixture)
      const passkey = passkeyOf(alice)
      await fixture.port.create(passkey)
      assert.equal(await fixture.port.delete(bob, passkey.id), false, 'delete of another user\'s credential')
      assertStored(await fixture.port.findById(passkey.id), passkey, 'findById of that credential after the delete')
    }
  }
]
