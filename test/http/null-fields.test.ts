import type { FastifyError } from 'fastify'
import t from 'tap'
import { malformedField, toJwtLoginError } from '../../lib/http/error-handler.js'
import { ALICE, buildApp } from '../helpers/app.js'
import { errorCode } from '../helpers/http.js'

const AUTH = '/jwt-login/v1/auth'

t.test('a null or empty field reads as absent, as Simple JWT Login and its SDK have it', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())

  // the SDK's AuthenticateInterface: every field `string | null`, all of them sent
  const sdkShape = await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, username: null, password: ALICE.password, password_hash: null } })
  t.equal(sdkShape.statusCode, 200, sdkShape.body)
  const byLogin = await app.inject({ method: 'POST', url: AUTH, payload: { email: null, username: ALICE.login, password: ALICE.password, password_hash: null } })
  t.equal(byLogin.statusCode, 200, 'the identifier that is not null is the one used')
  const emptyStrings = await app.inject({ method: 'POST', url: AUTH, payload: { email: '', username: ALICE.login, password: ALICE.password, password_hash: '' } })
  t.equal(emptyStrings.statusCode, 200, 'an empty string is absent too')

  const noPassword = await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, password: null, password_hash: null } })
  t.equal(noPassword.statusCode, 400)
  t.equal(errorCode(noPassword), 47, 'a required field sent as null is missing, with its own code')
  const noLogin = await app.inject({ method: 'POST', url: AUTH, payload: { email: null, username: '', password: ALICE.password } })
  t.equal(errorCode(noLogin), 46)

  const validate = await app.inject({ method: 'POST', url: `${AUTH}/validate`, payload: { JWT: null } })
  t.equal(errorCode(validate), 53, 'a null JWT is a missing one')

  const form = await app.inject({
    method: 'POST',
    url: AUTH,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ email: ALICE.email, username: '', password: ALICE.password }).toString()
  })
  t.equal(form.statusCode, 200, 'an empty form field is absent')
})

t.test('a malformed field is named in the message, never its value', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())

  const number = await app.inject({ method: 'POST', url: AUTH, payload: { username: 4242, password: ALICE.password } })
  t.equal(number.statusCode, 400)
  t.equal(errorCode(number), 203)
  t.equal(number.json().data.message, 'The request is malformed: body field `username`: expected string.')

  const secret = 'a-password-that-must-not-echo'
  const nested = await app.inject({ method: 'POST', url: AUTH, payload: { email: ALICE.email, password: [secret] } })
  t.equal(errorCode(nested), 203)
  t.match(nested.json().data.message, /^The request is malformed: body field `password`: /)
  t.notMatch(nested.body, secret, 'the value sent is not echoed')

  const query = await app.inject({ method: 'GET', url: `${AUTH}/validate?JWT=a&JWT=b` })
  t.equal(errorCode(query), 203)
  t.match(query.json().data.message, /query parameter `JWT`/)

  const array = await app.inject({ method: 'POST', url: AUTH, payload: [1, 2] })
  t.equal(errorCode(array), 203)
  t.equal(array.json().data.message, 'The request is malformed.', 'no field to name: the plain message')
})

t.test('malformedField: the first failure of the schema check, in its own words', async (t) => {
  const failure = (validation: unknown[] | undefined, validationContext?: string): FastifyError =>
    Object.assign(new Error('bad'), { code: 'FST_ERR_VALIDATION', name: 'FastifyError', statusCode: 400, validation, validationContext }) as unknown as FastifyError
  t.equal(malformedField(failure([])), undefined, 'no failure named')
  t.equal(malformedField(failure(undefined)), undefined, 'not a failure of the schema check')
  t.equal(malformedField(failure([{ instancePath: '', message: 'Expected object' }], 'body')), undefined, 'the whole body: no field to name')
  t.same(malformedField(failure([{ instancePath: '/response/id', message: 'Expected string' }], 'body')), { place: 'body', field: 'response.id', reason: 'expected string' }, 'a nested field by its path')
  t.same(malformedField(failure([{ instancePath: '/x' }])), { place: 'other', field: 'x', reason: 'is not valid' }, 'without a place or a message')
  t.equal(toJwtLoginError(failure([{ instancePath: '/x' }])).message, 'The request is malformed: field `x`: is not valid.', 'named in English in the error\'s own message')
})
