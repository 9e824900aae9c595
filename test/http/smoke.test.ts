import t from 'tap'
import { ALICE, buildApp } from '../helpers/app.js'

t.test('login answers a JWT', async (t) => {
  const { app } = await buildApp()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/jwt-login/v1/auth', payload: { email: ALICE.email, password: ALICE.password } })
  t.equal(res.statusCode, 200)
  t.type(res.json().data.jwt, 'string')
})
