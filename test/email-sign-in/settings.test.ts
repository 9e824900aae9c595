// The emailSignIn settings: their defaults, the refusals the schema cannot say (a lifetime over an hour, a link page that is not https or has a fragment), and what they need of the options, each naming its setting.
import t from 'tap'
import { resolveSettings } from '../../lib/config/settings.js'
import { JwtLoginSettingsError, type SettingsInput, type UserAdapter } from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET, registrationRefusal, registrationThrew } from '../helpers/app.js'
import { MailBox } from '../helpers/mail-box.js'
import { adapterWithout, buildEmailSignInApp } from '../helpers/email-sign-in.js'

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }

function refusalOf (emailSignIn: NonNullable<SettingsInput['emailSignIn']>): JwtLoginSettingsError | null {
  try {
    resolveSettings({ tokens: TOKENS, emailSignIn })
    return null
  } catch (error) {
    if (error instanceof JwtLoginSettingsError) return error
    throw error
  }
}

/** A memory adapter without `methods`, as a host's may be. */
const without = (...methods: Array<keyof UserAdapter>): UserAdapter => adapterWithout(new MemoryUserAdapter(), ...methods)

t.test('the defaults: off, eight digits for ten minutes and five tries, the three limits, no link, no registration', async (t) => {
  const { emailSignIn } = resolveSettings({ tokens: TOKENS })
  t.match(emailSignIn, {
    enabled: false,
    code: { length: 8, lifetimeMs: 600_000, maxTries: 5 },
    limits: { perAddress: { max: 5, windowMs: 3_600_000 }, perAccount: { max: 5, windowMs: 3_600_000 }, perIp: { max: 20, windowMs: 3_600_000 } },
    linkUrl: '',
    register: false
  })
})

t.test('code.lifetime: at most one hour', async (t) => {
  t.equal(refusalOf({ code: { lifetime: '1h' } }), null)
  t.equal(refusalOf({ code: { lifetime: 3600 } }), null, 'a number is seconds')
  for (const lifetime of ['61m', '90m', 3601, '2d']) {
    const refusal = refusalOf({ code: { lifetime } })
    t.equal(refusal?.path, 'emailSignIn/code/lifetime', String(lifetime))
    t.match(refusal?.message, 'at most 1 hour')
  }
})

t.test('code.length and code.maxTries within their bounds', async (t) => {
  t.equal(refusalOf({ code: { length: 12, maxTries: 10 } }), null)
  t.equal(refusalOf({ code: { length: 5 } })?.path, 'emailSignIn/code/length')
  t.equal(refusalOf({ code: { length: 13 } })?.path, 'emailSignIn/code/length')
  t.equal(refusalOf({ code: { maxTries: 0 } })?.path, 'emailSignIn/code/maxTries')
  t.equal(refusalOf({ code: { maxTries: 11 } })?.path, 'emailSignIn/code/maxTries')
})

t.test('linkUrl: an https page, or http on loopback, written plainly, without a fragment', async (t) => {
  for (const linkUrl of ['https://app.example.com/sign-in/email', 'https://app.example.com/in?from=mail', 'http://localhost:3000/in', 'http://127.0.0.1/in', 'http://[::1]:8080/in', '']) {
    t.equal(refusalOf({ linkUrl }), null, `accepted: ${linkUrl}`)
  }
  for (const linkUrl of ['http://app.example.com/in', 'http://localhost.example.com/in', 'https://app.example.com/in#page', 'https://app.example.com/in#', 'app.example.com/in', 'not a url', 'ftp://app.example.com/in', 'javascript:alert(1)',
    ' https://app.example.com/in', 'https://app.example.com/in ', 'https://app.example.com/sign in', 'https://app.example.com/in\n',
    // written into the mail as given: user info that hides another host, a backslash, a control character, a scheme without its slashes
    'https://app.example.com@evil.example/in', 'https://user:pw@app.example.com/in', 'https://app.example.com\\@evil.example/', 'https://app.example.com/\u0001', 'https:evil.example/in', 'data:text/html,hi']) {
    const refusal = refusalOf({ linkUrl })
    t.equal(refusal?.path, 'emailSignIn/linkUrl', `refused: ${JSON.stringify(linkUrl)}`)
    t.match(refusal?.message, 'https URL')
  }
})

t.test('on without the mailer option: refused at registration, naming emailSignIn/enabled', async (t) => {
  const refusal = await registrationRefusal({ settings: { tokens: TOKENS, emailSignIn: { enabled: true } } })
  t.equal(refusal.path, 'emailSignIn/enabled')
  t.match(refusal.message, 'mailer')
  t.equal(await registrationThrew({ settings: { tokens: TOKENS, emailSignIn: { enabled: false, register: true } } }), null, 'off, nothing is needed')
})

t.test('register without createUser: refused, naming emailSignIn/register', async (t) => {
  const refusal = await registrationRefusal({ users: without('createUser'), mailer: new MailBox(), settings: { tokens: TOKENS, emailSignIn: { enabled: true, register: true } } })
  t.equal(refusal.path, 'emailSignIn/register')
  t.match(refusal.message, 'createUser')
  t.equal(await registrationThrew({ users: without('createUser'), mailer: new MailBox(), settings: { tokens: TOKENS, emailSignIn: { enabled: true } } }), null, 'without register it is not needed')
})

t.test('an adapter that records verification but cannot set a password: refused, naming emailSignIn/enabled', async (t) => {
  const refusal = await registrationRefusal({ users: without('setPassword'), mailer: new MailBox(), settings: { tokens: TOKENS, emailSignIn: { enabled: true } } })
  t.equal(refusal.path, 'emailSignIn/enabled')
  t.match(refusal.message, 'setPassword')
  t.equal(await registrationThrew({ users: without('setPassword', 'setEmailVerified'), mailer: new MailBox(), settings: { tokens: TOKENS, emailSignIn: { enabled: true } } }), null,
    'an adapter that records no verification has no unproven account to retire')
})

t.test('registration by password beside sign-in by email, on an adapter that cannot record verification: refused, naming users/register/enabled', async (t) => {
  const refusal = await registrationRefusal({
    users: without('setEmailVerified'),
    mailer: new MailBox(),
    settings: { tokens: TOKENS, emailSignIn: { enabled: true }, users: { register: { enabled: true } } }
  })
  t.equal(refusal.path, 'users/register/enabled')
  t.match(refusal.message, 'setEmailVerified')
  t.equal(await registrationThrew({ users: without('setEmailVerified'), mailer: new MailBox(), settings: { tokens: TOKENS, users: { register: { enabled: true } } } }), null,
    'without sign-in by email it is not needed')
})

t.test('a reload is checked the same way: turning register on without createUser is refused, the settings in force stay', async (t) => {
  const kit = await buildEmailSignInApp(t, { usersWithout: ['createUser'] })
  await t.rejects(kit.reload({ emailSignIn: { enabled: true, register: true } }), { name: 'JwtLoginSettingsError', path: 'emailSignIn/register' })
  await t.rejects(kit.reload({ emailSignIn: { enabled: true, linkUrl: 'http://app.example.com/in' } }), { name: 'JwtLoginSettingsError', path: 'emailSignIn/linkUrl' })
  t.equal(kit.app.jwtLogin.settings.emailSignIn.register, false)
  t.equal(kit.app.jwtLogin.settings.emailSignIn.linkUrl, '')
})
