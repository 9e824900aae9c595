/** One message to send. */
export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
}

/**
 * The mailer port. `send` resolves once the message is accepted for delivery
 * and rejects when it was not (the caller decides about retries).
 */
export interface Mailer {
  send (message: MailMessage): Promise<void>
}
