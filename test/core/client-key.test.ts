import t from 'tap'
import { clientKey } from '../../lib/core/client-key.js'
import { buildApp } from '../helpers/app.js'
import { errorCode, login, post } from '../helpers/http.js'
import { buildResetApp, errorOf, RESET_URL } from '../helpers/reset.js'

t.test('clientKey: IPv4 as is, IPv4-mapped as IPv4, IPv6 as its /64', async (t) => {
  t.equal(clientKey('203.0.113.7'), '203.0.113.7')
  t.equal(clientKey('::ffff:203.0.113.7'), '203.0.113.7')
  t.equal(clientKey('::FFFF:cb00:7107'), '203.0.113.7')
  t.equal(clientKey('2001:db8::1'), '2001:db8::')
  t.equal(clientKey('2001:DB8:0:0:ffff:ffff:ffff:ffff'), '2001:db8::', 'one canonical form')
  t.equal(clientKey('2001:db8:0:1::1'), '2001:db8:0:1::')
  t.equal(clientKey('fe80::1%eth0'), 'fe80::')
  t.equal(clientKey('::1'), '::')
})

t.test('the login lockout per IP counts an IPv6 /64 as one client', async (t) => {
  const { app } = await buildApp({ limits: { loginPerIp: { max: 2, window: '15m' } } })
  t.teardown(() => app.close())
  t.equal((await login(app, { email: 'a@example.com', password: 'wrong' }, '2001:db8::1')).statusCode, 401)
  t.equal((await login(app, { email: 'b@example.com', password: 'wrong' }, '2001:db8::2')).statusCode, 401)
  const locked = await login(app, { email: 'c@example.com', password: 'wrong' }, '2001:db8::ffff:1')
  t.equal(locked.statusCode, 429, 'another address in the same /64')
  t.equal(errorCode(locked), 200)
  t.equal((await login(app, { email: 'c@example.com', password: 'wrong' }, '2001:db8:0:1::1')).statusCode, 401, 'another /64')

  t.equal((await login(app, { email: 'd@example.com', password: 'wrong' }, '::ffff:192.0.2.1')).statusCode, 401)
  t.equal((await login(app, { email: 'e@example.com', password: 'wrong' }, '192.0.2.1')).statusCode, 401)
  t.equal((await login(app, { email: 'f@example.com', password: 'wrong' }, '::ffff:192.0.2.1')).statusCode, 429, 'an IPv4-mapped address is its IPv4')
})

t.test('the request limit counts an IPv6 /64 as one client', async (t) => {
  const { app } = await buildApp({ limits: { requestsPerIp: { max: 2, window: '1m' } } })
  t.teardown(() => app.close())
  t.equal((await post(app, '/auth', {}, {}, '2001:db8::1')).statusCode, 400)
  t.equal((await post(app, '/auth', {}, {}, '2001:db8::2')).statusCode, 400)
  const limited = await post(app, '/auth', {}, {}, '2001:db8::3')
  t.equal(limited.statusCode, 429)
  t.equal(errorCode(limited), 200)
  t.equal((await post(app, '/auth', {}, {}, '2001:db8:0:1::1')).statusCode, 400, 'another /64')
})

t.test('reset-code requests per IP count an IPv6 /64 as one client', async (t) => {
  // unknown emails: no mail is sent, so no mail server is needed
  const { app } = await buildResetApp(9, { limits: { perIp: { max: 2, window: '1h' } } })
  t.teardown(() => app.close())
  const request = async (email: string, remoteAddress: string) => await app.inject({ method: 'POST', url: RESET_URL, payload: { email }, remoteAddress })
  t.equal((await request('a@example.com', '2001:db8::1')).statusCode, 200)
  t.equal((await request('b@example.com', '2001:db8::2')).statusCode, 200)
  t.same(errorOf(await request('c@example.com', '2001:db8::3')), { status: 429, errorCode: 200 })
  t.equal((await request('c@example.com', '2001:db8:0:1::1')).statusCode, 200, 'another /64')
})
