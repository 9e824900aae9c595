/**
 * The StateStore suite's default `wait` on the wall clock: a timer that
 * wakes early by `Date.now()` is slept again, so a store that reads the
 * wall clock (MemoryStore without a clock, as vitest and jest users run
 * it) sees at least the time a rule waited.
 */
import t from 'tap'
import { stateStoreRules } from '../../lib/conformance.js'
import { settingsFrom, sleepAtLeast } from '../../lib/conformance/store-kit.js'
import { MemoryStore } from '../../lib/index.js'

t.test('a sleep that ended early by the wall clock sleeps the rest', async (t) => {
  const realNow = Date.now
  t.teardown(() => { Date.now = realNow })
  // the first reading sets the end; the next lags 200 ms behind it, as if the timer woke early
  // (more than a busy machine's timer lateness, which would otherwise cover the lag and skip the second sleep)
  const readings: number[] = []
  Date.now = () => {
    const now = realNow() - (readings.length === 1 ? 200 : 0)
    readings.push(now)
    return now
  }
  const started = performance.now()
  await sleepAtLeast(20)
  Date.now = realNow
  t.equal(readings.length, 3, 'read after the first sleep, and again after the rest')
  t.ok(performance.now() - started >= 20, 'slept the whole time')
  t.equal(settingsFrom({}, 2).wait, sleepAtLeast, 'the suite\'s default')
})

t.test('no wait for none', async (t) => {
  const started = Date.now()
  await sleepAtLeast(0)
  await sleepAtLeast(-5)
  t.ok(Date.now() - started < 20)
})

t.test('a MemoryStore on the wall clock passes the rule on a kept expiry, whatever the timers do', async (t) => {
  // an exact store (no granularity), 2 ms between increments: a bare setTimeout failed about one run in a hundred
  const rule = stateStoreRules.find(({ name }) => name === 'later increments keep the counter\'s expiry, whatever their ttlMs')
  if (rule === undefined) throw new Error('the rule is gone')
  const settings = settingsFrom({ briefTtlMs: 10, ttlGranularityMs: 0 }, 2)
  let held = 0
  for (let run = 0; run < 300; run++) {
    const store = new MemoryStore()
    // the rule throws where the expiry was not kept
    await rule.run(store, settings)
    await store.close()
    held++
  }
  t.equal(held, 300, 'the rule held on each of 300 runs')
})
