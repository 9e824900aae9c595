import type { Mailer, MailMessage } from '../../lib/index.js'

/** A mailer that keeps what it is given; `next` takes the oldest message, or waits for the next one. */
export class MailBox implements Mailer {
  readonly #queue: MailMessage[] = []
  readonly #waiting: Array<(message: MailMessage) => void> = []

  async send (message: MailMessage): Promise<void> {
    const waiter = this.#waiting.shift()
    if (waiter === undefined) this.#queue.push(message)
    else waiter(message)
  }

  async next (): Promise<MailMessage> {
    const queued = this.#queue.shift()
    if (queued !== undefined) return queued
    return await new Promise(resolve => { this.#waiting.push(resolve) })
  }
}
