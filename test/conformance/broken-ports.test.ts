// The suites catch mistakes: each port below is a good in-memory one with exactly one rule broken, and the suite fails that rule alone.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import {
  mailerRules, mailerSuite, passkeyPortRules, passkeyPortSuite, twoFactorPortRules, twoFactorPortSuite,
  type MailerFixture, type TestFunction
} from '../../lib/conformance.js'
import type { Mailer, MailMessage, PasskeyPort, PasskeyUse, StoredPasskey, TwoFactorMethod, TwoFactorPort } from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore } from '../../lib/testing.js'
import { runSuite } from '../helpers/conformance.js'

/** A broken port: what is wrong with it, the rule that must fail (alone), and a fresh one. */
interface Breakage<Port> {
  what: string
  rule: string
  make: () => Port
}

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** Runs a suite on a recorder and checks that exactly `rule` failed, its message naming the rule and quoting its contract. */
async function failsAlone (t: Tap, title: string, rule: { name: string, contract: string }, declare: (test: TestFunction) => Promise<void>): Promise<void> {
  const run = await runSuite(declare)
  const name = `${title}: ${rule.name}`
  t.strictSame([...run.failed.keys()], [name], 'the failed rules')
  const message = run.failed.get(name)?.message ?? ''
  t.match(message, name, 'the failure names the rule')
  t.match(message, `the contract: "${rule.contract}"`, 'and quotes its contract')
}

/** The rule of this name, or a throw: a breakage naming a rule the suite does not have is a mistake of this file. */
function ruleNamed (rules: ReadonlyArray<{ name: string, contract: string }>, name: string): { name: string, contract: string } {
  const rule = rules.find(candidate => candidate.name === name)
  if (rule === undefined) throw new Error(`no rule named ${name}`)
  return rule
}

// ---- two-factor ports

/**
 * MemoryTwoFactorStore with the backup codes kept here, in the open, so that
 * the variants below can spend them their own (broken) way; as it is, it
 * passes every rule.
 */
class OpenCodes extends MemoryTwoFactorStore {
  /** Each user's code hashes, in their order, with the claim that spent each (`null` while unused). */
  protected readonly codes = new Map<number, Map<string, string | null>>()

  override async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    this.codes.set(userId, new Map(codeHashes.map(hash => [hash, null])))
  }

  override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    const codes = this.codes.get(userId)
    const usedBy = codes?.get(codeHash)
    if (codes === undefined || usedBy === undefined) return false
    if (usedBy !== null) return this.sameClaim(usedBy, claim)
    codes.set(codeHash, claim)
    return true
  }

  override async countBackupCodes (userId: number): Promise<number> {
    return [...this.codes.get(userId)?.values() ?? []].filter(usedBy => usedBy === null).length
  }

  protected sameClaim (spentBy: string, claim: string): boolean {
    return spentBy === claim
  }
}

/** A good port on a database whose collation ignores case (MySQL's default): claims differing by case alone are one claim, which random claims never meet. */
class CaseBlindClaims extends OpenCodes {
  protected override sameClaim (spentBy: string, claim: string): boolean {
    return spentBy.toLowerCase() === claim.toLowerCase()
  }
}

const TWO_FACTOR_BREAKAGES: Array<Breakage<TwoFactorPort>> = [
  {
    what: 'setTotpSecret answers nothing, not a promise',
    rule: 'every method answers a promise',
    make: () => Object.assign(new MemoryTwoFactorStore(), {
      setTotpSecret (this: MemoryTwoFactorStore, userId: number, secret: string) { MemoryTwoFactorStore.prototype.setTotpSecret.call(this, userId, secret).catch(() => {}) }
    }) as unknown as TwoFactorPort
  },
  {
    what: 'methodOf answers undefined for a user it never saw',
    rule: 'methodOf resolves null for a user without two-factor',
    make: () => new class extends MemoryTwoFactorStore {
      readonly #seen = new Set<number>()
      override async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
        this.#seen.add(userId)
        await super.setMethod(userId, method)
      }

      override async methodOf (userId: number): Promise<TwoFactorMethod | null> {
        return this.#seen.has(userId) ? await super.methodOf(userId) : undefined as unknown as null
      }
    }()
  },
  {
    what: 'setMethod stores nothing for passkey (a CHECK constraint from before passkeys)',
    rule: 'methodOf answers the method setMethod set, for that user only',
    make: () => new class extends MemoryTwoFactorStore {
      override async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
        if (method !== 'passkey') await super.setMethod(userId, method)
      }
    }()
  },
  {
    what: 'setMethod(null) leaves two-factor on',
    rule: 'setMethod(null) turns two-factor off',
    make: () => new class extends MemoryTwoFactorStore {
      override async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
        if (method !== null) await super.setMethod(userId, method)
      }
    }()
  },
  {
    what: 'getTotpSecret answers an empty string when there is none',
    rule: 'getTotpSecret resolves null before a secret is stored',
    make: () => new class extends MemoryTwoFactorStore {
      override async getTotpSecret (userId: number): Promise<string | null> {
        return await super.getTotpSecret(userId) ?? ''
      }
    }()
  },
  {
    what: 'setTotpSecret keeps 16 characters (a VARCHAR(16) column)',
    rule: 'setTotpSecret stores the secret getTotpSecret answers, for that user only',
    make: () => new class extends MemoryTwoFactorStore {
      override async setTotpSecret (userId: number, secret: string): Promise<void> {
        await super.setTotpSecret(userId, secret.slice(0, 16))
      }
    }()
  },
  {
    what: 'setTotpSecret keeps the first secret (INSERT … ON CONFLICT DO NOTHING)',
    rule: 'setTotpSecret replaces an earlier secret',
    make: () => new class extends MemoryTwoFactorStore {
      override async setTotpSecret (userId: number, secret: string): Promise<void> {
        if (await this.getTotpSecret(userId) === null) await super.setTotpSecret(userId, secret)
      }
    }()
  },
  {
    what: 'a backup code usable twice: a use spends the user\'s first unused code, not this one',
    rule: 'consumeBackupCode spends the code once, and only that code',
    make: () => new class extends OpenCodes {
      override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
        const codes = this.codes.get(userId)
        if (codes?.get(codeHash) !== null) return await super.consumeBackupCode(userId, codeHash, claim)
        const first = [...codes.entries()].find(([, usedBy]) => usedBy === null)?.[0] as string
        codes.set(first, claim)
        return true
      }
    }()
  },
  {
    what: 'consumeBackupCode throws for a user who holds no codes (the missing map)',
    rule: 'consumeBackupCode resolves false for a hash the user does not hold',
    make: () => new class extends OpenCodes {
      override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
        if (!this.codes.has(userId)) throw new TypeError('Cannot read properties of undefined (reading \'get\')')
        return await super.consumeBackupCode(userId, codeHash, claim)
      }
    }()
  },
  {
    what: 'consumeBackupCode finds the hash among every user\'s codes (no user in the WHERE clause)',
    rule: 'consumeBackupCode resolves false for another user\'s code',
    make: () => new class extends OpenCodes {
      override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
        const owner = [...this.codes.entries()].find(([, codes]) => codes.has(codeHash))?.[0]
        return await super.consumeBackupCode(owner ?? userId, codeHash, claim)
      }
    }()
  },
  {
    what: 'two concurrent consumes of one code both true: the read and the write a round trip apart',
    rule: 'of concurrent consumes of one code exactly one resolves true',
    make: () => new class extends OpenCodes {
      override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
        const unused = this.codes.get(userId)?.get(codeHash) === null
        await sleep(1)
        if (!unused) return await super.consumeBackupCode(userId, codeHash, claim)
        this.codes.get(userId)?.set(codeHash, claim)
        return true
      }
    }()
  },
  {
    what: 'the claim ignored: the retry with the same claim answers false',
    rule: 'the retry with the same claim resolves true again',
    make: () => new class extends OpenCodes {
      protected override sameClaim (): boolean {
        return false
      }
    }()
  },
  {
    what: 'a retry forgets the claim (used_by emptied, and an empty used_by taken for any claim): after it, any attempt spends the code',
    rule: 'a spent code resolves false to another claim',
    make: () => new class extends OpenCodes {
      override async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
        const usedBy = this.codes.get(userId)?.get(codeHash)
        if (usedBy === '') return true
        const answer = await super.consumeBackupCode(userId, codeHash, claim)
        if (answer && usedBy === claim) this.codes.get(userId)?.set(codeHash, '')
        return answer
      }
    }()
  },
  {
    what: 'replaceBackupCodes keeps the old codes',
    rule: 'replaceBackupCodes drops the old codes and the new ones work',
    make: () => new class extends OpenCodes {
      override async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
        const codes = this.codes.get(userId) ?? new Map<string, string | null>()
        for (const hash of codeHashes) codes.set(hash, null)
        this.codes.set(userId, codes)
      }
    }()
  },
  {
    what: 'countBackupCodes counts the spent codes too (no used_by IS NULL)',
    rule: 'countBackupCodes counts the user\'s unused codes',
    make: () => new class extends OpenCodes {
      override async countBackupCodes (userId: number): Promise<number> {
        return this.codes.get(userId)?.size ?? 0
      }
    }()
  },
  {
    what: 'countBackupCodes answers -1 for a user who never had codes',
    rule: 'countBackupCodes counts the user\'s unused codes',
    make: () => new class extends OpenCodes {
      override async countBackupCodes (userId: number): Promise<number> {
        return this.codes.has(userId) ? await super.countBackupCodes(userId) : -1
      }
    }()
  }
]

async function twoFactorRun (make: () => TwoFactorPort, test: TestFunction): Promise<void> {
  await twoFactorPortSuite({ test, create: async () => ({ port: make(), user: async (userId: number) => ({ id: userId }) }) })
}

t.test('the two-factor suite', async (t) => {
  for (const make of [() => new MemoryTwoFactorStore(), () => new OpenCodes(), () => new CaseBlindClaims()]) {
    const run = await runSuite(async test => { await twoFactorRun(make, test) })
    t.strictSame([...run.failed.keys()], [], `${make().constructor.name}: no rule fails`)
    t.equal(run.passed.length, twoFactorPortRules.length, 'every rule passes')
  }
  for (const { what, rule, make } of TWO_FACTOR_BREAKAGES) {
    await t.test(what, async (t) => { await failsAlone(t, 'TwoFactorPort', ruleNamed(twoFactorPortRules, rule), async test => { await twoFactorRun(make, test) }) })
  }
})

// ---- passkey ports

/** Whose a credential is, through the good port's own answer. */
async function ownerOf (port: PasskeyPort, credentialId: string): Promise<number | undefined> {
  return (await port.findById(credentialId))?.userId
}

/**
 * Rewrites a credential whole through the good port's own delete and create
 * (createdAt keeps its place in the list). Both are called before either is
 * awaited: their bodies run at once, so no other call comes between them.
 */
async function rewrite (port: MemoryPasskeyStore, passkey: StoredPasskey): Promise<void> {
  await Promise.all([
    MemoryPasskeyStore.prototype.delete.call(port, passkey.userId, passkey.id),
    MemoryPasskeyStore.prototype.create.call(port, passkey)
  ])
}

const PASSKEY_BREAKAGES: Array<Breakage<PasskeyPort>> = [
  {
    what: 'recordUse answers nothing, not a promise',
    rule: 'every method answers a promise',
    make: () => Object.assign(new MemoryPasskeyStore(), {
      recordUse (this: MemoryPasskeyStore, credentialId: string, use: PasskeyUse) { MemoryPasskeyStore.prototype.recordUse.call(this, credentialId, use).catch(() => {}) }
    }) as unknown as PasskeyPort
  },
  {
    what: 'create keeps the counter in a signed 32-bit column',
    rule: 'create resolves true and findById answers every field as stored',
    make: () => new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        return await super.create({ ...passkey, counter: passkey.counter | 0 })
      }
    }()
  },
  {
    what: 'create cuts ids to 255 characters (a VARCHAR(255) column)',
    rule: 'a credential id of 1,364 characters is kept exactly',
    make: () => new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        return await super.create({ ...passkey, id: passkey.id.slice(0, 255) })
      }
    }()
  },
  {
    what: 'create keeps names in 3-byte UTF-8: characters beyond 16 bits become ?',
    rule: 'a unicode name of 64 characters is kept exactly',
    make: () => new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        return await super.create({ ...passkey, name: passkey.name.replace(/[\u{10000}-\u{10FFFF}]/gu, '?') })
      }
    }()
  },
  {
    what: 'findById throws for an id never stored',
    rule: 'findById resolves null for an unknown id',
    make: () => new class extends MemoryPasskeyStore {
      readonly #stored = new Set<string>()
      override async create (passkey: StoredPasskey): Promise<boolean> {
        this.#stored.add(passkey.id)
        return await super.create(passkey)
      }

      override async findById (credentialId: string): Promise<StoredPasskey | null> {
        if (!this.#stored.has(credentialId)) throw new Error(`no credential ${credentialId}`)
        return await super.findById(credentialId)
      }
    }()
  },
  {
    what: 'findById finds only the credentials of one user (the first it stored for)',
    rule: 'findById finds any user\'s credential',
    make: () => new class extends MemoryPasskeyStore {
      #user: number | undefined
      override async create (passkey: StoredPasskey): Promise<boolean> {
        this.#user ??= passkey.userId
        return await super.create(passkey)
      }

      override async findById (credentialId: string): Promise<StoredPasskey | null> {
        const found = await super.findById(credentialId)
        return found?.userId === this.#user ? found : null
      }
    }()
  },
  {
    what: 'create overwrites an existing id (and answers false)',
    rule: 'create resolves false for a taken id, for any user, storing nothing',
    make: () => new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        const owner = await ownerOf(this, passkey.id)
        if (owner === undefined) return await super.create(passkey)
        await this.delete(owner, passkey.id)
        await super.create(passkey)
        return false
      }
    }()
  },
  {
    what: 'create answers true for an id the same user holds',
    rule: 'create resolves false for a taken id, for any user, storing nothing',
    make: () => new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        return await ownerOf(this, passkey.id) === passkey.userId || await super.create(passkey)
      }
    }()
  },
  {
    what: 'two concurrent creates of one id both true: the check and the insert a round trip apart',
    rule: 'of concurrent creates of one id exactly one is stored',
    make: () => new class extends MemoryPasskeyStore {
      override async create (passkey: StoredPasskey): Promise<boolean> {
        const taken = await this.findById(passkey.id) !== null
        await sleep(1)
        if (taken) return false
        await super.create(passkey)
        return true
      }
    }()
  },
  {
    what: 'listByUser in the order of creation, not oldest first',
    rule: 'listByUser answers the user\'s credentials only, oldest first',
    make: () => new class extends MemoryPasskeyStore {
      readonly #order: string[] = []
      override async create (passkey: StoredPasskey): Promise<boolean> {
        this.#order.push(passkey.id)
        return await super.create(passkey)
      }

      override async listByUser (userId: number): Promise<StoredPasskey[]> {
        return (await super.listByUser(userId)).sort((a, b) => this.#order.indexOf(a.id) - this.#order.indexOf(b.id))
      }
    }()
  },
  {
    what: 'listByUser by credential id (ORDER BY id)',
    rule: 'listByUser answers the user\'s credentials only, oldest first',
    make: () => new class extends MemoryPasskeyStore {
      override async listByUser (userId: number): Promise<StoredPasskey[]> {
        return (await super.listByUser(userId)).sort((a, b) => a.id < b.id ? -1 : 1)
      }
    }()
  },
  {
    what: 'listByUser by credential id, descending (ORDER BY id DESC)',
    rule: 'listByUser answers the user\'s credentials only, oldest first',
    make: () => new class extends MemoryPasskeyStore {
      override async listByUser (userId: number): Promise<StoredPasskey[]> {
        return (await super.listByUser(userId)).sort((a, b) => a.id < b.id ? 1 : -1)
      }
    }()
  },
  {
    what: 'recordUse applies the use to every credential of the user',
    rule: 'recordUse records the counter, the backup state and the time, nothing else',
    make: () => new class extends MemoryPasskeyStore {
      override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
        const owner = await ownerOf(this, credentialId)
        if (owner === undefined) return
        for (const passkey of await this.listByUser(owner)) await super.recordUse(passkey.id, use)
      }
    }()
  },
  {
    what: 'recordUse lowers the counter: the use overwrites it',
    rule: 'recordUse keeps the greater counter of a use that finished late',
    make: () => new class extends MemoryPasskeyStore {
      override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
        const found = await this.findById(credentialId)
        if (found !== null) await rewrite(this, { ...found, ...use })
      }
    }()
  },
  {
    what: 'recordUse reads, waits and writes the greater counter: concurrent uses land out of order',
    rule: 'of concurrent uses the greatest counter stays',
    make: () => new class extends MemoryPasskeyStore {
      override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
        const found = await this.findById(credentialId)
        if (found === null) return
        // a round trip that takes longer for a lower counter: the writes land in reverse
        await sleep(Math.max(0, 20 - use.counter))
        await rewrite(this, { ...found, ...use, counter: Math.max(found.counter, use.counter) })
      }
    }()
  },
  {
    what: 'recordUse throws for a credential gone since',
    rule: 'recordUse of a gone credential resolves and stores nothing',
    make: () => new class extends MemoryPasskeyStore {
      override async recordUse (credentialId: string, use: PasskeyUse): Promise<void> {
        if (await this.findById(credentialId) === null) throw new Error(`no credential ${credentialId}`)
        await super.recordUse(credentialId, use)
      }
    }()
  },
  {
    what: 'rename answers true without renaming',
    rule: 'rename renames the user\'s own credential, nothing else',
    make: () => new class extends MemoryPasskeyStore {
      override async rename (userId: number, credentialId: string): Promise<boolean> {
        return await ownerOf(this, credentialId) === userId
      }
    }()
  },
  {
    what: 'rename answers true for an id nobody has',
    rule: 'rename resolves false when the user has no credential with the id',
    make: () => new class extends MemoryPasskeyStore {
      override async rename (userId: number, credentialId: string, name: string): Promise<boolean> {
        return await this.findById(credentialId) === null || await super.rename(userId, credentialId, name)
      }
    }()
  },
  {
    what: 'rename renames another user\'s credential',
    rule: 'rename leaves another user\'s credential alone',
    make: () => new class extends MemoryPasskeyStore {
      override async rename (userId: number, credentialId: string, name: string): Promise<boolean> {
        return await super.rename(await ownerOf(this, credentialId) ?? userId, credentialId, name)
      }
    }()
  },
  {
    what: 'delete deletes every credential of the user',
    rule: 'delete deletes the user\'s own credential, nothing else',
    make: () => new class extends MemoryPasskeyStore {
      override async delete (userId: number, credentialId: string): Promise<boolean> {
        if (await ownerOf(this, credentialId) !== userId) return false
        for (const passkey of await this.listByUser(userId)) await super.delete(userId, passkey.id)
        return true
      }
    }()
  },
  {
    what: 'delete answers true for an id nobody has',
    rule: 'delete resolves false when the user has no credential with the id',
    make: () => new class extends MemoryPasskeyStore {
      override async delete (userId: number, credentialId: string): Promise<boolean> {
        return await this.findById(credentialId) === null || await super.delete(userId, credentialId)
      }
    }()
  },
  {
    what: 'delete deletes another user\'s credential',
    rule: 'delete leaves another user\'s credential alone',
    make: () => new class extends MemoryPasskeyStore {
      override async delete (userId: number, credentialId: string): Promise<boolean> {
        return await super.delete(await ownerOf(this, credentialId) ?? userId, credentialId)
      }
    }()
  }
]

async function passkeyRun (make: () => PasskeyPort, test: TestFunction): Promise<void> {
  await passkeyPortSuite({ test, create: async () => ({ port: make() }) })
}

t.test('the passkey suite', async (t) => {
  const run = await runSuite(async test => { await passkeyRun(() => new MemoryPasskeyStore(), test) })
  t.strictSame([...run.failed.keys()], [], 'MemoryPasskeyStore: no rule fails')
  t.equal(run.passed.length, passkeyPortRules.length, 'every rule passes')
  for (const { what, rule, make } of PASSKEY_BREAKAGES) {
    await t.test(what, async (t) => { await failsAlone(t, 'PasskeyPort', ruleNamed(passkeyPortRules, rule), async test => { await passkeyRun(make, test) }) })
  }
})

// ---- mailers

/** The other end of the good mailer: what arrived, and how many of the next messages it refuses. */
interface Mailbox {
  messages: MailMessage[]
  refusals: number
}

/** A good mailer: the mailbox takes a copy of each message, or refuses it and the send rejects. */
function deliverTo (box: Mailbox): Mailer {
  return {
    async send (message) {
      await sleep(0)
      if (box.refusals > 0) {
        box.refusals--
        throw new Error('550 mailbox unavailable')
      }
      box.messages.push(structuredClone(message))
    }
  }
}

/** A mailer changed from the good one: `wrap` gets the good one and answers the broken one. */
type MailerBreakage = Breakage<(good: Mailer) => Mailer>

const MAILER_BREAKAGES: MailerBreakage[] = [
  {
    what: 'the HTML part dropped',
    rule: 'the HTML part arrives beside the text, whole',
    make: () => good => ({ send: async ({ html, ...message }) => { await good.send(message) } })
  },
  {
    what: 'the subject sent as Latin-1 bytes: unicode mangled',
    rule: 'a unicode subject and text arrive intact',
    make: () => good => ({ send: async message => { await good.send({ ...message, subject: Buffer.from(message.subject, 'utf8').toString('latin1') }) } })
  },
  {
    what: 'the text cut into lines of 998 characters',
    rule: 'long lines arrive unbroken',
    make: () => good => ({ send: async message => { await good.send({ ...message, text: message.text.replace(/[^\n]{998}(?=[^\n])/g, line => `${line}\n`) }) } })
  },
  {
    what: 'no dot-stuffing: a line of a lone dot ends the text',
    rule: 'line breaks arrive where they were',
    make: () => good => ({ send: async message => { await good.send({ ...message, text: message.text.split('\n.\n')[0] as string }) } })
  },
  {
    what: 'the message kept in a field while the connection opens: concurrent sends mixed up',
    rule: 'concurrent sends each arrive once',
    make: () => {
      let current: MailMessage | undefined
      return good => ({
        send: async message => {
          current = message
          await sleep(1)
          await good.send(current)
        }
      })
    }
  },
  {
    what: 'send resolves when the server refused',
    rule: 'send rejects when the message is refused',
    make: () => good => ({ send: async message => { await good.send(message).catch(() => {}) } })
  },
  {
    what: 'after a refusal every send rejects (a connection never reset)',
    rule: 'after a refusal the next message is sent, once',
    make: () => {
      let broken = false
      return good => ({
        send: async message => {
          if (broken) throw new Error('connection in a bad state')
          await good.send(message).catch((error: unknown) => { broken = true; throw error })
        }
      })
    }
  }
]

/** A fixture on a fresh mailbox, the good mailer wrapped by `wrap`. */
function mailerFixture (wrap: (good: Mailer) => Mailer): MailerFixture {
  const box: Mailbox = { messages: [], refusals: 0 }
  return { mailer: wrap(deliverTo(box)), delivered: async () => box.messages, refuse: () => { box.refusals++ } }
}

async function mailerRun (make: () => (good: Mailer) => Mailer, test: TestFunction): Promise<void> {
  await mailerSuite({ test, create: async () => mailerFixture(make()) })
}

t.test('the mailer suite', async (t) => {
  const run = await runSuite(async test => { await mailerRun(() => good => good, test) })
  t.strictSame([...run.failed.keys()], [], 'the good mailer: no rule fails')
  t.equal(run.passed.length, mailerRules.length, 'every rule passes')
  for (const { what, rule, make } of MAILER_BREAKAGES) {
    await t.test(what, async (t) => { await failsAlone(t, 'Mailer', ruleNamed(mailerRules, rule), async test => { await mailerRun(make, test) }) })
  }
  // every other rule rests on the first: a mailer that breaks it breaks them all
  const lost = await runSuite(async test => { await mailerRun(() => () => ({ send: async () => {} }), test) })
  t.strictSame([...lost.failed.keys()], mailerRules.map(rule => `Mailer: ${rule.name}`), 'a mailer that delivers nothing fails every rule')
  const withoutRefusal = await runSuite(async test => { await mailerSuite({ test, create: async () => ({ ...mailerFixture(good => good), refuse: undefined }) }) })
  t.strictSame(withoutRefusal.skipped, mailerRules.filter(rule => rule.needs?.includes('refuse') === true).map(rule => `Mailer: ${rule.name} (skipped: the port does not provide refuse)`), 'a mailbox that cannot refuse: the refusal rules skipped')
})

t.test('every rule of the three suites has a broken port that fails it alone, but the first of the mailer\'s', async (t) => {
  const proven = (breakages: Array<{ rule: string }>): string[] => [...new Set(breakages.map(breakage => breakage.rule))].sort()
  const names = (rules: ReadonlyArray<{ name: string }>): string[] => rules.map(rule => rule.name).sort()
  t.strictSame(proven(TWO_FACTOR_BREAKAGES), names(twoFactorPortRules))
  t.strictSame(proven(PASSKEY_BREAKAGES), names(passkeyPortRules))
  t.strictSame(proven(MAILER_BREAKAGES), names(mailerRules.slice(1)))
})
