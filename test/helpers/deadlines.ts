/**
 * The stall tests' shared parts: while a store's server is stalled, waves of
 * every store call are fired, and each call must fail within the store's
 * deadline (plus a slack for a busy machine), measured from its own start,
 * with an error that names no key and no value.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type t from 'tap'
import type { StateStore } from '../../lib/store/types.js'
import { timed, type Settled } from './log-recorder.js'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

/** The stores' deadline when the client or pool sets none. */
export const DEADLINE_MS = 2000
export const SLACK_MS = 700
/** How long the server stalls: the last wave's calls must have failed before it ends. */
export const STALL_MS = 6000
/** Waves start every WAVE_EVERY_MS until WAVES_FOR_MS: the last one fails well before the stall ends. */
export const WAVE_EVERY_MS = 500
export const WAVES_FOR_MS = 3500

/** The value every written call writes: no error may name it. */
export const SECRET_VALUE = 'secret-value'

/** Every store call once, on new keys under `name`, each call named `<name> <call>`. */
export function wave (store: StateStore & Required<Pick<StateStore, 'getMany'>>, name: string): Array<Promise<Settled>> {
  const key = (call: string): string => `${name}:${call}:${randomUUID()}`
  return [
    timed(`${name} get`, async () => await store.get(key('get'))),
    timed(`${name} getMany`, async () => await store.getMany([key('many-a'), key('many-b')])),
    timed(`${name} set`, async () => { await store.set(key('set'), SECRET_VALUE, 60_000) }),
    timed(`${name} increment`, async () => await store.increment(key('count'), 60_000)),
    timed(`${name} compareAndSet (absent)`, async () => await store.compareAndSet(key('cas'), null, SECRET_VALUE, 60_000)),
    timed(`${name} compareAndSet (replace)`, async () => await store.compareAndSet(key('cas'), 'old', SECRET_VALUE, 60_000)),
    timed(`${name} consume`, async () => await store.consume(key('code'))),
    timed(`${name} delete`, async () => { await store.delete(key('gone')) })
  ]
}

/** Fires `calls` every WAVE_EVERY_MS until WAVES_FOR_MS; answers how each call settled. */
export async function inWaves (calls: () => Array<Promise<Settled>>): Promise<Settled[]> {
  const pending: Array<Promise<Settled>> = []
  for (let at = 0; at <= WAVES_FOR_MS; at += WAVE_EVERY_MS) {
    pending.push(...calls())
    await sleep(WAVE_EVERY_MS)
  }
  return await Promise.all(pending)
}

/** Asserts that no call was answered, that every one failed within the deadline, and that no error names `prefix` or the value. */
export function allFailedInTime (t: Test, results: Settled[], prefix: string): void {
  const slowest = results.reduce((max, result) => Math.max(max, result.ms), 0)
  t.same(results.filter(result => result.error === null).map(result => result.call), [], 'no call is answered by a stalled server')
  t.same(results.filter(result => result.ms > DEADLINE_MS + SLACK_MS).map(result => `${result.call} ${Math.round(result.ms)} ms`), [],
    `every one of ${results.length} calls fails within ${DEADLINE_MS} + ${SLACK_MS} ms (the slowest: ${Math.round(slowest)} ms)`)
  const leaking = results.filter(result => result.error !== null && (result.error.message.includes(prefix) || result.error.message.includes(SECRET_VALUE)))
  t.same(leaking.map(result => result.error?.message), [], 'no error message names a key or a value')
}
