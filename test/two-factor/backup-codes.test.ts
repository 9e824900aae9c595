import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { BACKUP_CODE_COUNT, generateBackupCodes, hashBackupCode } from '../../lib/index.js'
import { MemoryTwoFactorStore } from '../../lib/testing.js'
import { buildTwoFactorApp } from '../helpers/two-factor.js'

t.test('the helper makes 10 codes, shown once; the host keeps only hashes', async (t) => {
  const { codes, hashes } = generateBackupCodes()
  t.equal(codes.length, BACKUP_CODE_COUNT)
  t.equal(new Set(codes).size, 10)
  for (const code of codes) t.match(code, /^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/)
  t.same(hashes, codes.map(hashBackupCode))
  for (const hash of hashes) t.notOk(codes.some(code => hash.includes(code.replace(/-/g, ''))))
  t.equal(hashBackupCode('too-short'), null)
  t.equal(hashBackupCode(codes[0]?.toUpperCase().replace(/-/g, ' ') as string), hashes[0], 'case, spaces and dashes do not matter')
})

t.test('a backup code is a fallback for a TOTP user and works once', async (t) => {
  const { app, interim, submit, port, bobId } = await buildTwoFactorApp({ settings: { refresh: { enabled: true } } })
  t.teardown(() => app.close())
  const enrollment = app.jwtLogin.twoFactor
  if (enrollment === null) throw new Error('two-factor is configured')
  const codes = await enrollment.regenerateBackupCodes(bobId)
  t.equal(codes.length, 10)
  t.equal(port.backupCodesLeft(bobId), 10)

  const accepted: unknown[] = []
  app.jwtLogin.events.on('two_factor.code_accepted', (e) => accepted.push(e))
  const res = await submit({ JWT: await interim(), code: codes[3] })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(res.json().data).sort(), ['jwt', 'refresh_token'])
  t.same(accepted, [{ userId: bobId, method: 'backup_codes', ip: '127.0.0.1' }])
  t.equal(port.backupCodesLeft(bobId), 9)

  const reuse = await submit({ JWT: await interim(), code: codes[3] })
  t.equal(reuse.statusCode, 401)
  t.equal(reuse.json().data.errorCode, 109)

  const regenerated = await enrollment.regenerateBackupCodes(bobId)
  const old = await submit({ JWT: await interim(), code: codes[4] })
  t.equal(old.json().data.errorCode, 109, 'regenerating drops the old codes')
  t.equal((await submit({ JWT: await interim(), code: regenerated[0] })).statusCode, 200)
})

t.test('with backup codes as the primary method, only a backup code passes', async (t) => {
  const { app, interim, submit, bobId } = await buildTwoFactorApp({ method: 'backup_codes' })
  t.teardown(() => app.close())
  const codes = await app.jwtLogin.twoFactor?.regenerateBackupCodes(bobId) as string[]
  const digits = await submit({ JWT: await interim(), code: '123456' })
  t.equal(digits.statusCode, 401)
  t.equal(digits.json().data.errorCode, 109)
  const typed = (codes[0] as string).toUpperCase().replace(/-/g, ' ')
  t.equal((await submit({ JWT: await interim(), code: typed })).statusCode, 200, 'as a user may type it')
})

/** A host whose delete is a read, a pause and a write: not atomic on its own. */
class CarelessPort extends MemoryTwoFactorStore {
  readonly hashes = new Set<string>()
  deletes = 0

  override async replaceBackupCodes (_userId: number, codeHashes: string[]): Promise<void> {
    this.hashes.clear()
    for (const hash of codeHashes) this.hashes.add(hash)
  }

  override async consumeBackupCode (_userId: number, codeHash: string): Promise<boolean> {
    const known = this.hashes.has(codeHash)
    await sleep(20)
    if (known) {
      this.hashes.delete(codeHash)
      this.deletes++
    }
    return known
  }
}

t.test('two challenges racing with one backup code: exactly one wins, even on a careless host', async (t) => {
  const port = new CarelessPort()
  const { app, interim, submit, bobId } = await buildTwoFactorApp({ plugin: { twoFactor: { port } } })
  t.teardown(() => app.close())
  port.enable(bobId, 'backup_codes')
  const codes = await app.jwtLogin.twoFactor?.regenerateBackupCodes(bobId) as string[]
  const [a, b] = [await interim(), await interim()]
  const results = await Promise.all([submit({ JWT: a, code: codes[0] }), submit({ JWT: b, code: codes[0] })])
  t.same(results.map(r => r.statusCode).sort(), [200, 401])
  t.equal(port.deletes, 1)
  t.equal(port.hashes.size, 9)
})

t.test('the memory port for a user without backup codes', async (t) => {
  const port = new MemoryTwoFactorStore()
  t.equal(port.backupCodesLeft(7), 0)
  t.equal(await port.consumeBackupCode(7, 'hash', 'attempt'), false)
  t.equal(await port.methodOf(7), null)
})

t.test('the memory port: a code spent by one claim answers true to that claim only', async (t) => {
  const port = new MemoryTwoFactorStore()
  const { hashes } = generateBackupCodes(2)
  await port.replaceBackupCodes(7, hashes)
  t.equal(await port.consumeBackupCode(7, hashes[0] as string, 'first'), true)
  t.equal(await port.consumeBackupCode(7, hashes[0] as string, 'first'), true, 'the retry of the attempt that spent it')
  t.equal(await port.consumeBackupCode(7, hashes[0] as string, 'second'), false, 'any other attempt')
  t.equal(await port.consumeBackupCode(7, 'not-a-hash', 'first'), false)
  t.equal(port.backupCodesLeft(7), 1)
})
