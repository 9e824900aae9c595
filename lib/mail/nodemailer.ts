import type { Transporter } from 'nodemailer'
import { requirePeer } from '../core/peer.js'
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js'
import type { Mailer, MailMessage } from './types.js'

const nodemailer = requirePeer<typeof import('nodemailer')>('nodemailer', 'fastify-jwt-login/nodemailer')

export interface NodemailerMailerOptions {
  /** The sender, e.g. `"Example" <no-reply@example.com>`. */
  from: string
  /**
   * SMTP options for a transport the mailer creates (the timeouts of
   * `SMTP_TIMEOUTS` unless given here), or any nodemailer transport.
   */
  smtp?: SMTPTransport.Options
  transport?: Transporter
}

/**
 * The SMTP timeouts (ms) of a transport made from `smtp` options, so a stalled
 * server fails a send in seconds rather than nodemailer's minutes. The host's
 * own `smtp` values win.
 */
export const SMTP_TIMEOUTS = Object.freeze({
  /** To open the TCP (or TLS) connection. */
  connectionTimeout: 10_000,
  /** From the connection to the server's greeting. */
  greetingTimeout: 10_000,
  /** Of silence on the socket, at any step (after DATA included). */
  socketTimeout: 20_000
})

/** The mailer port on nodemailer: SMTP options or any nodemailer transport. */
export class NodemailerMailer implements Mailer {
  readonly #transport: Transporter
  readonly #from: string

  constructor (options: NodemailerMailerOptions) {
    if (options.transport === undefined && options.smtp === undefined) {
      throw new TypeError('NodemailerMailer needs `smtp` options or a `transport`')
    }
    this.#from = options.from
    this.#transport = options.transport ?? nodemailer.createTransport({ ...SMTP_TIMEOUTS, ...options.smtp })
  }

  async send (message: MailMessage): Promise<void> {
    await this.#transport.sendMail({ from: this.#from, ...message })
  }

  close (): void {
    this.#transport.close()
  }
}
