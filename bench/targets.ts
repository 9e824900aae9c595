/** jwt-login's requests the bench sends: sign-in, validate, login. */
import { probe, type Target } from './load.js'
import type { ServerProcess } from './servers.js'
import { PREFIX, USER } from './shared.js'

export const JSON_HEADERS = { 'content-type': 'application/json' }
export const LOGIN_BODY = JSON.stringify({ email: USER.email, password: USER.password })

/** Signs in once; answers the access token. */
export async function signIn (server: ServerProcess): Promise<string> {
  const answer = await probe(loginTarget(server))
  return (answer.json as { data: { jwt: string } }).data.jwt
}

/** The session id (`sid` claim) of a token of ours. */
export function sessionIdOf (token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sid?: unknown }
  if (typeof payload.sid !== 'string') throw new Error('the token has no session id')
  return payload.sid
}

export function validateTarget (server: ServerProcess, token: string): Target {
  return { server, method: 'POST', path: `${PREFIX}/auth/validate`, headers: JSON_HEADERS, body: JSON.stringify({ JWT: token }) }
}

export function loginTarget (server: ServerProcess): Target {
  return { server, method: 'POST', path: `${PREFIX}/auth`, headers: JSON_HEADERS, body: LOGIN_BODY }
}
