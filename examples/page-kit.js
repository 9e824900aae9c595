/*
 * The module the demo's pages share (examples/passkeys-page.html at
 * /passkeys, examples/account-page.html at /account): plain browser
 * JavaScript, no build step, served by examples/demo.ts at /page-kit.js and
 * imported by each page's inline module script. It calls the plugin through
 * its client, `fastify-jwt-login/client` (docs/client.md), which the demo
 * bundles and serves at /client.js. `pageKit` answers a page's helpers: its
 * client, the signed-in state (from the client's session events), the list
 * of answers, and the sign-in section both pages have.
 */
/* global document, location */
import { createClient, JwtLoginClientError } from '/client.js'

/**
 * The helpers of one page. `replacer` is JSON.stringify's for the entries of
 * the answers list (the account page shortens the QR code's SVG with it);
 * with `focusCode`, a sign-in that asks for its second factor puts the focus
 * on the code's field.
 */
export function pageKit ({ replacer, focusCode = false } = {}) {
  const $ = (id) => document.getElementById(id)

  // What the server answered during the current action (method, route, status, body): the client's
  // `fetch` option records it for the answers list; the client itself answers only the `data`.
  let exchanges = []
  async function recordingFetch (input, init) {
    const response = await fetch(input, init)
    const body = await response.clone().json().catch(() => undefined)
    const url = new URL(input instanceof Request ? input.url : input, location.href)
    exchanges.push({ request: `${init?.method ?? 'GET'} ${url.pathname}`, status: response.status, body })
    return response
  }

  // One client for the page: bearer mode (the demo's refresh token comes in the answer), tokens in memory,
  // shared with the demo's other tabs; the plugin's prefix is the page's data-api.
  const client = createClient({ baseUrl: location.origin, prefix: document.body.dataset.api, fetch: recordingFetch })

  // The claims a user of the page cares about, from the JWT's payload (no verification: the server did that).
  function claimsOf (jwt) {
    const payload = JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')))
    return { sub: payload.sub, sid: payload.sid, auth_time: payload.auth_time, amr: payload.amr }
  }

  // The page follows the client's session: who is signed in, whether a second factor is awaited.
  function showSession () {
    $('second-factor').hidden = !client.twoFactorPending
    if (client.twoFactorPending && focusCode) $('code').focus()
    const claims = client.jwt === undefined ? undefined : claimsOf(client.jwt)
    $('signed-in').textContent = claims === undefined ? 'nobody' : `user ${claims.sub}, amr ${claims.amr.join(' ')}`
  }
  client.onSession(showSession)

  // One entry in the answers list: what was done, and the route's answer (or the error).
  function show (action, entry) {
    const item = document.createElement('li')
    item.dataset.action = action
    item.dataset.ok = String(entry.ok)
    const pre = document.createElement('pre')
    pre.textContent = JSON.stringify({ action, ...entry }, replacer, 2)
    item.append(pre)
    $('answers').append(item)
    item.scrollIntoView({ block: 'nearest' })
  }

  // An entry for what the client answered: the route's HTTP answer (the last of the action), and the claims of a JWT in it.
  function answered (data) {
    const last = exchanges.at(-1)
    const claims = typeof data?.jwt === 'string' ? claimsOf(data.jwt) : undefined
    return { ok: true, route: last?.request, status: last?.status, body: last?.body, claims, requests: exchanges.map(({ request, status }) => `${request} → ${status}`) }
  }

  // An entry for what the client threw: a JwtLoginClientError's fields (status 0: no answer came), or the browser's error.
  function failed (error) {
    if (!(error instanceof JwtLoginClientError)) return { ok: false, error: `${error.name}: ${error.message}` }
    const last = exchanges.at(-1)
    const { status, errorCode, code, retryAfter, message } = error
    return { ok: false, route: last?.request, status, errorCode, code, retryAfter, error: `${error.name}: ${message}`, body: last?.body }
  }

  // Runs one button's or form's work (a client call; `then` sees what it answered); the answers list shows the outcome.
  function on (id, event, action, work, then) {
    $(id).addEventListener(event, async (e) => {
      e.preventDefault()
      exchanges = []
      try {
        const data = await work()
        then?.(data)
        show(action, answered(data))
      } catch (error) {
        show(action, failed(error))
      }
      showSession()
    })
  }

  // The sign-in both pages have: the password form, the second factor's code, signing out, and the button that fills in the two-factor user.
  function wireSignIn () {
    on('password-form', 'submit', 'password sign-in', async () => await client.signIn({ email: $('email').value, password: $('password').value }))
    on('code-form', 'submit', 'second factor: code', async () => await client.completeTwoFactor({ code: $('code').value.trim() }))
    on('sign-out', 'click', 'sign out', async () => await client.signOut())

    $('use-two-factor-user').addEventListener('click', (e) => {
      $('email').value = e.target.dataset.email
      $('password').value = e.target.dataset.password
    })
  }

  return { $, client, on, wireSignIn }
}
