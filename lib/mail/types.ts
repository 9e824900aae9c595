/**
 * One message to send. Every field arrives as it was given: unicode in the
 * subject and the bodies, long lines unbroken, line breaks where they were.
 */
export interface MailMessage {
  /** The recipient's address. */
  to: string
  subject: string
  /** The plain-text body. */
  text: string
  /** The HTML body, sent beside the text when given (the reader's mail program shows one of them). */
  html?: string
}

/**
 * The mailer port. `send` resolves once the message is accepted for delivery
 * and rejects when it was not (the caller decides about retries). One
 * mailer serves every request, so sends overlap: each message is sent once,
 * as it was given.
 */
export interface Mailer {
  send (message: MailMessage): Promise<void>
}
