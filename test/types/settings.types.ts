// Type tests of `SettingsInput`: what a host writes as settings (or returns
// from an async settings source).
import type { SettingsInput } from '../../lib/index.js'
import { expectType, type Equal } from './expect.js'

// every group, durations as seconds or strings
expectType<SettingsInput>({
  authentication: { enabled: true },
  authCodes: { codes: [{ code: 'c0de', expiresAt: '2030-01-01T00:00:00Z' }], parameter: 'AUTH_KEY', requireFor: { auth: true, oauth: false } },
  login: { allowPasswordHash: false },
  bearer: { enabled: true },
  refresh: { enabled: true, lifetime: '14d', reuseInterval: 0, cookie: { enabled: true, sameSite: 'lax' } },
  validate: { enabled: true },
  revoke: { enabled: true },
  tokens: {
    algorithm: 'ES256',
    keys: [{ kid: 'k2', privateKey: '-----BEGIN PRIVATE KEY-----' }, { kid: 'k1', publicKey: '-----BEGIN PUBLIC KEY-----' }],
    issuer: 'example',
    audience: 'example-api',
    lifetime: 900,
    leeway: '5s',
    claims: { email: true, login: true, displayName: true, roles: false }
  },
  limits: { loginPerAccount: { max: 5, window: '15m' }, requestsPerIp: { max: 100 } },
  sessions: { maxPerUser: 10, clockSkew: '2s' },
  resetPassword: { enabled: true, code: { length: 8 }, mail: { siteName: 'Example', retries: 1 } },
  twoFactor: { enabled: true, interimLifetime: '5m', attemptsPerChallenge: 3 },
  oauth: {
    providers: {
      google: { enabled: true, preset: 'google', clientId: 'id.apps.googleusercontent.com', redirectUris: ['https://app.example.com/cb'] }
    }
  },
  cors: { enabled: true, origins: ['https://app.example.com'], credentials: true },
  bodyLimit: 16384
})

// only tokens.keys is required
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1', secret: 'a-secret-of-at-least-thirty-two-bytes' }] } })

// the algorithms, as a union a host can narrow on
type Algorithm = NonNullable<SettingsInput['tokens']['algorithm']>
expectType<Equal<Algorithm, 'HS256' | 'HS384' | 'HS512' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'ES256' | 'ES384' | 'EdDSA'>>(true)

// @ts-expect-error: no such algorithm
expectType<SettingsInput>({ tokens: { algorithm: 'HS999', keys: [{ kid: 'k1' }] } })

// @ts-expect-error: tokens is required
expectType<SettingsInput>({ refresh: { enabled: true } })

// @ts-expect-error: keys is required
expectType<SettingsInput>({ tokens: { algorithm: 'HS256' } })

// @ts-expect-error: a switch is a boolean
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, refresh: { enabled: 'yes' } })

// @ts-expect-error: a duration is seconds or a string
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }], lifetime: true } })

// @ts-expect-error: the cookie's sameSite is strict or lax
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, refresh: { cookie: { sameSite: 'none' } } })

// @ts-expect-error: no such preset
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, oauth: { providers: { x: { preset: 'gitlab', clientId: 'id' } } } })

expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, oauth: { providers: { gh: { preset: 'github', enterpriseUrl: 'https://ghe.example.com', clientId: 'id' } } } })

// @ts-expect-error: emailVerified is a path or true
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, oauth: { providers: { x: { preset: 'oauth2', clientId: 'id', profile: { emailVerified: false } } } } })

// @ts-expect-error: a provider needs its clientId
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, oauth: { providers: { x: { preset: 'google' } } } })

// @ts-expect-error: an unknown group
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, refesh: { enabled: true } })

// @ts-expect-error: bodyLimit is a number of bytes
expectType<SettingsInput>({ tokens: { keys: [{ kid: 'k1' }] }, bodyLimit: '16kb' })
