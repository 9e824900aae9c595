// Answers in the request's language: every route's errors, the success messages, both mails; codes, statuses and the envelope unchanged.
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t from 'tap'
import jwtLogin, { errorDefinitions, JwtLoginSettingsError, type JwtLoginErrorCode } from '../../lib/index.js'
import { de } from '../../lib/i18n/catalogues/de.js'
import { en } from '../../lib/i18n/catalogues/en.js'
import { es } from '../../lib/i18n/catalogues/es.js'
import { fr } from '../../lib/i18n/catalogues/fr.js'
import type { Catalogue } from '../../lib/i18n/catalogue.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { Messages } from '../../lib/i18n/messages.js'
import { ALICE, buildApp, buildHost, HS_SECRET, registrationRefusal } from '../helpers/app.js'
import { MailBox } from '../helpers/mail-box.js'
import { buildResetApp, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import { buildTwoFactorApp, PREFIX } from '../helpers/two-factor.js'

const DE = { 'accept-language': 'de-DE,de;q=0.9,en;q=0.8' }

/** Whether `message` is the catalogue's message of an error with this number and status (a malformed field's phrase may follow). */
function isMessageOf (catalogue: Catalogue, body: { errorCode: number, message: string, error_code: number }, status: number): boolean {
  return (Object.keys(errorDefinitions) as JwtLoginErrorCode[]).some(code => {
    const definition = errorDefinitions[code]
    if (definition.errorCode !== body.errorCode || definition.statusCode !== status) return false
    const text = catalogue.errors[code]
    return body.message === text || body.message.startsWith(`${text.replace(/\.$/, '')}: `)
  })
}

t.test('every route of the plugin answers its errors in German for Accept-Language: de, with the same codes and statuses as in English', async (t) => {
  const routes: Array<{ method: string, url: string }> = []
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) if (route.url.startsWith(PREFIX) && method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, url: route.url.replace(/:(\w+)/g, 'x') })
  })
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, refresh: { enabled: true } } })
  await app.ready()
  t.teardown(() => app.close())
  t.ok(routes.length >= 25, `the plugin's routes were read (${routes.length})`)
  let checked = 0
  for (const { method, url } of [...routes, { method: 'GET', url: '/jwt-login/v1/no-such-route' }, { method: 'POST', url: '/?rest_route=/jwt-login/v1/auth/validate' }]) {
    const inject = async (headers: Record<string, string>): Promise<LightMyRequestResponse> =>
      await app.inject({ method: method as 'GET', url, headers: { ...headers, authorization: 'Bearer not.a.jwt' }, ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }) })
    const [german, english] = [await inject(DE), await inject({})]
    if (german.statusCode < 400) continue
    const body = german.json().data
    if (body === undefined) {
      // the back-channel logout answers its refusals as OpenID Connect says, for the provider's server
      t.match(german.json(), { error: 'invalid_request' }, `${method} ${url}: a provider's answer`)
      continue
    }
    checked++
    t.equal(german.statusCode, english.statusCode, `${method} ${url}: the same status`)
    t.equal(body.errorCode, english.json().data.errorCode, `${method} ${url}: the same errorCode`)
    t.ok(isMessageOf(de, body, german.statusCode), `${method} ${url}: "${body.message as string}" is German`)
    t.ok(isMessageOf(en, english.json().data, english.statusCode), `${method} ${url}: English without Accept-Language`)
    t.equal(german.headers['content-language'], 'de')
  }
  t.ok(checked >= 25, `errors of ${checked} routes checked`)
})

t.test('the language is negotiated within the locale settings', async (t) => {
  const wrong = { email: ALICE.email, password: 'not the password' }
  const messageFor = async (app: FastifyInstance, headers: Record<string, string>): Promise<string> =>
    (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: wrong, headers })).json().data.message
  const { app } = await buildApp()
  t.teardown(() => app.close())
  t.equal(await messageFor(app, {}), en.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'no header: the default, English')
  t.equal(await messageFor(app, { 'accept-language': 'fr-CA' }), fr.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'a region matches its language')
  t.equal(await messageFor(app, { 'accept-language': 'it, fr;q=0.4, de;q=0.5' }), de.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'the most preferred language the plugin has')
  t.equal(await messageFor(app, { 'accept-language': 'it' }), en.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'none it has: the default')
  t.equal(await messageFor(app, { 'accept-language': '*' }), en.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'any: the default')
  t.equal(await messageFor(app, { 'accept-language': ';;;q=x,,' }), en.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'a malformed header: the default')

  const fixed = await buildApp({ locale: { default: 'fr', allowed: ['fr'] } })
  t.teardown(() => fixed.app.close())
  t.equal(await messageFor(fixed.app, DE), fr.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'one allowed language fixes it')
  const limited = await buildApp({ locale: { default: 'fr', allowed: ['fr', 'de'] } })
  t.teardown(() => limited.app.close())
  t.equal(await messageFor(limited.app, {}), fr.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'the default without a header')
  t.equal(await messageFor(limited.app, DE), de.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS)
  t.equal(await messageFor(limited.app, { 'accept-language': 'es' }), fr.errors.ERR_JWT_LOGIN_WRONG_CREDENTIALS, 'a language outside allowed: the default')
})

t.test('a malformed field is named in the language; a host route guarded by authenticate answers in it too', async (t) => {
  const { app } = await buildHost((app) => {
    app.get('/me', { preHandler: app.jwtLogin.authenticate }, async () => ({ ok: true }))
  })
  t.teardown(() => app.close())
  const malformed = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { username: 7, password: 'x' }, headers: DE })
  t.equal(malformed.statusCode, 400)
  t.equal(malformed.json().data.message, `${de.errors.ERR_JWT_LOGIN_BAD_REQUEST.replace(/\.$/, '')}: ${de.fields.body.replace('{{field}}', 'username')}.`)
  const english = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { username: 7, password: 'x' } })
  t.equal(english.json().data.message, 'The request is malformed: body field `username`: expected string.', 'English as before')
  const host = await app.inject({ method: 'GET', url: '/me', headers: DE })
  t.same([host.statusCode, host.json().data], [401, { message: de.errors.ERR_JWT_LOGIN_BEARER_MISSING, errorCode: 53, error_code: 53 }])
})

t.test('success messages in the language', async (t) => {
  const { app } = await buildApp({ revoke: { enabled: true } })
  t.teardown(() => app.close())
  const jwt = (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })).json().data.jwt
  const revoked = await app.inject({ method: 'POST', url: `${PREFIX}/auth/revoke`, headers: { ...DE, authorization: `Bearer ${jwt as string}` } })
  t.equal(revoked.json().data.message, de.messages.tokenRevoked)
})

t.test('the reset mail and the two-factor email code in the language, over SMTP', async (t) => {
  const smtp: SmtpPeer = await startSmtp()
  t.teardown(() => smtp.close())
  const { app } = await buildResetApp(smtp.port, { mail: { siteName: 'Beispiel' } })
  t.teardown(() => app.close())
  const asked = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email }, headers: DE })
  t.equal(asked.json().data.message, de.messages.resetRequested)
  const mail = await smtp.nextMessage()
  t.equal(mail.subject, de.mails.reset.subject.replace('{{site_name}}', 'Beispiel'))
  // the line of the German text that holds the code, as the template writes it
  const before = (de.mails.reset.text.split('\n').find(line => line.includes('{{code}}')) as string).split('{{code}}')[0] as string
  const code = (new RegExp(`${before.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\S+)`).exec(mail.text) as RegExpExecArray)[1] as string
  t.match(mail.text, code)
  t.ok(mail.text.startsWith(de.mails.reset.text.split('{{')[0] as string), 'the German text')
  t.notMatch(mail.text, /\{\{/, 'every placeholder filled')
  const done = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD }, headers: { 'accept-language': 'pt-BR' } })
  t.equal(done.json().data.message, (await import('../../lib/i18n/catalogues/pt.js')).pt.messages.passwordChanged)

  const box = new MailBox()
  const kit = await buildTwoFactorApp({ method: 'email', mailer: box })
  t.teardown(() => kit.app.close())
  await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: 'bob@example.com', password: 'bob has a long password' }, headers: { 'accept-language': 'fr' } })
  const codeMail = await box.next()
  t.equal(codeMail.subject, fr.mails.emailCode.subject.replace('{{site_name}}', 'jwt-login'))
  t.match(codeMail.text, /\b\d{6}\b/)
  t.notMatch(codeMail.html, /\{\{/)
})

t.test('the settings\' own mail texts serve every language; what they leave out comes from the request\'s', async (t) => {
  const smtp: SmtpPeer = await startSmtp()
  t.teardown(() => smtp.close())
  const { app } = await buildResetApp(smtp.port, { mail: { subject: 'Code for {{site_name}}' } })
  t.teardown(() => app.close())
  await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email }, headers: DE })
  const mail = await smtp.nextMessage()
  t.equal(mail.subject, 'Code for jwt-login')
  t.ok(mail.text.startsWith(de.mails.reset.text.split('{{')[0] as string))
})

t.test('a host adds a language and overrides a text; a bad catalogue or locale is refused at registration', async (t) => {
  const { app } = await buildApp({}, {
    messages: {
      it: { errors: { ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'Credenziali errate.' }, mails: { emailCode: { subject: 'Il tuo codice' } } },
      de: { errors: { ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'Anmeldedaten falsch.' } }
    }
  })
  t.teardown(() => app.close())
  const wrong = (headers: Record<string, string>): Promise<LightMyRequestResponse> =>
    app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: 'nope' }, headers })
  t.equal((await wrong({ 'accept-language': 'it' })).json().data.message, 'Credenziali errate.')
  t.equal((await wrong(DE)).json().data.message, 'Anmeldedaten falsch.')
  const missing = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: {}, headers: { 'accept-language': 'it' } })
  t.equal(missing.json().data.message, en.errors.ERR_JWT_LOGIN_LOGIN_MISSING, 'what a host language leaves out is English')
  const overriddenEnglish = await buildApp({}, { messages: { en: { errors: { ERR_JWT_LOGIN_WRONG_CREDENTIALS: 'Nope.' } } } })
  t.teardown(() => overriddenEnglish.app.close())
  t.equal((await overriddenEnglish.app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: 'x' } })).json().data.message, 'Nope.')

  const refused = async (options: Record<string, unknown>, settings: object = {}): Promise<JwtLoginSettingsError> =>
    await registrationRefusal({ ...options, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, ...settings } })
  t.match(await refused({ messages: { de: { mails: { reset: { text: 'Ihr Code: {{kode}}' } } } } }), { path: 'messages/de/mails/reset/text', message: /\{\{kode\}\}/ })
  t.match(await refused({ messages: { 'not a tag': {} } }), { path: 'messages/not a tag', message: /language tag/ })
  t.match(await refused({ messages: 'de' }), { path: 'messages' })
  t.match(await refused({ messages: { de: 'Deutsch' } }), { path: 'messages/de', message: /must be an object/ })
  t.match(await refused({}, { locale: { default: 'it' } }), { path: 'locale/default', message: /`it` is not a language jwt-login has here \(en, de, fr, es, pt\)/ })
  t.match(await refused({}, { locale: { allowed: ['en', 'xx'] } }), { path: 'locale/allowed/1' })
  t.match(await refused({}, { locale: { default: 'en', allowed: ['de'] } }), { path: 'locale/default', message: /one of locale.allowed/ })
  t.match(await refused({}, { locale: { default: 'DE' } }), { path: 'locale/default' })
})

t.test('a reload may change the language; one naming a language without a catalogue is refused and the last good settings stay', async (t) => {
  let locale: object = { default: 'en' }
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  await app.register(jwtLogin, { users, settings: async () => ({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, locale }) })
  await app.ready()
  t.teardown(() => app.close())
  const message = async (): Promise<string> => (await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: {} })).json().data.message
  locale = { default: 'es' }
  await app.jwtLogin.reloadSettings()
  t.equal(await message(), es.errors.ERR_JWT_LOGIN_LOGIN_MISSING)
  locale = { default: 'xx' }
  await t.rejects(app.jwtLogin.reloadSettings(), { name: 'JwtLoginSettingsError', message: /locale\/default/ })
  t.equal(await message(), es.errors.ERR_JWT_LOGIN_LOGIN_MISSING)
})

t.test('the negotiation is remembered per header, in a bounded table', async (t) => {
  const messages = new Messages()
  const settings = { default: 'en', allowed: [] }
  for (let i = 0; i < 300; i++) t.equal(messages.negotiate(`de;q=0.${i % 9 + 1}, x-${i}`, settings), 'de')
  t.equal(messages.negotiate('fr', settings), 'fr', 'still negotiates after the table was dropped')
  t.equal(messages.negotiate('', settings), 'en', 'an empty header: the default')
  t.equal(messages.negotiate('de', { default: 'fr', allowed: ['fr', 'es'] }), 'fr', 'remembered per settings: other settings, another answer for the same header')
  t.same(messages.mail({ acceptLanguage: 'de', settings: { locale: settings } }, 'emailCode'), de.mails.emailCode)
  t.equal(messages.text({ settings: { locale: { default: 'es', allowed: [] } } }, 'loggedOut'), es.messages.loggedOut, 'no header: the default')
  const withItalian = new Messages({ it: { mails: { emailCode: { subject: 'Il tuo codice' } } } })
  t.same(withItalian.mail({ acceptLanguage: 'it', settings: { locale: settings } }, 'emailCode'), { ...en.mails.emailCode, subject: 'Il tuo codice' }, 'a new language over English, part by part')
  t.same(withItalian.locales, ['en', 'de', 'fr', 'es', 'pt', 'it'])
})
