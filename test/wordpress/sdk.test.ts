// The official Simple JWT Login SDK (npm `simple-jwt-login`) against a jwt-login host: sdk-client/client.ts, compiled with --strict, runs in a child process.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import t from 'tap'
import jwtLogin from '../../lib/index.js'
import { MemoryUserAdapter } from '../../lib/testing.js'
import { ALICE, HS_SECRET } from '../helpers/fixtures.js'
import type { Input, Outcome, Results } from './sdk-client/client.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLIENT_DIR = join(ROOT, 'test', 'wordpress', 'sdk-client')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const WP_JSON = '/wp-json/simple-jwt-login/v1'
const SDK_ROUTE = '/?rest_route=/simple-jwt-login/v1'

const INPUT: Input = {
  email: ALICE.email,
  password: ALICE.password,
  kept: { email: 'kept@example.test', password: 'a passphrase for the kept user' },
  deleted: { email: 'gone@example.test', password: 'a passphrase for the user deleted' }
}

/** Runs `node <args>` with `stdin` as its input; answers stdout, or rejects with the exit and stderr (which hold no secret). */
async function node (args: string[], stdin = ''): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = execFile(process.execPath, args, { timeout: 50_000 }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout)
      else reject(new Error(`node ${args[0] ?? ''} failed (${String(error.code)}): ${stdout}${stderr}`))
    })
    child.stdin?.end(stdin)
  })
}

t.test('the SDK, typed, signs in, validates, refreshes, registers, deletes and revokes through the Simple JWT Login namespace', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'jwt-login-sdk-client-'))
  t.teardown(async () => { await rm(out, { recursive: true, force: true }) })
  // the SDK's declarations and the client compile under --strict, and the emit goes to the temp dir only
  const compiled = await node([TSC, '-p', join(CLIENT_DIR, 'tsconfig.json'), '--strict', '--noEmit', 'false', '--outDir', out])
  t.equal(compiled, '', 'tsc --strict compiles the client with no diagnostic')
  // the compiled client is an ES module that finds the project's node_modules from the temp dir
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n')
  await symlink(join(ROOT, 'node_modules'), join(out, 'node_modules'), 'junction')

  const users = new MemoryUserAdapter()
  await users.addUser(ALICE)
  const app = Fastify()
  const seen: string[] = []
  app.addHook('onRequest', async (request) => {
    // the path and the namespace asked for, never the query's values (a JWT is there)
    const url = new URL(request.url, 'http://host')
    seen.push(`${request.method} ${url.pathname}${url.searchParams.has('rest_route') ? `?rest_route=${String(url.searchParams.get('rest_route'))}` : ''}`)
  })
  await app.register(jwtLogin, {
    users,
    aliases: [WP_JSON],
    settings: {
      tokens: { keys: [{ kid: 'k1', secret: HS_SECRET }] },
      refresh: { enabled: true },
      users: { register: { enabled: true, signIn: true }, delete: { enabled: true } }
    }
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const printed = await node([join(out, 'client.js'), base], JSON.stringify(INPUT))
  const results = JSON.parse(printed) as Results
  const signedIn = (outcome: Outcome): boolean => outcome.status === 200 && outcome.success === true && outcome.jwt

  t.ok(signedIn(results.signIn) && results.signIn.refreshToken, 'SDK authenticate (email, username null, password, password_hash null) answers a JWT and a refresh token', results.signIn)
  t.ok(signedIn(results.signInWpJson), `a fetch with an AuthenticateInterface body to POST ${WP_JSON}/auth answers a JWT`, results.signInWpJson)
  t.match(results.validate, { status: 200, success: true, email: ALICE.email }, 'SDK validateToken answers the user')
  t.ok(signedIn(results.refresh) && results.refresh.refreshToken && results.rotated, 'SDK refreshToken ({ JWT, refresh_token }) answers a new JWT and refresh token', results.refresh)
  t.ok(signedIn(results.register) && results.register.email === INPUT.kept.email, 'SDK registerUser (every profile field null) answers the new user and, with signIn, a JWT', results.register)
  t.ok(signedIn(results.registerDeleted), 'a second registration answers that user\'s JWT', results.registerDeleted)
  t.match(results.deleteUser, { status: 200, success: true }, 'SDK deleteUser with the new user\'s own JWT succeeds')
  t.match(results.validateDeleted, { status: 401, success: false }, 'the deleted user\'s JWT then fails validate')
  t.match(results.revoke, { status: 200, success: true }, 'SDK revokeToken succeeds')
  t.match(results.validateRevoked, { status: 401, success: false }, 'the revoked JWT then fails validate')

  const kept = await users.findByEmail(INPUT.kept.email)
  t.ok(kept !== null && kept.roles.includes('subscriber'), 'the registered user is in the adapter, with the default role')
  const login = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: INPUT.kept.email, password: INPUT.kept.password } })
  t.equal(login.statusCode, 200, 'the registered user signs in at POST /auth with the password given at registration')
  t.equal(await users.findByEmail(INPUT.deleted.email), null, 'the deleted user is gone from the adapter')

  const calls = ['POST /auth', 'GET /auth/validate', 'POST /auth/refresh', 'POST /users', 'DELETE /users', 'POST /auth/revoke'].map((call) => call.replace(' ', ` ${SDK_ROUTE}`))
  for (const call of [...calls, `POST ${WP_JSON}/auth`]) {
    t.ok(seen.includes(call), `the host was called at ${call}`)
  }
})
