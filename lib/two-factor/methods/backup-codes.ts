import { randomCode, sha256Base64url } from '../../core/crypto.js'
import { claimAs } from '../../store/claim.js'
import type { StateStore } from '../../store/types.js'
import type { TwoFactorPort } from '../../adapters/two-factor.js'

/** Crockford-style lowercase base32: no i, l, o or u to misread. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
const CODE_LENGTH = 16
const GROUP = 4
export const BACKUP_CODE_COUNT = 10
const SHAPE = new RegExp(`^[${ALPHABET}]{${CODE_LENGTH}}$`)
// While the host deletes a code, the claim keeps a concurrent use of it out.
const CLAIM_TTL_MS = 10 * 60 * 1000

/** Lowercase, without the dashes and spaces the user may type. */
function normalize (code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '')
}

/** The hash the host stores for a backup code, or `null` for a string that is not one. */
export function hashBackupCode (code: string): string | null {
  const normalized = normalize(code)
  if (!SHAPE.test(normalized)) return null
  return sha256Base64url(`jwt-login-backup:${normalized}`)
}

/**
 * New backup codes (80 random bits each, shown as `xxxx-xxxx-xxxx-xxxx`) and
 * their hashes. Show the codes once; give the host only the hashes.
 */
export function generateBackupCodes (count = BACKUP_CODE_COUNT): { codes: string[], hashes: string[] } {
  const codes: string[] = []
  for (let i = 0; i < count; i++) {
    const raw = randomCode(CODE_LENGTH, ALPHABET)
    codes.push((raw.match(new RegExp(`.{${GROUP}}`, 'g')) as string[]).join('-'))
  }
  return { codes, hashes: codes.map(code => hashBackupCode(code) as string) }
}

const claimKey = (userId: number, hash: string): string => `2fa:backup-claim:${userId}:${hash}`

/**
 * Backup codes: each works once. The host deletes a code atomically
 * (`consumeBackupCode`); a claim in the store keeps a concurrent use of the
 * same code away from the host while it does.
 */
export class BackupCodeProvider {
  readonly #port: TwoFactorPort
  readonly #store: StateStore

  constructor (port: TwoFactorPort, store: StateStore) {
    this.#port = port
    this.#store = store
  }

  /**
   * The first step of spending the code with this hash (`hashBackupCode`),
   * when it is one of the user's unused backup codes; `consume` is the
   * second. `claimant` (a challenge id) claims the code in the store while the host
   * spends it, so no other challenge reaches the host with it meanwhile (the
   * same challenge's retry does: its earlier claim write may have run and
   * lost its answer). `false`: another claimant holds it.
   */
  async claim (userId: number, hash: string, claimant: string): Promise<boolean> {
    return await claimAs(this.#store, claimKey(userId, hash), claimant, CLAIM_TTL_MS)
  }

  /**
   * The host spends the claimed code. It gets the challenge id too: a host
   * that committed and then threw answers `true` to the same challenge's
   * retry (the port's contract), so the code is not lost. The claim is given
   * back whatever the host answers, so a failed call never costs a code; the
   * answer does not wait for that (best effort: the claim expires anyway),
   * so the caller's own writes go with it.
   */
  async consume (userId: number, hash: string, claimant: string): Promise<boolean> {
    try {
      return await this.#port.consumeBackupCode(userId, hash, claimant)
    } finally {
      this.#store.delete(claimKey(userId, hash)).catch(() => {})
    }
  }

  /** Replaces the user's backup codes and answers the new ones. */
  async regenerate (userId: number): Promise<string[]> {
    const { codes, hashes } = generateBackupCodes()
    await this.#port.replaceBackupCodes(userId, hashes)
    return codes
  }
}
