import { JwtLoginClientError, retryAfterOf } from './errors.js'

/** What a call of a plugin route needs of the client's options. */
export interface TransportOptions {
  api: string
  cookie: boolean
  language: string | undefined
  fetch: typeof fetch
  /** Milliseconds a call may take before it is given up (status 0). */
  timeout: number
  authCode: Record<string, string>
}

/** A call: `csrf`, the CSRF token to send; `whole`, an answer that is not the envelope (`/jwks`), answered whole. */
export interface Call { method: string, path: string, body?: unknown, token?: string | undefined, csrf?: string | undefined, whole?: boolean }

/** One call of a plugin route: JSON in and out; the answer's `data`, or a `JwtLoginClientError`. `now`: the server's time, for `Retry-After` dates. */
export async function request<Data> (o: TransportOptions, now: number, { method, path, body, token, csrf, whole = false }: Call): Promise<Data> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (o.language !== undefined) headers['accept-language'] = o.language
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  if (csrf !== undefined) headers['x-csrf-token'] = csrf
  let url = o.api + path
  const auth = Object.keys(o.authCode).length > 0
  if (method === 'GET' || method === 'DELETE') {
    if (auth) url += (url.includes('?') ? '&' : '?') + new URLSearchParams(o.authCode).toString()
  } else {
    headers['content-type'] = 'application/json'
    body = { ...o.authCode, ...(body as object) }
  }
  let response: Response
  let text: string
  try {
    response = await o.fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: o.cookie ? 'include' : 'same-origin',
      signal: AbortSignal.timeout(o.timeout)
    })
    text = await response.text()
  } catch (error) {
    // no answer: the network, CORS, or the timeout
    throw Object.assign(new JwtLoginClientError(0, String(error)), { cause: error })
  }
  let answer: { success?: boolean, data?: { message?: string, errorCode?: number } } | undefined
  try { answer = JSON.parse(text) } catch {}
  if (response.ok && whole && answer !== undefined) return answer as Data
  if (response.ok && answer?.success === true) return answer.data as Data
  const data = answer?.data
  throw new JwtLoginClientError(response.status, data?.message ?? `${response.status} ${response.statusText}`,
    typeof data?.errorCode === 'number' ? data.errorCode : undefined, retryAfterOf(response.headers.get('retry-after'), now))
}
