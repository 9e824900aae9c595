// The ports' capability manifests: each held to its interface, and every setting a manifest lists as needing a capability refused at registration without it, naming that setting.
import t from 'tap'
import { JwtLoginSettingsError, MemoryStore, type StateStore, type UserAdapter } from '../../lib/index.js'
import type { TwoFactorPort } from '../../lib/adapters/two-factor.js'
import type { PasskeyPort } from '../../lib/adapters/passkeys.js'
import type { Mailer } from '../../lib/mail/types.js'
import {
  capabilityOf, describeCapability, MAILER_MANIFEST, PASSKEY_PORT_MANIFEST, requireCapability, STATE_STORE_MANIFEST, supportsOf,
  TWO_FACTOR_PORT_MANIFEST, USER_ADAPTER_MANIFEST, type PortManifest
} from '../../lib/adapters/manifest.js'
import { MemoryPasskeyStore, MemoryTwoFactorStore, MemoryUserAdapter } from '../../lib/testing.js'
import { HS_SECRET, registrationRefusal, registrationThrew } from '../helpers/app.js'
import { MailBox } from '../helpers/mail-box.js'

/** The keys of `T` that are optional, and those that are not. */
type OptionalKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? K : never }[keyof T]
type RequiredKeys<T> = Exclude<keyof T, OptionalKeys<T>>

/** An interface's methods as records: a method added to the interface and not here fails the type check. */
const INTERFACES: Array<[PortManifest, Record<string, true>, Record<string, true>]> = [
  [USER_ADAPTER_MANIFEST,
    { findByEmail: true, findByLogin: true, findById: true, verifyPassword: true, toPublicUser: true } satisfies Record<RequiredKeys<UserAdapter>, true>,
    { getPasswordHash: true, setPassword: true, createUser: true, deleteUser: true, setEmailVerified: true, setEmail: true, rehashPassword: true, passwordFingerprint: true, hasPassword: true, findByIdentity: true, linkIdentity: true, listIdentities: true, unlinkIdentity: true } satisfies Record<OptionalKeys<UserAdapter>, true>],
  [STATE_STORE_MANIFEST,
    { get: true, set: true, consume: true, increment: true, compareAndSet: true, delete: true } satisfies Record<RequiredKeys<StateStore>, true>,
    { getMany: true, readAndIncrement: true, close: true, attachLogger: true } satisfies Record<OptionalKeys<Omit<StateStore, 'ordered' | 'system'>>, true>],
  [TWO_FACTOR_PORT_MANIFEST,
    { methodOf: true, getTotpSecret: true, setTotpSecret: true, consumeBackupCode: true, replaceBackupCodes: true } satisfies Record<RequiredKeys<TwoFactorPort>, true>,
    { setMethod: true, countBackupCodes: true } satisfies Record<OptionalKeys<TwoFactorPort>, true>],
  [PASSKEY_PORT_MANIFEST, { listByUser: true, findById: true, create: true, recordUse: true, rename: true, delete: true } satisfies Record<RequiredKeys<PasskeyPort>, true>, {} satisfies Record<OptionalKeys<PasskeyPort>, true>],
  [MAILER_MANIFEST, { send: true } satisfies Record<RequiredKeys<Mailer>, true>, {} satisfies Record<OptionalKeys<Mailer>, true>]
]

t.test('each manifest lists its interface\'s methods: the required ones, then every optional one under a capability', async (t) => {
  for (const [manifest, required, optional] of INTERFACES) {
    t.same(manifest.required, Object.keys(required), `${manifest.port}: required`)
    t.same(manifest.optional.flatMap(capability => capability.methods), Object.keys(optional), `${manifest.port}: optional`)
  }
  t.same(capabilityOf(STATE_STORE_MANIFEST, 'ordered'), { name: 'ordered', methods: [], flag: 'ordered', neededBy: [] }, 'the store\'s order is a flag')
  t.throws(() => capabilityOf(USER_ADAPTER_MANIFEST, 'fly'), { message: 'UserAdapter has no capability fly' })
})

t.test('supportsOf answers each capability of the port, by its methods and flag', async (t) => {
  const users = new MemoryUserAdapter()
  const { rehashPassword, ...others } = supportsOf(USER_ADAPTER_MANIFEST, users)
  t.equal(rehashPassword, false, 'MemoryUserAdapter upgrades no hash')
  t.ok(Object.values(others).every(Boolean), 'and provides every other capability')
  const { identities, deleteUser, ...rest } = supportsOf(USER_ADAPTER_MANIFEST, { ...bound(users), rehashPassword: async () => false, unlinkIdentity: undefined, deleteUser: undefined })
  t.same([identities, deleteUser], [false, false], 'one identity method missing: no identities')
  t.ok(Object.values(rest).every(Boolean))
  const store = new MemoryStore()
  t.teardown(async () => { await store.close() })
  t.same(supportsOf(STATE_STORE_MANIFEST, store), { getMany: true, readAndIncrement: true, close: true, attachLogger: true, ordered: true })
  t.same(supportsOf(STATE_STORE_MANIFEST, { get: async () => null }), { getMany: false, readAndIncrement: false, close: false, attachLogger: false, ordered: false })
  t.same(supportsOf(STATE_STORE_MANIFEST, null), { getMany: false, readAndIncrement: false, close: false, attachLogger: false, ordered: false }, 'nothing provides nothing')
  t.same(supportsOf(TWO_FACTOR_PORT_MANIFEST, new MemoryTwoFactorStore()), { setMethod: true, countBackupCodes: true })
  t.same(supportsOf(PASSKEY_PORT_MANIFEST, new MemoryPasskeyStore()), {})
})

t.test('describeCapability names a single method, a group of methods, and a flag', async (t) => {
  t.equal(describeCapability(USER_ADAPTER_MANIFEST, 'deleteUser'), '`deleteUser`')
  t.equal(describeCapability(USER_ADAPTER_MANIFEST, 'identities'), 'identities (`findByIdentity`, `linkIdentity`, `listIdentities`, `unlinkIdentity`)')
  t.equal(describeCapability(STATE_STORE_MANIFEST, 'ordered'), '`ordered: true`')
})

t.test('requireCapability: a setting the manifest does not list under the capability is a defect of the plugin, not a refusal', async (t) => {
  t.throws(() => { requireCapability(USER_ADAPTER_MANIFEST, {}, 'deleteUser', 'users/register/enabled', 'x') }, { message: 'the manifest of UserAdapter does not list users/register/enabled under deleteUser' })
  t.doesNotThrow(() => { requireCapability(USER_ADAPTER_MANIFEST, new MemoryUserAdapter(), 'createUser', 'oauth/providers/anyname/autoRegister', 'x') }, 'a provider\'s own path is listed as <name>')
  const refusal = t.throws(() => { requireCapability(USER_ADAPTER_MANIFEST, {}, 'deleteUser', 'users/delete/enabled', 'deleting users', 'why') }) as unknown as JwtLoginSettingsError
  t.match(refusal, { name: 'JwtLoginSettingsError', path: 'users/delete/enabled' })
  t.match(refusal.message, 'deleting users needs the user adapter to implement deleteUser (capability `deleteUser` of UserAdapter; docs/adapters.md): why')
})

/** The adapter's methods, bound, as a plain object (so one can be taken away). */
function bound (users: MemoryUserAdapter): Record<string, unknown> {
  const names = [...USER_ADAPTER_MANIFEST.required, ...USER_ADAPTER_MANIFEST.optional.flatMap(capability => capability.methods)]
  const record = users as unknown as Record<string, (...args: unknown[]) => unknown>
  return Object.fromEntries(names.filter(name => record[name] !== undefined).map(name => [name, (record[name] as (...args: unknown[]) => unknown).bind(users)]))
}

/** A memory adapter without the capability's methods. */
function without (name: string): UserAdapter {
  const record = bound(new MemoryUserAdapter())
  for (const method of capabilityOf(USER_ADAPTER_MANIFEST, name).methods) delete record[method]
  return record as unknown as UserAdapter
}

const TOKENS = { keys: [{ kid: 'k1', secret: HS_SECRET }] }
const GITHUB = { enabled: true, preset: 'github', clientId: 'id', clientSecret: 'secret', redirectUris: ['https://app.example.com/callback'] }

/** For each setting a manifest lists: the settings that turn it on, beside what else it needs (a mailer). */
const TURNED_ON: Record<string, Record<string, unknown>> = {
  'login/allowPasswordHash': { login: { allowPasswordHash: true } },
  'resetPassword/enabled': { resetPassword: { enabled: true } },
  'account/password/enabled': { account: { enabled: true, password: { enabled: true } } },
  'emailSignIn/enabled': { emailSignIn: { enabled: true } },
  'users/register/enabled': { users: { register: { enabled: true } } },
  'emailSignIn/register': { emailSignIn: { enabled: true, register: true } },
  'oauth/providers/<name>/autoRegister': { oauth: { providers: { gh: { ...GITHUB, autoRegister: true } } } },
  'users/delete/enabled': { users: { delete: { enabled: true } } },
  'account/enabled': { account: { enabled: true } },
  'users/register/verifyEmail': { users: { register: { enabled: true, verifyEmail: true } } },
  'authentication/requireVerifiedEmail': { authentication: { requireVerifiedEmail: true } },
  'account/email/enabled': { account: { enabled: true, email: { enabled: true } } },
  'account/twoFactor/enabled': { account: { enabled: true, twoFactor: { enabled: true } }, twoFactor: { enabled: true } }
}

/** A setting that needs a capability only beside another one (registration beside a provider or sign-in by email). */
const BESIDE: Record<string, Record<string, unknown>> = {
  'users/register/enabled setEmailVerified': { oauth: { providers: { gh: GITHUB } } },
  'emailSignIn/enabled setPassword': {}
}

t.test('every setting a manifest lists under a capability is refused at registration without it, naming the setting and the capability', async (t) => {
  for (const manifest of [USER_ADAPTER_MANIFEST, TWO_FACTOR_PORT_MANIFEST]) {
    for (const capability of manifest.optional) {
      for (const listed of capability.neededBy) {
        const settings = { tokens: TOKENS, ...TURNED_ON[listed], ...BESIDE[`${listed} ${capability.name}`] }
        const twoFactor = new MemoryTwoFactorStore()
        const options = manifest === USER_ADAPTER_MANIFEST
          ? { users: without(capability.name), twoFactor: { port: twoFactor } }
          : { users: new MemoryUserAdapter(), twoFactor: { port: { ...twoFactor, methodOf: twoFactor.methodOf.bind(twoFactor), getTotpSecret: twoFactor.getTotpSecret.bind(twoFactor), setTotpSecret: twoFactor.setTotpSecret.bind(twoFactor), consumeBackupCode: twoFactor.consumeBackupCode.bind(twoFactor), replaceBackupCodes: twoFactor.replaceBackupCodes.bind(twoFactor) } } }
        const refusal = await registrationRefusal({ ...options, mailer: new MailBox(), settings })
        const path = listed.replace('<name>', 'gh')
        t.equal(refusal.path, path, `${manifest.port} ${capability.name}: ${listed}`)
        t.match(refusal.message, `(capability \`${capability.name}\` of ${manifest.port}`, `${manifest.port} ${capability.name}: ${listed}`)
      }
    }
  }
})

t.test('a setting a capability gates starts without it (its routes answer 403 / 233, test/account/identities-unlink.test.ts)', async (t) => {
  const gated = USER_ADAPTER_MANIFEST.optional.filter(capability => capability.gates !== undefined)
  t.same(gated.map(capability => [capability.name, capability.gates]), [['identities', ['account/identities/enabled']]])
  const settings = { tokens: TOKENS, account: { enabled: true, identities: { enabled: true } } }
  t.equal(await registrationThrew({ users: without('identities'), mailer: new MailBox(), settings }), null)
})
