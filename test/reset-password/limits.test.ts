import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { MemoryStore, type StateStore } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { Faults, faultyStore, measure } from '../helpers/faults.js'
import { redisStore } from '../helpers/redis-store.js'
import { buildResetApp, errorOf, RESET_URL } from '../helpers/reset.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'

let smtp: SmtpPeer
t.before(async () => { smtp = await startSmtp() })
t.teardown(() => smtp.close())

const KATE = { login: 'kate', email: 'kate@x.com', password: 'kate has a long enough password', displayName: 'Kate' }
const PER_EMAIL = 5

/** Eight spellings of one address: case, fullwidth and other compatibility forms. */
function spellingsOf (local: string): string[] {
  const fullwidth = (s: string): string => [...s].map(c => String.fromCodePoint((c.codePointAt(0) as number) - 0x61 + 0xff41)).join('')
  const circled = (s: string): string => [...s].map(c => String.fromCodePoint((c.codePointAt(0) as number) - 0x61 + 0x24d0)).join('')
  const bold = (s: string): string => [...s].map(c => String.fromCodePoint((c.codePointAt(0) as number) - 0x61 + 0x1d41a)).join('')
  return [
    `${local}@x.com`,
    `${local.toUpperCase()}@x.com`,
    `${fullwidth(local)}@x.com`,
    `${fullwidth(local).toUpperCase()}@x.com`,
    `${circled(local)}@x.com`,
    `${bold(local)}@x.com`,
    `${local}@X.COM`,
    `${fullwidth(local.slice(0, 2))}${local.slice(2).toUpperCase()}@ｘ.com`
  ]
}

/**
 * A host that matches emails as NFKC, lower case, and further, as some mail
 * systems do, without a `+tag` or dots in the local part: every spelling
 * above finds the same user.
 */
class FoldingUsers extends MemoryUserAdapter {
  override async findByEmail (email: string): Promise<MemoryUser | null> {
    const [local, domain] = email.normalize('NFKC').toLowerCase().split('@') as [string, string]
    return await super.findByEmail(`${(local.split('+')[0] as string).replaceAll('.', '')}@${domain}`)
  }
}

const backends: Array<{ name: string, make: (t: Test) => Promise<StateStore> }> = [
  { name: 'memory', make: async () => new MemoryStore() },
  { name: 'redis', make: async (t) => redisStore(t, 'reset-limits').store }
]

interface Rig {
  app: FastifyInstance
  kateId: number
  post: (email: string) => Promise<LightMyRequestResponse>
  failures: Array<{ userId: number | null, reason: string }>
  /** Waits until `count` reset mails were sent since the rig was built, then answers how many went to `to`. */
  mailsTo: (to: string, count: number) => Promise<number>
}

async function rig (t: Test, store: StateStore): Promise<Rig> {
  const users = new FoldingUsers()
  const kate = await users.addUser(KATE)
  // the per-IP limit out of the way: only the per-account one is under test
  const { app } = await buildResetApp(smtp.port, { limits: { perEmail: { max: PER_EMAIL, window: '1h' }, perIp: { max: 1000 } } }, {}, { users, store })
  t.teardown(() => app.close())
  const failures: Rig['failures'] = []
  app.jwtLogin.events.on('reset.failed', (e) => { failures.push({ userId: e.userId, reason: e.reason }) })
  let sent = 0
  app.jwtLogin.events.on('reset.code_sent', () => { sent++ })
  const start = smtp.messages.length
  return {
    app,
    kateId: kate.ID,
    post: async (email) => await app.inject({ method: 'POST', url: RESET_URL, payload: { email } }),
    failures,
    mailsTo: async (to, count) => {
      const deadline = Date.now() + 10_000
      const sentSoFar = (): number => sent
      while (sentSoFar() < count && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
      return smtp.messages.slice(start).filter(m => m.to === to).length
    }
  }
}

for (const backend of backends) {
  t.test(`${backend.name}: defect 7 — spellings of one account share its perEmail limit`, async (t) => {
    const { post, failures, mailsTo } = await rig(t, await backend.make(t))
    const answers = []
    for (const email of spellingsOf('kate')) answers.push(await post(email))
    const accepted = answers.filter(res => res.statusCode === 200)
    t.equal(accepted.length, PER_EMAIL, `${PER_EMAIL} of 8 spellings get a code`)
    for (const res of answers.slice(PER_EMAIL)) {
      t.same(errorOf(res), { status: 429, errorCode: 200 }, 'the rest are refused')
      t.equal(res.headers['retry-after'], '3600')
    }
    t.equal(await mailsTo(KATE.email, accepted.length), PER_EMAIL, `kate gets ${PER_EMAIL} mails, not one limit per spelling`)
    t.same(failures, Array.from({ length: 3 }, () => ({ userId: null, reason: 'rate_limited' })), 'refused on the address: the same as for an unknown one')
  })

  t.test(`${backend.name}: addresses the host folds further (tags, dots) share the account's limit, silently`, async (t) => {
    const { post, failures, mailsTo, kateId } = await rig(t, await backend.make(t))
    const variants = ['kate', 'kate+a', 'k.ate', 'kate+b', 'ka.te', 'kate+c', 'kat.e', 'kate+d'].map(local => `${local}@x.com`)
    const answers = []
    for (const email of variants) answers.push(await post(email))
    t.same(answers.map(res => res.statusCode), Array(8).fill(200), 'every answer is the one an unknown address gets: no 429 tells the account exists')
    t.same(new Set(answers.map(res => res.body)).size, 1)
    t.equal(await mailsTo(KATE.email, PER_EMAIL), PER_EMAIL, `kate gets ${PER_EMAIL} mails`)
    await new Promise(resolve => setTimeout(resolve, 200))
    t.equal(await mailsTo(KATE.email, PER_EMAIL), PER_EMAIL, 'and no more')
    t.same(failures, Array.from({ length: 3 }, () => ({ userId: kateId, reason: 'rate_limited' })), 'the audit events say which account')
  })

  t.test(`${backend.name}: defect 7 — spellings of an unknown address are limited together`, async (t) => {
    const { post, failures } = await rig(t, await backend.make(t))
    const answers = []
    for (const email of spellingsOf('nobody')) answers.push(await post(email))
    t.same(answers.map(res => res.statusCode), [200, 200, 200, 200, 200, 429, 429, 429])
    t.same(answers.slice(0, PER_EMAIL).map(res => res.body), Array(PER_EMAIL).fill(answers[0]?.body), 'the same answer as for an account')
    t.equal(answers[PER_EMAIL]?.headers['retry-after'], '3600')
    t.same(failures, Array.from({ length: 3 }, () => ({ userId: null, reason: 'rate_limited' })))
  })
}

t.test('known or unknown, allowed or refused: the same store calls in the same order', async (t) => {
  const faults = new Faults()
  const inner = new MemoryStore()
  t.teardown(() => inner.close())
  const { post } = await rig(t, faultyStore(inner, faults))
  const shape = async (email: string): Promise<{ status: number, calls: string[] }> => {
    // the harness shortens keys: a counter's hash ends in `…`
    const { result, calls } = await measure(faults, async () => await post(email))
    return { status: result.statusCode, calls: calls.map(c => `${c.method} ${c.key.replace(/:[A-Za-z0-9_-]+…$/, ':<h>')}`) }
  }
  // the three counts go together, after the lookup; then the code and its tries, or one read
  const counted = ['increment rate:127.0.0.1', 'increment reset-requests:ip:<h>', 'increment reset-requests:email:<h>', 'increment reset-requests:user:<h>']
  t.same(await shape(KATE.email), { status: 200, calls: [...counted, 'set reset:1', 'delete reset-tries:1'] })
  t.same(await shape('nobody@x.com'), { status: 200, calls: [...counted, 'get reset:none'] })
  // kate's account reaches its limit through another address, which counts on its own
  for (let i = 1; i < PER_EMAIL; i++) await post('kate+tag@x.com')
  t.same(await shape('k.ate@x.com'), { status: 200, calls: [...counted, 'get reset:1'] }, 'over the account\'s limit: a read, as for an unknown email')
  for (let i = 1; i < PER_EMAIL; i++) {
    await post(KATE.email)
    await post('nobody@x.com')
  }
  t.same(await shape(KATE.email), { status: 429, calls: counted })
  t.same(await shape('nobody@x.com'), { status: 429, calls: counted })
})
