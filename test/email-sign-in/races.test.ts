/**
 * Sign-in by email under races, on every store (memory, Redis, a Redis
 * Cluster, PostgreSQL), with two instances of the app on one store, one
 * user database and one mailbox, as a service on two servers has:
 *
 * - of 20 concurrent verifies with the one right code, spread over both
 *   instances, exactly one signs in, and the user holds one session;
 * - of 20 concurrent wrong guesses at one account, at most
 *   `limits.loginPerAccount.max` are checked, the rest answer 429;
 * - a code survives fewer than `emailSignIn.code.maxTries` wrong tries,
 *   however concurrent: one less leaves it working, as many spend it;
 * - a code asked for on one instance signs in on the other;
 * - uses of the right code are not wrong guesses: a burst of them does not
 *   lock the account (a use that finds the code claimed, or past its tries,
 *   is given back, not counted as a failure).
 *
 * test/many-instances/ runs the first two across processes too.
 */
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import jwtLogin, { type Mailer, type MailMessage, type SettingsInput, type StateStore } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET } from '../helpers/app.js'
import { mailCode } from '../helpers/account.js'
import { errorOf, post } from '../helpers/http.js'
import { storeOf, type StoreKind } from '../helpers/shared-stores.js'

/** `emailSignIn.code.maxTries`, as the settings default it. */
const MAX_TRIES = 5
/** The account lockout of the guessing race: fewer than the guesses, and fewer than the code's tries. */
const LOCKOUT = 3
const MANY = { max: 1_000_000 }
const RACERS = 20

/** One mailbox for the whole service: both instances mail through it. */
class Mailbox implements Mailer {
  readonly sent: MailMessage[] = []
  async send (message: MailMessage): Promise<void> { this.sent.push(message) }

  /** The code of the first mail to `to` after the first `from`, waited for (5 s at most). */
  async codeTo (to: string, from: number): Promise<string> {
    for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise(resolve => setTimeout(resolve, 5))) {
      const mail = this.sent.slice(from).find(message => message.to === to)
      if (mail !== undefined) return mailCode(mail)
    }
    throw new Error(`no mail to ${to}`)
  }
}

interface Service {
  /** The two instances, on one store, one user database and one mailbox. */
  a: FastifyInstance
  b: FastifyInstance
  users: MemoryUserAdapter
  mailbox: Mailbox
}

/** Two instances on `store` and `users` with `loginPerAccount` as their account lockout; closed when `t` ends. */
async function service (t: Test, store: StateStore, users: MemoryUserAdapter, loginPerAccount: { max: number }): Promise<Service> {
  const mailbox = new Mailbox()
  const settings: SettingsInput = {
    tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
    emailSignIn: { enabled: true },
    sessions: { enabled: true },
    // every request comes from one address: only the account's lockout is under test
    limits: { loginPerAccount: { ...loginPerAccount, window: '15m' }, loginPerIp: MANY, requestsPerIp: MANY }
  }
  const [a, b] = await Promise.all([0, 1].map(async () => {
    const app = Fastify()
    await app.register(jwtLogin, { users, store, mailer: mailbox, settings })
    t.teardown(() => app.close())
    return app
  })) as [FastifyInstance, FastifyInstance]
  return { a, b, users, mailbox }
}

/** Asks `on` for a code for `email` and answers the code mailed. */
async function codeFrom (on: FastifyInstance, { mailbox }: Service, email: string): Promise<string> {
  const from = mailbox.sent.length
  const res = await post(on, '/auth/email', { email })
  if (res.statusCode !== 200) throw new Error(`POST /auth/email: ${res.body}`)
  return await mailbox.codeTo(email, from)
}

const verify = async (on: FastifyInstance, email: string, code: string): Promise<LightMyRequestResponse> => await post(on, '/auth/email/verify', { email, code })

/** `count` verifies of `email` at once, alternating between the instances, each with the code `codeOf(i)` names. */
async function burst ({ a, b }: Service, email: string, count: number, codeOf: (i: number) => string): Promise<Array<[number, number | undefined]>> {
  const answers = await Promise.all(Array.from({ length: count }, async (_, i) => await verify(i % 2 === 0 ? a : b, email, codeOf(i))))
  return answers.map(errorOf)
}

/** A six-digit code that is not `right`. */
const wrongFor = (right: string, i: number): string => String((Number(right) + 1 + i) % 1_000_000).padStart(6, '0')

const STORES: StoreKind[] = ['memory', 'redis', 'cluster', 'postgres']

// one user database for every store's services (each store holds its own codes and sessions), hashed once
const users = new MemoryUserAdapter()
const racer = await users.addUser({ login: 'racer', email: 'racer@example.com', password: 'the racer password' })
const survivor = await users.addUser({ login: 'survivor', email: 'survivor@example.com', password: 'the survivor password' })
const crosser = await users.addUser({ login: 'crosser', email: 'crosser@example.com', password: 'the crosser password' })
const guessed = await users.addUser({ login: 'guessed', email: 'guessed@example.com', password: 'the guessed password' })
const clicker = await users.addUser({ login: 'clicker', email: 'clicker@example.com', password: 'the clicker password' })

for (const kind of STORES) {
  t.test(kind, async (t) => {
    const store = await storeOf(t, kind, 'email-sign-in-races')
    // the lockout of this service is out of reach of the races: every verify is checked
    const open = await service(t, store, users, { max: 1000 })

    await t.test(`${kind}: of ${RACERS} concurrent verifies with the right code, on two instances, one signs in, with one session`, async (t) => {
      const code = await codeFrom(open.a, open, racer.user_email)
      const answers = await Promise.all(Array.from({ length: RACERS }, async (_, i) => await verify(i % 2 === 0 ? open.a : open.b, racer.user_email, code)))
      const won = answers.filter(res => res.statusCode === 200)
      t.equal(won.length, 1, 'exactly one signs in')
      t.same(answers.filter(res => res.statusCode !== 200).map(errorOf), Array(RACERS - 1).fill([401, 246]), 'every other use is refused as a used code')
      const jwt = (won[0] as LightMyRequestResponse).json().data.jwt as string
      for (const on of [open.a, open.b]) {
        const listed = await on.inject({ method: 'GET', url: '/jwt-login/v1/sessions', headers: { authorization: `Bearer ${jwt}` } })
        t.equal(listed.statusCode, 200)
        t.equal(listed.json().data.sessions.length, 1, 'the user holds one session, whichever instance lists it')
      }
      t.same(errorOf(await verify(open.b, racer.user_email, code)), [401, 246], 'the code stays spent')
    })

    await t.test(`${kind}: a code survives fewer than maxTries wrong tries, however concurrent`, async (t) => {
      const code = await codeFrom(open.b, open, survivor.user_email)
      t.same(await burst(open, survivor.user_email, MAX_TRIES - 1, i => wrongFor(code, i)), Array(MAX_TRIES - 1).fill([401, 246]), `${MAX_TRIES - 1} wrong codes at once are refused`)
      t.equal((await verify(open.a, survivor.user_email, code)).statusCode, 200, 'the code then signs in: its last try')

      const next = await codeFrom(open.a, open, survivor.user_email)
      t.same(await burst(open, survivor.user_email, RACERS, i => wrongFor(next, i)), Array(RACERS).fill([401, 246]), `${RACERS} wrong codes at once are refused`)
      t.same(errorOf(await verify(open.b, survivor.user_email, next)), [401, 246], 'the code is spent: its tries were used up, and the right code comes after them')
    })

    await t.test(`${kind}: a code asked for on one instance signs in on the other`, async (t) => {
      const code = await codeFrom(open.a, open, crosser.user_email)
      const res = await verify(open.b, crosser.user_email, code)
      t.equal(res.statusCode, 200, 'asked on A, used on B')
      const validated = await post(open.a, '/auth/validate', { JWT: res.json().data.jwt })
      t.equal(validated.statusCode, 200, 'the session validates on A')
    })

    await t.test(`${kind}: of ${RACERS} concurrent wrong guesses at one account, at most limits.loginPerAccount.max are checked`, async (t) => {
      const strict = await service(t, store, users, { max: LOCKOUT })
      const code = await codeFrom(strict.a, strict, guessed.user_email)
      const answers = await burst(strict, guessed.user_email, RACERS, i => wrongFor(code, i))
      const checked = answers.filter(([status]) => status === 401)
      t.ok(checked.length >= 1 && checked.length <= LOCKOUT, `${checked.length} checked, at most ${LOCKOUT}`)
      t.same(checked, Array(checked.length).fill([401, 246]), 'a checked guess is a wrong code')
      t.same(answers.filter(([status]) => status !== 401), Array(RACERS - checked.length).fill([429, 200]), 'the others are refused unchecked')
      // on a cluster the three counts of a guess (address, account, client) are not one atomic batch: a guess can rank
      // within the limit on one and over it on another, and the burst leave fewer failures than the limit; guesses one at a time fill it
      for (let n = checked.length; n < LOCKOUT; n++) t.same(errorOf(await verify(strict.a, guessed.user_email, wrongFor(code, 100 + n))), [401, 246], 'a guess after the burst is checked, up to the limit')
      for (const on of [strict.a, strict.b]) t.same(errorOf(await verify(on, guessed.user_email, code)), [429, 200], 'the account is locked on both instances, the right code too')
    })

    await t.test(`${kind}: ${RACERS} concurrent uses of the right code, more than the lockout allows, do not lock the account`, async (t) => {
      const strict = await service(t, store, users, { max: LOCKOUT })
      const code = await codeFrom(strict.b, strict, clicker.user_email)
      const answers = await burst(strict, clicker.user_email, RACERS, () => code)
      t.ok(answers.filter(([status]) => status === 200).length <= 1, 'at most one signs in')
      const next = await verify(strict.a, clicker.user_email, await codeFrom(strict.a, strict, clicker.user_email))
      t.same(errorOf(next), [200, undefined], 'a new code then signs in: no use of the right code was a wrong guess')
    })
  })
}
