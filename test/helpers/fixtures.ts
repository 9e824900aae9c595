import { generate } from 'otplib'

/** The fixtures every test shares, without Fastify: alice, the HS256 secret, a settable clock, TOTP codes, the code of a reset mail. */
export const HS_SECRET = 'test-secret-that-is-at-least-32-bytes-long!'
export const ALICE = { login: 'alice', email: 'alice@example.com', password: 'correct horse battery staple', displayName: 'Alice Example' }

/** A settable clock for tests: `clock.now` is the time in ms. */
export function testClock (start = Date.UTC(2026, 10, 22, 12, 0, 0)): { (): number, now: number, advance: (ms: number) => void } {
  const clock = Object.assign(() => clock.now, { now: start, advance: (ms: number) => { clock.now += ms } })
  return clock
}

/** The TOTP code of `secret` at `nowMs`. */
export async function totpAt (secret: string, nowMs: number): Promise<string> {
  return await generate({ secret, epoch: Math.floor(nowMs / 1000) })
}

/** A six-digit code that is right neither now nor one step back. */
export async function wrongCode (secret: string, nowMs: number): Promise<string> {
  const right = [await totpAt(secret, nowMs), await totpAt(secret, nowMs - 30_000)]
  return ['000000', '111111', '222222'].find(code => !right.includes(code)) as string
}

/** The code in a reset mail's text part (the default template). */
export function codeIn (text: string): string {
  const match = /reset code is: (\S+)/.exec(text)
  if (match === null) throw new Error(`no code in: ${text}`)
  return match[1] as string
}
