import type { Mailer, MailMessage } from '../mail/types.js'

/** Prints each message to a stream (the demo host's "mail"): its HTML part too, when it has one, so that nothing sent is lost. */
export class ConsoleMailer implements Mailer {
  readonly #write: (line: string) => void

  constructor (write: (line: string) => void = (line) => { process.stdout.write(line) }) {
    this.#write = write
  }

  async send (message: MailMessage): Promise<void> {
    const html = message.html === undefined ? '' : `\n--- html ---\n${message.html}`
    this.#write(`\n--- mail to ${message.to} ---\nSubject: ${message.subject}\n\n${message.text}${html}\n--- end of mail ---\n`)
  }
}
