// The package's mailers through the published suite: ConsoleMailer as printed, NodemailerMailer over a real SMTP conversation.
import { test } from 'tap'
import { mailerSuite } from '../../lib/conformance.js'
import type { MailMessage } from '../../lib/index.js'
import { NodemailerMailer } from '../../lib/nodemailer.js'
import { ConsoleMailer } from '../../lib/testing.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'

/** What ConsoleMailer prints of one message, read back: the console is its mailbox. */
const PRINTED = /^\n--- mail to (.*) ---\nSubject: (.*)\n\n([\s\S]*?)(?:\n--- html ---\n([\s\S]*))?\n--- end of mail ---\n$/

function readPrinted (printed: string): MailMessage {
  const [, to, subject, text, html] = PRINTED.exec(printed) ?? []
  if (to === undefined || subject === undefined || text === undefined) throw new Error(`not a printed mail: ${JSON.stringify(printed)}`)
  return { to, subject, text, ...(html === undefined ? {} : { html }) }
}

// The console takes every message: nothing to refuse, so the refusal rules are skipped.
await mailerSuite({
  test,
  title: 'ConsoleMailer',
  create: async () => {
    const printed: string[] = []
    return { mailer: new ConsoleMailer(line => { printed.push(line) }), delivered: async () => printed.map(readPrinted) }
  }
})

// A server of its own for each test, which refuses when told; its messages as smtp-server received and the helper decoded them.
const servers = new WeakMap<object, { smtp: SmtpPeer, mailer: NodemailerMailer }>()
await mailerSuite({
  test,
  title: 'NodemailerMailer',
  create: async () => {
    const smtp = await startSmtp()
    const mailer = new NodemailerMailer({ from: 'no-reply@example.test', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true } })
    const fixture = {
      mailer,
      // the helper answers an absent HTML part as ''
      delivered: async () => smtp.messages.map(({ html, ...message }) => ({ ...message, ...(html === '' ? {} : { html }) })),
      refuse: smtp.refuseNext
    }
    servers.set(fixture, { smtp, mailer })
    return fixture
  },
  destroy: async (fixture) => {
    const made = servers.get(fixture)
    made?.mailer.close()
    await made?.smtp.close()
  }
})
