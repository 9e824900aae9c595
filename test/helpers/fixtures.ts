/** The fixtures every test shares, without Fastify: alice, the HS256 secret, a settable clock. */
export const HS_SECRET = 'test-secret-that-is-at-least-32-bytes-long!'
export const ALICE = { login: 'alice', email: 'alice@example.com', password: 'correct horse battery staple', displayName: 'Alice Example' }

/** A settable clock for tests: `clock.now` is the time in ms. */
export function testClock (start = Date.UTC(2026, 10, 22, 12, 0, 0)): { (): number, now: number, advance: (ms: number) => void } {
  const clock = Object.assign(() => clock.now, { now: start, advance: (ms: number) => { clock.now += ms } })
  return clock
}
