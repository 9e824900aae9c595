import t from 'tap'
import { ALICE } from '../helpers/app.js'
import { buildResetApp, codeIn, errorOf, NEW_PASSWORD, RESET_URL } from '../helpers/reset.js'
import { startSmtp } from '../helpers/smtp.js'

const AUTH = '/jwt-login/v1/auth'

t.test('the whole reset through a real SMTP server ends every old session', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const { app } = await buildResetApp(smtp.port, {}, { refresh: { enabled: true } })
  t.teardown(() => app.close())
  const seen: string[] = []
  for (const name of ['reset.requested', 'reset.code_sent', 'reset.completed'] as const) {
    app.jwtLogin.events.on(name, (payload) => { seen.push(`${name} ${JSON.stringify(payload)}`) })
  }

  const login = await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(login.statusCode, 200)
  const { jwt: oldJwt, refresh_token: oldRefresh } = login.json().data

  const requested = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: 'Alice@Example.com' } })
  t.equal(requested.statusCode, 200)
  t.same(requested.json(), { success: true, data: { message: 'If the email belongs to an account, a reset code has been sent to it.' } })

  const mail = await smtp.nextMessage()
  t.equal(mail.to, ALICE.email, 'sent to the stored address')
  t.equal(mail.subject, 'Your jwt-login password reset code')
  const code = codeIn(mail.text)
  t.match(code, /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/, 'eight characters of the unambiguous alphabet')
  t.match(mail.text, `Hello ${ALICE.displayName},`)
  t.match(mail.text, 'expires in 15 minutes')
  t.match(mail.html, `>${code}</strong>`)

  const reset = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code, new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200)
  t.same(reset.json(), { success: true, data: { message: 'User Password has been changed.' } }, 'a message, no token: it does not log in')

  const fresh = await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, password: NEW_PASSWORD } })
  t.equal(fresh.statusCode, 200, 'the new password logs in')
  const freshValidate = await app.inject({ method: 'POST', url: `${AUTH}/validate`, headers: { authorization: `Bearer ${fresh.json().data.jwt}` } })
  t.equal(freshValidate.statusCode, 200, 'a session started after the reset works')

  const oldPassword = await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, password: ALICE.password } })
  t.same(errorOf(oldPassword), { status: 401, errorCode: 48 }, 'the old password fails')
  const refreshed = await app.inject({ method: 'POST', url: `${AUTH}/refresh`, payload: { refresh_token: oldRefresh } })
  t.same(errorOf(refreshed), { status: 401, errorCode: 51 }, 'the old refresh token fails')
  const validated = await app.inject({ method: 'POST', url: `${AUTH}/validate`, headers: { authorization: `Bearer ${oldJwt}` } })
  t.same(errorOf(validated), { status: 401, errorCode: 55 }, 'the old access token fails')

  t.same(seen, [
    'reset.requested {"userId":1,"ip":"127.0.0.1"}',
    'reset.code_sent {"userId":1,"attempts":1}',
    'reset.completed {"userId":1,"ip":"127.0.0.1"}'
  ], 'the events carry ids, never the code')
})

t.test('an unknown email gets the same answer and no mail', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const requests: unknown[] = []
  app.jwtLogin.events.on('reset.requested', (payload) => { requests.push(payload) })

  const unknown = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: 'nobody@example.com' } })
  const known = await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  t.equal(unknown.statusCode, known.statusCode)
  t.equal(unknown.body, known.body, 'byte for byte the same body')
  t.equal(unknown.headers['content-length'], known.headers['content-length'])

  const mail = await smtp.nextMessage()
  t.equal(mail.to, ALICE.email, 'the first mail is the known user\'s: the unknown email got none')
  t.equal(smtp.messages.length, 1)
  t.same(requests, [{ userId: null, ip: '127.0.0.1' }, { userId: 1, ip: '127.0.0.1' }], 'only the audit events tell them apart')

  const put = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: 'nobody@example.com', code: codeIn(mail.text), new_password: NEW_PASSWORD } })
  t.same(errorOf(put), { status: 400, errorCode: 62 }, 'a PUT for an unknown email is the same 62')
})

t.test('the mail fills every placeholder and escapes values in the HTML part', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const { app, users } = await buildResetApp(smtp.port, {
    code: { lifetime: '30m' },
    mail: {
      siteName: 'Example & Co',
      subject: '{{site_name}}: code for {{display_name}}',
      text: '{{display_name}} <{{email}}>: {{code}} ({{expires_in_minutes}} min, {{site_name}})',
      html: '<p>{{display_name}} {{email}} {{code}} {{expires_in_minutes}} {{site_name}}</p>'
    }
  })
  t.teardown(() => app.close())
  await users.addUser({ login: 'mallory', email: 'mallory@example.com', password: 'irrelevant-password', displayName: '<script>alert("x")</script>' })

  await app.inject({ method: 'POST', url: RESET_URL, payload: { email: 'mallory@example.com' } })
  const mail = await smtp.nextMessage()
  t.equal(mail.subject, 'Example & Co: code for <script>alert("x")</script>')
  const code = /: (\S+) \(/.exec(mail.text)?.[1] as string
  t.equal(mail.text, `<script>alert("x")</script> <mallory@example.com>: ${code} (30 min, Example & Co)`, 'the text part is plain')
  t.equal(mail.html.trim(), `<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; mallory@example.com ${code} 30 Example &amp; Co</p>`)
})

t.test('a code is accepted in lower case and with surrounding spaces', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  await app.inject({ method: 'POST', url: RESET_URL, payload: { email: ALICE.email } })
  const code = codeIn((await smtp.nextMessage()).text)
  const reset = await app.inject({ method: 'PUT', url: RESET_URL, payload: { email: ALICE.email, code: ` ${code.toLowerCase()} `, new_password: NEW_PASSWORD } })
  t.equal(reset.statusCode, 200)
})

t.test('form-encoded bodies and the rest_route query form work', async (t) => {
  const smtp = await startSmtp()
  t.teardown(() => smtp.close())
  const { app } = await buildResetApp(smtp.port)
  t.teardown(() => app.close())
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const requested = await app.inject({ method: 'POST', url: '/?rest_route=/jwt-login/v1/user/reset_password', headers: form, payload: `email=${encodeURIComponent(ALICE.email)}` })
  t.equal(requested.statusCode, 200)
  const code = codeIn((await smtp.nextMessage()).text)
  const reset = await app.inject({
    method: 'PUT',
    url: '/?rest_route=/jwt-login/v1/user/reset_password',
    headers: form,
    payload: new URLSearchParams({ email: ALICE.email, code, new_password: NEW_PASSWORD }).toString()
  })
  t.equal(reset.statusCode, 200)
})
