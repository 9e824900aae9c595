// The passkey port: where a host keeps its users' WebAuthn credentials, beside its users.

/** How many devices a credential lives on: one (a security key) or several (a synced passkey). */
export type PasskeyDeviceType = 'singleDevice' | 'multiDevice'

/**
 * One WebAuthn credential of a user, as jwt-login stores it through the
 * port. Nothing here is secret: the private key never leaves the
 * authenticator. Keep every field; a host may add its own columns.
 */
export interface StoredPasskey {
  /** The credential id, base64url (as WebAuthn's JSON carries it): up to 1,023 bytes, 1,364 characters. Unique across all users. */
  id: string
  userId: number
  /** The credential's public key (COSE), base64url. */
  publicKey: string
  /** The signature counter last seen; 0 for authenticators without one (most synced passkeys). */
  counter: number
  /** How the browser may reach the authenticator (`internal`, `hybrid`, `usb`, `nfc`, `ble`…), as it reported at registration. */
  transports: string[]
  deviceType: PasskeyDeviceType
  /** Whether the credential may be backed up (synced); fixed at registration. */
  backupEligible: boolean
  /** Whether it is backed up now; refreshed on every use. */
  backedUp: boolean
  /** The authenticator model (AAGUID, `00000000-0000-0000-0000-000000000000` when it does not say). */
  aaguid: string
  /** The user's name for it (`iPhone`, `YubiKey 5`); at most 64 characters. */
  name: string
  createdAt: Date
  /** When it last signed a sign-in or a step-up; `null` until then. */
  lastUsedAt: Date | null
}

/** What a use of a passkey changes on it. */
export interface PasskeyUse {
  counter: number
  backedUp: boolean
  lastUsedAt: Date
}

/**
 * The passkey port: the host keeps each user's credentials (a table beside
 * its users); jwt-login runs the ceremonies with @simplewebauthn/server and
 * keeps only the short-lived challenges, in its state store.
 *
 * Every method is Promise-only. Throwing means the host's storage is
 * unavailable: the request answers 503 / errorCode 201 and nothing is
 * answered as if it had worked. Methods that name a user act only on that
 * user's credentials, so one user can never rename or delete another's.
 */
export interface PasskeyPort {
  /** The user's credentials, oldest first. */
  listByUser (userId: number): Promise<StoredPasskey[]>
  /** The credential with this id, whoever's it is, or `null` (a passwordless sign-in finds its user by it). */
  findById (credentialId: string): Promise<StoredPasskey | null>
  /**
   * Stores a new credential. Resolves `false`, storing nothing, when a
   * credential with this id exists already (for any user); with SQL, a
   * primary key on the id and `ON CONFLICT DO NOTHING`.
   */
  create (passkey: StoredPasskey): Promise<boolean>
  /**
   * Records a use: the counter, the backup state and the time. Keep the
   * greater counter (SQL `GREATEST(counter, $2)`): two uses may finish out
   * of order. A credential gone since is not an error.
   */
  recordUse (credentialId: string, use: PasskeyUse): Promise<void>
  /** Renames the user's credential; `false` when the user has no credential with this id. */
  rename (userId: number, credentialId: string, name: string): Promise<boolean>
  /** Deletes the user's credential; `false` when the user has no credential with this id. */
  delete (userId: number, credentialId: string): Promise<boolean>
}

/** The `passkeys` option of the plugin. Without it the passkey routes answer 403 / 215. */
export interface PasskeyOptions {
  port: PasskeyPort
}
