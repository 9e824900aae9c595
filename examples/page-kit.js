/*
 * The script the demo's pages share (examples/passkeys-page.html at
 * /passkeys, examples/account-page.html at /account): plain browser
 * JavaScript, no build step, served by examples/demo.ts at /page-kit.js and
 * loaded by each page before its own inline script. It defines one global,
 * `pageKit`, which answers a page's helpers: its plugin API calls, the
 * signed-in state, the list of answers, and the sign-in section both pages
 * have.
 */
/* global document */
'use strict'

/**
 * The helpers of one page. `replacer` is JSON.stringify's for the entries of
 * the answers list (the account page shortens the QR code's SVG with it);
 * with `focusCode`, a sign-in that asks for its second factor puts the focus
 * on the code's field.
 */
globalThis.pageKit = ({ replacer, focusCode = false } = {}) => {
  const API = document.body.dataset.api
  const $ = (id) => document.getElementById(id)
  // the final access token of the signed-in session, and the interim token of a sign-in waiting for its second factor
  const state = { jwt: null, interim: null }

  // The claims a user of the page cares about, from the JWT's payload (no verification: the server did that).
  function claimsOf (jwt) {
    const payload = JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')))
    return { sub: payload.sub, sid: payload.sid, auth_time: payload.auth_time, amr: payload.amr }
  }

  // One entry in the answers list: what was done, and the route's answer (or the browser's error).
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

  // A call of the plugin's API: JSON in and out, the token as a Bearer.
  async function call (method, path, body, token) {
    const headers = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (token) headers.authorization = `Bearer ${token}`
    const response = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: response.status, body: await response.json() }
  }

  // Records a route's answer; a JWT in it is decoded, and a final one becomes the session's.
  function take (route, answer, { final = true } = {}) {
    const data = answer.body.data ?? {}
    const claims = typeof data.jwt === 'string' ? claimsOf(data.jwt) : undefined
    if (answer.body.success && data.two_factor_required) {
      state.interim = data.jwt
      $('second-factor').hidden = false
      if (focusCode) $('code').focus()
    } else if (answer.body.success && final && typeof data.jwt === 'string') {
      state.jwt = data.jwt
      state.interim = null
      $('second-factor').hidden = true
      $('signed-in').textContent = `user ${claims.sub}, amr ${claims.amr.join(' ')}`
    }
    return { ok: answer.body.success === true, route, status: answer.status, body: answer.body, claims }
  }

  // Runs one button's or form's work; whatever it answers or throws (an error with a route's `answer`, or the browser's) ends up in the answers list.
  function on (id, event, action, work) {
    $(id).addEventListener(event, async (e) => {
      e.preventDefault()
      try {
        show(action, await work())
      } catch (error) {
        show(action, error.answer === undefined
          ? { ok: false, error: `${error.name}: ${error.message}` }
          : { ok: false, status: error.answer.status, body: error.answer.body })
      }
    })
  }

  // The sign-in both pages have: the password form, signing out, and the button that fills in the two-factor user.
  function wireSignIn () {
    on('password-form', 'submit', 'password sign-in', async () =>
      take('/auth', await call('POST', '/auth', { email: $('email').value, password: $('password').value })))

    on('sign-out', 'click', 'sign out', async () => {
      const answer = take('/auth/revoke', await call('POST', '/auth/revoke', {}, state.jwt), { final: false })
      state.jwt = null
      state.interim = null
      $('signed-in').textContent = 'nobody'
      return answer
    })

    $('use-two-factor-user').addEventListener('click', (e) => {
      $('email').value = e.target.dataset.email
      $('password').value = e.target.dataset.password
    })
  }

  return { $, state, call, take, on, wireSignIn }
}
