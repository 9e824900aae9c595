import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ALICE } from './app.js'

export const PREFIX = '/jwt-login/v1'

export interface Envelope {
  success: boolean
  data: Record<string, any>
}

export async function post (app: FastifyInstance, path: string, payload: unknown = {}, headers: Record<string, string> = {}, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: `${PREFIX}${path}`, payload: payload as any, headers, ...(remoteAddress === undefined ? {} : { remoteAddress }) })
}

export async function login (app: FastifyInstance, body: Record<string, unknown> = { email: ALICE.email, password: ALICE.password }, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return await post(app, '/auth', body, {}, remoteAddress)
}

/** Logs alice in and answers her tokens (refresh_token only when enabled). */
export async function loginTokens (app: FastifyInstance): Promise<{ jwt: string, refresh_token?: string }> {
  const res = await login(app)
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`)
  return res.json().data
}

/** A multipart/form-data body built by hand; `files` become file parts. */
export function multipart (fields: Record<string, string>, files: Record<string, string> = {}): { payload: string, headers: Record<string, string> } {
  const boundary = '----jwtLoginBoundary7MA4YWxkTrZu0gW'
  const parts: string[] = []
  for (const [name, value] of Object.entries(fields)) {
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
  }
  for (const [name, value] of Object.entries(files)) {
    parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.txt"\r\nContent-Type: text/plain\r\n\r\n${value}\r\n`)
  }
  return {
    payload: parts.join('') + `--${boundary}--\r\n`,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }
  }
}

/** The error envelope's errorCode, checking the envelope's shape on the way (and that `error_code` is the same number). */
export function errorCode (res: LightMyRequestResponse): number | undefined {
  const body = res.json() as Envelope
  if (body.success !== false || typeof body.data?.message !== 'string' || body.data.error_code !== body.data.errorCode) return undefined
  return body.data.errorCode
}

/** An answer's status and `errorCode` together, for one assertion. */
export function errorOf (res: LightMyRequestResponse): [number, number | undefined] {
  return [res.statusCode, errorCode(res)]
}

/** Decodes a JWT payload without verifying it. */
export function claimsOf (jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString('utf8'))
}
