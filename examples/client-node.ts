/**
 * `fastify-jwt-login/client` in Node (docs/client.md): a program that signs
 * in to a jwt-login host and calls it. Against the demo: `npm start`, then
 * `node --import tsx examples/client-node.ts`; API_URL, EMAIL and PASSWORD
 * point it at another host and user (the demo's by default).
 *
 * It is refused once on purpose (a wrong password: a JwtLoginClientError with
 * the status, the number and its name), signs in, validates its token, calls
 * the host's own route /me through `client.fetch`, lists its sessions,
 * refreshes, signs out, and shows /me refusing the signed-out token. One
 * line per step on stdout; test/examples/example-client.test.ts runs it.
 */
// an app imports from 'fastify-jwt-login/client'; this repository's examples import the source
import { createClient, JwtLoginClientError } from '../lib/client.js'

const { API_URL = 'http://127.0.0.1:3000', EMAIL = 'demo@example.com', PASSWORD = 'demo-password-123' } = process.env

// bearer mode, the tokens in memory: nothing outlives the process
const client = createClient({ baseUrl: API_URL, language: 'en' })
client.onSession((event) => { console.log(`session: ${event.type}`) })

/** What a refusal tells a program: the status, the envelope's number and its name. */
const refusal = (error: unknown): string =>
  error instanceof JwtLoginClientError ? `refused: ${error.status} ${String(error.errorCode)} ${String(error.code)}` : String(error)

try {
  // a wrong password first, on purpose
  await client.signIn({ email: EMAIL, password: `not ${PASSWORD}` }).catch((error: unknown) => { console.log(refusal(error)) })

  const signedIn = await client.signIn({ email: EMAIL, password: PASSWORD })
  if (signedIn.two_factor_required === true) throw new Error(`${EMAIL} has two-factor on: this example signs in with a password alone`)
  const { user } = await client.validate()
  console.log(`signed in as ${user.user_email}`)

  // the host's own route, behind the plugin's authenticate hook
  const me = await client.fetch('/me')
  console.log(`GET /me: ${me.status} ${JSON.stringify(await me.json())}`)

  const { sessions } = await client.sessions()
  console.log(`sessions: ${sessions.length}, this one current: ${String(sessions.some((session) => session.current))}`)

  const refreshed = await client.refresh()
  console.log(`refreshed: the client holds the new token: ${String(client.jwt === refreshed)}`)

  await client.signOut()
  // the revoked token, sent by hand: the host refuses it
  const gone = await fetch(new URL('/me', API_URL), { headers: { authorization: `Bearer ${refreshed}` } })
  console.log(`signed out: ${String(client.jwt === undefined)}; GET /me with the last token: ${gone.status}`)
} catch (error) {
  console.error(refusal(error))
  process.exitCode = 1
} finally {
  client.close()
}
