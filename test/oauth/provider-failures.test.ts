import t from 'tap'
import { ALICE } from '../helpers/app.js'
import { buildOAuthApp, errorOf, postToken, providers } from '../helpers/oauth.js'
import { ACCOUNTS, CLIENTS, closedUrl, REDIRECT_URI, startIdp, startSlowServer } from '../helpers/oidc-provider.js'

const idp = await startIdp()
t.teardown(() => idp.close())

function aliceToken (): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return idp.sign({ iss: idp.issuer, aud: CLIENTS.idp1.client_id, sub: ACCOUNTS.alice.id, email: ALICE.email, email_verified: true, iat: now, exp: now + 600 })
}

/** idp1 with explicit endpoints instead of discovery. */
function explicit (endpoints: Record<string, string>, extra: Record<string, unknown> = {}): ReturnType<typeof providers> {
  return providers(idp, {
    idp1: {
      issuer: undefined,
      endpoints: { issuer: idp.issuer, token: `${idp.issuer}/token`, jwks: `${idp.issuer}/jwks`, ...endpoints },
      ...extra
    }
  })
}

t.test('a provider that is down answers 502 / 202', async (t) => {
  const down = await closedUrl()
  const { app } = await buildOAuthApp(providers(idp, { idp1: { issuer: down } }))
  t.teardown(() => app.close())
  const failed: number[] = []
  app.jwtLogin.events.on('oauth.failed', (e) => { failed.push(e.errorCode) })
  const res = await postToken(app, { provider: 'idp1', code: 'some-code' })
  t.same(errorOf(res), [502, 202])
  t.equal(res.json().data.message, 'The identity provider answered with an error.')
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await aliceToken() })), [502, 202])
  t.same(failed, [202, 202])
})

t.test('a provider that hangs answers 504 / 202 within 5 seconds, nothing created', async (t) => {
  const slow = await startSlowServer(15_000)
  t.teardown(() => slow.close())
  const { app, users } = await buildOAuthApp(providers(idp, { idp1: { issuer: slow.url, autoRegister: true } }))
  t.teardown(() => app.close())
  const started = Date.now()
  const res = await postToken(app, { provider: 'idp1', code: 'code-for-a-slow-provider' })
  const took = Date.now() - started
  t.same(errorOf(res), [504, 202])
  t.equal(res.json().data.message, 'The identity provider timed out.')
  t.ok(took >= 4900 && took < 5500, `answered after ${took} ms, at the 5 s default`)
  t.equal(slow.hits(), 1, 'the provider was asked')
  t.equal(await users.findByEmail(ACCOUNTS.bob.email), null, 'nothing created')
})

t.test('a slow token endpoint and a slow key endpoint time out too', async (t) => {
  const slow = await startSlowServer(15_000)
  t.teardown(() => slow.close())
  const { app } = await buildOAuthApp(explicit({ token: `${slow.url}/token`, jwks: `${slow.url}/jwks` }, { timeout: '1s' }))
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  const started = Date.now()
  t.same(errorOf(await postToken(app, { provider: 'idp1', code })), [504, 202])
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await aliceToken() })), [504, 202])
  t.ok(Date.now() - started < 3000, 'each within the 1 s timeout')
})

t.test('explicit endpoints replace discovery', async (t) => {
  const { app } = await buildOAuthApp(explicit({ userinfo: `${idp.issuer}/me`, authorization: `${idp.issuer}/auth` }))
  t.teardown(() => app.close())
  const { code } = await idp.code({ account: ACCOUNTS.alice })
  t.equal((await postToken(app, { provider: 'idp1', code })).statusCode, 200, 'code flow with userinfo')
  t.equal((await postToken(app, { provider: 'idp1', id_token: await aliceToken() })).statusCode, 200, 'ID-token flow')

  const { app: noUserinfo } = await buildOAuthApp(explicit({}))
  t.teardown(() => noUserinfo.close())
  const other = await idp.code({ account: ACCOUNTS.alice })
  t.same(errorOf(await postToken(noUserinfo, { provider: 'idp1', code: other.code })), [403, 111], 'no email in the ID token and no userinfo endpoint')
})

t.test('broken key endpoints answer 502 / 202', async (t) => {
  const down = await closedUrl()
  const notJson = await startSlowServer(0, 'this is not json')
  const noKeys = await startSlowServer(0, '{"issuer":"x"}')
  t.teardown(() => notJson.close())
  t.teardown(() => noKeys.close())
  for (const [name, jwks] of [['down', `${down}/jwks`], ['404', `${idp.issuer}/no-such-path`], ['not JSON', notJson.url], ['no keys', noKeys.url]] as const) {
    const { app } = await buildOAuthApp(explicit({ jwks }))
    t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await aliceToken() })), [502, 202], name)
    await app.close()
  }
})

t.test('a discovery document without jwks_uri cannot verify ID tokens', async (t) => {
  const withoutKeys = await startSlowServer(0, (base) => JSON.stringify({ issuer: base, token_endpoint: `${base}/token` }))
  t.teardown(() => withoutKeys.close())
  const { app } = await buildOAuthApp(providers(idp, { idp1: { issuer: withoutKeys.url } }))
  t.teardown(() => app.close())
  t.same(errorOf(await postToken(app, { provider: 'idp1', id_token: await aliceToken() })), [502, 202])
})

t.test('a provider refusing our client answers 502, not 401', async (t) => {
  const { app } = await buildOAuthApp(providers(idp, {
    idp1: { clientSecret: 'not-the-secret' },
    idp2: { clientAuthMethod: 'none', clientSecret: undefined }
  }))
  t.teardown(() => app.close())
  const a = await idp.code({ account: ACCOUNTS.alice })
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: a.code })), [502, 202], 'wrong client secret')
  const b = await idp.code({ client: CLIENTS.idp2, account: ACCOUNTS.alice, redirectUri: REDIRECT_URI })
  t.same(errorOf(await postToken(app, { provider: 'idp2', code: b.code })), [502, 202], 'no client authentication')
})

t.test('an https provider that cannot be reached answers 502 / 202', async (t) => {
  const down = (await closedUrl()).replace('http:', 'https:')
  const { app } = await buildOAuthApp(providers(idp, { idp1: { issuer: down } }))
  t.teardown(() => app.close())
  t.same(errorOf(await postToken(app, { provider: 'idp1', code: 'some-code' })), [502, 202])
})
