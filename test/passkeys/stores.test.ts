// The passkey ceremonies on the real Redis and PostgreSQL stores: enrolment, sign-ins, the second factor, step-up, a replay and a race; no spent challenge is left behind.
import { createHash } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'
import t from 'tap'
import type { StateStore } from '../../lib/index.js'
import { errorOf } from '../helpers/http.js'
import { authenticator, buildPasskeyApp, claimsOf, type PasskeyApp } from '../helpers/passkeys.js'
import { REDIS_URL, redisStore } from '../helpers/redis-store.js'
import { DATABASE_URL, postgresStore, sharedTable } from '../helpers/shared-stores.js'
import { BOB, totpAt } from '../helpers/two-factor.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]
type Kind = 'redis' | 'postgres'

/** Where a challenge is kept in the state store (the contract's `passkey:challenge:<sha256(challenge)>`). */
const CHALLENGE = 'passkey:challenge:'
const challengeKey = (challenge: string): string => `${CHALLENGE}${createHash('sha256').update(challenge).digest('base64url')}`

const OK: [number, undefined] = [200, undefined]

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 })
t.teardown(async () => { await pool.end() })

/** The keys under `prefix` on the test Redis, found by SCAN. */
async function redisKeys (prefix: string): Promise<string[]> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    const keys: string[] = []
    let cursor = '0'
    do {
      const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      keys.push(...found)
    } while (cursor !== '0')
    return keys
  } finally {
    await client.quit()
  }
}

/** The keys under `prefix` in the test process's state table, expired or not (a consume deletes its row). */
async function postgresKeys (prefix: string): Promise<string[]> {
  const { rows } = await pool.query<{ key: string }>(`SELECT key FROM ${await sharedTable()} WHERE starts_with(key, $1)`, [prefix])
  return rows.map(row => row.key)
}

/**
 * A store of `kind` with a key prefix of its own (cleaned up when `t`
 * ends; the stores `storeOf` gives, with their prefix), and the challenge
 * keys it holds, without the prefix.
 */
async function storeWithChallenges (t: Tap, kind: Kind): Promise<{ store: StateStore, challengesLeft: () => Promise<string[]> }> {
  const { store, prefix } = kind === 'redis' ? redisStore(t, 'passkey-stores') : await postgresStore(t, 'passkey-stores')
  const keysOf = kind === 'redis' ? redisKeys : postgresKeys
  return { store, challengesLeft: async () => (await keysOf(`${prefix}${CHALLENGE}`)).map(key => key.slice(prefix.length)).sort() }
}

/** The final access token of a sign-in's answer (asserted 200 and final). */
function finalJwt (t: Tap, res: LightMyRequestResponse, what: string): string {
  t.same(errorOf(res), OK, what)
  const data = res.json().data as { jwt: string, two_factor_required?: boolean }
  t.notOk(data.two_factor_required, `${what}: a final token`)
  return data.jwt
}

/** Bob's final token: his password, then his TOTP code of a time step not used before. */
async function bobToken (t: Tap, kit: PasskeyApp): Promise<string> {
  kit.clock.advance(30_000)
  const first = await kit.login(BOB)
  t.equal(first.json().data.two_factor_required, true, 'bob is asked his second factor')
  return finalJwt(t, await kit.post('/auth/2fa', { JWT: first.json().data.jwt, code: await totpAt(kit.bobSecret, kit.clock.now) }), 'bob\'s TOTP completes his sign-in')
}

for (const kind of ['redis', 'postgres'] as const) {
  t.test(`${kind}: the ceremonies, and no spent challenge left in the store`, async (t) => {
    const { store, challengesLeft } = await storeWithChallenges(t, kind)
    const kit = await buildPasskeyApp({ store, settings: { refresh: { enabled: true } } })
    t.teardown(() => kit.app.close())
    const alices = authenticator()
    const bobs = authenticator()

    await t.test('enrol: alice and bob each enrol a passkey, which they list', async (t) => {
      t.same(errorOf(await kit.enrol(await kit.token(), alices, {}, 'Laptop')), OK, 'alice\'s passkey is enrolled')
      const bob = await bobToken(t, kit)
      t.same(errorOf(await kit.enrol(bob, bobs)), OK, 'bob\'s passkey is enrolled')
      const listed = await kit.app.inject({ method: 'GET', url: '/jwt-login/v1/passkeys', headers: { authorization: `Bearer ${bob}` } })
      t.same(listed.json().data.passkeys.map((one: { id: string, name: string }) => [one.id, one.name]), [[bobs.credentials[0], 'Passkey']], 'bob lists his own passkey only')
      t.same((await kit.passkeys.listByUser(kit.aliceId)).map(one => [one.id, one.name]), [[alices.credentials[0], 'Laptop']], 'alice\'s is stored under her name for it')
    })

    await t.test('a passkey with user verification signs in alone, as two factors', async (t) => {
      const jwt = finalJwt(t, await kit.signIn(alices), 'alice signs in with her passkey')
      t.same(claimsOf(jwt).amr, ['hwk', 'user', 'mfa'])
      t.same(errorOf(await kit.post('/auth/validate', { JWT: jwt })), OK, 'the token validates')
      // bob has a second factor, and a verified passkey is two: no challenge
      t.same(claimsOf(finalJwt(t, await kit.signIn(bobs), 'bob signs in with his verified passkey')).amr, ['hwk', 'user', 'mfa'])
      t.ok((await kit.passkeys.findById(alices.credentials[0] as string))?.lastUsedAt, 'the use is recorded')
    })

    await t.test('a passkey without user verification is one factor: bob\'s TOTP completes it', async (t) => {
      const first = await kit.signIn(bobs, { userVerified: false })
      t.same(errorOf(first), OK)
      t.equal(first.json().data.two_factor_required, true, 'a challenge, never a final token on one factor')
      kit.clock.advance(30_000)
      const jwt = finalJwt(t, await kit.post('/auth/2fa', { JWT: first.json().data.jwt, code: await totpAt(kit.bobSecret, kit.clock.now) }), 'the TOTP code completes it')
      t.same(claimsOf(jwt).amr, ['hwk', 'otp', 'mfa'])
    })

    await t.test('a passkey as the second factor of a password sign-in', async (t) => {
      const first = await kit.login(BOB)
      const interim = first.json().data.jwt as string
      const credential = await kit.assert('/auth/2fa/passkey/options', interim, bobs, { userVerified: false })
      const jwt = finalJwt(t, await kit.post('/auth/2fa', { JWT: interim, passkey: credential }), 'the passkey completes it')
      t.same(claimsOf(jwt).amr, ['pwd', 'hwk', 'mfa'])
      t.same(errorOf(await kit.post('/auth/2fa', { JWT: interim, passkey: credential })), [401, 107], 'the completed challenge is closed to the same answer')
    })

    await t.test('step-up: an old sign-in is made recent again by the passkey, in the same session', async (t) => {
      const jwt = await kit.token()
      kit.clock.advance(11 * 60_000)
      t.same(errorOf(await kit.post('/passkeys/register/options', {}, jwt)), [401, 220], 'eleven minutes on, enrolment needs a recent sign-in')
      const credential = await kit.assert('/auth/step-up/options', jwt, alices)
      const res = await kit.post('/auth/step-up', { passkey: credential }, jwt)
      t.same(errorOf(res), OK)
      const stepped = claimsOf(res.json().data.jwt as string)
      t.equal(stepped.sid, claimsOf(jwt).sid, 'the same session')
      t.equal(stepped.auth_time, Math.floor(kit.clock.now / 1000), 'authenticated now')
      t.same(stepped.amr, ['hwk', 'user', 'mfa'])
      t.same(errorOf(await kit.post('/auth/step-up', { passkey: credential }, jwt)), [401, 216], 'the step-up\'s answer is spent')
      t.same(errorOf(await kit.enrol(res.json().data.jwt as string, authenticator(), {}, 'Security key')), OK, 'the stepped-up token enrols a second passkey')
    })

    await t.test('a replayed assertion is refused', async (t) => {
      const credential = await kit.assert('/auth/passkey/options', undefined, alices)
      finalJwt(t, await kit.post('/auth/passkey', { credential }), 'the first use signs in')
      t.same(errorOf(await kit.post('/auth/passkey', { credential })), [401, 216], 'the same assertion again is refused')
    })

    await t.test('two parallel uses of one challenge: one wins', async (t) => {
      const credential = await kit.assert('/auth/passkey/options', undefined, alices)
      const answers = await Promise.all([1, 2].map(async () => await kit.post('/auth/passkey', { credential })))
      t.same(answers.map(errorOf).sort(), [OK, [401, 216]].sort(), 'one signs in, the other is refused')
    })

    await t.test('no challenge is left in the store but the one never answered', async (t) => {
      const unanswered = (await kit.options('/auth/passkey/options')).challenge
      t.same(await challengesLeft(), [challengeKey(unanswered)], 'every answered challenge was consumed; the unanswered one is still there')
    })
  })
}
