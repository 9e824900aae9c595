// The settings group of sign-in by email: a one-time code, and a link that carries it in its fragment.
import { Type } from '@sinclair/typebox'
import { DurationOr, Flag, Group, Limit } from './parts.js'

/** Sign-in by a code mailed to the account's address (`POST /auth/email`, `/auth/email/verify`). */
export const EMAIL_SIGN_IN_SETTINGS = {
  emailSignIn: Group({
    /** The two routes; off, they answer 403 / 243. Needs the `mailer` option. */
    enabled: Flag(false),
    /** The mailed code: digits only, so it can be read out and typed on a phone. */
    code: Group({
      length: Type.Optional(Type.Integer({ minimum: 6, maximum: 12, default: 8 })),
      /** At most 1 hour. */
      lifetime: DurationOr('10m'),
      /** Tries (wrong or right) one code allows; a wrong one does not spend it until they are used up. */
      maxTries: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 5 }))
    }),
    /** How many codes are mailed; wrong codes count on the sign-in lockouts `limits.loginPerAccount` and `limits.loginPerIp`. */
    limits: Group({
      /** Codes mailed per address (NFKC, lower case); over it 429, whether the address has an account or not. */
      perAddress: Limit(5, '1h'),
      /** Codes mailed per account (the user the address finds, however spelled); over it nothing is mailed, with the same answer. */
      perAccount: Limit(5, '1h'),
      /** Codes asked for per client IP; over it 429. */
      perIp: Limit(20, '1h')
    }),
    /**
     * The page the mail links to, as `<linkUrl>#code=…&email=…`: the secret
     * in the fragment, which no browser sends to a server and no mail scanner
     * follows as a request; the page POSTs it to `/auth/email/verify`.
     * Empty: the mail carries the code only. https (http on loopback only), no fragment.
     */
    linkUrl: Type.Optional(Type.String({ maxLength: 2048, default: '' })),
    /**
     * An address without an account gets a code too, which creates the user
     * (`createUser`, email verified) when it signs in.
     */
    register: Flag(false)
  })
}
