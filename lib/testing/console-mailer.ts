import type { Mailer, MailMessage } from '../mail/types.js'

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
