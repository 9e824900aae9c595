/**
 * `fastify-jwt-login/client`: one typed client of the plugin's routes, for
 * pages (bundled by the app) and Node ≥ 20.19. No dependency beyond `fetch`;
 * the passkey helpers take `@simplewebauthn/browser`, an optional peer.
 * Nothing here loads the server's code: its types only.
 */
export { createClient, type ClientOptions, type JwtLoginClient } from './client/client.js'
export { JwtLoginClientError } from './client/errors.js'
export { type SessionEvent } from './client/session.js'
export { memoryStorage, type ClientStorage } from './client/tokens.js'
export { enrolPasskey, signInWithPasskey, stepUpWithPasskey, twoFactorWithPasskey, type WebAuthnBrowser } from './client/passkeys.js'
export type * from './client/types.js'
