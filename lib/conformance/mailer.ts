// The mailer port's conformance suite: what every Mailer (nodemailer over SMTP, the console, a host's own) must do.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { MAILER_MANIFEST, supportsOf } from '../adapters/manifest.js'
import type { Mailer, MailMessage } from '../mail/types.js'
import { optionalMethod, settleAll } from './port-helpers.js'
import { inSuiteRealm } from './realm.js'
import { declareSuite, parallelismOf, type Rule, type SuiteOptions } from './runner.js'

/** What `create` resolves: the mailer, and the mailbox at the other end. */
export interface MailerFixture {
  mailer: Mailer
  /**
   * Every message that arrived at the other end since `create`, oldest
   * first, as its reader gets it (decoded from MIME; line breaks as CRLF or
   * LF). May wait for what was accepted to arrive.
   */
  delivered: () => Promise<MailMessage[]>
  /**
   * Makes the other end refuse the next message (an SMTP server answering
   * 550, an API answering an error). It is the capability `refuse` (the
   * mailer's manifest has none of its own): a `supports` given to the suite
   * says `{ refuse: true }` when the fixture has it, and without it the
   * rules that need a refusal are skipped, saying so.
   */
  refuse?: () => void
}

/**
 * The suite's options. `supports`, when given, names the one capability the
 * rules may need, `refuse`: `{ refuse: true }` for a fixture with `refuse`.
 */
export interface MailerSuiteOptions extends SuiteOptions<MailerFixture> {
  /**
   * The address the suite sends to, one the mailbox of `delivered` receives
   * (default `jwt-login-conformance+<random>@example.com`: a tag of its own
   * on every run, so that runs sharing a mailbox are told apart).
   */
  recipient?: string
}

/** What the rules read of the options. */
export interface MailerSettings {
  parallelism: number
  recipient: string
}

type MailerRule = Rule<MailerFixture, MailerSettings>

/** Accents, a decomposed é, Cyrillic, CJK, Arabic, emoji beyond 16 bits and a zero-width joiner. */
const UNICODE = 'Grüße, Zoë – ключ 鍵 e\u0301 مرحبا 🔑 👩\u200d💻 ß'

/** A line of 2,000 characters without a space: SMTP lines end at 998 bytes, so the mailer must encode past them, not cut or fold. */
function longToken (): string {
  return randomBytes(1500).toString('base64url')
}

/** A line of 300 words, over 2,000 characters: one a mailer might be tempted to wrap. */
function longWords (): string {
  return Array.from({ length: 300 }, (_, n) => `word${n}`).join(' ')
}

/** A token of its own in each subject: a mailer that swaps or repeats messages is seen. */
function tagged (subject: string): string {
  return `${subject} [${randomBytes(6).toString('hex')}]`
}

/** A body as its reader gets it: SMTP carries line breaks as CRLF. */
function lf (body: string): string {
  return body.replace(/\r\n/g, '\n')
}

/** What arrived of a message: the HTML part only when the suite sent one (a mailer may add its own). */
function seen (message: MailMessage, withHtml: boolean): MailMessage {
  const { to, subject, text, html } = message
  return { to, subject, text: lf(text), ...(withHtml ? { html: lf(html ?? '(no html part)') } : {}) }
}

/** Sends each message in turn, then checks that exactly they arrived, in order, whole. */
async function sendAndCheck (fixture: MailerFixture, messages: MailMessage[], what: string): Promise<void> {
  for (const message of messages) await fixture.mailer.send(message)
  const arrived = await fixture.delivered()
  assert.equal(arrived.length, messages.length, `${what}: how many messages arrived`)
  arrived.forEach((message, n) => {
    const sent = messages[n] as MailMessage
    assert.deepEqual(seen(message, sent.html !== undefined), sent, `${what}: the message as it arrived`)
  })
}

/** The capabilities of the fixture: the manifest's, and `refuse` when the mailbox can refuse. */
function supportsOfFixture (fixture: MailerFixture): Record<string, boolean> {
  return { ...supportsOf(MAILER_MANIFEST, fixture.mailer), refuse: typeof fixture.refuse === 'function' }
}

function refuse (fixture: MailerFixture): void {
  optionalMethod(fixture, 'refuse', 'the fixture')()
}

export const mailerRules: readonly MailerRule[] = [
  {
    name: 'send resolves and the message arrives with its recipient, subject and text',
    contract: '`send` resolves once the message is accepted for delivery',
    async run (fixture, { recipient }) {
      const message = { to: recipient, subject: tagged('Your sign-in code'), text: 'Your code is 12345678.\nIt expires in 15 minutes.' }
      await sendAndCheck(fixture, [message], 'a plain-text message')
    }
  },
  {
    name: 'the HTML part arrives beside the text, whole',
    contract: 'The HTML body, sent beside the text when given',
    async run (fixture, { recipient }) {
      const message = {
        to: recipient,
        subject: tagged('Your sign-in code'),
        text: 'Your code is 12345678.',
        html: [
          '<p>Your code is <strong>12345678</strong>.</p>',
          `<p style="color: #555">${UNICODE} &amp; more</p>`,
          `<p><a href="https://app.example.com/sign-in#${longToken()}">${longWords()}</a></p>`
        ].join('\n')
      }
      await sendAndCheck(fixture, [message], 'a message with an HTML part (unicode, a line of over 4,000 characters)')
    }
  },
  {
    name: 'a unicode subject and text arrive intact',
    contract: 'unicode in the subject and the bodies',
    async run (fixture, { recipient }) {
      const message = { to: recipient, subject: tagged(UNICODE), text: `${UNICODE}\n${UNICODE}` }
      await sendAndCheck(fixture, [message], 'a unicode message')
    }
  },
  {
    name: 'long lines arrive unbroken',
    contract: 'long lines unbroken',
    async run (fixture, { recipient }) {
      const message = {
        to: recipient,
        subject: tagged(`A long subject: ${Array.from({ length: 20 }, (_, n) => `part ${n}`).join(' ')}`),
        text: `${longToken()}\n${longWords()}`
      }
      await sendAndCheck(fixture, [message], 'a message with lines of 2,000 characters and more')
    }
  },
  {
    name: 'line breaks arrive where they were',
    contract: 'line breaks where they were',
    async run (fixture, { recipient }) {
      // a line of a lone dot ends an SMTP message unless the mailer escapes it
      const text = ['Hello,', '', '.', '..', 'From the team', '  indented', '', '', 'last line'].join('\n')
      await sendAndCheck(fixture, [{ to: recipient, subject: tagged('Lines'), text }], 'a message of many lines')
    }
  },
  {
    name: 'concurrent sends each arrive once',
    contract: 'One mailer serves every request, so sends overlap: each message is sent once, as it was given.',
    async run (fixture, { recipient, parallelism }) {
      const messages = Array.from({ length: parallelism }, (_, n) => ({ to: recipient, subject: tagged(`Message ${n + 1} of ${parallelism}`), text: `Body of message ${n + 1}.` }))
      await settleAll(messages.map(async message => { await fixture.mailer.send(message) }))
      const arrived = (await fixture.delivered()).map(message => seen(message, false))
      const bySubject = (a: MailMessage, b: MailMessage): number => a.subject.localeCompare(b.subject)
      assert.deepEqual(inSuiteRealm(arrived.sort(bySubject)), messages.sort(bySubject), `the ${parallelism} messages sent at once, as they arrived`)
    }
  },
  {
    name: 'send rejects when the message is refused',
    contract: 'rejects when it was not',
    needs: ['refuse'],
    async run (fixture, { recipient }) {
      refuse(fixture)
      let outcome = 'resolved'
      try {
        await fixture.mailer.send({ to: recipient, subject: tagged('Refused'), text: 'This message is refused.' })
      } catch {
        outcome = 'rejected'
      }
      assert.equal(outcome, 'rejected', 'what send did when the other end refused the message')
      assert.deepEqual(inSuiteRealm(await fixture.delivered()), [], 'the messages that arrived')
    }
  },
  {
    name: 'after a refusal the next message is sent, once',
    contract: '(the caller decides about retries)',
    needs: ['refuse'],
    async run (fixture, { recipient }) {
      refuse(fixture)
      await fixture.mailer.send({ to: recipient, subject: tagged('Refused'), text: 'This message is refused.' }).catch(() => {})
      await sendAndCheck(fixture, [{ to: recipient, subject: tagged('Accepted'), text: 'This one is accepted.' }], 'the message after a refused one')
    }
  }
]

/**
 * The mailer port's contract, one test per rule, on the runner's `test`:
 * the refusal rules are skipped, saying so, when the fixture cannot refuse.
 */
export async function mailerSuite (options: MailerSuiteOptions): Promise<void> {
  const settings: MailerSettings = { parallelism: parallelismOf(options), recipient: options.recipient ?? `jwt-login-conformance+${randomBytes(4).toString('hex')}@example.com` }
  await declareSuite(options, 'Mailer', mailerRules, supportsOfFixture, settings)
}
