import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { issueNonce, isIssuedNonce, NONCE_LIFETIME_MS } from '../../lib/oauth/nonce.js'
import { resolveSettings } from '../../lib/config/settings.js'
import { HS_SECRET } from '../helpers/app.js'

const pem = (): { privateKey: string, publicKey: string } => generateKeyPairSync('ec', {
  namedCurve: 'prime256v1',
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
})

t.test('a server nonce is checked under every key that signs or signed, and only until it expires', async (t) => {
  const now = Date.now()
  const old = pem()
  const current = pem()
  const before = resolveSettings({ tokens: { algorithm: 'ES256', keys: [{ kid: 'old', privateKey: old.privateKey }] } }).tokens
  // after a rotation the old key stays with its public half only (it verifies, it no longer signs)
  const after = resolveSettings({ tokens: { algorithm: 'ES256', keys: [{ kid: 'new', privateKey: current.privateKey }, { kid: 'old', publicKey: old.publicKey }] } }).tokens
  const { nonce, expiresIn } = issueNonce(before, now)
  t.equal(expiresIn, NONCE_LIFETIME_MS / 1000)
  t.equal(isIssuedNonce(before, nonce, now), true)
  t.equal(isIssuedNonce(after, nonce, now), false, 'a verify-only key holds no secret to check a nonce with: nonces of a retired key end with it')
  t.equal(isIssuedNonce(after, issueNonce(after, now).nonce, now), true)
  t.equal(isIssuedNonce(before, nonce, now + NONCE_LIFETIME_MS), false, 'expired')

  const hs = resolveSettings({ tokens: { keys: [{ kid: 'a', secret: HS_SECRET }, { kid: 'b', secret: `${HS_SECRET}-second` }] } }).tokens
  const rotated = resolveSettings({ tokens: { keys: [{ kid: 'b', secret: `${HS_SECRET}-second` }, { kid: 'a', secret: HS_SECRET }] } }).tokens
  t.equal(isIssuedNonce(rotated, issueNonce(hs, now).nonce, now), true, 'an HMAC key that moved down the list still checks its nonces')
  for (const bad of ['', 'n1', 'n2.a.b.c', 'n1.a.b', `${nonce}.x`, nonce.replace(/^n1/, 'n2')]) {
    t.equal(isIssuedNonce(before, bad, now), false, `refused: ${JSON.stringify(bad).slice(0, 30)}`)
  }
})
