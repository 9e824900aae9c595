import type { TwoFactorMethod, TwoFactorPort } from '../adapters/two-factor.js'

/**
 * Two-factor state kept in memory: for the demo, for tests, and as a worked
 * example of the port for hosts (who keep the same data in their database).
 */
export class MemoryTwoFactorStore implements TwoFactorPort {
  readonly #methods = new Map<number, TwoFactorMethod>()
  readonly #secrets = new Map<number, string>()
  /** Each user's backup code hashes, with the claim that spent each (`null` while unused). */
  readonly #backupCodes = new Map<number, Map<string, string | null>>()

  /** Turns two-factor on for a user with `method` as the primary one. */
  enable (userId: number, method: TwoFactorMethod): void {
    this.#methods.set(userId, method)
  }

  disable (userId: number): void {
    this.#methods.delete(userId)
  }

  /** How many unused backup codes the user has. */
  backupCodesLeft (userId: number): number {
    return [...this.#backupCodes.get(userId)?.values() ?? []].filter(usedBy => usedBy === null).length
  }

  async methodOf (userId: number): Promise<TwoFactorMethod | null> {
    return this.#methods.get(userId) ?? null
  }

  async getTotpSecret (userId: number): Promise<string | null> {
    return this.#secrets.get(userId) ?? null
  }

  async setTotpSecret (userId: number, secret: string): Promise<void> {
    this.#secrets.set(userId, secret)
  }

  /** Marks the code spent by `claim`; the same claim's retry finds it spent by itself and answers `true` again. */
  async consumeBackupCode (userId: number, codeHash: string, claim: string): Promise<boolean> {
    const codes = this.#backupCodes.get(userId)
    const usedBy = codes?.get(codeHash)
    if (codes === undefined || usedBy === undefined) return false
    if (usedBy !== null) return usedBy === claim
    codes.set(codeHash, claim)
    return true
  }

  async replaceBackupCodes (userId: number, codeHashes: string[]): Promise<void> {
    this.#backupCodes.set(userId, new Map(codeHashes.map(hash => [hash, null])))
  }

  /** The primary method, or two-factor off with `null`. */
  async setMethod (userId: number, method: TwoFactorMethod | null): Promise<void> {
    if (method === null) this.disable(userId)
    else this.enable(userId, method)
  }

  async countBackupCodes (userId: number): Promise<number> {
    return this.backupCodesLeft(userId)
  }
}
