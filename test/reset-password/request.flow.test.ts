// requestPasswordReset called as a flow: a context built as the plugin builds it, a recording mailer, no Fastify.
import t from 'tap'
import type { SettingsInput } from '../../lib/index.js'
import type { Mailer, MailMessage } from '../../lib/mail/types.js'
import { parseRecord } from '../../lib/reset-password/codes.js'
import { requestPasswordReset } from '../../lib/reset-password/request.js'
import type { JwtLoginEventMap, JwtLoginEventName } from '../../lib/services/events.js'
import { isClaimed } from '../../lib/store/claim.js'
import { ALICE, codeIn } from '../helpers/fixtures.js'
import { flowKit, type FlowKit } from '../helpers/flows.js'

const ANSWER = { message: 'If the email belongs to an account, a reset code has been sent to it.' }

type ResetInput = NonNullable<SettingsInput['resetPassword']>

interface ResetKit extends FlowKit {
  /** The mails the mailer was given (each try). */
  sent: MailMessage[]
  /** Resolves with the payloads of the next `count` events `event`. */
  next: <E extends JwtLoginEventName>(event: E, count?: number) => Promise<Array<JwtLoginEventMap[E]>>
  /** The payloads of one audit event, from now on. */
  collect: <E extends JwtLoginEventName>(event: E) => Array<JwtLoginEventMap[E]>
  /** Whether `code` is the code of alice's record in the store. */
  stored: (code: string) => Promise<boolean>
}

/** Reset on, retries 10 ms apart, mail to a recorder (`fail` says which sends throw). */
async function resetKit (reset: ResetInput = {}, fail: (message: MailMessage, sent: MailMessage[]) => boolean = () => false): Promise<ResetKit> {
  const sent: MailMessage[] = []
  const mailer: Mailer = {
    send: async (message) => {
      sent.push(message)
      // an error that quotes the message, as some mailers' errors do
      if (fail(message, sent)) throw new Error(`refused: ${message.text}`)
    }
  }
  const kit = await flowKit({ resetPassword: { enabled: true, ...reset, mail: { retryDelay: '10ms', ...reset.mail } } }, { mailer })
  const { ctx, store, settings, aliceId } = kit
  return {
    ...kit,
    sent,
    next: async (event, count = 1) => await new Promise((resolve) => {
      const seen: Array<JwtLoginEventMap[typeof event]> = []
      const listener = (payload: JwtLoginEventMap[typeof event]): void => {
        seen.push(payload)
        if (seen.length < count) return
        ctx.events.off(event, listener)
        resolve(seen)
      }
      ctx.events.on(event, listener)
    }),
    collect: (event) => {
      const seen: Array<JwtLoginEventMap[typeof event]> = []
      ctx.events.on(event, (payload) => { seen.push(payload) })
      return seen
    },
    stored: async (code) => {
      const record = parseRecord(await store.get(`reset:${aliceId}`))
      return record !== null && ctx.reset.hasher.matches(settings.tokens, record, `${record.id}:${code}`)
    }
  }
}

const email = (address: string): { email: string } => ({ email: address })

t.test('a known email gets a code, stored as a keyed hash and mailed after the answer; an unknown one the same answer, and nothing', async (t) => {
  const kit = await resetKit()
  const { ctx, call, clock, store, aliceId, sent } = kit
  const requested = kit.collect('reset.requested')
  const mailed = kit.next('reset.code_sent')

  t.same(await requestPasswordReset(ctx, call(), email(ALICE.email)), ANSWER)
  t.equal(sent.length, 0, 'no mail before the answer')
  t.same(await mailed, [{ userId: aliceId, attempts: 1 }])
  const mail = sent[0] as MailMessage
  t.equal(mail.to, ALICE.email)
  const code = codeIn(mail.text)
  t.match(code, /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/, 'eight characters of the default alphabet')
  const raw = await store.get(`reset:${aliceId}`) as string
  t.notMatch(raw, code, 'the store never holds the code')
  t.equal(JSON.parse(raw).exp, clock.now + 15 * 60_000, 'it lives 15 minutes')
  t.ok(await kit.stored(code), 'the stored hash is the mailed code\'s')

  t.same(await requestPasswordReset(ctx, call('198.51.100.9'), email('nobody@example.com')), ANSWER, 'an unknown email: the same answer')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(sent.length, 1, 'and no mail')
  t.equal(await store.get('reset:none'), null, 'and nothing written')
  t.same(requested, [{ userId: aliceId, ip: '203.0.113.7' }, { userId: null, ip: '198.51.100.9' }])
})

t.test('a missing or malformed email is 96', async (t) => {
  const { ctx, call } = await resetKit()
  for (const value of [undefined, 'alice', 'alice@example', 'al ice@example.com', `${'a'.repeat(250)}@example.com`]) {
    await t.rejects(requestPasswordReset(ctx, call(), { email: value }), { code: 'ERR_JWT_LOGIN_RESET_REQUEST_EMAIL_INVALID', errorCode: 96, statusCode: 400 }, String(value).slice(0, 20))
  }
})

t.test('10 concurrent requests for one address: exactly perEmail.max codes go out, the rest 429; the last one written is the one that works', async (t) => {
  const kit = await resetKit({ limits: { perEmail: { max: 3 }, perIp: { max: 100 } } })
  const { ctx, call, aliceId } = kit
  const failed = kit.collect('reset.failed')
  const mailed = kit.next('reset.code_sent', 3)

  const settled = await Promise.allSettled(Array.from({ length: 10 }, async () => await requestPasswordReset(ctx, call(), email(ALICE.email))))
  t.equal(settled.filter(s => s.status === 'fulfilled').length, 3, 'three answered')
  const refusals = settled.flatMap(s => s.status === 'rejected' ? [s.reason as { code: string, retryAfter: number }] : [])
  t.same(refusals.map(r => r.code), Array.from({ length: 7 }, () => 'ERR_JWT_LOGIN_RATE_LIMITED'), 'seven 429s')
  t.ok(refusals.every(r => r.retryAfter > 0), 'each with Retry-After')
  t.same(failed, Array.from({ length: 7 }, () => ({ step: 'request', userId: null, ip: '203.0.113.7', reason: 'rate_limited', errorCode: 200 })), 'refused on the address')

  t.same((await mailed).map(e => e.userId), [aliceId, aliceId, aliceId])
  const codes = kit.sent.map(mail => codeIn(mail.text))
  t.equal(new Set(codes).size, 3, 'three codes')
  t.same(await Promise.all(codes.map(kit.stored)), [false, false, true], 'each new code replaced the one before')
})

t.test('spellings the host matches to one account share its count: over it the answer is the same, but no code and no mail', async (t) => {
  const kit = await resetKit({ limits: { perEmail: { max: 2 } } })
  const { ctx, call, users, store, aliceId, sent } = kit
  // a host that folds +tags: each spelling is another address to the first count
  const find = users.findByEmail.bind(users)
  users.findByEmail = async (address) => await find(address.replace(/\+[^@]*/, ''))
  const failed = kit.collect('reset.failed')

  const mailed = kit.next('reset.code_sent', 2)
  for (const tag of ['+1', '+2']) t.same(await requestPasswordReset(ctx, call(), email(`alice${tag}@example.com`)), ANSWER)
  await mailed
  const written = await store.get(`reset:${aliceId}`)

  t.same(await requestPasswordReset(ctx, call(), email('alice+3@example.com')), ANSWER, 'the third answers as any other')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(sent.length, 2, 'but no third mail')
  t.equal(await store.get(`reset:${aliceId}`), written, 'and the code in the store is still the second')
  t.same(failed, [{ step: 'request', userId: aliceId, ip: '203.0.113.7', reason: 'rate_limited', errorCode: 200 }], 'the silent refusal carries the account')
})

t.test('10 concurrent requests from one client: exactly perIp.max go through, whatever the emails', async (t) => {
  const { ctx, call } = await resetKit({ limits: { perIp: { max: 4 } } })
  const settled = await Promise.allSettled(Array.from({ length: 10 }, async (_, i) => await requestPasswordReset(ctx, call('192.0.2.1'), email(`user${i}@example.com`))))
  t.equal(settled.filter(s => s.status === 'fulfilled').length, 4)
  t.same(settled.flatMap(s => s.status === 'rejected' ? [(s.reason as { code: string }).code] : []), Array.from({ length: 6 }, () => 'ERR_JWT_LOGIN_RATE_LIMITED'))
  t.same(await requestPasswordReset(ctx, call('192.0.2.2'), email(ALICE.email)), ANSWER, 'another client is counted apart')
})

t.test('a mail that fails every try: its code is withdrawn, the failure logged without the code or the address', async (t) => {
  const kit = await resetKit({ mail: { retries: 2 } }, () => true)
  const { ctx, call, store, aliceId, log } = kit
  const failed = kit.next('reset.code_failed')
  t.same(await requestPasswordReset(ctx, call(), email(ALICE.email)), ANSWER, 'the answer does not wait for the mail')
  t.same(await failed, [{ userId: aliceId, attempts: 3 }], 'tried three times')
  t.equal(kit.sent.length, 3)
  const code = codeIn((kit.sent[0] as MailMessage).text)
  t.ok(isClaimed(await store.get(`reset:${aliceId}`) as string), 'the code is withdrawn')
  t.notOk(await kit.stored(code))
  t.equal(log.length, 1)
  t.match(log[0], { level: 'error', message: 'jwt-login: the reset mail could not be sent; its code was withdrawn', fields: { userId: aliceId, attempts: 3, err: { type: 'Error' } } })
  const logged = JSON.stringify(log)
  t.notMatch(logged, code, 'no code in the log')
  t.notMatch(logged, ALICE.email, 'no address in the log')
  t.match(logged, '[redacted]')
})

t.test('a mail that fails late withdraws only its own code, not a newer one', async (t) => {
  // the first message fails on both of its tries; the second request's goes at once
  const kit = await resetKit({ mail: { retries: 1, retryDelay: '50ms' } }, (message, sent) => message === sent[0])
  const { ctx, call, aliceId } = kit
  const failed = kit.next('reset.code_failed')
  const mailed = kit.next('reset.code_sent')
  await requestPasswordReset(ctx, call(), email(ALICE.email))
  await new Promise(resolve => setImmediate(resolve))
  await requestPasswordReset(ctx, call(), email(ALICE.email))
  t.same(await mailed, [{ userId: aliceId, attempts: 1 }])
  t.same(await failed, [{ userId: aliceId, attempts: 2 }])
  const newer = codeIn((kit.sent.find(mail => mail !== kit.sent[0]) as MailMessage).text)
  t.ok(await kit.stored(newer), 'the newer code still works')
})
