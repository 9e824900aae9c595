import { generateSecret, generateURI, verify } from 'otplib'
import type { Clock } from '../clock.js'
import type { StateStore } from '../store/types.js'

/** Seconds per TOTP step. */
export const TOTP_PERIOD = 30
const SIX_DIGITS = /^\d{6}$/
// A code of step S is accepted until step S + 1 ends; its claim must outlive that.
const REPLAY_TTL_MS = 4 * TOTP_PERIOD * 1000

const keys = {
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
 * atomic increment, and the last accepted step is kept so an older code is
 * refused after a newer one.
 */
export class TotpProvider {
  readonly #store: StateStore
  readonly #clock: Clock

  constructor (store: StateStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** Whether `code` is a fresh code of `secret`; a right code is spent. */
  async accept (userId: number, secret: string | null, code: string): Promise<boolean> {
    if (secret === null) return false
    const last = await this.#store.get(keys.lastStep(userId))
    const step = await matchTotpStep(secret, code, this.#clock(), last === null ? undefined : Number(last))
    if (step === null) return false
    const { count } = await this.#store.increment(keys.usedStep(userId, step), REPLAY_TTL_MS)
    if (count !== 1) return false
    await this.#store.set(keys.lastStep(userId), String(step), REPLAY_TTL_MS)
    return true
  }
}
