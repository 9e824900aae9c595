// onSession for the app: signed in, refreshed, signed out, ended; unsubscribing; close() stops the background refresh and the channel.
import t from 'tap'
import { createClient, type SessionEvent } from '../../lib/client.js'
import { ALICE, serve } from '../helpers/client.js'

const LIFETIME = 15 * 60_000

t.test('every listener hears each event once; one that unsubscribed hears no more', async (t) => {
  const { base, clock } = await serve(t, { sessions: { enabled: true } })
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  const all: string[] = []
  const some: string[] = []
  client.onSession((event: SessionEvent) => { all.push(event.type) })
  const stop = client.onSession((event) => { some.push(event.type) })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  clock.advance(LIFETIME)
  await client.validate()
  stop()
  stop()
  await client.signOut()
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  await client.endAllSessions()
  t.same(all, ['signed-in', 'refreshed', 'signed-out', 'signed-in', 'signed-out'])
  t.same(some, ['signed-in', 'refreshed'])
  t.equal(client.jwt, undefined, 'signed out everywhere: this session too')
})

t.test('a sign-out the server refuses still ends the session here', async (t) => {
  const { base, clock } = await serve(t, { revoke: { enabled: false } })
  const client = createClient({ baseUrl: base, now: clock })
  t.teardown(() => { client.close() })
  const events: string[] = []
  client.onSession((event) => { events.push(event.type) })
  await client.signIn({ email: ALICE.email, password: ALICE.password })
  await t.rejects(client.signOut(), { status: 403, code: 'ERR_JWT_LOGIN_REVOKE_DISABLED' })
  t.same(events, ['signed-in', 'signed-out'])
  t.equal(client.jwt, undefined)
})

t.test('close(): no more background refresh, nothing more from the other tabs', async (t) => {
  const { base, clock, refreshes } = await serve(t)
  const one = createClient({ baseUrl: base, now: clock, crossTab: true, name: 'closing' })
  const two = createClient({ baseUrl: base, now: clock, crossTab: true, name: 'closing', refreshAhead: 899 })
  t.teardown(() => { one.close(); two.close() })
  const heard: string[] = []
  two.onSession((event) => { heard.push(event.type) })
  two.close()
  await one.signIn({ email: ALICE.email, password: ALICE.password })
  await new Promise(resolve => setTimeout(resolve, 100))
  t.same(heard, [], 'the channel is closed')
  t.equal(two.jwt, undefined)
  await two.signIn({ email: ALICE.email, password: ALICE.password })
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(refreshes(), 0, 'a client closed starts no background refresh, even for a later sign-in')
  t.same(heard, ['signed-in'])
})
