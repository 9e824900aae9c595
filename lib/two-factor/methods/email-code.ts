import { CodeHasher, type KeyedHashes } from '../../services/code-hash.js'
import { randomCode } from '../../core/crypto.js'
import type { Mailer, MailMessage } from '../../mail/types.js'
import { escapeHtml, renderTemplate } from '../../mail/templates.js'
import type { MailText } from '../../i18n/catalogue.js'
import { loggedError, type LoggedError } from '../../adapters/guard.js'
import type { Settings } from '../../config/settings.js'
import type { StateStore } from '../../store/types.js'

/** The store key of a challenge's emailed code. */
export const emailCodeKey = (challengeId: string): string => `2fa:email:${challengeId}`
const key = emailCodeKey

/** Six digits from the CSPRNG, leading zeros kept. */
export function newEmailCode (): string {
  return randomCode(6, '0123456789')
}

/** The code mail from its texts (in the request's language): values escaped in the HTML part, the subject on one line. */
export function emailCodeMessage (to: string, code: string, lifetimeMs: number, texts: MailText, siteName: string): MailMessage {
  const values = { code, minutes: String(Math.max(1, Math.round(lifetimeMs / 60_000))), site_name: siteName }
  return {
    to,
    subject: renderTemplate(texts.subject, values).replace(/[\r\n]+/g, ' '),
    text: renderTemplate(texts.text, values),
    html: renderTemplate(texts.html, values, escapeHtml)
  }
}

/** Sends a stored code; rejects with `EmailCodeUndelivered`. */
export type EmailCodeDelivery = () => Promise<void>

/** A code mail the mailer refused. The code was withdrawn unless `withdrawError` says why not. */
export class EmailCodeUndelivered extends Error {
  readonly mailError: LoggedError
  readonly withdrawError: unknown

  constructor (mailError: LoggedError, withdrawError: unknown) {
    super('the two-factor code mail could not be sent')
    this.name = 'EmailCodeUndelivered'
    this.mailError = mailError
    this.withdrawError = withdrawError
  }
}

/** A stored code's hashes; a bare string is the one hash an earlier version stored. */
function parseStored (raw: string): KeyedHashes {
  return raw.startsWith('{') ? JSON.parse(raw) as KeyedHashes : { hash: raw }
}

/**
 * Email codes: one per challenge, kept only as keyed hashes (six digits are
 * too few for a plain hash to hide them from whoever reads the store), under
 * every signing key (see `CodeHasher`), single use through its challenge's
 * one atomic claim.
 */
export class EmailCodeProvider {
  readonly #store: StateStore
  readonly #mailer: Mailer
  readonly #hasher = new CodeHasher('two-factor email code')

  constructor (store: StateStore, mailer: Mailer) {
    this.#store = store
    this.#mailer = mailer
  }

  /**
   * Stores a new code for the challenge (its keyed hash only) and answers its
   * delivery, for the caller to run once the sign-in has answered. The
   * delivery mails the code; when the mailer rejects, it withdraws the code so
   * it cannot be used and rejects with the mailer's error as a log may carry
   * it: the code and the message (the address too) cut out.
   */
  async issue (tokens: Settings['tokens'], challengeId: string, to: string, lifetimeMs: number, texts: MailText, siteName: string): Promise<EmailCodeDelivery> {
    const code = newEmailCode()
    await this.#store.set(key(challengeId), JSON.stringify(this.#hasher.hash(tokens, `${challengeId}:${code}`)), lifetimeMs)
    const message = emailCodeMessage(to, code, lifetimeMs, texts, siteName)
    return async () => {
      try {
        await this.#mailer.send(message)
      } catch (error) {
        throw new EmailCodeUndelivered(loggedError(error, [code, message]), await this.#withdraw(challengeId))
      }
    }
  }

  /** Deletes the challenge's code; answers the store's error when that failed (the code then dies with its lifetime). */
  async #withdraw (challengeId: string): Promise<unknown> {
    try {
      await this.#store.delete(key(challengeId))
      return null
    } catch (error) {
      return error
    }
  }

  /**
   * Whether `code` is the challenge's code. Reads only: the code is bound to
   * its challenge, and the challenge's one atomic claim is what makes a
   * sign-in single use. `known`: the code's entry, read already with other reads.
   */
  async check (tokens: Settings['tokens'], challengeId: string, code: string, known?: string | null): Promise<boolean> {
    const stored = known !== undefined ? known : await this.#store.get(key(challengeId))
    if (stored === null) return false
    return this.#hasher.matches(tokens, parseStored(stored), `${challengeId}:${code}`)
  }

  /** Deletes the code of a challenge that has ended (best effort: it expires anyway). */
  async discard (challengeId: string): Promise<void> {
    await this.#store.delete(key(challengeId)).catch(() => {})
  }
}
