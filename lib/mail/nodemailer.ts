import nodemailer from 'nodemailer'
import type { Transporter } from 'nodemailer'
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js'
import type { Mailer, MailMessage } from './types.js'

export interface NodemailerMailerOptions {
  /** The sender, e.g. `"Example" <no-reply@example.com>`. */
  from: string
  /** SMTP options for a transport the mailer creates, or any nodemailer transport. */
  smtp?: SMTPTransport.Options
  transport?: Transporter
}

/** The mailer port on nodemailer: SMTP options or any nodemailer transport. */
export class NodemailerMailer implements Mailer {
  readonly #transport: Transporter
  readonly #from: string

  constructor (options: NodemailerMailerOptions) {
    if (options.transport === undefined && options.smtp === undefined) {
      throw new TypeError('NodemailerMailer needs `smtp` options or a `transport`')
    }
    this.#from = options.from
    this.#transport = options.transport ?? nodemailer.createTransport(options.smtp)
  }

  async send (message: MailMessage): Promise<void> {
    await this.#transport.sendMail({ from: this.#from, ...message })
  }

  close (): void {
    this.#transport.close()
  }
}

/** Prints each message to a stream (the demo host's "mail"). */
export class ConsoleMailer implements Mailer {
  readonly #write: (line: string) => void

  constructor (write: (line: string) => void = (line) => { process.stdout.write(line) }) {
    this.#write = write
  }

  async send (message: MailMessage): Promise<void> {
    this.#write(`\n--- mail to ${message.to} ---\nSubject: ${message.subject}\n\n${message.text}\n--- end of mail ---\n`)
  }
}
