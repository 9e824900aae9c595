import type { LightMyRequestResponse } from 'fastify'
import { type JwtLoginOptions, type SettingsInput } from '../../lib/index.js'
import { NodemailerMailer } from '../../lib/nodemailer.js'
import { buildApp, type TestApp } from './app.js'

export const RESET_URL = '/jwt-login/v1/user/reset_password'
export const NEW_PASSWORD = 'a brand new passphrase'

export function smtpMailer (port: number): NodemailerMailer {
  return new NodemailerMailer({
    from: '"jwt-login tests" <no-reply@example.test>',
    smtp: { host: '127.0.0.1', port, secure: false, ignoreTLS: true, connectionTimeout: 2000, greetingTimeout: 2000, socketTimeout: 2000 }
  })
}

type ResetInput = NonNullable<SettingsInput['resetPassword']>

/** `buildApp` with password reset on and mail going to the SMTP peer at `port`. */
export async function buildResetApp (port: number, reset: ResetInput = {}, settings: Partial<SettingsInput> = {}, options: Partial<JwtLoginOptions> = {}): Promise<TestApp> {
  return await buildApp(
    { ...settings, resetPassword: { enabled: true, ...reset, mail: { retryDelay: '10ms', ...reset.mail } } },
    { mailer: smtpMailer(port), ...options }
  )
}

export { codeIn } from './fixtures.js'

export function errorOf (res: LightMyRequestResponse): { status: number, errorCode: number } {
  const { errorCode, error_code: sameCode } = res.json().data
  return { status: res.statusCode, errorCode: sameCode === errorCode ? errorCode : NaN }
}
