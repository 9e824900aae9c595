// A new ESM host on the lowest Fastify 5 release jwt-login supports, with the packed tarball installed.
import Fastify from 'fastify'
import jwtLogin from 'fastify-jwt-login'
import { MemoryUserAdapter } from 'fastify-jwt-login/testing'

const users = new MemoryUserAdapter()
await users.addUser({ login: 'alice', email: 'alice@example.com', password: 'correct horse battery staple' })

const app = Fastify()
await app.register(jwtLogin, {
  users,
  settings: { tokens: { keys: [{ kid: 'k1', secret: 'a-host-secret-of-at-least-32-bytes!!' }] } }
})
app.get('/me', { preHandler: app.jwtLogin.authenticate }, async (request) => {
  const login: string | undefined = request.jwtLogin?.user.user_login
  return { login }
})

const login = await app.inject({
  method: 'POST',
  url: '/jwt-login/v1/auth',
  payload: { email: 'alice@example.com', password: 'correct horse battery staple' }
})
const jwt: string = login.json().data.jwt
const me = await app.inject({ url: '/me', headers: { authorization: `Bearer ${jwt}` } })

// ioredis and pg are optional peers this host did not install
async function loadError (load: () => Promise<unknown>): Promise<string> {
  try {
    await load()
    return 'loaded'
  } catch (error) {
    return (error as Error).message
  }
}
const redis = await loadError(async () => await import('fastify-jwt-login/redis'))
const postgres = await loadError(async () => await import('fastify-jwt-login/postgres'))
const nodemailer = await loadError(async () => await import('fastify-jwt-login/nodemailer'))
const wordpress = await loadError(async () => await import('fastify-jwt-login/wordpress'))
console.log(JSON.stringify({ fastify: app.version, login: login.statusCode, me: me.json(), redis, postgres, nodemailer, wordpress }))
await app.close()
