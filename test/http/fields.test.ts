import t from 'tap'
import type { FastifyRequest } from 'fastify'
import { bodyOf, MAX_FIELD_LENGTH, present, queryOf, stringField } from '../../lib/http/fields.js'
import { ID_TOKEN_MAX_LENGTH } from '../../schemas/oauth.js'

const request = (parts: { body?: unknown, query?: unknown }): FastifyRequest => parts as FastifyRequest

t.test('present: absent and empty are undefined; a value that is no string, too long or holds a NUL is a malformed request', async (t) => {
  t.equal(present(undefined), undefined)
  t.equal(present(null), undefined)
  t.equal(present(''), undefined)
  t.equal(present('alice'), 'alice')
  t.equal(present('x'.repeat(4096)), 'x'.repeat(4096))
  for (const bad of [42, ['a'], { a: 1 }, 'x'.repeat(4097), 'a\u0000b']) {
    t.throws(() => present(bad), { code: 'ERR_JWT_LOGIN_BAD_REQUEST', errorCode: 203 }, JSON.stringify(bad).slice(0, 20))
  }
})

t.test('present with a larger maximum (the ID token\'s): a long value is taken, one past the maximum is still malformed', async (t) => {
  t.equal(MAX_FIELD_LENGTH, 4096, 'the maximum unless told')
  const long = 'x'.repeat(5000)
  t.equal(present(long, ID_TOKEN_MAX_LENGTH), long, 'a 5,000-character ID token is not refused by the field rule')
  t.equal(present('x'.repeat(ID_TOKEN_MAX_LENGTH), ID_TOKEN_MAX_LENGTH)?.length, ID_TOKEN_MAX_LENGTH)
  t.throws(() => present('x'.repeat(ID_TOKEN_MAX_LENGTH + 1), ID_TOKEN_MAX_LENGTH), { code: 'ERR_JWT_LOGIN_BAD_REQUEST', errorCode: 203 })
  t.throws(() => present(long), { code: 'ERR_JWT_LOGIN_BAD_REQUEST', errorCode: 203 }, 'without it, 4096 still holds')
  for (const bad of [42, 'a\u0000b']) {
    t.throws(() => present(bad, ID_TOKEN_MAX_LENGTH), { code: 'ERR_JWT_LOGIN_BAD_REQUEST', errorCode: 203 }, 'the other rules hold as well')
  }
})

t.test('stringField reads a field by name under the same rule, and only an own field', async (t) => {
  t.equal(stringField({ code: 'c' }, 'code'), 'c')
  t.equal(stringField({ code: '' }, 'code'), undefined)
  t.equal(stringField({}, 'toString'), undefined, 'an inherited name is no field')
  t.throws(() => stringField({ code: 5 }, 'code'), { code: 'ERR_JWT_LOGIN_BAD_REQUEST' })
  t.throws(() => stringField({ code: 'x'.repeat(5000) }, 'code'), { code: 'ERR_JWT_LOGIN_BAD_REQUEST' }, '4096 unless told')
  t.equal(stringField({ code: 'x'.repeat(5000) }, 'code', 5000)?.length, 5000, 'a larger maximum passed on to present')
})

t.test('bodyOf and queryOf: the fields of an object, none for a request without one', async (t) => {
  t.same(bodyOf(request({ body: { a: '1' } })), { a: '1' })
  t.same(bodyOf(request({ body: undefined })), {})
  t.same(bodyOf(request({ body: 'text' })), {})
  t.same(queryOf(request({ query: { JWT: 't' } })), { JWT: 't' })
  t.same(queryOf(request({ query: null })), {})
  t.ok(Object.isFrozen(bodyOf(request({}))), 'the empty fields cannot be written to')
})
