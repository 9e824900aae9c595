// Issue 24: an adapter's `PublicUser.ID` is served as one type, a positive safe integer, or refused.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { guardPorts } from '../../lib/adapters/guard.js'
import { HostPortError, type JwtLoginEventMap, type PublicUser } from '../../lib/index.js'
import { MemoryUserAdapter, type MemoryUser } from '../../lib/testing.js'
import { ALICE, buildHost } from '../helpers/app.js'
import { claimsOf, errorOf, loginTokens, post } from '../helpers/http.js'
import { assertNotLogged, loggingHost } from '../helpers/users.js'

const UUID = '3f2b8c1e-9a4d-4e7b-8c21-5d6f7a8b9c0d'
const PROBLEM = 'toPublicUser returned an ID that is not a positive safe integer'

/**
 * Memory users whose `toPublicUser` answers `idOf(user)` as the ID, as a
 * host's adapter over a `bigint` or `uuid` column would without parsing.
 * `findById` takes the number the plugin derives from the token.
 */
class OddIdUsers extends MemoryUserAdapter {
  constructor (readonly idOf: (user: MemoryUser) => unknown, readonly offset = 0) { super() }
  override async findById (id: number): Promise<MemoryUser | null> { return await super.findById(id - this.offset) }
  override toPublicUser (user: MemoryUser): PublicUser {
    return { ...super.toPublicUser(user), ID: this.idOf(user) as number }
  }
}

/** Alice is user 1 of the memory adapter; as `pg` answers a bigint column, her ID is the string "7". */
async function bigintUsers (): Promise<OddIdUsers> {
  const users = new OddIdUsers(user => String(user.ID + 6), 6)
  await users.addUser(ALICE)
  return users
}

async function uuidUsers (): Promise<OddIdUsers> {
  const users = new OddIdUsers(() => UUID)
  await users.addUser(ALICE)
  return users
}

function hostRoutes (app: FastifyInstance): void {
  app.get('/me', { preHandler: app.jwtLogin.authenticate }, async (request) => {
    const id = request.jwtLogin?.user.ID
    return { id, type: typeof id }
  })
}

/** A token for user 1, signed by the host (no adapter call), to reach the routes that read the user. */
function hostToken (app: FastifyInstance): string {
  return app.jwtLogin.sign({ ID: 1, user_login: ALICE.login, user_email: ALICE.email, display_name: ALICE.displayName, roles: [] })
}

t.test('a string of digits from the adapter is served as its number everywhere', async (t) => {
  const { app } = await buildHost(hostRoutes, {}, { users: await bigintUsers() })
  t.teardown(() => app.close())
  const signedIn: Array<JwtLoginEventMap['login.succeeded']> = []
  app.jwtLogin.events.on('login.succeeded', (event) => { signedIn.push(event) })

  const { jwt } = await loginTokens(app)
  t.equal(claimsOf(jwt).sub, '7', 'the JWT names user 7')
  t.same(signedIn.map(event => event.userId), [7], 'the audit event carries the number')
  t.equal(typeof signedIn[0]?.userId, 'number')

  const validate = await post(app, '/auth/validate', { JWT: jwt })
  t.equal(validate.statusCode, 200, validate.body)
  t.equal(validate.json().data.user.ID, 7, 'validate answers the number')
  t.equal(validate.json().data.jwt[0].payload.sub, '7')

  const me = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${jwt}` } })
  t.equal(me.statusCode, 200, me.body)
  t.same(me.json(), { id: 7, type: 'number' }, 'request.jwtLogin.user.ID is the number the validate answer has')
})

t.test('a UUID from the adapter answers 503 / 201 and the log names the problem and the fix, not the value', async (t) => {
  const { app, lines } = await loggingHost(t, await uuidUsers())
  const signIn = await post(app, '/auth', { email: ALICE.email, password: ALICE.password })
  t.same(errorOf(signIn), [503, 201], 'sign-in: no token with a UUID for a subject')
  const validate = await post(app, '/auth/validate', { JWT: hostToken(app) })
  t.same(errorOf(validate), [503, 201], 'validate')

  const failures = lines.map(line => JSON.parse(line)).filter(line => line.msg === 'jwt-login: dependency failed')
  t.equal(failures.length, 2, 'each request logs the failure once')
  for (const failure of failures) {
    t.equal(failure.err.type, 'HostPortError')
    t.match(failure.err.message, `users.toPublicUser failed: PortContractError: ${PROBLEM} (got a string that is not a positive decimal integer)`)
    t.match(failure.err.message, 'docs/adapters.md#user-ids', 'with where the fix is')
  }
  assertNotLogged(t, lines, [UUID, UUID.slice(0, 8), ALICE.email, ALICE.password])
})

t.test('a host route behind authenticate answers 503 / 201 for a UUID', async (t) => {
  const { app } = await buildHost(hostRoutes, {}, { users: await uuidUsers() })
  t.teardown(() => app.close())
  const me = await app.inject({ method: 'GET', url: '/me', headers: { authorization: `Bearer ${hostToken(app)}` } })
  t.same(errorOf(me), [503, 201])
})

t.test('what the guard makes of each ID', async (t) => {
  const users = new MemoryUserAdapter()
  const alice = await users.addUser(ALICE)
  const guarded = (idOf: (user: MemoryUser) => unknown): ((user: MemoryUser) => PublicUser) => {
    const { users: port } = guardPorts({ users: new OddIdUsers(idOf) })
    return (user) => port.toPublicUser(user)
  }

  const shown = users.toPublicUser(alice)
  const same = guardPorts({ users }).users.toPublicUser
  t.same(same(alice), shown, 'a number ID: the answer as it is')
  t.equal(guarded(() => Number.MAX_SAFE_INTEGER)(alice).ID, Number.MAX_SAFE_INTEGER, 'up to 2^53 - 1')

  const answer = { ...shown, ID: '9007199254740991' as unknown as number }
  const parsed = guardPorts({ users: Object.assign(new MemoryUserAdapter(), { toPublicUser: () => answer }) }).users.toPublicUser(alice)
  t.strictSame(parsed, { ...shown, ID: Number.MAX_SAFE_INTEGER }, 'the largest safe ID as digits: its number')
  t.equal(answer.ID, '9007199254740991', 'in a copy: the adapter\'s object is left as it is')

  const refused: Array<[string, unknown, string]> = [
    ['a UUID', UUID, 'got a string that is not a positive decimal integer'],
    ['an empty string', '', 'got a string that is not a positive decimal integer'],
    ['a leading zero', '07', 'got a string that is not a positive decimal integer'],
    ['a signed string', '-7', 'got a string that is not a positive decimal integer'],
    ['digits past 2^53 - 1', '9007199254740993', 'got a string of digits above 2^53 - 1'],
    ['0', 0, 'got a number below 1'],
    ['-1', -1, 'got a number below 1'],
    ['1.5', 1.5, 'got a number that is not an integer'],
    ['Infinity', Infinity, 'got a number that is not an integer'],
    ['NaN', Number.NaN, 'got NaN'],
    ['2^53', 2 ** 53, 'got a number above 2^53 - 1'],
    ['a bigint', 7n, 'got bigint'],
    ['null', null, 'got null'],
    ['no ID', undefined, 'got undefined']
  ]
  for (const [name, id, problem] of refused) {
    const error = t.throws(() => guarded(() => id)(alice), HostPortError, name) as HostPortError
    t.equal(error.message, `users.toPublicUser failed: PortContractError: ${PROBLEM} (${problem}); return the ID as a number, parsing a bigint column (see docs/adapters.md#user-ids)`, name)
    t.match(error, { port: 'users', method: 'toPublicUser', originalType: 'PortContractError' })
  }

  const nothing = guardPorts({ users: Object.assign(new MemoryUserAdapter(), { toPublicUser: () => undefined }) }).users
  t.throws(() => nothing.toPublicUser(alice), { message: /got undefined/ }, 'no answer at all')
})
