// Issue 34: a passkey ceremony from an origin not in passkeys.origins (400 / 217) is logged at warn,
// naming the origin the browser reported and the origins allowed (an origin is no secret), so a host sees what to add.
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryPasskeyStore, MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET, testClock } from '../helpers/app.js'
import { SoftAuthenticator } from '../helpers/authenticator.js'
import { ORIGIN, PASSKEY_SETTINGS, PREFIX } from '../helpers/passkeys.js'

t.test('a ceremony from another origin answers 400 / 217 and logs the origin seen and the ones allowed', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  t.teardown(() => app.close())
  await app.register(jwtLogin, { users, settings: { tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] }, passkeys: PASSKEY_SETTINGS }, clock: testClock(), passkeys: { port: new MemoryPasskeyStore() } })
  const login = await app.inject({ method: 'POST', url: `${PREFIX}/auth`, payload: { email: ALICE.email, password: ALICE.password } })
  const headers = { authorization: `Bearer ${login.json().data.jwt as string}` }
  const options = await app.inject({ method: 'POST', url: `${PREFIX}/passkeys/register/options`, headers, payload: {} })
  const credential = new SoftAuthenticator({ origin: 'https://app.example.com:8443' }).register(options.json().data)
  const res = await app.inject({ method: 'POST', url: `${PREFIX}/passkeys/register`, headers, payload: { credential } })
  t.equal(res.statusCode, 400)
  t.equal(res.json().data.errorCode, 217)
  const warning = lines.find(line => line.origin !== undefined)
  t.match(warning, {
    level: 40,
    origin: 'https://app.example.com:8443',
    allowed: [ORIGIN],
    msg: 'jwt-login: a passkey ceremony ran on an origin not in passkeys.origins (400 / 217); add it there if the page is yours'
  })
  t.notMatch(JSON.stringify(lines), login.json().data.jwt as string, 'no token in the log')
})
