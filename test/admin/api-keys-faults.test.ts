// A fault sweep of the API keys: each store call of a creation, an end, a key check, a sign-out everywhere and a lock fails in turn (before it runs, and after it ran); the answer is a 503, never a 500 or a wrong 401, and what is left is whole or a retry finishes it.
import t, { type Test } from 'tap'
import { MemoryStore } from '../../lib/store/memory.js'
import { faultyStore, type FaultMode } from '../helpers/faults.js'
import { createKey, deleteKey, keysApp, newKey, signIn, withKey, type KeysApp } from '../helpers/api-keys.js'
import { PREFIX } from '../helpers/http.js'

const MODES: FaultMode[] = ['before', 'after']

type Faulty = ReturnType<typeof faultyStore<MemoryStore>>

/** A keys app on a counted, failable memory store. */
async function faultyApp (t: Test): Promise<KeysApp & { store: Faulty }> {
  const store = faultyStore(new MemoryStore())
  const built = await keysApp({}, { store })
  return { ...built, store }
}

/**
 * Runs `act` with its k-th store call failing, for k = 1, 2, … until a run
 * makes fewer calls than k; `check` sees each run's outcome with the store
 * healthy again.
 */
async function sweep<C> (t: Test, name: string, setup: (kit: KeysApp & { store: Faulty }) => Promise<C>, act: (kit: KeysApp & { store: Faulty }, c: C) => Promise<unknown>,
  check: (t: Test, kit: KeysApp & { store: Faulty }, c: C, outcome: unknown, where: string) => Promise<void>): Promise<void> {
  for (const mode of MODES) {
    for (let k = 1; k < 40; k++) {
      const kit = await faultyApp(t)
      const c = await setup(kit)
      kit.store.faults.arm({ k, mode })
      const outcome = await act(kit, c).catch((error: unknown) => error)
      const fired = kit.store.faults.fired
      const calls = kit.store.faults.describe()
      kit.store.faults.disarm()
      if (fired === null) {
        t.ok(k > 1, `${name}: the sweep made calls`)
        await kit.app.close()
        break
      }
      await check(t, kit, c, outcome, `${name} ${mode} k=${k}: ${calls}`)
      await kit.app.close()
    }
  }
}

const statusOf = (outcome: unknown): number => (outcome as { statusCode?: number }).statusCode ?? 0

t.test('a creation: 200 and the key works, or 503 and no key is listed; a retry creates one', async (t) => {
  await sweep(t, 'create', async ({ app }) => ({ jwt: await signIn(app) }), async ({ app }, { jwt }) => await createKey(app, jwt), async (t, kit, { jwt }, outcome, where) => {
    const fresh = kit
    const status = statusOf(outcome)
    t.ok(status === 200 || status === 503, `${status} [${where}]`)
    const listed = await fresh.app.jwtLogin.listApiKeys(1)
    t.equal(listed.length, status === 200 ? 1 : 0, `whole or nothing [${where}]`)
    if (status !== 200) {
      t.equal((await createKey(fresh.app, jwt)).statusCode, 200, `a retry creates it [${where}]`)
      t.equal((await fresh.app.jwtLogin.listApiKeys(1)).length, 1)
    }
    t.same(JSON.parse(await kit.store.get('api-keys:user:1') as string).k.length, 1, `the index holds the live key only, no place lost [${where}]`)
  })
})

t.test('an end of one key: 200 and it is refused, or 503 and a retry ends it', async (t) => {
  await sweep(t, 'revoke', async ({ app }) => {
    const jwt = await signIn(app)
    return { jwt, ...await newKey(app, jwt) }
  }, async ({ app }, { jwt, id }) => await deleteKey(app, jwt, id), async (t, kit, { jwt, id, key }, outcome, where) => {
    const fresh = kit
    const status = statusOf(outcome)
    t.ok(status === 200 || status === 503, `${status} [${where}]`)
    if (status !== 200) {
      const retry = (await deleteKey(fresh.app, jwt, id)).statusCode
      t.ok(retry === 200 || retry === 404, `a retry ends it, or finds it ended [${where}]`)
    }
    t.equal((await withKey(fresh.app, key, { path: '/any' })).statusCode, 401, `refused [${where}]`)
    t.same(await fresh.app.jwtLogin.listApiKeys(1), [], `not listed [${where}]`)
  })
})

t.test('a key check: a right key answers 200 or 503, never 401; it works once the store is back', async (t) => {
  await sweep(t, 'authenticate', async ({ app }) => await newKey(app, await signIn(app)), async ({ app }, { key }) => await withKey(app, key), async (t, kit, { key }, outcome, where) => {
    const fresh = kit
    const status = statusOf(outcome)
    t.ok(status === 200 || status === 503, `${status} [${where}]`)
    t.equal((await withKey(fresh.app, key)).statusCode, 200, `then it works [${where}]`)
  })
})

t.test('a wrong key: 401 or 503, never a 500', async (t) => {
  await sweep(t, 'wrong key', async () => ({}), async ({ app }) => await withKey(app, `jwtl_${'A'.repeat(16)}_${'B'.repeat(43)}`), async (t, _kit, _c, outcome, where) => {
    const status = statusOf(outcome)
    t.ok(status === 401 || status === 503, `${status} [${where}]`)
  })
})

/** An end of every session and key of user 1, by the host, the user, or a lock; `jwt`: the user's token. */
type End = (kit: KeysApp, jwt: string) => Promise<unknown>

const bearer = (jwt: string): Record<string, string> => ({ authorization: `Bearer ${jwt}` })

/** The user's own route as a rejection when it answers an error, so the sweep sees one outcome shape. */
const routed = (method: 'DELETE', url: string): End => async ({ app }, jwt) => {
  const res = await app.inject({ method, url, headers: bearer(jwt) })
  if (res.statusCode !== 200) throw Object.assign(new Error(res.body), { statusCode: res.statusCode })
}

const ENDS: Array<[string, End]> = [
  ['endAllSessions', async ({ app }) => { await app.jwtLogin.endAllSessions(1) }],
  ['lockUser', async ({ app }) => { await app.jwtLogin.lockUser(1, { reason: 'compromised' }) }],
  ['DELETE /sessions', routed('DELETE', `${PREFIX}/sessions`)],
  ['DELETE /users', routed('DELETE', `${PREFIX}/users`)]
]

t.test('a sign-out everywhere, a lock, a deletion: done, or rejected with no key working once the sessions ended (after an unlock too); a retry finishes it', async (t) => {
  for (const [name, end] of ENDS) {
    await sweep(t, name, async ({ app }) => {
      const jwt = await signIn(app)
      const locked: unknown[] = []
      app.jwtLogin.events.on('user.locked', (event) => { locked.push(event) })
      return { jwt, locked, ...await newKey(app, jwt) }
    }, async (kit, { jwt }) => await end(kit, jwt), async (t, kit, { key, jwt, locked }, outcome, where) => {
      const { app } = kit
      if (outcome !== undefined) {
        t.match(outcome, { statusCode: 503 }, `a store failure [${where}]`)
        const sessionLives = (await app.inject({ method: 'GET', url: '/token', headers: bearer(jwt) })).statusCode === 200
        const isLocked = await app.jwtLogin.isLocked(1)
        // told once the lock is written; a lock whose own write's answer was lost is not known to be written, and not told
        t.equal(locked.length, isLocked && !/compareAndSet:revoked:user:1 +<= fault/.test(where) ? 1 : 0, `user.locked told once the lock is known written [${where}]`)
        // the sessions' end and the keys' end are one write: either both or neither
        t.equal((await withKey(app, key)).statusCode, sessionLives ? 200 : 401, `no key outlives the sessions' end [${where}]`)
        if (isLocked) {
          await app.jwtLogin.unlockUser(1)
          t.equal((await withKey(app, key, { ip: '127.0.0.2' })).statusCode, 401, `nor comes back with the unlock [${where}]`)
        }
        // the user's own retry needs a live session: one more sign-in when the end took theirs
        // (a second later: a sign-in in the cutoff's own millisecond is ended by it)
        kit.clock.advance(1000)
        await end(kit, sessionLives ? jwt : await signIn(app))
      }
      t.equal((await withKey(app, key, { ip: '127.0.0.3' })).statusCode, 401, `the key is refused [${where}]`)
      if (name !== 'DELETE /users') t.same(await app.jwtLogin.listApiKeys(1), [], `none listed [${where}]`)
    })
  }
})

t.test('a creation whose index write landed with its answer lost, and whose undoing failed too: the key stays listed (its record kept), for the user to end; never a place nobody sees', async (t) => {
  const store = new MemoryStore()
  const { app } = await keysApp({}, { store })
  t.teardown(() => app.close())
  const jwt = await signIn(app)
  const compareAndSet = store.compareAndSet.bind(store)
  let writes = 0
  store.compareAndSet = async (key, expected, value, ttlMs) => {
    if (key !== 'api-keys:user:1') return await compareAndSet(key, expected, value, ttlMs)
    // the first write lands and its answer is lost; every later one (the undoing) fails
    if (++writes === 1) await compareAndSet(key, expected, value, ttlMs)
    throw new Error('injected compareAndSet failure')
  }
  t.equal((await createKey(app, jwt)).statusCode, 503, 'the creation answers 503')
  store.compareAndSet = compareAndSet
  const listed = await app.jwtLogin.listApiKeys(1)
  t.equal(listed.length, 1, 'the key the index kept is listed, its record kept')
  t.equal(await app.jwtLogin.revokeApiKey(1, (listed[0] as { id: string }).id), true, 'and the user can end it')
  t.same(JSON.parse(await store.get('api-keys:user:1') as string).k, [], 'no place is held')
  t.equal((await createKey(app, jwt)).statusCode, 200, 'a retry creates one')
})
