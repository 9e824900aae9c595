import { randomUUID } from 'node:crypto'
import { generateSecret, generateURI, verify } from 'otplib'
import type { Clock } from '../../core/clock.js'
import { claimAs } from '../../store/claim.js'
import type { StateStore } from '../../store/types.js'

/** Seconds per TOTP step. */
export const TOTP_PERIOD = 30
const SIX_DIGITS = /^\d{6}$/
// A code of step S is accepted until step S + 1 ends; its claim must outlive that.
const REPLAY_TTL_MS = 4 * TOTP_PERIOD * 1000

export const totpKeys = {
  lastStep: (userId: number) => `2fa:totp-last:${userId}`,
  usedStep: (userId: number, step: number) => `2fa:totp-used:${userId}:${step}`
}

/** A new TOTP secret (160 bits, base32) and its `otpauth://` URI. */
export function createTotpSecret (issuer: string, label: string): { secret: string, uri: string } {
  const secret = generateSecret()
  return { secret, uri: generateURI({ issuer, label, secret, period: TOTP_PERIOD, digits: 6 }) }
}

/**
 * The time step a 6-digit code matches (the current or the previous one,
 * later than `afterStep`), or `null`. A secret that is not base32 matches nothing.
 */
export async function matchTotpStep (secret: string, code: string, nowMs: number, afterStep?: number): Promise<number | null> {
  if (!SIX_DIGITS.test(code)) return null
  try {
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(nowMs / 1000),
      period: TOTP_PERIOD,
      epochTolerance: [TOTP_PERIOD, 0],
      afterTimeStep: afterStep
    })
    // the TOTP strategy's result carries the matched step
    return result.valid ? (result as { timeStep: number }).timeStep : null
  } catch {
    return null
  }
}

/**
 * TOTP with replay protection: each step is claimed once per user with one
 * atomic compare-and-set, and the last accepted step is kept so an older
 * code is refused after a newer one. Checking a code (`match`) spends
 * nothing; `claim` spends the step.
 */
export class TotpProvider {
  readonly #store: StateStore
  readonly #clock: Clock

  constructor (store: StateStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** The step a fresh code of `secret` matches, or `null`. Reads only (`knownLast`: the last step's entry, read already with other reads). */
  async match (userId: number, secret: string | null, code: string, knownLast?: string | null): Promise<number | null> {
    if (secret === null) return null
    const last = knownLast !== undefined ? knownLast : await this.#store.get(totpKeys.lastStep(userId))
    // the last step itself still matches: its claim decides (the claimant's own retry wins it, anyone else loses)
    return await matchTotpStep(secret, code, this.#clock(), last === null ? undefined : Number(last) - 1)
  }

  /**
   * Spends `step` for the user. `claimant` names the request (a challenge
   * id): a retry by the same claimant after a write whose answer was lost
   * still succeeds; anyone else gets `false`.
   */
  async claim (userId: number, step: number, claimant: string): Promise<boolean> {
    const [claimed] = await Promise.all([
      claimAs(this.#store, totpKeys.usedStep(userId, step), claimant, REPLAY_TTL_MS),
      // with the claim, in its round trip: it only narrows the window for an older code (the claim is what stops a
      // replay), and a claim lost to another request of the same step leaves it as that request sets it
      this.#store.set(totpKeys.lastStep(userId), String(step), REPLAY_TTL_MS).catch(() => {})
    ])
    return claimed
  }

  /** Whether `code` is a fresh code of `secret`; a right code is spent. */
  async accept (userId: number, secret: string | null, code: string): Promise<boolean> {
    const step = await this.match(userId, secret, code)
    return step !== null && await this.claim(userId, step, randomUUID())
  }
}
