// The single use of a code as the store sees it: two right uses that both read the code before either claims it (one session), and a store that fails while the try is counted or the code claimed (503, nothing spent).
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { MemoryStore } from '../../lib/index.js'
import { errorOf } from '../helpers/http.js'
import { ALICE, buildEmailSignInApp } from '../helpers/email-sign-in.js'

/** Whether `key` is the store key of an address's code (`email-signin:<hash>`), not its tries. */
const isCodeKey = (key: string): boolean => key.startsWith('email-signin:') && !key.includes(':tries:')

/**
 * A memory store whose first `parties` claims of a code wait for each
 * other, so every one of them has read the code before any claims it;
 * and whose claims or tries counts fail while told.
 */
class GatedStore extends MemoryStore {
  parties = 0
  failClaims = false
  failTries = false
  readonly #waiting: Array<() => void> = []

  override async compareAndSet (key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    if (isCodeKey(key)) {
      if (this.failClaims) throw new Error('store connection lost')
      if (this.parties > 0) {
        this.parties--
        await new Promise<void>((resolve) => {
          this.#waiting.push(resolve)
          if (this.parties === 0) for (const release of this.#waiting.splice(0)) release()
        })
      }
    }
    return await super.compareAndSet(key, expected, value, ttlMs)
  }

  override async increment (key: string, ttlMs: number): Promise<{ count: number, ttlMs: number }> {
    if (this.failTries && key.includes(':tries:')) throw new Error('store connection lost')
    return await super.increment(key, ttlMs)
  }
}

t.test('two right uses that both read the code before either claims it: one signs in, the other gets 401 / 246', async (t) => {
  let store = new GatedStore()
  const kit = await buildEmailSignInApp(t, { store: (clock) => (store = new GatedStore({ clock })) })
  const code = await kit.codeFor(ALICE.email)
  store.parties = 2
  kit.events.clear()
  const answers = await Promise.all([kit.verify(ALICE.email, code), kit.verify(ALICE.email, code)])
  t.same(answers.map(res => res.statusCode).sort(), [200, 401])
  t.same(errorOf(answers.find(res => res.statusCode === 401) as LightMyRequestResponse), [401, 246])
  t.equal(kit.events.of('session.started').length, 1, 'one session')
  t.same(kit.events.of('login.failed'), [{ ip: '127.0.0.1', reason: 'email_code', errorCode: 246 }])
  t.same(errorOf(await kit.verify(ALICE.email, code)), [401, 246], 'the code is spent')
})

t.test('the store fails at the claim: 503 / 201, logged without the code; the code and the attempt are untouched', async (t) => {
  let store = new GatedStore()
  const kit = await buildEmailSignInApp(t, { store: (clock) => (store = new GatedStore({ clock })), settings: { limits: { loginPerAccount: { max: 1, window: '15m' } } } })
  const code = await kit.codeFor(ALICE.email)
  store.failClaims = true
  t.same(errorOf(await kit.verify(ALICE.email, code)), [503, 201])
  t.ok(kit.logs.some(line => line.msg === 'jwt-login: a sign-in code could not be given back after a failure; the user needs a new one'), 'the failed give-back is logged')
  t.notMatch(JSON.stringify(kit.logs), code)
  store.failClaims = false
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200, 'the code was never claimed, and the lockout gave the attempt back')
})

t.test('the store fails while the try is counted: 503 / 201, and the lockout gives the attempt back', async (t) => {
  let store = new GatedStore()
  const kit = await buildEmailSignInApp(t, { store: (clock) => (store = new GatedStore({ clock })), settings: { limits: { loginPerAccount: { max: 1, window: '15m' } } } })
  const code = await kit.codeFor(ALICE.email)
  store.failTries = true
  for (let i = 0; i < 3; i++) t.same(errorOf(await kit.verify(ALICE.email, code)), [503, 201], `try ${i + 1}`)
  store.failTries = false
  t.equal((await kit.verify(ALICE.email, code)).statusCode, 200, 'none of them counted')
})
