// A page of a new project with the packed tarball, bundled for the browser: the client alone, nothing of the server.
import { createClient, JwtLoginClientError } from 'fastify-jwt-login/client'

const client = createClient({ baseUrl: globalThis.location.origin, mode: 'cookie' })
client.signIn({ email: 'carol@example.com', password: 'correct horse battery staple' }).catch((error) => {
  globalThis.document.body.textContent = error instanceof JwtLoginClientError ? error.code : String(error)
})
