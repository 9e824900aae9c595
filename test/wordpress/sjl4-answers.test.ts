// Field by field: what Simple JWT Login 4.0 answers on each route its SDK calls (read from its source), and what jwt-login answers there through the alias.
import t from 'tap'
import { MailBox } from '../helpers/mail-box.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { codeIn } from '../helpers/fixtures.js'

const NS = '/wp-json/simple-jwt-login/v1'

/** A field's JSON type, or the fields of an object within. */
type Shape = 'string' | 'number' | 'boolean' | 'array' | { [field: string]: Shape }

/**
 * The answers of Simple JWT Login 4.0 (src/Services/*Service.php and the
 * route handler's error answer), as a client of it reads them.
 */
const SJL4: Record<string, Shape> = {
  auth: { success: 'boolean', data: { jwt: 'string', refresh_token: 'string' } },
  refresh: { success: 'boolean', data: { jwt: 'string', refresh_token: 'string' } },
  validate: {
    success: 'boolean',
    data: {
      user: { ID: 'number', user_login: 'string', user_email: 'string', display_name: 'string' },
      roles: 'array',
      jwt: { token: 'string', header: { alg: 'string', typ: 'string' }, payload: { iat: 'number', exp: 'number' }, expire_in: 'number' }
    }
  },
  revoke: { success: 'boolean', message: 'string', data: { jwt: 'array' } },
  resetRequest: { success: 'boolean', data: { message: 'string' } },
  resetComplete: { success: 'boolean', data: { message: 'string' } },
  register: { success: 'boolean', data: { id: 'number', login: 'string', email: 'string', display_name: 'string', roles: 'array', jwt: 'string' } },
  deleteUser: { success: 'boolean', data: { message: 'string' } },
  error: { success: 'boolean', data: { message: 'string', error_code: 'number' } }
}

/** Every field of `shape` in `value`, with its type; the path of each one missing or of another type. */
function mismatches (value: unknown, shape: Shape, path = ''): string[] {
  if (typeof shape === 'object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path || '(answer)'}: not an object`]
    return Object.entries(shape).flatMap(([field, inner]) => mismatches((value as Record<string, unknown>)[field], inner, path === '' ? field : `${path}.${field}`))
  }
  const type = Array.isArray(value) ? 'array' : typeof value
  return type === shape ? [] : [`${path}: ${type}, not ${shape}`]
}

t.test('the shape check fails a missing field, another type and a list for an object', async (t) => {
  t.same(mismatches({ success: true, data: {} }, SJL4.refresh as Shape), ['data.jwt: undefined, not string', 'data.refresh_token: undefined, not string'])
  t.same(mismatches({ data: { jwt: [{}] } }, { data: { jwt: { token: 'string' } } }), ['data.jwt: not an object'])
  t.same(mismatches(null, { success: 'boolean' }), ['(answer): not an object'])
})

t.test('each route the SDK calls answers the fields Simple JWT Login 4.0 answers, through its namespace', async (t) => {
  const mail = new MailBox()
  const { app } = await buildApp({
    refresh: { enabled: true },
    validate: { jwtAsObject: true },
    resetPassword: { enabled: true },
    users: { register: { enabled: true, signIn: true }, delete: { enabled: true } }
  }, { aliases: [NS], mailer: mail })
  t.teardown(() => app.close())
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: Record<string, unknown>, jwt?: string): Promise<{ status: number, body: unknown }> => {
    const res = await app.inject({ method, url: `${NS}${path}`, ...(payload === undefined ? {} : { payload }), ...(jwt === undefined ? {} : { headers: { authorization: `Bearer ${jwt}` } }) })
    return { status: res.statusCode, body: res.json() }
  }
  const check = (name: string, answer: { status: number, body: unknown }, status: number): void => {
    t.equal(answer.status, status, `${name}: status`)
    t.same(mismatches(answer.body, SJL4[name === 'error' ? 'error' : name] as Shape), [], `${name}: every field of Simple JWT Login 4.0, of its type`)
  }

  const auth = await call('POST', '/auth', { email: ALICE.email, password: ALICE.password })
  check('auth', auth, 200)
  const { jwt, refresh_token: refreshToken } = (auth.body as { data: { jwt: string, refresh_token: string } }).data
  check('validate', await call('POST', '/auth/validate', { JWT: jwt }), 200)
  const refreshed = await call('POST', '/auth/refresh', { refresh_token: refreshToken })
  check('refresh', refreshed, 200)
  const revoked = await call('POST', '/auth/revoke', { JWT: (refreshed.body as { data: { jwt: string } }).data.jwt })
  check('revoke', revoked, 200)
  t.same((revoked.body as { data: { jwt: string[] } }).data.jwt, [(refreshed.body as { data: { jwt: string } }).data.jwt], 'revoke: data.jwt lists the revoked JWT')

  check('resetRequest', await call('POST', '/user/reset_password', { email: ALICE.email }), 200)
  const code = codeIn((await mail.next()).text)
  check('resetComplete', await call('PUT', '/user/reset_password', { email: ALICE.email, code, new_password: 'a new passphrase for alice' }), 200)

  const registered = await call('POST', '/users', { email: 'new@example.test', password: 'a passphrase for the new user', user_login: 'newbie' })
  check('register', registered, 200)
  t.match((registered.body as { data: unknown }).data, { login: 'newbie', email: 'new@example.test', display_name: 'newbie', roles: ['subscriber'] }, 'register: the new user\'s values')
  check('deleteUser', await call('DELETE', '/users', undefined, (registered.body as { data: { jwt: string } }).data.jwt), 200)

  // an error on every route answers `error_code`, 4.0's name, beside `errorCode`
  const errors = await Promise.all([
    call('POST', '/auth', { email: ALICE.email, password: 'wrong' }),
    call('POST', '/auth/validate', { JWT: 'not.a.jwt' }),
    call('POST', '/auth/refresh', { refresh_token: 'nope' }),
    call('POST', '/auth/revoke', {}),
    call('POST', '/user/reset_password', {}),
    call('PUT', '/user/reset_password', { email: ALICE.email, code: 'WRONG', new_password: 'another passphrase here' }),
    call('POST', '/users', { email: 'bad' }),
    call('DELETE', '/users')
  ])
  for (const answer of errors) {
    t.ok(answer.status >= 400 && answer.status < 500, `a refusal: ${answer.status}`)
    t.same(mismatches(answer.body, SJL4.error as Shape), [], 'the error answer has 4.0\'s fields')
    const data = (answer.body as { data: { errorCode: number, error_code: number } }).data
    t.equal(data.error_code, data.errorCode, 'and the same number under both names')
  }
})

t.test('validate answers data.jwt as a list of one without validate.jwtAsObject, as 3.x did', async (t) => {
  const { app } = await buildApp({}, { aliases: [NS] })
  t.teardown(() => app.close())
  const auth = await app.inject({ method: 'POST', url: `${NS}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  const validated = await app.inject({ method: 'POST', url: `${NS}/auth/validate`, payload: { JWT: auth.json().data.jwt } })
  t.same(mismatches(validated.json(), { data: { jwt: 'array' } }), [])
  t.equal(validated.json().data.jwt[0].token, auth.json().data.jwt)
})
