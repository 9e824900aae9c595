import { generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import { deriveKey, hmacSha256, keyFromSigningKey, randomCode, randomToken, safeEqual, sha256, sha256Base64url } from '../../lib/core/crypto.js'

const hex = (value: string): Buffer => Buffer.from(value, 'hex')

t.test('sha256 and sha256Base64url answer the FIPS 180-2 digest of "abc"', async (t) => {
  const digest = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
  t.equal(sha256('abc').toString('hex'), digest)
  t.equal(sha256(Buffer.from('abc')).toString('hex'), digest, 'bytes and their UTF-8 string hash alike')
  t.equal(sha256Base64url('abc'), hex(digest).toString('base64url'))
})

t.test('hmacSha256 answers RFC 4231 test case 2', async (t) => {
  t.equal(hmacSha256(Buffer.from('Jefe'), 'what do ya want for nothing?').toString('hex'),
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843')
})

t.test('deriveKey is HKDF-SHA256: RFC 5869 test case 1; 32 bytes unless told; info separates uses', async (t) => {
  const okm = deriveKey(hex('0b'.repeat(22)), hex('000102030405060708090a0b0c'), hex('f0f1f2f3f4f5f6f7f8f9'), 42)
  t.equal(okm.toString('hex'), '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865')
  const key = deriveKey('secret', 'salt', 'one use')
  t.equal(key.length, 32)
  t.ok(Buffer.isBuffer(key))
  t.same(deriveKey('secret', 'salt', 'one use'), key, 'the same inputs give the same key')
  t.notSame(deriveKey('secret', 'salt', 'another use'), key)
  t.notSame(deriveKey('secret', 'other salt', 'one use'), key)
})

t.test('keyFromSigningKey: from the secret or the private key, one key per use, and the other fields do not matter', async (t) => {
  const fromSecret = keyFromSigningKey({ secret: 's'.repeat(32) }, 'reset code')
  t.same(fromSecret, deriveKey('s'.repeat(32), 'jwt-login', 'reset code'))
  t.same(keyFromSigningKey({ kid: 'a', secret: 's'.repeat(32) } as { secret: string }, 'reset code'), fromSecret, 'the kid and field order are not part of it')
  t.notSame(keyFromSigningKey({ secret: 's'.repeat(32) }, 'two-factor email code'), fromSecret)
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'der' })
  const fromPrivateKey = keyFromSigningKey({ privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }, 'x')
  t.same(fromPrivateKey, deriveKey(pkcs8, 'jwt-login', 'x'), 'a private key counts by its PKCS#8 DER encoding')
  const pkcs1 = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString().replace(/\n/g, '\r\n')
  t.same(keyFromSigningKey({ privateKey: pkcs1 }, 'x'), fromPrivateKey, 'so the same key in another PEM form derives the same key')
  t.throws(() => keyFromSigningKey({}, 'x'), TypeError, 'a key without a secret derives nothing')
})

t.test('safeEqual: equal values only, whatever their lengths and forms', async (t) => {
  t.equal(safeEqual('same value', 'same value'), true)
  t.equal(safeEqual('', ''), true)
  t.equal(safeEqual(Buffer.from('bytes'), 'bytes'), true, 'a buffer and its UTF-8 string')
  t.equal(safeEqual('value-a', 'value-b'), false, 'same length')
  t.equal(safeEqual('short', 'shorter'), false, 'different lengths')
  t.equal(safeEqual('prefix', 'prefix\u0000'), false, 'a value and its extension')
  t.equal(safeEqual('', 'x'), false)
})

t.test('randomCode draws from the alphabet only, code points counted as one', async (t) => {
  const code = randomCode(12, 'ABCDEF234')
  t.equal(code.length, 12)
  t.match(code, /^[ABCDEF234]{12}$/)
  t.equal(randomCode(0, 'ab'), '')
  const emoji = [...randomCode(8, '🍎🍐🍊🍋')]
  t.equal(emoji.length, 8, 'eight characters of two code units each')
  t.ok(emoji.every(c => '🍎🍐🍊🍋'.includes(c)), 'each a whole character of the alphabet')
})

t.test('randomCode refuses an alphabet that would make codes guessable', async (t) => {
  t.throws(() => randomCode(6, ''), RangeError)
  t.throws(() => randomCode(6, 'a'), RangeError, 'one character: every code the same')
  t.throws(() => randomCode(6, 'abca'), RangeError, 'a repeated character is drawn more often')
})

t.test('randomCode has no modulo bias', async (t) => {
  // 200 characters: a byte taken modulo 200 would draw the first 56 twice as often as the rest
  const alphabet = Array.from({ length: 200 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('')
  const low = new Set([...alphabet].slice(0, 56))
  const draws = 200_000
  let lowCount = 0
  for (const c of randomCode(draws, alphabet)) if (low.has(c)) lowCount++
  const ratio = (lowCount / 56) / ((draws - lowCount) / 144)
  t.ok(ratio > 0.93 && ratio < 1.07, `the first 56 characters are drawn as often as the others (ratio ${ratio.toFixed(3)})`)
})

t.test('randomToken: base64url of the CSPRNG, 32 bytes unless told', async (t) => {
  const token = randomToken()
  t.match(token, /^[A-Za-z0-9_-]{43}$/)
  t.equal(Buffer.from(token, 'base64url').length, 32)
  t.match(randomToken(16), /^[A-Za-z0-9_-]{22}$/)
  t.equal(new Set(Array.from({ length: 1000 }, () => randomToken())).size, 1000, 'no repeats')
})
