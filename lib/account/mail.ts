// The account's mails: rendered in the request's language, sent after the answer with bounded retries; an undelivered code is withdrawn.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Call } from '../adapters/second-factor.js'
import { loggedError } from '../adapters/guard.js'
import type { JwtLoginContext } from '../context/context.js'
import type { MailName } from '../i18n/catalogue.js'
import { renderTemplate, escapeHtml } from '../mail/templates.js'
import type { Mailer } from '../mail/types.js'
import { claimOnce } from '../store/claim.js'

/** The account's mails, and sign-in by email's. */
export type AccountMail = Extract<MailName, 'verifyEmail' | 'emailChange' | 'emailChanged' | 'passwordChanged' | 'emailSignIn' | 'emailSignInLink'>

/** A code a mail carries, as written: withdrawn (one compare-and-set from `raw`) when the mail cannot be sent. */
export interface MailedCode {
  code: string
  raw: string
  key: string
  record: { exp: number }
}

/** A mail to send: which, to whom, for which user (`null`: an address without an account yet), its placeholders' values, and the code it carries. */
export interface OutgoingMail {
  name: AccountMail
  to: string
  userId: number | null
  values: Record<string, string>
  code?: MailedCode
}

/** The mail's parts in the request's language, its values filled (escaped in the HTML part; the subject on one line). */
function render (ctx: JwtLoginContext, call: Call, mail: OutgoingMail): { subject: string, text: string, html: string } {
  const texts = ctx.messages.mail(call, mail.name)
  const values = { site_name: call.settings.resetPassword.mail.siteName, ...mail.values, ...(mail.code === undefined ? {} : { code: mail.code.code }) }
  return {
    subject: renderTemplate(texts.subject, values).replace(/[\r\n]+/g, ' '),
    text: renderTemplate(texts.text, values),
    html: renderTemplate(texts.html, values, escapeHtml)
  }
}

/**
 * Sends after the answer has gone (neither the mailer's work nor its
 * latency shows in the response time), with `resetPassword.mail.retries`.
 * Never rejects: after the last failure a code the mail carried is
 * withdrawn (claimed from the value this request wrote; a newer code stays),
 * and the failure is logged without the code or the address.
 */
export function mailLater (ctx: JwtLoginContext, call: Call, mail: OutgoingMail): void {
  // rendered after the answer too: an answer that mails nothing (an address without an account) takes no less time
  setImmediate(() => { deliver(ctx, call, mail, { to: mail.to, ...render(ctx, call, mail) }) })
}

async function deliver (ctx: JwtLoginContext, call: Call, mail: OutgoingMail, message: { to: string, subject: string, text: string, html: string }): Promise<void> {
  const { retries, retryDelayMs } = call.settings.resetPassword.mail
  const { userId } = mail
  for (let attempt = 1; ; attempt++) {
    try {
      await (ctx.reset.mailer as Mailer).send(message)
      ctx.events.emit('account.mail_sent', { userId, mail: mail.name, attempts: attempt })
      return
    } catch (error) {
      if (attempt > retries || ctx.reset.stop.signal.aborted) {
        await withdraw(ctx, mail)
        ctx.log.error({ userId, mail: mail.name, attempts: attempt, err: loggedError(error, [mail.code?.code, message]) }, 'jwt-login: an account mail could not be sent')
        ctx.events.emit('account.mail_failed', { userId, mail: mail.name, attempts: attempt })
        return
      }
    }
    await sleep(retryDelayMs, undefined, { signal: ctx.reset.stop.signal }).catch((aborted: unknown) => aborted)
  }
}

/** Withdraws the code of an undelivered mail: one compare-and-set from the value written, so a newer code keeps working. */
async function withdraw (ctx: JwtLoginContext, mail: OutgoingMail): Promise<void> {
  const issued = mail.code
  if (issued === undefined) return
  try {
    await claimOnce(ctx.store, issued.key, issued.raw, () => Math.max(1, issued.record.exp - ctx.clock()), () => {})
  } catch (error) {
    ctx.log.error({ userId: mail.userId, err: loggedError(error) }, 'jwt-login: an undelivered account code could not be withdrawn; it expires with its lifetime')
  }
}
