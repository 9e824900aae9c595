import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto'
import type { Mailer, MailMessage } from '../mail/types.js'
import type { StateStore } from '../store/types.js'

const key = (challengeId: string): string => `2fa:email:${challengeId}`
const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

/** Six digits from the CSPRNG, leading zeros kept. */
export function newEmailCode (): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0')
}

export function emailCodeMessage (to: string, code: string, lifetimeMs: number): MailMessage {
  const minutes = Math.max(1, Math.round(lifetimeMs / 60_000))
  const text = `Your sign-in code is ${code}. It is valid for ${minutes} minutes and works once.\n\nIf you did not try to sign in, change your password.`
  const html = `<p>Your sign-in code is <strong>${code}</strong>. It is valid for ${minutes} minutes and works once.</p><p>If you did not try to sign in, change your password.</p>`
  return { to, subject: 'Your sign-in code', text, html }
}

/**
 * Email codes: one per challenge, kept only as a keyed hash (six digits are
 * too few for a plain hash to hide them from whoever reads the store), single
 * use through its challenge's one atomic consume.
 */
export class EmailCodeProvider {
  readonly #store: StateStore
  readonly #mailer: Mailer
  readonly #pepper: Buffer

  constructor (store: StateStore, mailer: Mailer, pepper: Buffer) {
    this.#store = store
    this.#mailer = mailer
    this.#pepper = pepper
  }

  #hash (challengeId: string, code: string): string {
    return createHmac('sha256', this.#pepper).update(`${challengeId}:${code}`).digest('base64url')
  }

  /** Stores a new code for the challenge and mails it. */
  async issue (challengeId: string, to: string, lifetimeMs: number): Promise<void> {
    const code = newEmailCode()
    await this.#store.set(key(challengeId), this.#hash(challengeId, code), lifetimeMs)
    await this.#mailer.send(emailCodeMessage(to, code, lifetimeMs))
  }

  /**
   * Whether `code` is the challenge's code. Reads only: the code is bound to
   * its challenge, and the challenge's one atomic consume is what makes a
   * sign-in single use.
   */
  async check (challengeId: string, code: string): Promise<boolean> {
    const stored = await this.#store.get(key(challengeId))
    if (stored === null) return false
    return timingSafeEqual(digest(this.#hash(challengeId, code)), digest(stored))
  }

  /** Deletes the code of a challenge that has ended (best effort: it expires anyway). */
  async discard (challengeId: string): Promise<void> {
    await this.#store.delete(key(challengeId)).catch(() => {})
  }
}
