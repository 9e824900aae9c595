/**
 * examples/client-node.ts (docs/client.md's Node example) run as a program
 * against the demo host listening on a free port: its lines, step by step.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { buildDemo, DEMO_2FA_USER, DEMO_USER } from '../../examples/demo.js'

const execFileAsync = promisify(execFile)
const EXAMPLE = fileURLToPath(new URL('../../examples/client-node.ts', import.meta.url))
/** The example loads TypeScript as this process does (tap's loader), so its coverage merges with the tests'. */
const LOADERS = process.execArgv.filter((arg) => arg.startsWith('--import') || arg === '--enable-source-maps')

const app = await buildDemo()
t.teardown(() => app.close())
const base = await app.listen({ port: 0, host: '127.0.0.1' })

/** Runs the example with `env` added; answers its exit code and output lines. */
async function example (env: Record<string, string>): Promise<{ code: number, stdout: string[], stderr: string }> {
  const ran = await execFileAsync(process.execPath, [...LOADERS, EXAMPLE], { env: { ...process.env, ...env }, timeout: 60_000 })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (error: { code: number, stdout: string, stderr: string }) => error)
  return { code: ran.code, stdout: ran.stdout.split('\n').filter(line => line !== ''), stderr: ran.stderr }
}

t.test('as the demo user: refused once with the error\'s status, number and name, then signed in, /me, sessions, refresh, signed out', async (t) => {
  const run = await example({ API_URL: base })
  t.equal(run.code, 0, run.stderr)
  const me = { user: { ID: 1, user_login: DEMO_USER.login, user_email: DEMO_USER.email, display_name: DEMO_USER.displayName, roles: DEMO_USER.roles, email_verified: true } }
  t.same(run.stdout, [
    'refused: 401 48 ERR_JWT_LOGIN_WRONG_CREDENTIALS',
    'session: signed-in',
    `signed in as ${DEMO_USER.email}`,
    `GET /me: 200 ${JSON.stringify(me)}`,
    'sessions: 1, this one current: true',
    'session: refreshed',
    'refreshed: the client holds the new token: true',
    'session: signed-out',
    'signed out: true; GET /me with the last token: 401'
  ])
})

t.test('as the two-factor user: the example says it signs in with a password alone, and exits 1', async (t) => {
  const run = await example({ API_URL: base, EMAIL: DEMO_2FA_USER.email, PASSWORD: DEMO_2FA_USER.password })
  t.equal(run.code, 1)
  t.same(run.stdout, ['refused: 401 48 ERR_JWT_LOGIN_WRONG_CREDENTIALS'])
  t.match(run.stderr, `Error: ${DEMO_2FA_USER.email} has two-factor on: this example signs in with a password alone`)
})
