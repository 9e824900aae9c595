/**
 * The passkey ceremonies in one call each: the route's options, the
 * browser's prompt through `@simplewebauthn/browser` (an optional peer: a
 * bundled page passes its copy as `webauthn`; without it, the package is
 * imported by name when a helper first runs, which only an unbundled page
 * with an import map, or Node, can resolve), and the route that takes the
 * answer. An app that imports none of these bundles none of them.
 */
import type { JwtLoginClient } from './client.js'
import type { PasskeyAnswer, SignInAnswer, StepUpAnswer, TwoFactorAnswer } from './types.js'

/** What the helpers use of `@simplewebauthn/browser`. */
export interface WebAuthnBrowser {
  startAuthentication: (options: { optionsJSON: never }) => Promise<unknown>
  startRegistration: (options: { optionsJSON: never }) => Promise<unknown>
}

/**
 * The optional peer, named by a variable: a bundler leaves the import alone, so
 * an app without the peer still bundles the client (a page passes `webauthn`).
 */
const PEER = '@simplewebauthn/browser'

async function load (webauthn?: WebAuthnBrowser): Promise<WebAuthnBrowser> {
  if (webauthn !== undefined) return webauthn
  try {
    return await import(/* @vite-ignore */ /* webpackIgnore: true */ PEER) as WebAuthnBrowser
  } catch (cause) {
    throw new Error(`fastify-jwt-login/client: the passkey helpers need the package "${PEER}", an optional peer dependency: npm install ${PEER} (or pass it as \`webauthn\`)`, { cause })
  }
}

/** The browser's prompt for an assertion on `options`. */
async function assert (options: unknown, webauthn?: WebAuthnBrowser): Promise<never> {
  return await (await load(webauthn)).startAuthentication({ optionsJSON: options as never }) as never
}

/** Passwordless sign-in: the user picks a passkey; the session starts (or the second factor is asked for). */
export async function signInWithPasskey (client: JwtLoginClient, webauthn?: WebAuthnBrowser): Promise<SignInAnswer> {
  return await client.passkeySignIn({ credential: await assert(await client.passkeySignInOptions(), webauthn) })
}

/** A passkey as the pending sign-in's second factor. */
export async function twoFactorWithPasskey (client: JwtLoginClient, fields: { remember_device?: boolean } = {}, webauthn?: WebAuthnBrowser): Promise<TwoFactorAnswer> {
  return await client.completeTwoFactor({ ...fields, passkey: await assert(await client.twoFactorPasskeyOptions(), webauthn) })
}

/** A step-up with a passkey: a fresh access token for this session. */
export async function stepUpWithPasskey (client: JwtLoginClient, webauthn?: WebAuthnBrowser): Promise<StepUpAnswer> {
  return await client.stepUp({ passkey: await assert(await client.stepUpOptions(), webauthn) })
}

/** Enrols a new passkey for the signed-in user, named `name`. */
export async function enrolPasskey (client: JwtLoginClient, name?: string, webauthn?: WebAuthnBrowser): Promise<PasskeyAnswer> {
  const options = await client.passkeyRegistrationOptions()
  const credential = await (await load(webauthn)).startRegistration({ optionsJSON: options as never }) as never
  return await client.registerPasskey(name === undefined ? { credential } : { credential, name })
}
