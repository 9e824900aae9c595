// A new ESM project with the packed tarball: fastify-jwt-login/client in Node, signing in over HTTP to the package's own plugin listening on a free port.
import Fastify from 'fastify'
import jwtLogin from 'fastify-jwt-login'
import { createClient, JwtLoginClientError, type SessionEvent, type SignInAnswer } from 'fastify-jwt-login/client'
import { MemoryUserAdapter } from 'fastify-jwt-login/testing'

const CAROL = { email: 'carol@example.com', password: 'correct horse battery staple' }
const users = new MemoryUserAdapter()
await users.addUser({ login: 'carol', ...CAROL })

const app = Fastify()
await app.register(jwtLogin, {
  users,
  settings: { tokens: { keys: [{ kid: 'k1', secret: 'a-host-secret-of-at-least-32-bytes!!' }] }, refresh: { enabled: true } }
})
app.get('/me', { preHandler: app.jwtLogin.authenticate }, async (request) => ({ login: request.jwtLogin?.user.user_login }))
const base = await app.listen({ port: 0, host: '127.0.0.1' })

const client = createClient({ baseUrl: base })
const events: Array<SessionEvent['type']> = []
client.onSession((event) => { events.push(event.type) })

// a refused sign-in: the error a program switches on
const refused = await client.signIn({ email: CAROL.email, password: 'not the password' }).then(
  () => 'signed in',
  (error: unknown) => error instanceof JwtLoginClientError ? { status: error.status, errorCode: error.errorCode, code: error.code } : String(error)
)
const answer: SignInAnswer = await client.signIn(CAROL)
const me = await client.fetch('/me')
const refreshed = await client.refresh()
await client.signOut()
client.close()
await app.close()
console.log(JSON.stringify({
  refused,
  signedIn: typeof answer.jwt === 'string' && typeof answer.refresh_token === 'string',
  me: { status: me.status, body: await me.json() },
  refreshed: typeof refreshed,
  events,
  signedOut: client.jwt === undefined
}))
