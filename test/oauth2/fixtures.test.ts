// The local OAuth 2.0 providers held to what each provider documents, with plain fetch: each endpoint's answer and each documented refusal.
import { request as httpRequest } from 'node:http'
import t, { type Test } from 'tap'
import * as client from 'openid-client'
import { OTHER_REDIRECT_URI, REDIRECT_URI, startOAuth2Provider, type DiscordAccount, type FacebookAccount, type GitHubAccount, type OAuth2Kind } from '../helpers/oauth2-providers.js'

const UA = { 'user-agent': 'jwt-login-tests' }

const OCTO: GitHubAccount = {
  id: 583231,
  login: 'octocat',
  name: 'The Octocat',
  email: null,
  emails: [
    { email: 'octocat@example.com', primary: true, verified: true, visibility: 'private' },
    { email: 'octo@old.example.com', primary: false, verified: false, visibility: null }
  ]
}
const FAY: FacebookAccount = { id: '10150000000000001', name: 'Fay Book', email: 'fay@example.com' }
const NELLY: DiscordAccount = { id: '80351110224678912', username: 'nelly', global_name: 'Nelly', email: 'nelly@example.com', verified: true }
const NESTED = { data: { id: 'u-1', mail: 'nested@example.com', mail_verified: true } }

const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

async function postForm (url: string, fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<Response> {
  const body = new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined))
  return await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers }, body })
}

/** A redemption as a client sends it with client_secret_post; `extra` overrides or (with undefined) leaves fields out. */
function redemption (p: { clientId: string, clientSecret: string }, code: string, extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: p.clientId, client_secret: p.clientSecret, ...extra }
}

async function bearer (url: string, token: string): Promise<Response> {
  return await fetch(url, { headers: { authorization: `Bearer ${token}`, ...UA } })
}

/** A GET with no User-Agent at all (fetch always sends one). */
async function withoutUserAgent (url: string, token: string): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject).end()
  })
}

t.test('GitHub (Enterprise Server paths)', async (t) => {
  const gh = await startOAuth2Provider('github')
  t.teardown(() => gh.close())
  const redeem = async (fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<Record<string, string>> => {
    const res = await postForm(gh.urls.token, fields, headers)
    // a refused redemption is a 200 too: its error is in the body
    if (res.status !== 200) throw new Error(`GitHub's token endpoint answered ${res.status}`)
    return await res.json() as Record<string, string>
  }

  t.test('settings name the server; the paths are the documented ones', async (t) => {
    t.same(gh.settings, { enterpriseUrl: gh.origin })
    t.same(gh.urls, {
      authorization: `${gh.origin}/login/oauth/authorize`,
      token: `${gh.origin}/login/oauth/access_token`,
      user: `${gh.origin}/api/v3/user`,
      emails: `${gh.origin}/api/v3/user/emails`
    })
  })

  t.test('a code is redeemed for a bearer token whose scopes come comma-separated; the user API reads the user and the emails', async (t) => {
    const { code } = gh.code(OCTO)
    const token = await redeem(redemption(gh, code))
    t.match(token, { access_token: /^gho_[0-9a-f]+$/, token_type: 'bearer', scope: 'read:user,user:email' })
    t.notOk('expires_in' in token, "an OAuth app's token does not expire")
    const user = await bearer(gh.urls.user, token.access_token as string)
    t.equal(user.status, 200)
    t.equal(user.headers.get('x-oauth-scopes'), 'read:user, user:email')
    t.match(await user.json(), { login: 'octocat', id: 583231, name: 'The Octocat', email: null, type: 'User', node_id: 'MDQ6VXNlcjU4MzIzMQ==', two_factor_authentication: false })
    const emails = await bearer(gh.urls.emails as string, token.access_token as string)
    t.equal(emails.status, 200)
    t.same(await emails.json(), OCTO.emails)
    const older = await fetch(gh.urls.user, { headers: { authorization: `token ${token.access_token as string}`, ...UA } })
    t.equal(older.status, 200, 'the older `token` scheme is taken too')
  })

  t.test('the answer comes form-encoded unless JSON (or XML) is asked for', async (t) => {
    const form = await postForm(gh.urls.token, redemption(gh, gh.code(OCTO).code), { accept: '*/*' })
    t.match(form.headers.get('content-type'), /^application\/x-www-form-urlencoded/)
    t.match(Object.fromEntries(new URLSearchParams(await form.text())), { access_token: /^gho_/, token_type: 'bearer', scope: 'read:user,user:email' })
    const xml = await postForm(gh.urls.token, redemption(gh, gh.code(OCTO).code), { accept: 'application/xml' })
    t.match(await xml.text(), /^<OAuth><access_token>gho_[0-9a-f]+<\/access_token><token_type>bearer<\/token_type><scope>read:user,user:email<\/scope><\/OAuth>$/)
    const refused = await postForm(gh.urls.token, redemption(gh, 'nope'), { accept: '*/*' })
    t.equal(new URLSearchParams(await refused.text()).get('error'), 'bad_verification_code', 'a refusal too')
  })

  t.test('the client may authenticate with HTTP Basic; a JSON body is read as well', async (t) => {
    const token = await redeem(redemption(gh, gh.code(OCTO).code, { client_id: undefined, client_secret: undefined }), { authorization: basic(gh.clientId, gh.clientSecret) })
    t.match(token, { access_token: /^gho_/ })
    const res = await fetch(gh.urls.token, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(redemption(gh, gh.code(OCTO).code)) })
    t.match(await res.json(), { access_token: /^gho_/ })
  })

  t.test('scopes are normalized: one implied by another asked for is dropped', async (t) => {
    const token = await redeem(redemption(gh, gh.code(OCTO, { scope: 'user user:email read:user' }).code))
    t.equal(token.scope, 'user')
    t.equal((await bearer(gh.urls.emails as string, token.access_token as string)).status, 200, '`user` includes `user:email`')
  })

  t.test('refused redemptions: HTTP 200 with an error field', async (t) => {
    const { code } = gh.code(OCTO)
    t.match(await redeem(redemption(gh, 'not-a-code')), { error: 'bad_verification_code', error_description: String, error_uri: /#bad-verification-code$/ })
    t.match(await redeem(redemption(gh, code, { client_secret: 'wrong' })), { error: 'incorrect_client_credentials' })
    t.match(await redeem(redemption(gh, code, { client_id: 'unknown' })), { error: 'incorrect_client_credentials' })
    t.match(await redeem(redemption(gh, code, { redirect_uri: 'https://evil.example/callback' })), { error: 'redirect_uri_mismatch' })
    t.match(await redeem(redemption(gh, code, { redirect_uri: OTHER_REDIRECT_URI })), { error: 'redirect_uri_mismatch' }, 'registered, but not the one the code was issued for')
    t.match(await redeem(redemption(gh, code, { redirect_uri: undefined })), { access_token: /^gho_/ }, 'redirect_uri may be left out; the failures above did not spend the code')
    t.match(await redeem(redemption(gh, code)), { error: 'bad_verification_code' }, 'a code is single use')
    const late = gh.code(OCTO).code
    gh.expireCodes()
    t.match(await redeem(redemption(gh, late)), { error: 'bad_verification_code' }, 'a code expires')
    const others = gh.code(OCTO, { otherClient: true }).code
    t.match(await redeem(redemption(gh, others)), { error: 'bad_verification_code' }, "another client's code")
    t.match(await redeem(redemption(gh, others, { client_id: gh.other.clientId, client_secret: gh.other.clientSecret })), { access_token: /^gho_/ })
  })

  t.test('a code issued with a PKCE challenge needs its verifier', async (t) => {
    const { code, codeVerifier } = gh.code(OCTO, { pkce: true })
    t.match(await redeem(redemption(gh, code)), { error: 'bad_verification_code' })
    t.match(await redeem(redemption(gh, code, { code_verifier: 'x'.repeat(43) })), { error: 'bad_verification_code' })
    t.match(await redeem(redemption(gh, code, { code_verifier: codeVerifier })), { access_token: /^gho_/ })
  })

  t.test('no token for a user whose primary email is unverified', async (t) => {
    const unverified: GitHubAccount = { ...OCTO, id: 2, login: 'newbie', emails: [{ email: 'newbie@example.com', primary: true, verified: false, visibility: 'private' }] }
    t.match(await redeem(redemption(gh, gh.code(unverified).code)), { error: 'unverified_user_email' })
  })

  t.test('the API: a User-Agent is required; no token, a bad one, an expired one; emails without the scope read as not found', async (t) => {
    const scoped = await redeem(redemption(gh, gh.code(OCTO).code))
    const bare = await redeem(redemption(gh, gh.code(OCTO, { scope: '' }).code))
    t.equal(bare.scope, '')
    const noAgent = await withoutUserAgent(gh.urls.user, scoped.access_token as string)
    t.equal(noAgent.status, 403)
    t.match(noAgent.body, /User-Agent/)
    const anonymous = await fetch(gh.urls.user, { headers: UA })
    t.equal(anonymous.status, 401)
    t.match(await anonymous.json(), { message: 'Requires authentication' })
    const forged = await bearer(gh.urls.user, 'gho_0000')
    t.equal(forged.status, 401)
    t.match(await forged.json(), { message: 'Bad credentials', documentation_url: String })
    const noScope = await bearer(gh.urls.emails as string, bare.access_token as string)
    t.equal(noScope.status, 404)
    t.equal(noScope.headers.get('x-accepted-oauth-scopes'), 'user, user:email')
    t.match(await noScope.json(), { message: 'Not Found' })
    const publicOnly = await (await bearer(gh.urls.user, bare.access_token as string)).json() as Record<string, unknown>
    t.equal(publicOnly.login, 'octocat')
    t.notOk('two_factor_authentication' in publicOnly, 'no private profile fields without `user` or `read:user`')
    gh.expireTokens()
    t.equal((await bearer(gh.urls.user, scoped.access_token as string)).status, 401)
  })

  t.test('the authorization page', async (t) => {
    const authorization = (params: Record<string, string>): string => `${gh.urls.authorization}?${new URLSearchParams({ client_id: gh.clientId, scope: 'read:user user:email', state: 'st-1', ...params }).toString()}`
    const approved = await gh.authorize(authorization({ redirect_uri: REDIRECT_URI }), OCTO)
    t.equal(`${approved.origin}${approved.pathname}`, REDIRECT_URI)
    t.equal(approved.searchParams.get('state'), 'st-1')
    t.match(await redeem(redemption(gh, approved.searchParams.get('code') as string)), { access_token: /^gho_/, scope: 'read:user,user:email' })
    const below = await gh.authorize(authorization({ redirect_uri: `${REDIRECT_URI}/deeper` }), OCTO)
    t.equal(below.pathname, '/callback/deeper', 'a path below the registered callback URL is taken')
    const defaulted = await gh.authorize(authorization({}), OCTO)
    t.equal(`${defaulted.origin}${defaulted.pathname}`, REDIRECT_URI, 'without redirect_uri, the registered callback URL')
    t.match(await redeem(redemption(gh, defaulted.searchParams.get('code') as string, { redirect_uri: undefined })), { access_token: /^gho_/ })
    const mismatch = await gh.authorize(authorization({ redirect_uri: 'https://evil.example/callback' }), OCTO)
    t.equal(`${mismatch.origin}${mismatch.pathname}`, REDIRECT_URI, 'a mismatch is sent to the registered callback URL')
    t.same([mismatch.searchParams.get('error'), mismatch.searchParams.get('state'), mismatch.searchParams.get('code')], ['redirect_uri_mismatch', 'st-1', null])
    const denied = await gh.authorize(authorization({ redirect_uri: REDIRECT_URI }), null)
    t.same([denied.searchParams.get('error'), denied.searchParams.get('state')], ['access_denied', 'st-1'])
    const plain = await gh.authorize(authorization({ redirect_uri: REDIRECT_URI, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }), OCTO)
    t.equal(plain.searchParams.get('error'), 'invalid_request', 'only S256')
    const signIn = await fetch(authorization({ redirect_uri: REDIRECT_URI }), { redirect: 'manual' })
    t.equal(signIn.status, 200, 'nobody signed in: the sign-in page')
    t.equal((await fetch(authorization({ client_id: 'unknown' }), { redirect: 'manual' })).status, 404)
  })
})

t.test('Facebook', async (t) => {
  const fb = await startOAuth2Provider('facebook')
  t.teardown(() => fb.close())
  const exchange = (code: string, extra: Record<string, string | undefined> = {}): string => {
    const fields = Object.entries({ client_id: fb.clientId, redirect_uri: REDIRECT_URI, client_secret: fb.clientSecret, code, ...extra }).filter((e): e is [string, string] => e[1] !== undefined)
    return `${fb.urls.token}?${new URLSearchParams(fields).toString()}`
  }
  /** A Graph API error: HTTP 400, `{ error: { message, type: 'OAuthException', code, error_subcode?, fbtrace_id } }`. */
  const graphError = async (t: Test, res: Response, code: number, subcode?: number): Promise<void> => {
    t.equal(res.status, 400)
    const body = await res.json() as { error: Record<string, unknown> }
    t.match(body, { error: { message: String, type: 'OAuthException', code, fbtrace_id: String } })
    t.equal(body.error.error_subcode, subcode)
  }

  t.test('settings name the endpoints of one Graph API version', async (t) => {
    t.same(fb.settings, { api: { authorization: `${fb.origin}/v21.0/dialog/oauth`, token: `${fb.origin}/v21.0/oauth/access_token`, user: `${fb.origin}/v21.0/me?fields=id,name,email` } })
  })

  t.test('a code is exchanged by GET (or POST, with Basic too) for a bearer token with its lifetime', async (t) => {
    const got = await fetch(exchange(fb.code(FAY).code))
    t.equal(got.status, 200)
    t.match(await got.json(), { access_token: String, token_type: 'bearer', expires_in: Number })
    const posted = await postForm(fb.urls.token, redemption(fb, fb.code(FAY).code))
    t.match(await posted.json(), { access_token: String, token_type: 'bearer' })
    const viaBasic = await postForm(fb.urls.token, redemption(fb, fb.code(FAY).code, { client_id: undefined, client_secret: undefined }), { authorization: basic(fb.clientId, fb.clientSecret) })
    t.match(await viaBasic.json(), { access_token: String })
  })

  t.test('/me answers the fields asked for, id always, email only when granted and present', async (t) => {
    const token = async (account: FacebookAccount, scope?: string): Promise<string> => ((await (await fetch(exchange(fb.code(account, { scope }).code))).json()) as { access_token: string }).access_token
    const full = await token(FAY)
    t.same(await (await bearer(fb.urls.user, full)).json(), { name: 'Fay Book', email: 'fay@example.com', id: FAY.id })
    t.same(await (await fetch(`${fb.origin}/v21.0/me?access_token=${full}`)).json(), { name: 'Fay Book', id: FAY.id }, 'the token as a query parameter; without fields, id and name')
    t.same(await (await bearer(`${fb.origin}/v21.0/me?fields=email`, full)).json(), { email: 'fay@example.com', id: FAY.id })
    t.same(await (await bearer(fb.urls.user, await token(FAY, 'public_profile'))).json(), { name: 'Fay Book', id: FAY.id }, 'email not granted')
    t.same(await (await bearer(fb.urls.user, await token({ id: '2', name: 'No Mail' }))).json(), { name: 'No Mail', id: '2' }, 'no email on the account')
    await graphError(t, await bearer(`${fb.origin}/v21.0/me?fields=id,birthday_cake`, full), 100)
  })

  t.test('refused exchanges: Graph API errors, not RFC 6749 ones', async (t) => {
    const { code } = fb.code(FAY)
    await graphError(t, await fetch(exchange('garbage')), 100)
    await graphError(t, await fetch(exchange(code, { client_secret: 'wrong' })), 1)
    await graphError(t, await fetch(exchange(code, { client_id: '999' })), 101)
    await graphError(t, await fetch(exchange(code, { redirect_uri: undefined })), 191)
    await graphError(t, await fetch(exchange(code, { redirect_uri: OTHER_REDIRECT_URI })), 100, 36008)
    t.equal((await fetch(exchange(code))).status, 200, 'the failures above did not spend the code')
    await graphError(t, await fetch(exchange(code)), 100, 36009)
    const late = fb.code(FAY).code
    fb.expireCodes()
    await graphError(t, await fetch(exchange(late)), 100, 36007)
    await graphError(t, await fetch(exchange(fb.code(FAY, { otherClient: true }).code)), 100)
    const { code: pkce, codeVerifier } = fb.code(FAY, { pkce: true })
    await graphError(t, await fetch(exchange(pkce)), 100)
    t.equal((await fetch(exchange(pkce, { code_verifier: codeVerifier }))).status, 200)
  })

  t.test('/me refusals: no token, a bad one, an expired one', async (t) => {
    await graphError(t, await fetch(fb.urls.user), 2500)
    const bad = await bearer(fb.urls.user, 'EAAB-not-a-token')
    t.match(bad.headers.get('www-authenticate'), /^OAuth "Facebook Platform" "invalid_token"/)
    await graphError(t, bad, 190)
    const token = ((await (await fetch(exchange(fb.code(FAY).code))).json()) as { access_token: string }).access_token
    fb.expireTokens()
    await graphError(t, await bearer(fb.urls.user, token), 190, 463)
  })

  t.test('the login dialog', async (t) => {
    const dialog = (params: Record<string, string>): string => `${fb.urls.authorization}?${new URLSearchParams({ client_id: fb.clientId, state: 'st-2', scope: 'email', ...params }).toString()}`
    const approved = await fb.authorize(dialog({ redirect_uri: REDIRECT_URI }), FAY)
    t.equal(approved.hash, '#_=_', 'Facebook appends an empty fragment')
    t.equal(approved.searchParams.get('state'), 'st-2')
    t.equal((await fetch(exchange(approved.searchParams.get('code') as string))).status, 200)
    const denied = await fb.authorize(dialog({ redirect_uri: REDIRECT_URI }), null)
    t.same(['error', 'error_reason', 'state'].map((n) => denied.searchParams.get(n)), ['access_denied', 'user_denied', 'st-2'])
    const verifier = 'v'.repeat(43)
    const plain = await fb.authorize(dialog({ redirect_uri: REDIRECT_URI, code_challenge: verifier, code_challenge_method: 'plain' }), FAY)
    await graphError(t, await fetch(exchange(plain.searchParams.get('code') as string, { code_verifier: 'w'.repeat(43) })), 100)
    t.equal((await fetch(exchange(plain.searchParams.get('code') as string, { code_verifier: verifier }))).status, 200, 'plain PKCE is taken')
    t.equal((await fetch(dialog({}), { redirect: 'manual' })).status, 400, 'redirect_uri is required')
    t.equal((await fetch(dialog({ redirect_uri: `${REDIRECT_URI}/deeper` }), { redirect: 'manual' })).status, 400, 'strict: the very URI registered')
  })
})

t.test('Discord', async (t) => {
  const dc = await startOAuth2Provider('discord')
  t.teardown(() => dc.close())
  const redeem = async (fields: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<[number, Record<string, unknown>]> => {
    const res = await postForm(dc.urls.token, fields, headers)
    return [res.status, await res.json() as Record<string, unknown>]
  }
  const viaBasic = (code: string, extra: Record<string, string | undefined> = {}): Promise<[number, Record<string, unknown>]> =>
    redeem({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...extra }, { authorization: basic(dc.clientId, dc.clientSecret) })

  t.test('settings name the endpoints', async (t) => {
    t.same(dc.settings, { api: { authorization: `${dc.origin}/oauth2/authorize`, token: `${dc.origin}/api/oauth2/token`, user: `${dc.origin}/api/users/@me` } })
  })

  t.test('a code is redeemed (Basic or form credentials) for a token; /users/@me answers the user, email and verified with the email scope', async (t) => {
    const [status, token] = await viaBasic(dc.code(NELLY).code)
    t.equal(status, 200)
    t.match(token, { access_token: String, token_type: 'Bearer', expires_in: 604800, refresh_token: String, scope: 'identify email' })
    const me = await bearer(dc.urls.user, token.access_token as string)
    t.equal(me.status, 200)
    t.match(await me.json(), { id: NELLY.id, username: 'nelly', global_name: 'Nelly', discriminator: '0', email: 'nelly@example.com', verified: true })
    t.equal((await bearer(`${dc.origin}/api/v10/users/@me`, token.access_token as string)).status, 200, 'with an API version too')
    const [, posted] = await redeem(redemption(dc, dc.code(NELLY).code))
    t.match(posted, { access_token: String })
    const [, identifyOnly] = await viaBasic(dc.code(NELLY, { scope: 'identify' }).code)
    const user = await (await bearer(dc.urls.user, identifyOnly.access_token as string)).json() as Record<string, unknown>
    t.equal(user.id, NELLY.id)
    t.notOk('email' in user || 'verified' in user, 'no email and no verified without the email scope')
    const [, mailless] = await viaBasic(dc.code({ ...NELLY, id: '2', email: undefined }).code)
    t.match(await (await bearer(dc.urls.user, mailless.access_token as string)).json(), { email: null, verified: true }, 'an account without email')
  })

  t.test('refused redemptions: RFC 6749 errors', async (t) => {
    const { code } = dc.code(NELLY)
    const json = await fetch(dc.urls.token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(redemption(dc, code)) })
    t.equal(json.status, 400, 'only form bodies')
    t.match(await json.json(), { error: 'unsupported_grant_type' })
    t.same(await redeem(redemption(dc, code, { client_secret: 'wrong' })), [401, { error: 'invalid_client' }])
    t.match(await viaBasic(code, { grant_type: 'password' }), [400, { error: 'unsupported_grant_type' }])
    t.match(await viaBasic(code, { code: undefined }), [400, { error: 'invalid_request' }])
    t.match(await viaBasic('garbage'), [400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' }])
    t.match(await viaBasic(code, { redirect_uri: OTHER_REDIRECT_URI }), [400, { error: 'invalid_grant', error_description: 'Invalid "redirect_uri" in request.' }])
    t.match(await viaBasic(code, { redirect_uri: undefined }), [400, { error: 'invalid_grant' }])
    t.match(await viaBasic(code), [200, { access_token: String }], 'the failures above did not spend the code')
    t.match(await viaBasic(code), [400, { error: 'invalid_grant' }], 'single use')
    const late = dc.code(NELLY).code
    dc.expireCodes()
    t.match(await viaBasic(late), [400, { error: 'invalid_grant' }])
    t.match(await viaBasic(dc.code(NELLY, { otherClient: true }).code), [400, { error: 'invalid_grant' }])
    const { code: pkce, codeVerifier } = dc.code(NELLY, { pkce: true })
    t.match(await viaBasic(pkce, { code_verifier: 'x'.repeat(43) }), [400, { error: 'invalid_grant', error_description: 'Invalid "code_verifier" in request.' }])
    t.match(await viaBasic(pkce, { code_verifier: codeVerifier }), [200, { access_token: String }])
  })

  t.test('/users/@me refusals: 401 with a JSON message', async (t) => {
    const unauthorized = { message: '401: Unauthorized', code: 0 }
    const forged = await bearer(dc.urls.user, 'forged')
    t.equal(forged.status, 401)
    t.same(await forged.json(), unauthorized)
    t.equal((await fetch(dc.urls.user)).status, 401)
    const [, emailOnly] = await viaBasic(dc.code(NELLY, { scope: 'email' }).code)
    t.equal((await bearer(dc.urls.user, emailOnly.access_token as string)).status, 401, 'identify is required')
    const [, token] = await viaBasic(dc.code(NELLY).code)
    dc.expireTokens()
    t.same(await (await bearer(dc.urls.user, token.access_token as string)).json(), unauthorized)
  })

  t.test('the authorization page', async (t) => {
    const page = (params: Record<string, string>): string => `${dc.urls.authorization}?${new URLSearchParams({ client_id: dc.clientId, scope: 'identify email', state: 'st-3', redirect_uri: REDIRECT_URI, ...params }).toString()}`
    const approved = await dc.authorize(page({ response_type: 'code' }), NELLY)
    t.equal(approved.searchParams.get('state'), 'st-3')
    t.match(await viaBasic(approved.searchParams.get('code') as string), [200, { scope: 'identify email' }])
    const denied = await dc.authorize(page({ response_type: 'code' }), null)
    t.same([denied.searchParams.get('error'), denied.searchParams.get('state')], ['access_denied', 'st-3'])
    t.equal((await dc.authorize(page({}), NELLY)).searchParams.get('error'), 'unsupported_response_type')
    t.equal((await fetch(page({ response_type: 'code', redirect_uri: 'https://evil.example/' }), { redirect: 'manual' })).status, 400, 'no redirect to an unregistered URI')
  })
})

t.test('a generic RFC 6749 provider', async (t) => {
  const op = await startOAuth2Provider('oauth2', { clientId: 'my client', clientSecret: 's3cret:with/odd+chars' })
  t.teardown(() => op.close())
  const viaBasic = async (code: string, extra: Record<string, string | undefined> = {}, secret = op.clientSecret): Promise<Response> =>
    await postForm(op.urls.token, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...extra }, { authorization: basic(op.clientId, secret) })
  const refusal = async (t: Test, res: Response, status: number, error: string): Promise<void> => {
    t.equal(res.status, status)
    t.equal(res.headers.get('cache-control'), 'no-store')
    t.same(await res.json(), { error })
  }

  t.test('settings name the endpoints', async (t) => {
    t.same(op.settings, { api: { authorization: `${op.origin}/oauth/authorize`, token: `${op.origin}/oauth/token`, user: `${op.origin}/api/me` } })
  })

  t.test('a code is redeemed (Basic with form-encoded credentials, or in the body); the user endpoint answers the account as registered', async (t) => {
    const res = await viaBasic(op.code(NESTED).code)
    t.equal(res.status, 200)
    t.equal(res.headers.get('cache-control'), 'no-store')
    t.equal(res.headers.get('pragma'), 'no-cache')
    const token = await res.json() as Record<string, unknown>
    t.match(token, { access_token: String, token_type: 'Bearer', expires_in: 3600, scope: 'profile email' })
    const me = await bearer(op.urls.user, token.access_token as string)
    t.same(await me.json(), NESTED)
    t.equal((await postForm(op.urls.token, redemption(op, op.code(NESTED).code))).status, 200)
  })

  t.test('refused redemptions', async (t) => {
    const { code } = op.code(NESTED)
    await refusal(t, await postForm(op.urls.token, redemption(op, code), { authorization: basic(op.clientId, op.clientSecret) }), 400, 'invalid_request')
    const wrongBasic = await viaBasic(code, {}, 'wrong')
    t.equal(wrongBasic.headers.get('www-authenticate'), 'Basic realm="oauth2"')
    await refusal(t, wrongBasic, 401, 'invalid_client')
    const wrongPost = await postForm(op.urls.token, redemption(op, code, { client_secret: 'wrong' }))
    t.equal(wrongPost.headers.get('www-authenticate'), null)
    await refusal(t, wrongPost, 401, 'invalid_client')
    await refusal(t, await viaBasic(code, { grant_type: undefined }), 400, 'invalid_request')
    await refusal(t, await viaBasic(code, { grant_type: 'client_credentials' }), 400, 'unsupported_grant_type')
    await refusal(t, await viaBasic(code, { code: undefined }), 400, 'invalid_request')
    const json = await fetch(op.urls.token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(redemption(op, code)) })
    await refusal(t, json, 400, 'invalid_request')
    for (const extra of [{ code: 'garbage' }, { redirect_uri: undefined }, { redirect_uri: OTHER_REDIRECT_URI }, { code_verifier: 'x'.repeat(43) }]) {
      await refusal(t, await viaBasic(code, extra), 400, 'invalid_grant')
    }
    const first = await viaBasic(code)
    t.equal(first.status, 200, 'the failures above did not spend the code')
    const { access_token: token } = await first.json() as { access_token: string }
    t.equal((await bearer(op.urls.user, token)).status, 200)
    await refusal(t, await viaBasic(code), 400, 'invalid_grant')
    t.equal((await bearer(op.urls.user, token)).status, 401, 'a code used twice revokes the token it gave')
    const late = op.code(NESTED).code
    op.expireCodes()
    await refusal(t, await viaBasic(late), 400, 'invalid_grant')
    await refusal(t, await viaBasic(op.code(NESTED, { otherClient: true }).code), 400, 'invalid_grant')
    const { code: pkce, codeVerifier } = op.code(NESTED, { pkce: true })
    await refusal(t, await viaBasic(pkce), 400, 'invalid_grant')
    t.equal((await viaBasic(pkce, { code_verifier: codeVerifier })).status, 200)
  })

  t.test('the user endpoint: RFC 6750 challenges', async (t) => {
    const anonymous = await fetch(op.urls.user)
    t.equal(anonymous.status, 401)
    t.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="oauth2"')
    const forged = await bearer(op.urls.user, 'forged')
    t.equal(forged.status, 401)
    t.equal(forged.headers.get('www-authenticate'), 'Bearer realm="oauth2", error="invalid_token"')
    const { access_token: token } = await (await viaBasic(op.code(NESTED).code)).json() as { access_token: string }
    op.expireTokens()
    t.equal((await bearer(op.urls.user, token)).status, 401)
  })

  t.test('the authorization page', async (t) => {
    const page = (params: Record<string, string>): string => `${op.urls.authorization}?${new URLSearchParams({ client_id: op.clientId, response_type: 'code', redirect_uri: REDIRECT_URI, state: 'st-4', ...params }).toString()}`
    const approved = await op.authorize(page({ scope: 'profile' }), NESTED)
    t.equal(approved.searchParams.get('state'), 'st-4')
    const { scope } = await (await viaBasic(approved.searchParams.get('code') as string)).json() as { scope: string }
    t.equal(scope, 'profile')
    t.equal((await op.authorize(page({}), null)).searchParams.get('error'), 'access_denied')
    t.equal((await op.authorize(page({ response_type: 'token' }), NESTED)).searchParams.get('error'), 'unsupported_response_type')
    await t.rejects(op.authorize(page({ client_id: 'unknown' }), NESTED), /answered 400/)
  })
})

t.test('faults on demand, and the requests seen', async (t) => {
  const op = await startOAuth2Provider('oauth2')
  t.teardown(() => op.close())
  const { code } = op.code(NESTED)
  op.failNext('token', { status: 503, body: { error: 'temporarily_unavailable' } })
  op.failNext('token', { status: 502, body: '<html>bad gateway</html>', contentType: 'text/html' })
  const first = await postForm(op.urls.token, redemption(op, code))
  t.equal(first.status, 503)
  t.same(await first.json(), { error: 'temporarily_unavailable' })
  const second = await postForm(op.urls.token, redemption(op, code))
  t.equal(second.status, 502)
  t.equal(second.headers.get('content-type'), 'text/html')
  t.equal(await second.text(), '<html>bad gateway</html>')
  const third = await postForm(op.urls.token, redemption(op, code))
  t.equal(third.status, 200, 'the faults came in order, once each, and spent nothing')
  const { access_token: token } = await third.json() as { access_token: string }

  op.failNext('user', { destroy: true })
  await t.rejects(bearer(op.urls.user, token), { cause: { code: 'UND_ERR_SOCKET' } }, 'the connection is dropped')
  op.failNext('user', { delayMs: 20 })
  const slow = await bearer(op.urls.user, token)
  t.same([slow.status, await slow.json()], [200, NESTED], 'a delay alone answers as usual, later')
  op.failNext('user', { delayMs: 30_000 })
  await t.rejects(fetch(op.urls.user, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(200) }), { name: 'TimeoutError' }, 'a long delay outlasts the client')
  t.equal((await bearer(op.urls.user, token)).status, 200)

  const seen = op.requests.filter((r) => r.endpoint === 'token')
  t.equal(seen.length, 3)
  t.match(seen[0], { method: 'POST', path: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: { grant_type: 'authorization_code', code, client_id: op.clientId } })
  t.equal(op.requests.filter((r) => r.endpoint === 'user').length, 4)
})

t.test('openid-client, as the plugin calls it, redeems a code at each provider with either client authentication and reads the user', async (t) => {
  const accounts: { [K in OAuth2Kind]: unknown } = { github: OCTO, facebook: FAY, discord: NELLY, oauth2: NESTED }
  for (const kind of ['github', 'facebook', 'discord', 'oauth2'] as const) {
    const p = await startOAuth2Provider(kind)
    t.teardown(() => p.close())
    for (const auth of [client.ClientSecretBasic, client.ClientSecretPost]) {
      const config = new client.Configuration({ issuer: p.origin, token_endpoint: p.urls.token }, p.clientId, {}, auth(p.clientSecret))
      client.allowInsecureRequests(config)
      const issue = p.code as (account: unknown, options: { pkce: boolean }) => { code: string, codeVerifier?: string }
      const { code, codeVerifier } = issue(accounts[kind], { pkce: true })
      const tokens = await client.authorizationCodeGrant(config, new URL(`${REDIRECT_URI}?code=${code}`), { pkceCodeVerifier: codeVerifier })
      const user = await client.fetchProtectedResource(config, tokens.access_token, new URL(p.urls.user), 'GET')
      t.equal(user.status, 200, `${kind} with ${auth.name}`)
    }
  }
})
