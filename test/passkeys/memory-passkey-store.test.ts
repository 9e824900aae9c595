// MemoryPasskeyStore beyond the port's contract (test/conformance/passkey-port.test.ts runs the suite): callers never share an object with the store.
import t from 'tap'
import { passkeyOf } from '../../lib/conformance/passkey-samples.js'
import { MemoryPasskeyStore } from '../../lib/testing.js'

const ALICE = 1

t.test('changing what was passed in or answered changes nothing in the store', async (t) => {
  const store = new MemoryPasskeyStore()
  const passkey = passkeyOf(ALICE, { lastUsedAt: new Date('2024-02-03T04:05:06.007Z') })
  const original = structuredClone(passkey)
  await store.create(passkey)
  passkey.name = 'changed after create'
  passkey.transports.push('usb')
  passkey.createdAt.setTime(0)

  const found = await store.findById(passkey.id)
  t.strictSame(found, original, 'the credential as it was created')
  if (found === null) throw new Error('stored')
  found.counter = 99
  found.transports.length = 0
  found.lastUsedAt?.setTime(0)

  const [listed] = await store.listByUser(ALICE)
  t.strictSame(listed, original, 'findById answered a copy')
  if (listed === undefined) throw new Error('listed')
  listed.name = 'changed in a list'
  listed.createdAt.setTime(0)
  t.strictSame(await store.findById(passkey.id), original, 'listByUser answered a copy')

  const use = { counter: 5, backedUp: false, lastUsedAt: new Date('2024-03-04T05:06:07.008Z') }
  await store.recordUse(passkey.id, use)
  use.lastUsedAt.setTime(0)
  t.strictSame((await store.findById(passkey.id))?.lastUsedAt, new Date('2024-03-04T05:06:07.008Z'), 'recordUse kept its own date')
})

t.test('credentials created at the same time are listed in the order they were created', async (t) => {
  const store = new MemoryPasskeyStore()
  const names = ['first', 'second', 'third']
  for (const name of names) await store.create(passkeyOf(ALICE, { name }))
  t.strictSame((await store.listByUser(ALICE)).map(passkey => passkey.name), names)
})
