import { JwtLoginClientError } from './errors.js'
import { Session, type SessionEvent } from './session.js'
import { memoryStorage, type ClientStorage } from './tokens.js'
import type * as T from './types.js'

export interface ClientOptions {
  /** Where the plugin's host answers: `https://api.example.com`, or the page's own origin. Relative URLs of `client.fetch` resolve against it. */
  baseUrl: string | URL
  /** The plugin's prefix; `/jwt-login/v1` by default. */
  prefix?: string
  /** `bearer` (the default): the client keeps the refresh token in `storage`. `cookie`: the server keeps it in an httpOnly cookie (`refresh.cookie.enabled`), the client keeps the CSRF token. */
  mode?: 'bearer' | 'cookie'
  /**
   * Where the session is kept. Bearer mode: memory by default (a reload signs out); `localStorage` keeps it across reloads
   * and tabs, where any script of the page can read it. Cookie mode keeps only the CSRF token: `localStorage` by default in a page.
   */
  storage?: ClientStorage
  /** Sent as `Accept-Language`; a page's browser sends its own without it. */
  language?: string
  /** The `fetch` to call; the global one by default. */
  fetch?: typeof fetch
  /** The storage key, lock and channel name; `jwt-login` by default. Two clients of two APIs on one origin need two names. */
  name?: string
  /** Seconds before expiry at which the access token is refreshed in the background; 60 by default. */
  refreshAhead?: number
  /** Milliseconds a tab waits for another tab's refresh before it refreshes on its own; 10 000 by default. */
  lockWait?: number
  /** Share the session with the origin's other tabs (Web Locks, BroadcastChannel); on by default in a page, off in Node. */
  crossTab?: boolean
  /** The origins `client.fetch` sends the access token to; the origin of `baseUrl` by default. A URL of any other origin is fetched without it. */
  origins?: string[]
  /** Milliseconds a call of the plugin's routes may take before it is given up (a `JwtLoginClientError` with status 0); 15 000 by default. */
  timeout?: number
  /** An auth code (`AUTH_KEY`) sent with every call, for routes whose auth-code rule is on. */
  authCode?: { name?: string, value: string }
  /** The clock, in milliseconds: `Date.now` by default. */
  now?: () => number
}

/** The client of one API: its session, a `fetch` that carries it, and a method per route. */
export type JwtLoginClient = ReturnType<typeof createClient>

/** A route's refusals of the access token that one refresh may cure: expired (14), revoked (55: the refresh then says whether the session lives). */
const RENEWABLE = new Set<number | undefined>([14, 55])

// the page's address and history, where there is a page: typed here, so the entry needs no DOM library
const browser = globalThis as { location?: { href: string }, history?: { state: unknown, replaceState: (state: unknown, unused: string, url: string) => void } }

export function createClient (options: ClientOptions) {
  const mode = options.mode ?? 'bearer'
  // cookie mode keeps only the CSRF token, no credential on its own: in a page, localStorage, so a new tab or a reload finds the session
  const page = (globalThis as { localStorage?: ClientStorage }).localStorage
  const storage = options.storage ?? (mode === 'cookie' && page !== undefined ? page : memoryStorage())
  const name = options.name ?? 'jwt-login'
  // the global fetch looked up at each call, so that a page or test replacing it later is followed
  const send = options.fetch ?? (async (input: string | URL | Request, init?: RequestInit) => await fetch(input, init))
  const session = new Session({
    api: new URL(options.prefix ?? '/jwt-login/v1', options.baseUrl).href.replace(/\/$/, ''),
    cookie: mode === 'cookie',
    storage,
    name,
    language: options.language,
    fetch: send,
    now: options.now ?? Date.now,
    refreshAhead: options.refreshAhead ?? 60,
    lockWait: options.lockWait ?? 10_000,
    timeout: options.timeout ?? 15_000,
    crossTab: options.crossTab ?? 'document' in globalThis,
    authCode: options.authCode === undefined ? {} : { [options.authCode.name ?? 'AUTH_KEY']: options.authCode.value }
  })
  const call = session.call.bind(session)

  /** A route that needs the session's access token: refreshed first when it is about to expire, and once more when the route finds it expired or revoked. */
  async function authed<Data> (method: string, path: string, body?: unknown): Promise<Data> {
    const token = await session.token()
    try {
      return await call<Data>({ method, path, body, token })
    } catch (error) {
      const next = token !== undefined && error instanceof JwtLoginClientError && RENEWABLE.has(error.errorCode) ? await session.renew(token) : undefined
      if (next === undefined) throw error
      return await call<Data>({ method, path, body, token: next })
    }
  }

  /** A sign-in's answer: a final token starts the session; an interim one waits for the second factor. */
  async function signedIn<Answer extends { jwt?: string | undefined, two_factor_required?: boolean | undefined, device_token?: string | undefined }> (answer: Answer): Promise<Answer> {
    // a trusted device's token (bearer mode; cookie mode keeps it in a cookie): kept for the next sign-in
    if (answer.device_token !== undefined) await storage.setItem(`${name}:device`, answer.device_token)
    if (answer.two_factor_required === true) session.interim = answer.jwt
    else if (answer.jwt !== undefined) {
      session.interim = undefined
      await session.answer('signed-in', answer as Answer & { jwt: string })
    }
    return answer
  }

  /** `POST /auth/email/verify`: the mailed code signs in. No trusted device's token is sent: on a sign-in by email none stands in for the second factor. */
  const signInWithEmail = async (fields: T.EmailSignInFields): Promise<T.SignInAnswer> =>
    await signedIn(await call<T.SignInAnswer>({ method: 'POST', path: '/auth/email/verify', body: fields }))

  /** The session is over on the server: forget it here and in the other tabs. */
  async function ended<Answer> (answer: Answer): Promise<Answer> {
    await session.end('signed-out')
    return answer
  }

  const id = encodeURIComponent
  const origins = new Set((options.origins ?? [options.baseUrl]).map((origin) => new URL(origin).origin))

  return {
    /** The current access token (it may have expired); `undefined` without a session. */
    get jwt (): string | undefined { return session.jwt },
    /** Whether a sign-in waits for its second factor (`completeTwoFactor`). */
    get twoFactorPending (): boolean { return session.interim !== undefined },
    /** Listens to the session: signed in, refreshed, signed out, ended (here or in another tab). Answers the function that stops listening. */
    onSession: (listener: (event: SessionEvent) => void) => session.onSession(listener),
    /** An access token good for a few more seconds, refreshed first when needed; `undefined` without a session. */
    token: async () => await session.token(),

    /**
     * `fetch` for the app's own API: a relative URL resolves against `baseUrl`, the access token goes in
     * `Authorization` (to the `origins` only), and a 401 is answered by one refresh and one retry, never more. A streamed body cannot be sent twice: pass a string, a Blob or FormData.
     */
    async fetch (input: string | URL | Request, init?: RequestInit): Promise<Response> {
      const url = typeof input === 'string' ? new URL(input, options.baseUrl) : input
      // the token goes to the API's origins only, never to a third party the app also fetches
      if (!origins.has(new URL(url instanceof Request ? url.url : url).origin)) return await send(url, init)
      const sendWith = async (token: string | undefined): Promise<Response> => {
        const request = url instanceof Request ? new Request(url.clone(), init) : new Request(url, init)
        if (token !== undefined) request.headers.set('authorization', `Bearer ${token}`)
        return await send(request)
      }
      const token = await session.token()
      const first = await sendWith(token)
      // a 401 whose challenge is about something else than the token (a step-up asked for: insufficient_user_authentication) is no refresh's to cure
      const challenge = first.headers.get('www-authenticate') ?? ''
      const otherError = /error=/.test(challenge) && !/invalid_token/.test(challenge)
      if (first.status !== 401 || token === undefined || otherError) return first
      const next = await session.renew(token)
      if (next === undefined) return first
      await first.body?.cancel()
      return await sendWith(next)
    },

    /**
     * `POST /auth`: signs in with a password. With a second factor, `two_factor_required` is set and `completeTwoFactor` follows.
     * The device token a trusted device was given (`remember_device`) is kept and sent with the next sign-in.
     */
    async signIn (fields: T.SignInFields): Promise<T.SignInAnswer> {
      const device = fields.device_token ?? await storage.getItem(`${name}:device`) ?? undefined
      return await signedIn(await call<T.SignInAnswer>({ method: 'POST', path: '/auth', body: { ...fields, device_token: device } }))
    },
    /** `POST /auth/2fa`: the second factor (`code`, or `passkey`) of the pending sign-in. */
    completeTwoFactor: async (fields: T.TwoFactorFields) =>
      await signedIn(await call<T.TwoFactorAnswer>({ method: 'POST', path: '/auth/2fa', body: fields, token: session.interim })),
    /** `POST /auth/2fa/passkey/options`: options for a passkey as the pending sign-in's second factor. */
    twoFactorPasskeyOptions: async () => await call<T.PasskeyOptions>({ method: 'POST', path: '/auth/2fa/passkey/options', body: {}, token: session.interim }),
    /** `POST /auth/passkey/options`: options for a passwordless sign-in with a passkey. */
    passkeySignInOptions: async () => await call<T.PasskeyOptions>({ method: 'POST', path: '/auth/passkey/options', body: {} }),
    /** `POST /auth/passkey`: signs in with the assertion for those options. */
    passkeySignIn: async (fields: T.PasskeySignInFields) => await signedIn(await call<T.SignInAnswer>({ method: 'POST', path: '/auth/passkey', body: fields })),
    /** `POST /auth/email`: mails a one-time sign-in code (and, with `emailSignIn.linkUrl`, a link) to the address; the same answer whether it has an account or not. */
    requestEmailSignIn: async (fields: T.EmailSignInRequestFields) => await call<T.EmailSignInRequestAnswer>({ method: 'POST', path: '/auth/email', body: fields }),
    /** `POST /auth/email/verify`: signs in with the mailed code, answered as `signIn` is (a second factor still applies; a trusted device does not stand in for it). */
    signInWithEmail,
    /**
     * The page of the mail's link (`emailSignIn.linkUrl`): signs in with the code and address of `url`'s fragment
     * (`#code=…&email=…`; the page's own address by default). `null` when the fragment has no code.
     */
    async signInWithEmailLink (url?: string | { href: string }): Promise<T.SignInAnswer | null> {
      const here = browser.location
      const link = new URL(typeof url === 'string' ? url : (url ?? here)?.href ?? '')
      const fields = new URLSearchParams(link.hash.slice(1))
      const code = fields.get('code')
      if (code === null) return null
      // the code leaves the address bar before it is tried, so that no reload, bookmark, shared screen or history entry keeps it; only the page's own address is rewritten
      if (link.href === here?.href) {
        link.hash = ''
        browser.history?.replaceState(browser.history.state, '', link.href)
      }
      return await signInWithEmail({ email: fields.get('email') ?? '', code })
    },
    /** `POST /oauth/token`: signs in with a provider's code or ID token. */
    signInWithProvider: async (fields: T.ProviderFields) => await signedIn(await call<T.ProviderAnswer>({ method: 'POST', path: '/oauth/token', body: fields })),
    /** `GET /oauth/nonce`: a nonce for an ID-token sign-in. */
    providerNonce: async () => await call<T.NonceAnswer>({ method: 'GET', path: '/oauth/nonce' }),
    /** `POST /auth/step-up/options`: options to step up with a passkey. */
    stepUpOptions: async () => await authed<T.PasskeyOptions>('POST', '/auth/step-up/options', {}),
    /** `POST /auth/step-up`: authenticate again in this session; its access token is replaced by a fresh one. */
    async stepUp (fields: T.StepUpFields): Promise<T.StepUpAnswer> {
      const answer = await authed<T.StepUpAnswer>('POST', '/auth/step-up', fields)
      await session.answer('refreshed', answer)
      return answer
    },
    /** `POST /auth/validate`: the token's user and claims. */
    validate: async () => await authed<T.ValidateAnswer>('POST', '/auth/validate', {}),
    /** `POST /auth/refresh`: a new access token, now (shared with concurrent callers and, with Web Locks, with the other tabs). */
    refresh: async () => await session.refresh(),
    /**
     * `POST /auth/revoke`: ends this session on the server, then here and in the other tabs, whatever the server answered
     * (a rejection says the server may not have heard it). Cookie mode sends the CSRF token with the access token as it is
     * (the cookie is the credential); bearer mode refreshes an expired access token first.
     */
    async signOut (): Promise<void> {
      try {
        if (mode === 'cookie') await call<T.RevokeAnswer>({ method: 'POST', path: '/auth/revoke', body: {}, token: session.jwt, csrf: session.csrf })
        else await authed<T.RevokeAnswer>('POST', '/auth/revoke', {})
      } finally {
        await session.end('signed-out')
      }
    },
    /** `POST /user/reset_password`: mails a reset code. */
    requestPasswordReset: async (fields: T.ResetRequestFields) => await call<T.ResetAnswer>({ method: 'POST', path: '/user/reset_password', body: fields }),
    /** `PUT /user/reset_password`: sets the new password with the code. */
    resetPassword: async (fields: T.ResetFields) => await call<T.ResetAnswer>({ method: 'PUT', path: '/user/reset_password', body: fields }),

    /** `GET /sessions`: the user's live sessions and trusted devices. */
    sessions: async () => await authed<T.SessionsAnswer>('GET', '/sessions'),
    /** `DELETE /sessions/{id}`: ends one of them. */
    endSession: async (sessionId: string) => await authed<T.MessageAnswer>('DELETE', `/sessions/${id(sessionId)}`),
    /** `DELETE /sessions`: signs out everywhere; with `keepCurrent`, this session stays. */
    endAllSessions: async ({ keepCurrent = false } = {}) => {
      const answer = await authed<T.MessageAnswer>('DELETE', `/sessions${keepCurrent ? '?keep_current=true' : ''}`)
      return keepCurrent ? answer : await ended(answer)
    },
    /** `DELETE /devices/{id}`: forgets a trusted device. */
    forgetDevice: async (deviceId: string) => await authed<T.MessageAnswer>('DELETE', `/devices/${id(deviceId)}`),

    /** `POST /passkeys/register/options`: options to enrol a passkey. */
    passkeyRegistrationOptions: async () => await authed<T.PasskeyOptions>('POST', '/passkeys/register/options', {}),
    /** `POST /passkeys/register`: enrols the new credential. */
    registerPasskey: async (fields: T.PasskeyRegisterFields) => await authed<T.PasskeyAnswer>('POST', '/passkeys/register', fields),
    /** `GET /passkeys`: the user's passkeys. */
    passkeys: async () => await authed<T.PasskeysAnswer>('GET', '/passkeys'),
    /** `PATCH /passkeys/{id}`: renames one. */
    renamePasskey: async (passkeyId: string, name: string) => await authed<T.MessageAnswer>('PATCH', `/passkeys/${id(passkeyId)}`, { name }),
    /** `DELETE /passkeys/{id}`: deletes one. */
    deletePasskey: async (passkeyId: string) => await authed<T.MessageAnswer>('DELETE', `/passkeys/${id(passkeyId)}`),

    /** `POST /users`: registers a user; with `users.register.signIn`, signs them in. */
    register: async (fields: T.RegisterFields) => await signedIn(await call<T.RegisterAnswer>({ method: 'POST', path: '/users', body: fields })),
    /** `DELETE /users`: deletes the signed-in user; the session ends. */
    deleteUser: async () => await ended(await authed<T.DeleteUserAnswer>('DELETE', '/users')),

    /** `GET /account`: the user, the second factor, passkeys and sessions. */
    account: async () => await authed<T.AccountAnswer>('GET', '/account'),
    /** `POST /account/email/verification`: mails a code that verifies the email (signed in, or with `email`). */
    requestEmailVerification: async (fields: T.VerificationFields = {}) => await authed<T.MessageAnswer>('POST', '/account/email/verification', fields),
    /** `POST /account/email/verify`: verifies the email with its code. */
    verifyEmail: async (fields: T.VerifyFields) => await authed<T.MessageAnswer>('POST', '/account/email/verify', fields),
    /** `PUT /account/password`: changes the password; the other sessions end, this one stays. */
    changePassword: async (fields: T.PasswordFields) => await authed<T.MessageAnswer>('PUT', '/account/password', fields),
    /** `POST /account/email`: mails a code to the new address. */
    changeEmail: async (fields: T.NewEmailFields) => await authed<T.MessageAnswer>('POST', '/account/email', fields),
    /** `POST /account/email/confirm`: the new address's code; the change is made. */
    confirmEmailChange: async (fields: T.CodeFields) => await authed<T.MessageAnswer>('POST', '/account/email/confirm', fields),
    /** `POST /account/email/revert`: puts the old address back with the code mailed to it. */
    revertEmailChange: async (fields: T.RevertFields) => await call<T.MessageAnswer>({ method: 'POST', path: '/account/email/revert', body: fields }),
    /** `POST /account/2fa/totp`: starts a TOTP enrolment (secret and QR code). */
    enrolTotp: async () => await authed<T.TotpAnswer>('POST', '/account/2fa/totp', {}),
    /** `POST /account/2fa/totp/confirm`: confirms it with a first code. */
    confirmTotp: async (fields: T.CodeFields) => await authed<T.TotpConfirmAnswer>('POST', '/account/2fa/totp/confirm', fields),
    /** `POST /account/2fa/backup-codes`: new backup codes. */
    newBackupCodes: async () => await authed<T.BackupCodesAnswer>('POST', '/account/2fa/backup-codes', {}),
    /** `PUT /account/2fa`: chooses the second factor. */
    setTwoFactorMethod: async (fields: T.MethodFields) => await authed<T.MessageAnswer>('PUT', '/account/2fa', fields),
    /** `DELETE /account/2fa`: turns the second factor off. */
    disableTwoFactor: async () => await authed<T.MessageAnswer>('DELETE', '/account/2fa'),
    /** `GET /account/identities`: the provider accounts linked to this one. */
    identities: async () => await authed<T.IdentitiesAnswer>('GET', '/account/identities'),
    /** `POST /account/identities`: links the provider account of a `code` (or `id_token`) to the signed-in user (a recent sign-in). */
    linkIdentity: async (fields: T.LinkIdentityFields) => await authed<T.MessageAnswer>('POST', '/account/identities', fields),
    /** `DELETE /account/identities/{provider}`: unlinks it, unless it is the account's last way in (a recent sign-in). */
    unlinkIdentity: async (provider: string) => await authed<T.MessageAnswer>('DELETE', `/account/identities/${id(provider)}`),

    /** `POST /account/api-keys`: creates an API key for scripts (a recent sign-in); the key is in the answer this once. */
    createApiKey: async (fields: T.NewApiKeyFields) => await authed<T.NewApiKeyAnswer>('POST', '/account/api-keys', fields),
    /** `GET /account/api-keys`: the user's API keys (never the keys themselves). */
    apiKeys: async () => await authed<T.ApiKeysAnswer>('GET', '/account/api-keys'),
    /** `DELETE /account/api-keys/{id}`: ends one. */
    deleteApiKey: async (keyId: string) => await authed<T.ApiKeyEndedAnswer>('DELETE', `/account/api-keys/${id(keyId)}`),

    /** `GET /jwks`: the public keys (asymmetric algorithms). */
    jwks: async () => await call<T.JwksAnswer>({ method: 'GET', path: '/jwks', whole: true }),
    /** Stops the background refresh and leaves the tabs' channel. */
    close: () => { session.close() }
  }
}
