/**
 * A Node program that calls a jwt-login host with the official Simple JWT
 * Login SDK (npm `simple-jwt-login`), written against the SDK's own
 * TypeScript types: test/wordpress/sdk.test.ts compiles it with `--strict`
 * and runs it against a host in its own process.
 *
 * Usage: `node client.js <base URL>`, with the accounts as one JSON object on
 * stdin (`Input`). It prints one JSON line (`Results`): statuses, error codes
 * and whether a JWT came back, never a token or a password.
 *
 * The SDK sends every call through a synchronous `XMLHttpRequest` when it is
 * given a callback. Node has no `XMLHttpRequest`, so `SyncRequest` stands in
 * for it: each `send()` runs a child Node process that does the request with
 * `fetch` and prints the answer, and waits for it. The host must therefore be
 * served by another process.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { SimpleJwtLogin, type AuthenticateInterface, type DeleteUserInterface, type RefreshTokenInterface, type RegisterUserInterface, type RevokeTokenInterface, type ValidateTokenInterface } from 'simple-jwt-login'

/** The accounts the run uses, read from stdin. */
export interface Input {
  /** An existing user. */
  email: string
  password: string
  /** The user registered and kept. */
  kept: { email: string, password: string }
  /** The user registered, then deleted with its own JWT. */
  deleted: { email: string, password: string }
}

/** One call's outcome, as the program reports it. */
export interface Outcome {
  status: number
  success: boolean | null
  /** Whether the answer held a JWT in `data.jwt`. */
  jwt: boolean
  /** Whether the answer held a refresh token in `data.refresh_token`. */
  refreshToken: boolean
  errorCode: number | null
  /** `data.user.user_email` of the answer, when there is one. */
  email: string | null
}

/** What the program prints, one outcome per step. */
export interface Results {
  signIn: Outcome
  signInWpJson: Outcome
  validate: Outcome
  refresh: Outcome
  /** Whether the refreshed JWT differs from the one signed in with. */
  rotated: boolean
  register: Outcome
  registerDeleted: Outcome
  deleteUser: Outcome
  validateDeleted: Outcome
  revoke: Outcome
  validateRevoked: Outcome
}

/** The SDK's default namespace, which the host serves as an alias. */
const WP_JSON_NAMESPACE = '/wp-json/simple-jwt-login/v1'

/**
 * The child process of one request: reads `{ method, url, headers, body }`
 * on stdin, prints `{ status, text }`.
 */
const REQUEST_SCRIPT = `
const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const { method, url, headers, body } = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const response = await fetch(url, { method, headers, body: body ?? undefined })
process.stdout.write(JSON.stringify({ status: response.status, text: await response.text() }))
`

/** The answer the request script prints. */
interface Exchange {
  status: number
  text: string
}

/**
 * The part of `XMLHttpRequest` the SDK uses, synchronous whatever `async`
 * says: `send()` returns once the answer is in, after calling
 * `onreadystatechange` with `readyState` 4.
 */
class SyncRequest {
  readyState = 0
  status = 0
  responseText = ''
  onreadystatechange: (() => void) | null = null
  #method = 'GET'
  #url = ''
  readonly #headers: Record<string, string> = {}

  open (method: string, url: string): void {
    this.#method = method
    this.#url = url
    this.readyState = 1
  }

  setRequestHeader (name: string, value: string): void {
    this.#headers[name] = value
  }

  send (body: string | null = null): void {
    const input = JSON.stringify({ method: this.#method, url: this.#url, headers: this.#headers, body })
    const output = execFileSync(process.execPath, ['--input-type=module', '--eval', REQUEST_SCRIPT], { input, encoding: 'utf8' })
    const { status, text } = JSON.parse(output) as Exchange
    this.status = status
    this.responseText = text
    this.readyState = 4
    this.onreadystatechange?.()
  }
}

/** An answer's status and parsed body, whichever way the SDK handed it over. */
interface Answer {
  status: number
  body: unknown
}

/** An answer body's fields of interest. */
interface Body {
  success?: boolean
  data?: { jwt?: unknown, refresh_token?: unknown, errorCode?: unknown, user?: { user_email?: unknown } }
}

/**
 * Makes one SDK call with a callback and answers what the callback got. On an
 * error status the SDK hands over `{ error: 'true', response: <text> }`; the
 * text is parsed here.
 */
function callSdk (client: SimpleJwtLogin, call: (client: SimpleJwtLogin) => void): Answer {
  const answers: Answer[] = []
  client.withCallback((body: unknown, status: number) => {
    const failed = status !== 200 && status !== 201
    answers.push({ status, body: failed ? JSON.parse((body as { response: string }).response) : body })
  })
  call(client)
  const answer = answers[0]
  if (answer === undefined) throw new Error('the SDK did not call back')
  return answer
}

function outcomeOf ({ status, body }: Answer): Outcome {
  const { success, data } = body as Body
  return {
    status,
    success: success ?? null,
    jwt: typeof data?.jwt === 'string' && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(data.jwt),
    refreshToken: typeof data?.refresh_token === 'string',
    errorCode: typeof data?.errorCode === 'number' ? data.errorCode : null,
    email: typeof data?.user?.user_email === 'string' ? data.user.user_email : null
  }
}

/** A string field of the answer's `data`, which the run needs to go on. */
function field (answer: Answer, name: 'jwt' | 'refresh_token'): string {
  const value = (answer.body as Body).data?.[name]
  if (typeof value !== 'string') throw new Error(`the answer (status ${answer.status}) has no ${name}`)
  return value
}

/** A register request with every profile field of the SDK's interface sent as null. */
function registration (email: string, password: string): RegisterUserInterface {
  return {
    email,
    password,
    user_login: null,
    user_nicename: null,
    user_url: null,
    display_name: null,
    nickname: null,
    first_name: null,
    last_name: null,
    description: null,
    rich_editing: null,
    syntax_highlighting: null,
    comment_shortcuts: null,
    admin_color: null,
    use_ssl: null,
    user_registered: null,
    user_activation_key: null,
    spam: null,
    show_admin_bar_front: null,
    locale: null,
    user_meta: null
  }
}

/** The sign-in by the `/wp-json` path, which the SDK never builds: a plain fetch whose body has the SDK's type. */
async function signInByPath (base: string, input: Input): Promise<Answer> {
  const body: AuthenticateInterface = { email: input.email, username: null, password: input.password, password_hash: null }
  const response = await fetch(`${base}${WP_JSON_NAMESPACE}/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() }
}

/** Every step, in order: sign-in, validate, refresh, register twice, delete, revoke. */
async function run (base: string, input: Input): Promise<Results> {
  Object.assign(globalThis, { XMLHttpRequest: SyncRequest })
  // the SDK's default namespace: /?rest_route=/simple-jwt-login/v1/…
  const sdk = new SimpleJwtLogin(base)

  const credentials: AuthenticateInterface = { email: input.email, username: null, password: input.password, password_hash: null }
  const signIn = callSdk(sdk, (client) => client.authenticate(credentials))
  const signInWpJson = await signInByPath(base, input)
  const jwt = field(signIn, 'jwt')
  const toValidate: ValidateTokenInterface = { JWT: jwt }
  const validate = callSdk(sdk, (client) => client.validateToken(toValidate))
  // the interface asks for JWT; jwt-login reads refresh_token, which the index signature lets through
  const toRefresh: RefreshTokenInterface = { JWT: jwt, refresh_token: field(signIn, 'refresh_token') }
  const refresh = callSdk(sdk, (client) => client.refreshToken(toRefresh))
  const refreshed = field(refresh, 'jwt')

  const register = callSdk(sdk, (client) => client.registerUser(registration(input.kept.email, input.kept.password)))
  const registerDeleted = callSdk(sdk, (client) => client.registerUser(registration(input.deleted.email, input.deleted.password)))
  const ownJwt = field(registerDeleted, 'jwt')
  const toDelete: DeleteUserInterface = { JWT: ownJwt }
  const deleteUser = callSdk(sdk, (client) => client.deleteUser(toDelete))
  const validateDeleted = callSdk(sdk, (client) => client.validateToken({ JWT: ownJwt }))

  const toRevoke: RevokeTokenInterface = { JWT: refreshed }
  const revoke = callSdk(sdk, (client) => client.revokeToken(toRevoke))
  const validateRevoked = callSdk(sdk, (client) => client.validateToken({ JWT: refreshed }))

  return {
    signIn: outcomeOf(signIn),
    signInWpJson: outcomeOf(signInWpJson),
    validate: outcomeOf(validate),
    refresh: outcomeOf(refresh),
    rotated: refreshed !== jwt,
    register: outcomeOf(register),
    registerDeleted: outcomeOf(registerDeleted),
    deleteUser: outcomeOf(deleteUser),
    validateDeleted: outcomeOf(validateDeleted),
    revoke: outcomeOf(revoke),
    validateRevoked: outcomeOf(validateRevoked)
  }
}

const base = process.argv[2]
if (base === undefined) throw new Error('usage: node client.js <base URL>, with the accounts as JSON on stdin')
const input = JSON.parse(readFileSync(0, 'utf8')) as Input
process.stdout.write(`${JSON.stringify(await run(base, input))}\n`)
