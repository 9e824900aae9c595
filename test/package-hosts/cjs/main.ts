// A new CommonJS host (TypeScript compiled to require calls): jwt-login loads through require(esm).
import Fastify from 'fastify'
import jwtLogin from 'jwt-login'
import { MemoryUserAdapter } from 'jwt-login/testing'

async function main (): Promise<void> {
  const users = new MemoryUserAdapter()
  await users.addUser({ login: 'bob', email: 'bob@example.com', password: 'correct horse battery staple' })

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
    payload: { email: 'bob@example.com', password: 'correct horse battery staple' }
  })
  const jwt: string = login.json().data.jwt
  const me = await app.inject({ url: '/me', headers: { authorization: `Bearer ${jwt}` } })
  console.log(JSON.stringify({ fastify: app.version, login: login.statusCode, me: me.json(), loadedBy: typeof require }))
  await app.close()
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
