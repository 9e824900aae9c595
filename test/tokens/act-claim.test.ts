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

t.test('mayCarryActor finds "act": at each of the three places it may start in a 3-byte group, without decoding', async (t) => {
  const offsets = new Set<number>()
  // session ids of three lengths move the key (the last claim) by one byte each
  for (const sessionId of ['a-session', 'ab-session', 'abc-session']) {
    const acting = jwt.sign(settings, USER, 'access', { sessionId, actor: 42 }).token
    const payload = Buffer.from(acting.split('.')[1] as string, 'base64url').toString()
    const offset = payload.indexOf('"act":') % 3
    offsets.add(offset)
    t.ok(mayCarryActor(acting), `found at offset ${offset}`)
    t.notOk(mayCarryActor(jwt.sign(settings, USER, 'access', { sessionId }).token), `a token without, of the same length (${sessionId})`)
  }
  t.same([...offsets].sort(), [0, 1, 2], 'every offset was tried')
  const bare = (json: string): string => `e30.${Buffer.from(json).toString('base64url')}.sig`
  for (const lead of ['', ' ', '  ']) t.ok(mayCarryActor(bare(`${lead}{"act":{"sub":"1"}}`)), `at the start of a payload, after ${lead.length} byte(s)`)
  t.notOk(mayCarryActor(bare('{"actor":"1","react":2}')), 'a key that only begins or ends with act is none')
})
