// Sign-in by email through the client (issue 39): requestEmailSignIn and signInWithEmail against a listening host, answered and kept as
// signIn's are (bearer and cookie mode, a second factor), and signInWithEmailLink on the page the mail links to.
import t, { type Test } from 'tap'
import { createClient, type JwtLoginClient } from '../../lib/client.js'
import type { JwtLoginOptions, MailMessage, SettingsInput } from '../../lib/index.js'
import { mailCode } from '../helpers/account.js'
import { ALICE, cookieJar, listen, PREFIX, serve, webStorage, type Served } from '../helpers/client.js'
import { totpAt } from '../helpers/fixtures.js'
import { MailBox } from '../helpers/mail-box.js'
import { BOB, buildTwoFactorApp } from '../helpers/two-factor.js'

const LINK_PAGE = 'https://app.example.com/sign-in/email'
const ON = { emailSignIn: { enabled: true } }
const INVALID = { name: 'JwtLoginClientError', status: 401, errorCode: 246, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_INVALID' }

/** A listening host with sign-in by email on, its mails kept in `mail`. */
async function serveMail (t: Test, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<Served & { mail: MailBox }> {
  const mail = new MailBox()
  return { ...await serve(t, { ...ON, ...settings }, { mailer: mail, ...options }), mail }
}

/** The next sign-in mail (other mails are passed over). */
async function signInMail (mail: MailBox): Promise<MailMessage> {
  for (;;) {
    const message = await mail.next()
    if (message.text.includes('sign-in code')) return message
  }
}

/** A client of `base`, closed when `t` ends. */
function clientOf (t: Test, options: Parameters<typeof createClient>[0]): JwtLoginClient {
  const client = createClient(options)
  t.teardown(() => { client.close() })
  return client
}

t.test('a code asked for, then signed in with: the session starts as signIn starts it', async (t) => {
  const { base, clock, mail } = await serveMail(t)
  const client = clientOf(t, { baseUrl: base, now: clock })
  const events: string[] = []
  client.onSession((event) => { events.push(`${event.type}/${String(event.fromOtherTab)}`) })

  const asked = await client.requestEmailSignIn({ email: ALICE.email })
  t.type(asked.message, 'string')
  t.same(await client.requestEmailSignIn({ email: 'nobody@example.com' }), asked, 'the same answer for an address without an account')
  const message = await signInMail(mail)
  t.equal(message.to, ALICE.email)
  t.equal(client.jwt, undefined, 'asking for a code is no sign-in')

  const answer = await client.signInWithEmail({ email: ALICE.email, code: mailCode(message) })
  t.type(answer.jwt, 'string')
  t.type(answer.refresh_token, 'string')
  t.equal(client.jwt, answer.jwt)
  t.equal(client.twoFactorPending, false)
  t.same(events, ['signed-in/false'])
  t.equal((await client.validate()).user.user_login, 'alice')
  const refreshed = await client.refresh()
  t.not(refreshed, answer.jwt, 'the refresh token was kept')
  t.equal(client.jwt, refreshed)

  await t.rejects(client.signInWithEmail({ email: ALICE.email, code: mailCode(message) }), INVALID, 'a code works once')
  t.equal(client.jwt, refreshed, 'a refused code leaves the session as it was')
  t.same(events, ['signed-in/false', 'refreshed/false'])
})

t.test('the refusals: a wrong code (401 / 246), a bad address (400 / 244), no code (400 / 245), the feature off (403 / 243)', async (t) => {
  const { base, mail } = await serveMail(t)
  const client = clientOf(t, { baseUrl: base })
  await client.requestEmailSignIn({ email: ALICE.email })
  const right = mailCode(await signInMail(mail))
  const wrong = right === '000000' ? '111111' : '000000'
  await t.rejects(client.signInWithEmail({ email: ALICE.email, code: wrong }), INVALID)
  await t.rejects(client.signInWithEmail({ email: 'not an address', code: right }), { status: 400, errorCode: 244, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID' })
  await t.rejects(client.requestEmailSignIn({ email: 'not an address' }), { status: 400, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID' })
  await t.rejects(client.signInWithEmail({ email: ALICE.email } as never), { status: 400, errorCode: 245, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_CODE_MISSING' })
  t.equal(client.jwt, undefined)
  t.type((await client.signInWithEmail({ email: ALICE.email, code: right })).jwt, 'string', 'a wrong guess did not spend the code')

  const off = await serve(t)
  const plain = clientOf(t, { baseUrl: off.base })
  await t.rejects(plain.requestEmailSignIn({ email: ALICE.email }), { status: 403, errorCode: 243, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED' })
  await t.rejects(plain.signInWithEmail({ email: ALICE.email, code: right }), { status: 403, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_DISABLED' })
})

t.test('a user with a second factor: the code answers an interim token, completeTwoFactor starts the session', async (t) => {
  const mail = new MailBox()
  const kit = await buildTwoFactorApp({ settings: { ...ON, refresh: { enabled: true } }, plugin: { mailer: mail } })
  const base = await listen(t, kit.app)
  const client = clientOf(t, { baseUrl: base, now: kit.clock })
  const events: string[] = []
  client.onSession((event) => { events.push(event.type) })
  await client.requestEmailSignIn({ email: BOB.email })
  const interim = await client.signInWithEmail({ email: BOB.email, code: mailCode(await signInMail(mail)) })
  t.equal(interim.two_factor_required, true)
  t.type(interim.jwt, 'string')
  t.equal(client.twoFactorPending, true)
  t.equal(client.jwt, undefined, 'the interim token is no session')
  t.same(events, [])
  const done = await client.completeTwoFactor({ code: await totpAt(kit.secret, kit.clock.now) })
  t.equal(client.twoFactorPending, false)
  t.equal(client.jwt, done.jwt)
  t.same(events, ['signed-in'])
  t.equal((await client.validate()).user.user_login, 'bob')
})

t.test('cookie mode: the refresh token in its cookie, the CSRF token kept, the refresh and the sign-out', async (t) => {
  const { base, clock, mail, refreshes } = await serveMail(t, { refresh: { enabled: true, cookie: { enabled: true } } })
  const jar = cookieJar()
  const storage = webStorage()
  const client = clientOf(t, { baseUrl: base, mode: 'cookie', fetch: jar.fetch, storage, now: clock })
  await client.requestEmailSignIn({ email: ALICE.email })
  const answer = await client.signInWithEmail({ email: ALICE.email, code: mailCode(await signInMail(mail)) })
  t.type(answer.csrf_token, 'string')
  t.equal(answer.refresh_token, undefined, 'no answer gives the refresh token out')
  t.type(jar.cookies.get('__Host-jwt-login-refresh'), 'string', 'the cookie was set')
  t.same(JSON.parse(storage.items.get('jwt-login') ?? 'null'), { csrf: answer.csrf_token }, 'storage keeps the CSRF token alone')
  const verify = jar.sent.find(request => request.url.endsWith(`${PREFIX}/auth/email/verify`))
  t.equal(verify?.credentials, 'include')

  t.type(await client.refresh(), 'string')
  t.equal(refreshes(), 1)
  t.equal(jar.sent.findLast(request => request.url.endsWith(`${PREFIX}/auth/refresh`))?.headers.get('x-csrf-token'), answer.csrf_token)
  await client.signOut()
  t.equal(jar.cookies.has('__Host-jwt-login-refresh'), false, 'the cookie was cleared')
  t.equal(storage.items.has('jwt-login'), false)
})

/**
 * The page of `href` for the length of `t`: `location`, and a `history` whose replaceState calls are recorded in `log`
 * (with the client's fetch calls, to see the order); `history: false` for a page without one.
 */
function pageAt (t: Test, href: string, log: unknown[], { history = true } = {}): void {
  const state = { route: 'sign-in' }
  Object.assign(globalThis, {
    location: { href },
    history: history ? { state, replaceState: (...args: unknown[]) => { log.push(['replaceState', ...args]) } } : undefined
  })
  t.teardown(() => {
    delete (globalThis as { location?: unknown }).location
    delete (globalThis as { history?: unknown }).history
  })
}

/** The link of the next sign-in mail. */
async function linkIn (mail: MailBox): Promise<string> {
  const link = /https:\/\/app\.example\.com\/\S+/.exec((await signInMail(mail)).text)?.[0]
  if (link === undefined) throw new Error('no link in the mail')
  return link
}

t.test('signInWithEmailLink on the link page: the fragment read, the address bar cleared first, then signed in', async (t) => {
  const { base, clock, mail } = await serveMail(t, { emailSignIn: { enabled: true, linkUrl: LINK_PAGE } })
  const log: unknown[] = []
  const client = clientOf(t, { baseUrl: base, now: clock, fetch: async (input, init) => { log.push(`fetch ${String(input)}`); return await fetch(input, init) } })

  await client.requestEmailSignIn({ email: ALICE.email })
  const link = await linkIn(mail)
  t.match(link, new RegExp(`^${LINK_PAGE}#code=\\d{8}&email=alice%40example\\.com$`))
  pageAt(t, link, log)
  log.length = 0
  const answer = await client.signInWithEmailLink()
  t.type(answer?.jwt, 'string')
  t.equal(client.jwt, answer?.jwt)
  t.same(log, [['replaceState', { route: 'sign-in' }, '', LINK_PAGE], `fetch ${base}${PREFIX}/auth/email/verify`],
    'the fragment leaves the address bar (the history state kept) before the code is sent')
  t.equal((await client.validate()).user.user_login, 'alice')
})

t.test('signInWithEmailLink: null without a code; a URL given; no history; no page and no URL', async (t) => {
  const { base, mail } = await serveMail(t, { emailSignIn: { enabled: true, linkUrl: LINK_PAGE } })
  const log: unknown[] = []
  const client = clientOf(t, { baseUrl: base, fetch: async (input, init) => { log.push(`fetch ${String(input)}`); return await fetch(input, init) } })

  await t.rejects(client.signInWithEmailLink(), TypeError, 'in Node, without a page, the link is to be given')

  pageAt(t, `${LINK_PAGE}#/some/route`, log)
  t.equal(await client.signInWithEmailLink(), null, 'a fragment of the app\'s own')
  t.equal(await client.signInWithEmailLink(LINK_PAGE), null, 'no fragment')
  t.equal(await client.signInWithEmailLink(`${LINK_PAGE}#email=alice%40example.com`), null, 'an address without a code')
  t.same(log, [], 'nothing sent, the address bar left alone')

  await client.requestEmailSignIn({ email: ALICE.email })
  log.length = 0
  const given = await client.signInWithEmailLink(new URL(await linkIn(mail)))
  t.equal(client.jwt, given?.jwt, 'a URL (or a Location) given')
  t.same(log, [`fetch ${base}${PREFIX}/auth/email/verify`], 'another address than the page\'s: the address bar is not rewritten')

  await t.rejects(client.signInWithEmailLink(`${LINK_PAGE}#code=123456`), { status: 400, code: 'ERR_JWT_LOGIN_EMAIL_SIGN_IN_EMAIL_INVALID' }, 'a link without its address')

  await client.requestEmailSignIn({ email: ALICE.email })
  const link = await linkIn(mail)
  pageAt(t, link, log, { history: false })
  log.length = 0
  t.type((await client.signInWithEmailLink({ href: link }))?.jwt, 'string', 'a page without history signs in all the same')
  t.same(log, [`fetch ${base}${PREFIX}/auth/email/verify`])
})
