// The `act` claim of impersonation tokens (RFC 8693 §4.1): signed in, typed, and refused on verify when malformed or on a kind that never carries one.
import { createSigner } from 'fast-jwt'
import t from 'tap'
import { resolveSettings } from '../../lib/config/settings.js'
import type { PublicUser } from '../../lib/adapters/users.js'
import { Jwt, mayCarryActor, type TokenClaims } from '../../lib/tokens/jwt.js'
import { buildKeyMaterial } from '../../lib/tokens/keys.js'
import { HS_SECRET, testClock } from '../helpers/app.js'

const USER: PublicUser = { ID: 7, user_login: 'kim', user_email: 'kim@example.com', display_name: 'Kim', roles: [] }
const settings = resolveSettings({ tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] } })
const clock = testClock(Date.now())
const jwt = new Jwt(buildKeyMaterial(settings.tokens), 'HS256', clock)
const forge = createSigner({ key: HS_SECRET, algorithm: 'HS256', kid: 'k1' })

/** A token signed with the plugin's key, of `kind`, with `act` as given (any shape). */
function signedWith (act: unknown, kind: 'access' | 'interim' = 'access'): string {
  const { claims } = jwt.sign(settings, USER, kind, { sessionId: 'abc-session' })
  return forge({ ...claims, act })
}

t.test('sign writes act: { sub } on an access token with an actor, and verify answers it typed', async (t) => {
  const { token, claims } = jwt.sign(settings, USER, 'access', { sessionId: 'abc-session', actor: 42 })
  t.same(claims.act, { sub: '42' }, 'the claims name the actor as a string')
  const act: TokenClaims['act'] = jwt.verify(settings, token, 'access').payload.act
  t.same(act, { sub: '42' }, 'verify answers the signed act')
  t.equal(jwt.sign(settings, USER, 'access', { sessionId: 'abc-session' }).claims.act, undefined, 'no actor, no act')
  t.equal(jwt.sign(settings, USER, 'interim', { sessionId: 'abc-session', actor: 42 }).claims.act, undefined, 'an interim token never carries one')
})

t.test('act is signed: changing it breaks the signature', async (t) => {
  const { token } = jwt.sign(settings, USER, 'access', { sessionId: 'abc-session', actor: 42 })
  const [head, , signature] = token.split('.')
  const payload = Buffer.from(JSON.stringify({ ...jwt.verify(settings, token, 'access').payload, act: { sub: '1' } })).toString('base64url')
  t.throws(() => jwt.verify(settings, `${head as string}.${payload}.${signature as string}`, 'access'), { code: 'ERR_JWT_LOGIN_TOKEN_SIGNATURE' }, 'another actor is refused')
})

t.test('a malformed act is an invalid claim', async (t) => {
  for (const act of ['42', 42, null, [], {}, { sub: 42 }, { sub: '' }, { sub: '0' }, { sub: 'admin' }, { sub: '-1' }]) {
    t.throws(() => jwt.verify(settings, signedWith(act), 'access'), { code: 'ERR_JWT_LOGIN_TOKEN_CLAIM_INVALID', errorCode: 11 }, `act ${JSON.stringify(act)} is refused`)
  }
  t.same(jwt.verify(settings, signedWith({ sub: '3' }), 'access').payload.act, { sub: '3' }, 'a well-formed act passes')
})

t.test('an interim token with act is refused where the interim token goes', async (t) => {
  t.throws(() => jwt.verify(settings, signedWith({ sub: '3' }, 'interim'), 'interim'), { code: 'ERR_JWT_LOGIN_INTERIM_TOKEN_INVALID' }, 'act on an interim token: refused')
  t.ok(jwt.verify(settings, signedWith(undefined, 'interim'), 'interim'), 'the same token without act passes')
})

t.test('mayCarryActor: a cheap look that never misses a token with act', async (t) => {
  const acting = jwt.sign(settings, USER, 'access', { sessionId: 'abc-session', actor: 42 }).token
  const own = jwt.sign(settings, USER, 'access', { sessionId: 'abc-session' }).token
  t.ok(mayCarryActor(acting), 'a token with act')
  t.ok(mayCarryActor(`Bearer ${acting}`), 'in an Authorization value too')
  t.notOk(mayCarryActor(own), 'a token without')
  for (const value of [undefined, 42, '', 'no-dots', 'one.dot', '..']) t.notOk(mayCarryActor(value), `not ${JSON.stringify(value)}`)
})
