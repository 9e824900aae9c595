// A credential id longer than Fastify's maxParamLength (100 by default; WebAuthn allows 1023 bytes, 1,364 characters): every enrolled passkey can be renamed and deleted.
import type { LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { errorOf } from '../helpers/http.js'
import { authenticator, buildPasskeyApp, PREFIX, type PasskeyApp } from '../helpers/passkeys.js'

async function send (kit: PasskeyApp, method: 'GET' | 'PATCH' | 'DELETE', path: string, token: string, payload?: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return await kit.app.inject({ method, url: `${PREFIX}${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload }) })
}

t.test('a passkey with the longest id the schema allows (1,364 characters) is listed, renamed and deleted with 200', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const device = authenticator()
  const enrolled = await kit.enrol(token, device, { idBytes: 1023 })
  t.equal(enrolled.statusCode, 200, enrolled.body)
  const id = device.credentials[0] as string
  t.equal(id.length, 1364, 'a credential id of 1023 bytes')

  t.same((await send(kit, 'GET', '/passkeys', token)).json().data.passkeys.map((item: { id: string }) => item.id), [id], 'listed')
  const renamed = await send(kit, 'PATCH', `/passkeys/${id}`, token, { name: 'Long-id key' })
  t.equal(renamed.statusCode, 200, renamed.body)
  t.equal((await kit.passkeys.findById(id))?.name, 'Long-id key', 'renamed')
  t.equal((await kit.signIn(device)).statusCode, 200, 'it signs in')

  const deleted = await send(kit, 'DELETE', `/passkeys/${id}`, token)
  t.equal(deleted.statusCode, 200, deleted.body)
  t.equal(await kit.passkeys.findById(id), null, 'deleted')
  t.same(errorOf(await send(kit, 'DELETE', `/passkeys/${id}`, token)), [404, 219], 'deleted twice: not found, in the envelope')
})

t.test('past maxParamLength, the id is checked as any id: too long, not base64url, with a slash, or another user\'s', async (t) => {
  const kit = await buildPasskeyApp()
  t.teardown(() => kit.app.close())
  const token = await kit.token()
  const long = 'A'.repeat(200)
  t.same(errorOf(await send(kit, 'PATCH', `/passkeys/${long}`, token, { name: 'ghost' })), [404, 219], 'an unknown long id: 404 / 219')
  t.same(errorOf(await send(kit, 'DELETE', `/passkeys/${long}`, token)), [404, 219], 'an unknown long id: 404 / 219')
  t.same(errorOf(await send(kit, 'DELETE', `/passkeys/${'A'.repeat(1365)}`, token)), [400, 203], 'over 1,364 characters: 400 / 203')
  t.same(errorOf(await send(kit, 'PATCH', `/passkeys/${'A'.repeat(150)}+`, token, { name: 'x' })), [400, 203], 'a character outside base64url: 400 / 203')
  t.same(errorOf(await send(kit, 'DELETE', `/passkeys/${'A'.repeat(150)}/x`, token)), [400, 203], 'a slash: 400 / 203')
  t.same(errorOf(await send(kit, 'PATCH', `/passkeys/${long}`, token, {})), [400, 203], 'no name: 400 / 203')
  const res = await send(kit, 'DELETE', `/passkeys/${long}`, token)
  t.equal(res.json().data.message, 'No such passkey.', 'the message of 219, as for a short id')
})
