// The second factor from the account: TOTP enrolment with its QR code, the first code confirms, backup codes once, the method, turning it off; each behind a recent sign-in that included the second factor once one is on.
import t from 'tap'
import { totpAt, wrongCode } from '../helpers/fixtures.js'
import { errorOf, PREFIX } from '../helpers/http.js'
import { ALICE, buildAccountApp } from '../helpers/account.js'

t.test('TOTP end to end: pending secret, a wrong code stores nothing, the right one turns it on; the next sign-in asks for it; DELETE turns it off', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  const started = await kit.call('POST', '/account/2fa/totp', jwt)
  t.equal(started.statusCode, 200, started.body)
  t.equal(started.headers['cache-control'], 'no-store')
  const { secret, otpauth_uri: uri, qr_svg: svg } = started.json().data
  t.match(uri, /^otpauth:\/\/totp\//)
  t.match(uri, `secret=${secret}`)
  t.match(svg, /^<svg /)
  t.same(errorOf(await kit.call('POST', '/account/2fa/totp/confirm', jwt, { code: await wrongCode(secret, kit.clock.now) })), [400, 239])
  t.equal(await kit.twoFactor.getTotpSecret(1), null, 'a wrong code stores nothing')
  t.equal(await kit.twoFactor.methodOf(1), null)
  const confirmed = await kit.call('POST', '/account/2fa/totp/confirm', jwt, { code: await totpAt(secret, kit.clock.now) })
  t.equal(confirmed.statusCode, 200, confirmed.body)
  const codes = confirmed.json().data.backup_codes as string[]
  t.equal(codes.length, 10, '10 backup codes, once')
  t.equal(await kit.twoFactor.methodOf(1), 'totp')
  t.same(errorOf(await kit.call('POST', '/account/2fa/totp/confirm', jwt, { code: await totpAt(secret, kit.clock.now) })), [409, 240], 'nothing pending any more')

  const overview = (await kit.call('GET', '/account', jwt)).json().data
  t.strictSame(overview.two_factor, { enabled: true, method: 'totp', methods: ['totp', 'backup_codes'], backup_codes_left: 10 })

  const signIn = await kit.signIn(ALICE.email, ALICE.password)
  t.equal(signIn.json().data.two_factor_required, true, 'the next password sign-in asks for the second factor')

  // with the second factor on, a password-only token cannot remove it
  t.same(errorOf(await kit.call('DELETE', '/account/2fa', jwt)), [401, 220])
  kit.clock.advance(30_000)
  const second = await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: signIn.json().data.jwt, code: await totpAt(secret, kit.clock.now) } })
  t.equal(second.statusCode, 200, second.body)
  const strong = second.json().data.jwt as string

  const regenerated = await kit.call('POST', '/account/2fa/backup-codes', strong)
  t.equal(regenerated.json().data.backup_codes.length, 10)
  t.notSame(regenerated.json().data.backup_codes, codes, 'new codes')
  t.same(errorOf(await kit.call('PUT', '/account/2fa', strong, { method: 'passkey' })), [400, 241], 'no passkey enrolled')
  t.equal((await kit.call('PUT', '/account/2fa', strong, { method: 'backup_codes' })).statusCode, 200)
  t.equal(await kit.twoFactor.methodOf(1), 'backup_codes')

  const off = await kit.call('DELETE', '/account/2fa', strong)
  t.equal(off.statusCode, 200, off.body)
  t.equal(await kit.twoFactor.methodOf(1), null)
  t.equal(kit.twoFactor.backupCodesLeft(1), 0)
  const after = await kit.signIn(ALICE.email, ALICE.password)
  t.equal(typeof after.json().data.jwt, 'string')
  t.notOk(after.json().data.two_factor_required, 'the next sign-in answers a final token')
})

t.test('a token whose sign-in included a second factor changes the password without the current one', async (t) => {
  const kit = await buildAccountApp(t)
  const { secret } = (await kit.call('POST', '/account/2fa/totp', await kit.token())).json().data
  await kit.call('POST', '/account/2fa/totp/confirm', await kit.token(), { code: await totpAt(secret, kit.clock.now) })
  kit.clock.advance(30_000)
  const interim = (await kit.signIn(ALICE.email, ALICE.password)).json().data.jwt as string
  const strong = (await kit.app.inject({ method: 'POST', url: `${PREFIX}/auth/2fa`, payload: { JWT: interim, code: await totpAt(secret, kit.clock.now) } })).json().data.jwt as string
  const res = await kit.call('PUT', '/account/password', strong, { new_password: 'a much newer passphrase' })
  t.equal(res.statusCode, 200, res.body)
  kit.clock.advance(6 * 60 * 1000)
  t.same(errorOf(await kit.call('PUT', '/account/password', strong, { new_password: 'yet another passphrase' })), [401, 220], 'not once it is old')
})

t.test('a sign-in older than account.recentAuth cannot start an enrolment', async (t) => {
  const kit = await buildAccountApp(t)
  const jwt = await kit.token()
  kit.clock.advance(6 * 60 * 1000)
  t.same(errorOf(await kit.call('POST', '/account/2fa/totp', jwt)), [401, 220])
})
